"""Writes validate/data/h200/launch-sets.json: the launch records of every own-program set.

  python3 validate/launch_sets.py

The launch cost of a host (host_launch_cuda, the queue's refill period, graph replay) is fitted by
`ridge calibrate` on launch records. launch.json holds four eager/dependent/graph records from
one lease; each own-program set (validate/data/h200/own-setN/own-setN.json) measured eight to ten
more, each on the host its lease happened to get (eager periods 3.7-4.7 us across sets:
docs/accuracy.md, "Launches across hosts"). This file gathers them (ids prefixed with the set's
name, so each stays distinct), so that the calibrated overlay's launch figures are a fit over
every host measured rather than over one lease (scripts/calibrate-h200.sh). Deterministic: the same
records give the same bytes. Only sets already measured are read; a set's records enter a fit
only after that set was scored as a prediction.
"""
import json
import os
import re

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
DATA = os.path.join(ROOT, "validate", "data", "h200")
OUT = os.path.join(DATA, "launch-sets.json")


def set_number(name):
    return int(re.fullmatch(r"own-set(\d+)", name).group(1))


def main():
    sets = sorted((d for d in os.listdir(DATA) if re.fullmatch(r"own-set\d+", d)), key=set_number)
    records, sources = [], []
    for s in sets:
        path = os.path.join(DATA, s, s + ".json")
        with open(path) as f:
            doc = json.load(f)
        picked = [r for r in doc["records"] if r["id"].startswith("launch/")]
        if not picked:
            continue
        sources.append({"set": s, "records": len(picked), "generated_by": doc["generated_by"],
                        "device": doc["device"]})
        for r in picked:
            r = dict(r)
            r["id"] = r["id"].replace("launch/", f"launch/{s}/", 1)
            records.append(r)
    first = sources[0]
    out = {
        "schema": "ridge.records/1",
        "generated_by": {"tool": "validate/launch_sets.py", "version": "1",
                         "command": "python3 validate/launch_sets.py",
                         "date": first["generated_by"]["date"], "suites": ["launch"],
                         "quick": False, "sources": sources},
        "device": first["device"],
        "records": records,
        "failures": [],
    }
    with open(OUT, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    print(f"{os.path.relpath(OUT, ROOT)}: {len(records)} launch records from "
          f"{', '.join(s['set'] for s in sources)}")


if __name__ == "__main__":
    main()
