#!/usr/bin/env python3
"""How the serving loop's host time scales with the host's speed (serving run 6's mechanism).

Reads the per-iteration records of the H200 serving runs 2-5 (validate/data/h200/serve{2,3,4,5},
each decode iteration with its forward time and the in-loop CPU probe around it) and fits

    host time(probe) = T0 x (1 - share + share x probe / P0),   P0 = host_probe_us = 197 us

the share being the part of the host time that runs at the interpreter's speed (what
e2e_common.cpu_probe_us, a pure-Python loop, times) and the rest the part it does not time (CUDA
driver calls, PyTorch's C++ dispatch, cuDNN's C++). Two kinds of iteration, fitted separately:

  * repeated-shape decode steps (an attention shape the process ran before): host-bound (a 1B
    model at batch <= 16; Ridge's kernels are < 1 ms of an ~9 ms step), so the step's time is its
    host time. Fit: least squares of log(step) - log(1 - share + share x probe / P0), T0 free
    (the model's absolute step time is the executor's, not this fit's), share on a 0.01 grid.
  * new-shape decode steps (the first at a (batch, kv_len): a cuDNN SDPA graph build): the build
    is the step minus the repeated-step fit at the same probe; the same fit for its share.

Both by pooling every step (each counts once) and by equal run weights (each run's median log
residual counts once) for comparison; the residuals per run at the pooled fit (median and
quartiles of step / fit - 1) and at share 1 (all host time proportional, run 5's model).
Steps over 30 ms among the repeated ones (4 of 6205: stalls) are left out.

Usage: serve_host_fit.py [--out validate/data/h200/serve6/host_fit.json] [--runs serve2,...]
(--runs: the folders under validate/data/h200 to fit, default runs 2-5; run 6's check adds
serve6,serve6/rate2,serve6/static, or fits them alone to see the share out of sample)
"""
import argparse
import json
import math
import os
import statistics as st

from serve_compare import load_record  # e2e_serve.json or its .gz

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
RUNS = ["serve2", "serve3", "serve4", "serve4/rate2", "serve5", "serve5/rate2", "serve5/static"]
P0 = 197.0


def factor(p, s):
    return 1 - s + s * p / P0


def load(runs):
    data = []
    for d in runs:
        doc = load_record(os.path.join(ROOT, "validate/data/h200", d))
        for r in doc["records"]:
            seen, rep, new = set(), [], []
            for it in r["iterations"]:
                if it["kind"] != "decode":
                    continue
                key = (it["rows"], it["kv_len"])
                fw = (it["forward_end_s"] - it["start_s"]) * 1e3
                (rep if key in seen else new).append((it["probe_us"], fw))
                seen.add(key)
            data.append(("%s:%s" % (d, r["params"]["policy"]), [x for x in rep if x[1] < 30], new))
    return data


def fit_pooled(points):
    best = None
    for i in range(101):
        s = i / 100
        lr = [math.log(t) - math.log(factor(p, s)) for p, t in points]
        m = sum(lr) / len(lr)
        sse = sum((x - m) ** 2 for x in lr)
        if best is None or sse < best[0]:
            best = (sse, s, math.exp(m))
    return best[1], best[2]


def fit_equal(sets):
    best = None
    for i in range(101):
        s = i / 100
        meds = [st.median([math.log(t) - math.log(factor(p, s)) for p, t in pts]) for pts in sets]
        m = sum(meds) / len(meds)
        sse = sum((x - m) ** 2 for x in meds)
        if best is None or sse < best[0]:
            best = (sse, s, math.exp(m))
    return best[1], best[2]


def resid(points, s, t0):
    r = sorted(t / (t0 * factor(p, s)) - 1 for p, t in points)
    n = len(r)
    return {"n": n, "median": round(r[n // 2] if n % 2 else (r[n // 2 - 1] + r[n // 2]) / 2, 4),
            "q1": round(r[n // 4], 4), "q3": round(r[(3 * n) // 4], 4)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=None)
    ap.add_argument("--runs", default=",".join(RUNS))
    a = ap.parse_args()
    runs = [x for x in a.runs.split(",") if x]
    data = load(runs)
    rep_all = [x for _, rep, _ in data for x in rep]
    s_dec, t0 = fit_pooled(rep_all)
    # Share 1 (run 5's model: all host time proportional), its own T0 by the same fit.
    lr1 = [math.log(t) - math.log(factor(p, 1.0)) for p, t in rep_all]
    t0_1 = math.exp(sum(lr1) / len(lr1))
    # A build is what a new-shape step took over the repeated-step fit; a step at or under that
    # fit (a slow-host repeated-step estimate above a fast new step) has no build to fit.
    builds = [(name, [(p, t - t0 * factor(p, s_dec)) for p, t in new
                      if t > 20 and t > t0 * factor(p, s_dec)])
              for name, _, new in data]
    s_bld, b0 = fit_pooled([x for _, b in builds for x in b])
    lb1 = [math.log(t) - math.log(factor(p, 1.0)) for _, b in builds for p, t in b]
    b0_1 = math.exp(sum(lb1) / len(lb1))
    out = {
        "model": "host time = T0 x (1 - share + share x probe / 197 us)",
        "runs": runs,
        "decode_repeated": {
            "share": s_dec, "T0_ms_at_197us": round(t0, 3), "T0_ms_at_share_1": round(t0_1, 3), "steps": len(rep_all),
            "share_equal_run_weights": fit_equal([rep for _, rep, _ in data])[0],
            "per_run": {name: {"probe_median_us": round(st.median(p for p, _ in rep), 1),
                               "own_share": fit_pooled(rep)[0],
                               "at_fit": resid(rep, s_dec, t0),
                               "at_share_1": resid(rep, 1.0, t0_1)}
                        for name, rep, _ in data}},
        "sdpa_build": {
            "share": s_bld, "B0_ms_at_197us": round(b0, 2),
            "builds": sum(len(b) for _, b in builds),
            "share_equal_run_weights": fit_equal([b for _, b in builds])[0],
            "per_run": {name: {"at_fit": resid(b, s_bld, b0), "at_share_1": resid(b, 1.0, b0_1)}
                        for name, b in builds}},
    }
    text = json.dumps(out, indent=1, sort_keys=True) + "\n"
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    print(text, end="")


if __name__ == "__main__":
    main()
