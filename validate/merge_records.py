#!/usr/bin/env python3
"""Merges ridge.records/1 files into one: the first file's header, every file's records and
failures, and each input's command under generated_by.commands.
   python3 validate/merge_records.py OUT.json IN.json [IN.json ...]"""
import json
import sys


def main() -> int:
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 64
    out, inputs = sys.argv[1], sys.argv[2:]
    merged = None
    for path in inputs:
        try:
            with open(path) as f:
                doc = json.load(f)
        except (OSError, ValueError) as e:
            print(f"merge_records: skipping {path}: {e}", file=sys.stderr)
            continue
        if merged is None:
            merged = {k: doc[k] for k in ("schema", "generated_by", "device") if k in doc}
            merged["generated_by"]["commands"] = []
            merged["failures"] = []
            merged["records"] = []
        merged["generated_by"]["commands"].append(doc.get("generated_by", {}).get("command", ""))
        merged["failures"] += doc.get("failures", [])
        merged["records"] += doc.get("records", [])
    if merged is None:
        print("merge_records: no input could be read", file=sys.stderr)
        return 1
    with open(out, "w") as f:
        f.write("{\n")
        keys = [k for k in ("schema", "generated_by", "device", "failures") if k in merged]
        for k in keys:
            f.write(f"  {json.dumps(k)}: {json.dumps(merged[k])},\n")
        f.write('  "records": [')
        for i, r in enumerate(merged["records"]):
            f.write(("," if i else "") + "\n    " + json.dumps(r))
        f.write("\n  ]\n}\n")
    print(f"merge_records: {len(merged['records'])} records -> {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
