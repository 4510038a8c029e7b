#!/usr/bin/env python3
"""Iteration by iteration: the H200 serving loop's measured cycles against the iterations Ridge
prices for the same continuous set (serving issue 16; a diagnostic on seen data, so nothing it
prints is a prediction).

For each continuous set (1.4 and 2.0 req/s) of the runs given (default serve6..serve11), the set
is copied to a temporary folder, Ridge predicts it under the loop-trace rule (the loop's own probe
per iteration as engine.host_probe_trace, the process's seen attention shapes, as
serve_compare.py writes the study) and `ridge serve --iterations` lists every iteration it priced.
Measured cycle = end_s - start_s (forward and housekeeping) + the gap to the next iteration's
start (the loop's CPU probe and bookkeeping), the part Ridge's cpu_overhead stands for; iterations
followed by an idle gap (> 5 ms, the loop sleeping until an arrival) are left out. An iteration is
"new" when its attention shape (rows, q_len, kv_len) had not run in the process before
(serve_compare.process_shapes, then the set's own iterations in order); Ridge marks its own by a
non-zero build time.

Printed per set and kind (prefill / new-shape decode / seen-shape decode) and batch band: the
iteration counts, median cycle and probe on both sides, and R/M = Ridge's median (cycle / probe)
over the measured one (1 = Ridge prices that kind right for the host speed it was given); then
the mean probe over the set per iteration and time-weighted on both sides, and the spread of that
ratio over 8 s windows (whether Ridge reads the trace at the loop's host speed).

  python3 validate/e2e/serve_iter_diag.py build/dev/cli/ridge [serve11 ...] [--scale K]

--scale K multiplies every probe of the trace by K (a counterfactual: what the waits would be were
the host K x slower for the loop than its probe says); it prints the seven targets of each set.
"""
import argparse
import bisect
import csv
import json
import os
import shutil
import statistics as st
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "validate/data/h200/serve7"))
sys.path.insert(0, os.path.join(ROOT, "validate/data/h200/serve8"))
import serve_compare as sc  # noqa: E402
from analysis import METRICS  # noqa: E402
from trace_diag import RUNS  # noqa: E402

# Runs and their continuous sets' seeds: trace_diag.py's table (its third seed: the static set).
SEEDS = {run: seeds[:2] for run, seeds in RUNS.items()}
IDLE_S = 0.005


def band(b):
    return "b1-8" if b <= 8 else ("b9-15" if b < 16 else "b16")


def measured(rec):
    seen = set(sc.process_shapes("continuous"))
    its, out = rec["iterations"], []
    for j, i in enumerate(its):
        shape = (1, sc.sl.PROMPT, sc.sl.PROMPT) if i["kind"] == "prefill" else \
            (i["rows"], 1, i["kv_len"])
        new = shape not in seen
        seen.add(shape)
        gap = its[j + 1]["start_s"] - i["end_s"] if j + 1 < len(its) else None
        if gap is None or gap > IDLE_S:
            continue
        out.append(dict(t=i["start_s"], kind=i["kind"], b=i["rows"], new=new,
                        cycle=i["end_s"] - i["start_s"] + gap, probe=i["probe_us"]))
    return out


def priced(path, trace):
    ts = [t for t, _ in trace]
    out = []
    with open(path) as f:
        for r in csv.DictReader(f):
            t = float(r["start_s"])
            k = max(0, bisect.bisect_right(ts, t) - 1)
            pre = int(r["prefills"]) > 0
            out.append(dict(t=t, kind="prefill" if pre else "decode",
                            b=int(r["prefills"]) if pre else int(r["decodes"]),
                            new=float(r["build_s"]) > 0, cycle=float(r["duration_s"]),
                            probe=trace[k][1]))
    return out


def ridge_set(ridge, src, rate, seed, scale):
    """Ridge's prediction and iterations for one continuous set (in a temporary copy)."""
    with tempfile.TemporaryDirectory() as tmp:
        d = os.path.join(tmp, "set")
        shutil.copytree(src, d, ignore=shutil.ignore_patterns("rate2", "static"))
        sc.RUN.update({"runs": ["continuous"], "cont_requests": 150, "host_probe_us": None,
                       "rate_per_s": rate, "cont_seed": seed,
                       "host_probe_trace": [(t, p * scale) for t, p in sc.loop_trace(d)]})
        pred = sc.predict_sets(ridge, d, per_request=False)["continuous"]
        subprocess.run([ridge, "serve", "continuous.yaml", "--iterations", "it.csv"], cwd=d,
                       check=True, capture_output=True)
        return pred, priced(os.path.join(d, "it.csv"), sc.RUN["host_probe_trace"])


def per_kind(m, r):
    print("| kind | band | n measured | n Ridge | cycle ms measured | Ridge | probe us measured "
          "| Ridge | R/M |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for kind, new in (("prefill", False), ("decode", True), ("decode", False)):
        for bd in ("all", "b1-8", "b9-15", "b16"):
            def pick(xs):
                return [x for x in xs if x["kind"] == kind and x["new"] == new and
                        (bd == "all" or band(x["b"]) == bd)]
            mm, rr = pick(m), pick(r)
            if len(mm) < 20 or len(rr) < 20 or (kind == "prefill" and bd != "all"):
                continue
            ratio = (st.median(x["cycle"] / x["probe"] for x in rr) /
                     st.median(x["cycle"] / x["probe"] for x in mm))
            name = kind if kind == "prefill" else ("decode, new shape" if new else
                                                   "decode, seen shape")
            print("| %s | %s | %d | %d | %.2f | %.2f | %.0f | %.0f | %.3f |" % (
                name, bd, len(mm), len(rr), 1e3 * st.median(x["cycle"] for x in mm),
                1e3 * st.median(x["cycle"] for x in rr), st.median(x["probe"] for x in mm),
                st.median(x["probe"] for x in rr), ratio))


def alignment(m, r):
    def tw(xs):
        return sum(x["probe"] * x["cycle"] for x in xs) / sum(x["cycle"] for x in xs)
    ws = []
    for lo in range(0, int(m[-1]["t"]), 8):
        a = [x["probe"] for x in m if lo <= x["t"] < lo + 8]
        b = [x["probe"] for x in r if lo <= x["t"] < lo + 8]
        if a and b:
            ws.append(st.mean(b) / st.mean(a) - 1)
    print("probe per iteration: measured %.0f us, Ridge %.0f us; time-weighted %.0f, %.0f; "
          "8 s windows Ridge/measured %+.1f%% to %+.1f%%"
          % (st.mean(x["probe"] for x in m), st.mean(x["probe"] for x in r), tw(m), tw(r),
             100 * min(ws), 100 * max(ws)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("ridge")
    ap.add_argument("runs", nargs="*", default=list(SEEDS))
    ap.add_argument("--scale", type=float, default=1.0)
    a = ap.parse_args()
    ridge = os.path.abspath(a.ridge)
    for run in a.runs:
        for sub, rate, seed in (("", 1.4, SEEDS[run][0]), ("rate2", 2.0, SEEDS[run][1])):
            src = os.path.join(ROOT, "validate/data/h200", run, sub)
            rec = sc.load_record(src)["records"][0]
            pred, r = ridge_set(ridge, src, rate, seed, a.scale)
            m = measured(rec)
            print("\n%s, %.1f req/s (probes x %g): %d measured iterations, %d priced" % (
                run, rate, a.scale, len(rec["iterations"]), len(r)))
            errs = []
            for name, tol, get in METRICS:
                e = get(pred) / get(rec["summary"]) - 1
                errs.append("%s %+.1f%%%s" % (name, 100 * e, "" if abs(e) <= tol else " (miss)"))
            print("targets: " + ", ".join(errs))
            if a.scale == 1.0:
                per_kind(m, r)
                alignment(m, r)


if __name__ == "__main__":
    main()
