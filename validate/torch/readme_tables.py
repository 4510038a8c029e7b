"""The framework-op accuracy tables of validate/README.md, from the committed data alone.

  python3 validate/torch/readme_tables.py            # print the section's tables
  python3 validate/torch/readme_tables.py --write    # replace them in validate/README.md

Set 1 (train) is scored with the predictions of model v2 as `ridge predict` gives them now
(`--ridge PATH`, default ./build/dev/cli/ridge) and is a fit; sets 2 and 3 are scored with their
pre-registered predictions (validate/prereg/torch-set{2,3}/predictions.json), committed before
those sets were measured. The text between the markers `<!-- torch-tables:begin -->` and
`<!-- torch-tables:end -->` is replaced; nothing else is touched.
"""
import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BEGIN, END = "<!-- torch-tables:begin -->", "<!-- torch-tables:end -->"
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from errors import pct, summary, table  # noqa: E402


def scored(set_name, ridge):
    measured_path = os.path.join(ROOT, "validate/data/h200/torch", set_name, set_name + ".json")
    with open(measured_path) as f:
        measured = json.load(f)
    pre = os.path.join(ROOT, "validate/prereg", "torch-" + set_name, "predictions.json")
    if os.path.exists(pre):
        with open(pre) as f:
            doc = json.load(f)
    else:
        out = subprocess.run([ridge, "predict", measured_path, "--gpu", "h200", "--json"],
                             capture_output=True, text=True, check=True, cwd=ROOT).stdout
        doc = json.loads(out)
    pred = {r["id"]: r["timing"]["median_us"] for r in doc["records"]}
    return table(measured, pred)


def section(ridge):
    sets = (("train", "set 1 (training; model v2 fitted on it)"),
            ("set2", "set 2 (model v1, pre-registered)"),
            ("set3", "set 3 (model v2, pre-registered)"))
    rows = {s: scored(s, ridge) for s, _ in sets}
    out = []
    out.append("| set | records | median abs error | p90 abs error | op classes with median > 10% |")
    out.append("|---|---:|---:|---:|---|")
    for s, title in sets:
        a = [abs(r["error"]) for r in rows[s]]
        bad = [f"{c['class']} {100 * c['median_abs']:.1f}%" for c in summary(rows[s], lambda r: r["op"])
               if c["median_abs"] > 0.10]
        out.append(f"| {title} | {len(a)} | {100 * pct(a, 50):.1f}% | {100 * pct(a, 90):.1f}% | "
                   f"{', '.join(bad) or 'none'} |")
    out.append("")
    classes = sorted({r["op"] for s, _ in sets for r in rows[s]})
    out.append("Median |error| per op class (n in brackets):")
    out.append("")
    out.append("| op class | " + " | ".join(t for _, t in sets) + " |")
    out.append("|---|" + "---:|" * len(sets))
    for c in classes:
        cells = []
        for s, _ in sets:
            e = [abs(r["error"]) for r in rows[s] if r["op"] == c]
            cells.append(f"{100 * pct(e, 50):.1f}% ({len(e)})" if e else "-")
        out.append(f"| {c} | " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--ridge", default=os.path.join(ROOT, "build/dev/cli/ridge"))
    a = ap.parse_args()
    text = section(a.ridge)
    if not a.write:
        sys.stdout.write(text)
        return 0
    path = os.path.join(ROOT, "validate/README.md")
    with open(path) as f:
        doc = f.read()
    if BEGIN not in doc or END not in doc:
        print(f"{path}: markers {BEGIN} / {END} not found", file=sys.stderr)
        return 2
    head, rest = doc.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    with open(path + ".tmp", "w") as f:
        f.write(head + BEGIN + "\n" + text + END + tail)
    os.replace(path + ".tmp", path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
