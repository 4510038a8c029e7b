"""The serving loop's housekeeping timed alone on one GPU (serve_llama.py move_row / shift_rows:
the functions the loop calls), as the loop times it: from the end of a synchronised step to the
end of the housekeeping's torch.cuda.synchronize(), with the CPU probe (e2e_common.cpu_probe_us)
after each, on the loop's cache (SLOTS rows of Llama-3.2 1B's 16 layers, MAX_LEN columns, bf16).

  move  one row's columns [col - span, col) copied into another row (32 strided copies) and its
        token: span 64-512
  shift rows 0..n-1 moved left by sh columns, width col - sh (32 clone + copy pairs): n 2-16,
        width 128-512

Each point: REPEATS timings interleaved with the other points (round robin), the median and the
median probe. Writes JSON to --out.
Usage: python3 validate/e2e/serve_housekeeping.py --out OUT/housekeeping.json
"""
import argparse
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from decode_llama import MAX_LEN, make_caches  # noqa: E402
from e2e_common import cpu_probe_us  # noqa: E402
import serve_llama as sl  # noqa: E402

REPEATS = 40


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    import torch
    caches = make_caches(torch, sl.CFG, sl.SLOTS)
    tokbuf = torch.zeros((sl.SLOTS, 1), dtype=torch.long, device="cuda")
    col = 700
    points = [("move", dict(span=sp)) for sp in (64, 128, 256, 384, 512)]
    points += [("shift", dict(n=n, width=w)) for n in (2, 8, 16) for w in (128, 320, 512)]

    def run(kind, p):
        if kind == "move":
            sl.move_row(caches, tokbuf, 3, 15, col - p["span"], col)
        else:
            sl.shift_rows(caches, p["n"], col - p["width"], col)

    with torch.inference_mode():
        for kind, p in points:  # warm-up: every point once
            run(kind, p)
        torch.cuda.synchronize()
        times = {i: [] for i in range(len(points))}
        probes = {i: [] for i in range(len(points))}
        for _ in range(REPEATS):
            for i, (kind, p) in enumerate(points):
                torch.cuda.synchronize()
                t0 = time.perf_counter()
                run(kind, p)
                torch.cuda.synchronize()
                times[i].append(time.perf_counter() - t0)
                probes[i].append(cpu_probe_us())
    out = {"generated_by": "validate/e2e/serve_housekeeping.py", "repeats": REPEATS,
           "torch": torch.__version__, "device": torch.cuda.get_device_name(),
           "max_len": MAX_LEN, "slots": sl.SLOTS, "points": []}
    for i, (kind, p) in enumerate(points):
        row = dict(kind=kind, **p, median_s=statistics.median(times[i]),
                   p10_s=sorted(times[i])[len(times[i]) // 10],
                   probe_median_us=statistics.median(probes[i]), times_s=times[i],
                   probes_us=probes[i])
        out["points"].append(row)
        print("%s %s: %.3f ms (probe %.0f us)" % (kind, p, row["median_s"] * 1e3,
                                                  row["probe_median_us"]))
    with open(a.out, "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
