#!/usr/bin/env python3
"""Serving run 14's design: run 13's capacity definition and rate rule for the loop with every
step replayed from CUDA graphs (serve_llama.py --graphs; Ridge's engine `model: hf_graph`), with
sets of 1000 requests (the static set 128). No measured record is read. Writes, in this folder:

  capacity.json    C(p): Ridge's capacity of the continuous graph loop at host probe p (run 12's
                   definition, trials of 1000 requests).
  rate_table.json  the committed lookup run14.sh uses: set 1 at 0.4, set 2 at 0.7 of C(p), at
                   p = 140, 160, ..., 440 us.
  guard/           the freeze guard's grids (guard(), below).

  python3 validate/data/h200/serve14/load_design.py build/dev/cli/ridge capacity
  python3 validate/data/h200/serve14/load_design.py build/dev/cli/ridge table
  python3 validate/data/h200/serve14/load_design.py build/dev/cli/ridge guard

Capacity (run 12's definition, with run 14's loop and length): `ridge serve`'s own capacity
search (docs/serving.md: trials at doubling rates from 1 req/s, then bisection to 1% of the
bracket) on the graph loop's study at one constant probe, with the SLO "TTFT at most 1 s for 90%
of requests" and trials of 1000 Poisson requests (the set's length), their lengths those of the
seed-12001 list (prompt 256, outputs uniform 16-256), the median over the search's seeds
CAP_SEEDS. The conditioning of run 12 is not recomputed for this loop (not run: time).
"""
import json
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "e2e"))
import serve_compare as sc  # noqa: E402

CAP_REQUESTS = 1000
STATIC_REQUESTS = 128
SLO_TTFT_S, SLO_PCT = 1.0, 90
CAP_SEEDS = (1, 2, 3)
CAP_PROBES = list(range(140, 441, 20))       # the table's probes (us), the grid's range
COND_PROBES = (200, 300, 400)                # where the conditioning is read
FRACTIONS = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8)   # candidate load fractions
COND_SEEDS = tuple(range(12201, 12211))      # run 12's ten lists (conditioning, not rerun)
HOST_ERR = 0.05                              # the host-speed error the design must absorb
TARGETS = (("requests/s", 0.10), ("TTFT p50", 0.10), ("TTFT p99", 0.20), ("TPOT p50", 0.10),
           ("TPOT p99", 0.20), ("E2E p50", 0.10), ("E2E p99", 0.20))
METRIC = dict(sc.SPREAD_METRICS)
# Run 12's fractions (serve12/preregistration.md), unchanged; run 14's seeds for the sets.
CHOSEN = {"set1": 0.4, "set2": 0.7}
SEEDS = {"set1": 14001, "set2": 14002}
STATIC_SEED = 14003


def run(ridge, rate, seed, n, probe):
    sc.RUN.update(rate_per_s=rate, cont_seed=seed, cont_requests=n, runs=["continuous"],
                  host_probe_us=None, graphs=True)
    sc.RUN.pop("host_probe_trace", None)
    return sc.run_sets_at(ridge, float(probe))["continuous"]


def capacity_one(ridge, probe, seed):
    import tempfile

    sc.RUN.update(rate_per_s=2.0, cont_seed=12001, cont_requests=CAP_REQUESTS,
                  runs=["continuous"], host_probe_us=float(probe), graphs=True)
    sc.RUN.pop("host_probe_trace", None)
    with tempfile.TemporaryDirectory() as t:
        sc.predict_sets(ridge, t, per_request=False)
        study = os.path.join(t, "continuous.yaml")
        text = open(study).read().replace(
            "    process: trace\n", "    process: trace\n    seed: %d\n" % seed)
        text += ("  slo:\n    ttft: %g s\n    percentile: %d\n  capacity:\n    requests: %d\n"
                 % (SLO_TTFT_S, SLO_PCT, CAP_REQUESTS))
        with open(study, "w") as f:
            f.write(text)
        return sc.ridge_json(ridge, study)["capacity"]["rate_per_s"]


def capacity(ridge):
    out = {}
    for p in CAP_PROBES:
        xs = [capacity_one(ridge, p, s) for s in CAP_SEEDS]
        out["%d" % p] = {"by_seed": xs, "median": statistics.median(xs)}
        print("probe %d us: capacity %.4f req/s (seeds %s)"
              % (p, out["%d" % p]["median"], ", ".join("%.4f" % x for x in xs)), flush=True)
    with open(os.path.join(HERE, "capacity.json"), "w") as f:
        json.dump({"generated_by": "validate/data/h200/serve14/load_design.py capacity",
                   "slo": {"ttft_s": SLO_TTFT_S, "percentile": SLO_PCT},
                   "requests": CAP_REQUESTS, "seeds": list(CAP_SEEDS),
                   "capacity_by_probe_us": out}, f, indent=1, sort_keys=True)
        f.write("\n")


def cap_at(cap, p):
    """C(p), linear between the computed probes."""
    ks = sorted(int(k) for k in cap)
    p = min(max(p, ks[0]), ks[-1])
    for a, b in zip(ks, ks[1:]):
        if a <= p <= b:
            ca, cb = cap[str(a)]["median"], cap[str(b)]["median"]
            return ca + (cb - ca) * (p - a) / (b - a)
    return cap[str(ks[0])]["median"]


def load_cap():
    return json.load(open(os.path.join(HERE, "capacity.json")))["capacity_by_probe_us"]


def conditioning_probes(ridge, probes):
    """The capacity at the conditioning probes alone (the same figures capacity.json holds)."""
    return {"%d" % p: {"median": statistics.median([capacity_one(ridge, p, s)
                                                     for s in CAP_SEEDS])} for p in probes}


def conditioning(ridge, cap=None):
    cap = cap or load_cap()
    out = {}
    for f in FRACTIONS:
        for p in COND_PROBES:
            rate = round(f * cap_at(cap, p), 2)
            per = {}
            for s in COND_SEEDS:
                per[str(s)] = {"%g" % q: run(ridge, rate, s, 150, q)
                               for q in (p, p * (1 - HOST_ERR), p * (1 + HOST_ERR))}
            row = {"rate_per_s": rate, "targets": {}}
            for label, budget in TARGETS:
                base = [METRIC[label](v["%g" % p]) for v in per.values()]
                sens = [max(abs(METRIC[label](v["%g" % (p * (1 + e))]) / METRIC[label](v["%g" % p])
                                - 1) for e in (-HOST_ERR, HOST_ERR)) for v in per.values()]
                med = statistics.median(base)
                sd = statistics.stdev(base) / med
                s5 = statistics.median(sens)
                row["targets"][label] = {
                    "budget": budget, "median": med, "sd_rel": sd, "host5_median": s5,
                    "host5_max": max(sens), "load": s5 + sd, "ok": s5 + sd <= budget / 2}
            row["served_over_offered"] = statistics.median(
                [v["%g" % p]["requests_per_s"] / rate for v in per.values()])
            out["%g@%d" % (f, p)] = row
            print("f %.2f probe %d (rate %.2f): " % (f, p, rate) + ", ".join(
                "%s %.1f+%.1f%%%s" % (k, 100 * t["host5_median"], 100 * t["sd_rel"],
                                      "" if t["ok"] else "!")
                for k, t in row["targets"].items()), flush=True)
            per_all = out.setdefault("_by_seed", {})
            per_all["%g@%d" % (f, p)] = per
    with open(os.path.join(HERE, "conditioning.json"), "w") as fo:
        json.dump({"generated_by": "validate/data/h200/serve14/load_design.py conditioning",
                   "host_error": HOST_ERR, "seeds": list(COND_SEEDS), "requests": 150,
                   "rule": "a target is well-conditioned at (fraction, probe) when the median "
                           "over the lists of its largest change for a host 5% slower or "
                           "faster, plus its sd over the lists (relative), is at most half "
                           "its budget",
                   "by_fraction_at_probe": out}, fo, indent=1, sort_keys=True)
        fo.write("\n")


def table():
    cap = load_cap()
    rows = {"%d" % p: {k: round(f * cap[str(p)]["median"], 2) for k, f in CHOSEN.items()}
            for p in CAP_PROBES}
    with open(os.path.join(HERE, "rate_table.json"), "w") as f:
        json.dump({"generated_by": "validate/data/h200/serve14/load_design.py table",
                   "fractions": CHOSEN, "seeds": SEEDS,
                   "what": "Poisson rate (req/s) = fraction x Ridge's capacity of the loop at the "
                           "host probe (us), to 0.01 req/s; run14.sh interpolates linearly "
                           "between probes and holds the end values outside 140-440 us",
                   "capacity_by_probe_us": {k: v["median"] for k, v in cap.items()},
                   "rate_by_probe_us": rows}, f, indent=1, sort_keys=True)
        f.write("\n")
    for p in (200, 300, 400):
        print("probe %d us: capacity %.3f, %s" % (p, cap[str(p)]["median"], ", ".join(
            "%s %.2f" % kv for kv in rows[str(p)].items())))


def guard(ridge):
    """The freeze guard's folders: for each set, at the table's rate for probes 200, 300 and
    400 us, serve_compare.py predict (at the GPU spec's probe) and grid (200, 300 and 400 us) of
    the set's list (its seed, 1000 requests, --graphs); and the static set's (seed 14003, 128
    requests) in static/, its grid at 140-440 us in 10 us steps."""
    import subprocess

    table = json.load(open(os.path.join(HERE, "rate_table.json")))
    tool = os.path.join(HERE, "..", "..", "..", "e2e", "serve_compare.py")
    for name, seed in sorted(table["seeds"].items()):
        for p in COND_PROBES:
            rate = table["rate_by_probe_us"]["%d" % p][name]
            d = os.path.join(HERE, "guard", "%s-%dus" % (name, p))
            common = [ridge, d, "--rate", "%g" % rate, "--runs", "continuous", "--cont-seed",
                      str(seed), "--cont-requests", str(CAP_REQUESTS), "--graphs"]
            subprocess.run([sys.executable, tool, "predict"] + common, check=True)
            subprocess.run([sys.executable, tool, "grid"] + common + ["--probes", "200:400:100"],
                           check=True, stdout=subprocess.DEVNULL)
    common = [ridge, os.path.join(HERE, "static"), "--runs", "static", "--static-seed",
              str(STATIC_SEED), "--static-requests", str(STATIC_REQUESTS), "--graphs"]
    subprocess.run([sys.executable, tool, "predict"] + common, check=True)
    subprocess.run([sys.executable, tool, "grid"] + common + ["--probes", "140:440:10"],
                   check=True, stdout=subprocess.DEVNULL)


if __name__ == "__main__":
    ridge = os.path.abspath(sys.argv[1])
    {"capacity": lambda: capacity(ridge), "conditioning": lambda: conditioning(ridge),
     "table": table, "guard": lambda: guard(ridge)}[sys.argv[2]]()
