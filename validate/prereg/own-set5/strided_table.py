#!/usr/bin/env python3
"""Every committed strided elementwise record on the H200 (kernels.json, own-set1..5), one table.

Usage: python3 validate/prereg/own-set5/strided_table.py [--ridge build/dev/cli/ridge] [--csv]

The set-4 script (validate/prereg/own-set4/strided_table.py) with set 5's records and, per record
with buffer sets, the fraction of its lines that commit d72d8e5's model keeps in L2 (column hit:
models/kernel.cpp l2_sweep_hit_fraction, P(Poisson(8 F / (0.74 L2)) <= 7), computed here whatever
the binary). --ridge names the binary, so that one table is made with the model before a change
and after it: before issue 18's slope, build commit 6687ab5 and pass its cli/ridge.

Gathers op "elementwise" records with params.stride > 1, predicts them with
`ridge predict <records> --gpu configs/hw/h200-sxm-141gb.calibrated.yaml --json` (the model in
the tree), and prints per record: dtype, n, stride, gap (stride x element bytes), the span read
(n x gap), the bytes of 128-byte L2 lines touched (n x min(gap, 128) per input), the buffer
sets the program rotated over and their L2 footprint (sets x (lines + output)), the fraction of
lines the model keeps in L2, measured median, the rate of touched 32-byte sectors, prediction
and error; then the median / max |error| by set. Errors of records the model was fitted on are
fits, not predictions.
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
SETS = [("kernels", "validate/data/h200/kernels.json")] + [
    (f"own-set{i}", f"validate/data/h200/own-set{i}/own-set{i}.json") for i in range(1, 6)]
ELEM = {"fp32": 4, "bf16": 2, "fp16": 2}
GPU = "configs/hw/h200-sxm-141gb.calibrated.yaml"
L2 = 62914560  # validate/data/h200/device.json device.l2_bytes (60 MiB)


def gather():
    rows = []
    for name, path in SETS:
        with open(os.path.join(ROOT, path)) as f:
            d = json.load(f)
        for r in d["records"]:
            p = r.get("params", {})
            if r.get("op") == "elementwise" and p.get("stride", 1) > 1:
                rows.append((name, r))
    return rows


def predict(ridge, rows):
    recs = [r for _, r in rows]
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump({"schema": "ridge.records/1", "records": recs}, f)
        tmp = f.name
    try:
        out = subprocess.run([ridge, "predict", tmp, "--gpu", GPU, "--json"], cwd=ROOT,
                             check=True, capture_output=True, text=True).stdout
    finally:
        os.unlink(tmp)
    pred = json.loads(out)["records"]
    return [p["prediction"]["time_s"] * 1e6 for p in pred]


def sweep_hit(footprint, stride):
    """models/kernel.cpp l2_sweep_hit_fraction (W = 8 ways, 0.74 of L2; fits) as
    models/op_library.cpp applies it: strided reads only, none below a thousandth."""
    if footprint <= 0:
        return 0.0
    if stride == 1:
        return 1.0 if footprint <= L2 else 0.0
    lam = 8 * footprint / (0.74 * L2)
    term = math.exp(-lam)
    total = term
    for k in range(1, 8):
        term *= lam / k
        total += term
    h = min(1.0, total)
    return h if h >= 1e-3 else 0.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ridge", default="build/dev/cli/ridge")
    ap.add_argument("--csv", action="store_true")
    a = ap.parse_args()
    rows = gather()
    preds = predict(os.path.join(ROOT, a.ridge) if not os.path.isabs(a.ridge) else a.ridge, rows)
    hdr = ["set", "op", "dtype", "n", "stride", "gap_B", "span_MiB", "lines_MiB", "bufs", "L2fp_MiB",
           "hit", "meas_us", "Gsect_s", "pred_us", "err_%"]
    table = []
    by_set = {}
    for (name, r), pu in zip(rows, preds):
        p = r["params"]
        e = ELEM[p["dtype"]]
        n, s = p["n"], p["stride"]
        gap = e * s
        span = n * gap / 2**20
        inputs = 2 if p["op"] in ("add", "mul") else 1
        # L2 keeps 128-byte lines: elements a line or more apart hold a line each.
        lines = n * min(gap, 128) * inputs
        bufs = r.get("buffers", 0)
        l2_fp = bufs * (lines + n * e) / 2**20
        hit = sweep_hit(bufs * (lines + n * e), s)
        # Touched 32-byte sectors read per second (a sector per element once the gap is 32 B).
        sect = n * inputs * (gap / 32.0 if gap < 32 else 1.0)
        m = r["timing"]["median_us"]
        err = (pu - m) / m * 100
        by_set.setdefault(name, []).append(abs(err))
        table.append([name, p["op"], p["dtype"], n, s, gap, f"{span:.1f}", f"{lines / 2**20:.1f}",
                      bufs, f"{l2_fp:.1f}", f"{hit:.2f}", f"{m:.2f}", f"{sect / m / 1e3:.1f}",
                      f"{pu:.2f}",
                      f"{err:+.1f}"])
    table.sort(key=lambda t: (t[5], t[3]))
    if a.csv:
        print(",".join(hdr))
        for t in table:
            print(",".join(str(x) for x in t))
    else:
        print("| " + " | ".join(hdr) + " |")
        print("|" + "---|" * len(hdr))
        for t in table:
            print("| " + " | ".join(str(x) for x in t) + " |")
    print()
    allerr = []
    for name, _ in SETS:
        v = by_set.get(name, [])
        allerr += v
        if v:
            print(f"{name}: {len(v)} records, median |err| {statistics.median(v):.1f}%, "
                  f"max {max(v):.1f}%")
    print(f"all: {len(allerr)} records, median |err| {statistics.median(allerr):.1f}%, "
          f"max {max(allerr):.1f}%")


if __name__ == "__main__":
    sys.exit(main())
