#!/usr/bin/env python3
"""Prints the headline figures of ridge.records/1 files (a table for a quick look).
   python3 validate/summarize_records.py FILE.json [...]"""
import json
import sys


def main() -> int:
    recs = []
    for path in sys.argv[1:]:
        try:
            with open(path) as f:
                doc = json.load(f)
        except (OSError, ValueError):
            continue
        recs += doc.get("records", [])
        for fail in doc.get("failures", []):
            print(f"FAILURE {path}: {fail}")
    by_id = {r["id"]: r for r in recs}

    def med(r):
        return r.get("timing", {}).get("median_us", float("nan"))

    best = {}
    for r in recs:
        op = r.get("op")
        p = r.get("params", {})
        if op == "membw" and p.get("buffers", 1) == 1 and p.get("bytes", 0) >= 1 << 30:
            k = "membw " + p["kind"]
            best[k] = max(best.get(k, 0), r.get("bandwidth_gbps", 0))
        if op in ("l2bw", "smem_bw"):
            best[op] = max(best.get(op, 0), r.get("bandwidth_gbps", 0))
        if op == "copy":
            k = f"copy {p.get('direction')} {p.get('memory')}"
            best[k] = max(best.get(k, 0), r.get("bandwidth_gbps", 0))
    for k, v in sorted(best.items()):
        print(f"{k:32s} {v:10.1f} GB/s")
    for r in recs:
        op = r.get("op")
        if op == "latency" and r["params"]["footprint"] in (16384, 8 << 20, 1 << 30):
            print(f"{r['id']:32s} {r['latency_ns']:10.1f} ns {r.get('latency_cycles', 0):8.1f} cycles")
        if op == "launch":
            print(f"{r['id']:32s} {r['per_kernel_us']:10.3f} us")
        if op in ("fma",) or (op == "gemm" and r["suite"] == "compute"):
            print(f"{r['id']:48s} {r.get('tflops', 0):8.1f} TFLOP/s")
    n_by_suite = {}
    for r in recs:
        n_by_suite[r.get("suite")] = n_by_suite.get(r.get("suite"), 0) + 1
    bad = [r["id"] for r in recs if r.get("check", {}).get("passed") is False]
    print("records per suite:", n_by_suite)
    print("checks failed:", len(bad), bad[:20])
    return 0


if __name__ == "__main__":
    sys.exit(main())
