"""The framework-op accuracy tables of validate/README.md, from the committed data alone.

  python3 validate/torch/readme_tables.py            # print the section's tables
  python3 validate/torch/readme_tables.py --write    # replace them in validate/README.md

Sets 2, 3, 4 and 5 are scored with their pre-registered predictions
(validate/prereg/torch-set{2,3,4,5}/predictions.json, committed before each set was measured);
sets 1-4 are also scored with the model in the tree (v4: fitted on sets 1-3, changed after set
4 was measured) as `ridge predict` gives it now (`--ridge PATH`, default ./build/dev/cli/ridge):
those rows are fits (sets 1-3) or no longer a prediction (set 4). A set whose
measurement is not committed is left out. The text between the markers
`<!-- torch-tables:begin -->` and `<!-- torch-tables:end -->` is replaced; nothing else is
touched.
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


def measured_path(set_name):
    return os.path.join(ROOT, "validate/data/h200/torch", set_name, set_name + ".json")


def scored(set_name, source, ridge):
    with open(measured_path(set_name)) as f:
        measured = json.load(f)
    if source == "prereg":
        with open(os.path.join(ROOT, "validate/prereg", "torch-" + set_name,
                               "predictions.json")) as f:
            doc = json.load(f)
    else:
        out = subprocess.run([ridge, "predict", measured_path(set_name), "--gpu", "h200",
                              "--json"], capture_output=True, text=True, check=True,
                             cwd=ROOT).stdout
        doc = json.loads(out)
    pred = {r["id"]: r["timing"]["median_us"] for r in doc["records"]}
    return table(measured, pred)


def section(ridge):
    sets = [(k, s, t) for k, s, t in (
        ("set2/v1", "set2", "set 2 (model v1, pre-registered)"),
        ("set3/v2", "set3", "set 3 (model v2, pre-registered)"),
        ("set4/v3", "set4", "set 4 (model v3, pre-registered)"),
        ("set5/v4-prereg", "set5", "set 5 (model v4, pre-registered)"),
        ("train/v4", "train", "set 1 (model v4, fit)"),
        ("set2/v4", "set2", "set 2 (model v4, fit)"),
        ("set3/v4", "set3", "set 3 (model v4, fit)"),
        ("set4/v4", "set4", "set 4 (model v4, not a prediction)")) if os.path.exists(measured_path(s))]
    rows = {k: scored(s, "current" if k.endswith("v4") else "prereg", ridge)
            for k, s, _ in sets}
    sets = [(k, t) for k, _, t in sets]
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
