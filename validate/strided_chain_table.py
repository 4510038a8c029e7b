#!/usr/bin/env python3
"""Every committed strided elementwise record (validate/data/h200 kernels.json, own-set1..11)
with the model's prediction: gap between elements, buffer sets, grid-stride iterations per
thread, measured and predicted kernel time and the error (predicted - measured) / measured.
Issue 18 round 6 (docs/accuracy.md): the serial load chain is fitted on the cold ones.

usage: RIDGE=build/dev/cli/ridge python3 validate/strided_chain_table.py [--summary]
"""
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RIDGE = os.environ.get("RIDGE", os.path.join(ROOT, "build/dev/cli/ridge"))
GPU = os.path.join(ROOT, "configs/hw/h200-sxm-141gb.calibrated.yaml")
SIZE = {"fp32": 4, "fp16": 2, "bf16": 2}


def records():
    files = [("kernels", "kernels.json")] + [
        (f"set{n}", f"own-set{n}/own-set{n}.json") for n in range(1, 12)]
    out = []
    for tag, f in files:
        with open(os.path.join(ROOT, "validate/data/h200", f)) as fh:
            for r in json.load(fh)["records"]:
                p = r.get("params", {})
                if r.get("op") == "elementwise" and p.get("stride", 1) > 1 and \
                        "median_us" in r.get("timing", {}):
                    out.append((tag, r))
    return out


def main():
    recs = records()
    cases = {"schema": "ridge.records/1", "records": []}
    for i, (tag, r) in enumerate(recs):
        c = {"id": f"{i}", "op": "elementwise", "params": dict(r["params"]),
             "timing": {"method": "kernel"}}
        if "buffers" in r:
            c["buffers"] = r["buffers"]
        cases["records"].append(c)
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as fh:
        json.dump(cases, fh)
        path = fh.name
    try:
        out = subprocess.run([RIDGE, "predict", path, "--gpu", GPU, "--json"], check=True,
                             capture_output=True, text=True).stdout
    finally:
        os.unlink(path)
    pred = {p["id"]: p["prediction"] for p in json.loads(out)["records"]}
    rows = []
    for i, (tag, r) in enumerate(recs):
        p, q = r["params"], pred[str(i)]
        n, e = p["n"], SIZE[p["dtype"]]
        iters = math.ceil(n / (min(1056, math.ceil(n / 256)) * 256))
        m, t = r["timing"]["median_us"], q["time_s"] * 1e6
        rows.append((tag, p["op"], p["dtype"], n, p["stride"], e * p["stride"], r.get("buffers", 0),
                     iters, "l2" in q["kernel_name"], m, t, (t - m) / m * 100))
    rows.sort(key=lambda x: (x[5], x[3]))
    if "--summary" not in sys.argv:
        print("| source | op | dtype | n | stride | gap B | buffers | iters | L2 | measured us |"
              " predicted us | error |")
        print("|---|---|---|---:|---:|---:|---:|---:|---|---:|---:|---:|")
        for x in rows:
            print(f"| {x[0]} | {x[1]} | {x[2]} | {x[3]} | {x[4]} | {x[5]} | {x[6]} | {x[7]} | "
                  f"{'yes' if x[8] else 'no'} | {x[9]:.2f} | {x[10]:.2f} | {x[11]:+.1f}% |")
    def stats(name, sel):
        a = sorted(abs(x[11]) for x in sel)
        if a:
            print(f"{name}: {len(a)} records, median |error| {statistics.median(a):.1f}%, "
                  f"p90 {a[int(0.9 * len(a))]:.1f}%, max {a[-1]:.1f}%")
    stats("all", rows)
    stats("cold (no L2 hits)", [x for x in rows if not x[8]])
    stats("gaps 4-8 B", [x for x in rows if x[5] <= 8])
    stats("gaps 9 B and more", [x for x in rows if x[5] >= 9])


if __name__ == "__main__":
    main()
