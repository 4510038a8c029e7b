#!/usr/bin/env python3
"""Median / p90 |error| of the row-kernel, membw and copy d2d classes per data set (issue 18,
round 3; docs/accuracy.md "Row kernels, HBM direction and device copies" and "A cold read
stream ramps up": membw reads and copies, contiguous elementwise).

  RIDGE=./build/dev/cli/ridge python3 scripts/rows_hbm_table.py

Predicts every committed H200 record of those classes (validate/data/h200 kernels.json,
memory.json, own-set1..8; the records' buffer sets included) with `ridge predict` on the
calibrated config and prints, per class and data set, cases and median / p90 |error|.
"""
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RIDGE = os.environ.get("RIDGE", os.path.join(ROOT, "build/dev/cli/ridge"))
GPU = "configs/hw/h200-sxm-141gb.calibrated.yaml"
SETS = [("kernels", "kernels.json"), ("memory", "memory.json")] + [
    (f"set{i}", f"own-set{i}/own-set{i}.json") for i in range(1, 9)]
CLASSES = {
    "rows": lambda r: r["op"] in ("softmax", "layernorm", "rmsnorm"),
    "softmax": lambda r: r["op"] == "softmax",
    "layernorm": lambda r: r["op"] == "layernorm",
    "rmsnorm": lambda r: r["op"] == "rmsnorm",
    "membw": lambda r: r["op"] == "membw",
    "copy d2d": lambda r: r["op"] == "copy" and r["params"]["direction"] == "d2d",
    "membw read": lambda r: r["op"] == "membw" and r["params"]["kind"] == "read",
    "membw copy": lambda r: r["op"] == "membw" and r["params"]["kind"] == "copy",
    "elementwise contiguous": lambda r: r["op"] == "elementwise" and r["params"].get("stride", 1) == 1,
}


def pct(v, p):
    v = sorted(v)
    pos = p / 100 * (len(v) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)


def errors():
    out = []
    for name, path in SETS:
        recs = [r for r in json.load(open(os.path.join(ROOT, "validate/data/h200", path)))["records"]
                if any(f(r) for f in CLASSES.values())]
        cases = [{"id": r["id"], "op": r["op"], "params": r["params"],
                  "timing": {"method": r["timing"]["method"]},
                  **({"buffers": r["buffers"]} if "buffers" in r else {})} for r in recs]
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            json.dump({"schema": "ridge.records/1", "records": cases}, f)
        try:
            res = subprocess.run([RIDGE, "predict", f.name, "--gpu", GPU, "--json"], cwd=ROOT,
                                 check=True, capture_output=True, text=True)
        finally:
            os.unlink(f.name)
        pred = {r["id"]: r["timing"]["median_us"] for r in json.loads(res.stdout)["records"]}
        for r in recs:
            out.append((name, r, abs(pred[r["id"]] / r["timing"]["median_us"] - 1) * 100))
    return out


def main():
    e = errors()
    for cname, f in CLASSES.items():
        cells = []
        for name in [s for s, _ in SETS] + ["all"]:
            v = [x for s, r, x in e if f(r) and (name == "all" or s == name)]
            if v:
                cells.append(f"{name} {len(v)}: {pct(v, 50):.1f} / {pct(v, 90):.1f}")
        print(f"{cname}: " + " | ".join(cells))


if __name__ == "__main__":
    sys.exit(main())
