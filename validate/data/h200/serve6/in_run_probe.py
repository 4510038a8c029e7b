"""Serving run 6, after the measurement: the host's speed during each set against the probe taken
before it, and the pre-registered grid (grid.json, committed before the run) read at the run's
own probe. A diagnostic, not the pre-registered rule: which in-run figure to read the grid at
(here the iteration-time-weighted mean of the in-loop probes, rounded to the grid's 10 us) was
chosen after seeing the data.

  python3 validate/data/h200/serve6/in_run_probe.py
"""
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..",
                                "e2e"))
from serve_compare import load_record  # noqa: E402  (e2e_serve.json or its .gz)

HERE = os.path.dirname(os.path.abspath(__file__))
SETS = [("", "continuous", "1.4 req/s"), ("rate2", "continuous", "2.0 req/s"),
        ("static", "static", "static")]
METRICS = [("requests/s", lambda c: c["requests_per_s"], lambda s: s["requests_per_s"]),
           ("TTFT p50", lambda c: c["ttft"]["p50_s"], lambda s: s["ttft"]["p50_s"]),
           ("TTFT p99", lambda c: c["ttft"]["p99_s"], lambda s: s["ttft"]["p99_s"]),
           ("TPOT p50", lambda c: c["tpot"]["p50_s"], lambda s: s["tpot"]["p50_s"]),
           ("TPOT p99", lambda c: c["tpot"]["p99_s"], lambda s: s["tpot"]["p99_s"]),
           ("E2E p50", lambda c: c["e2e"]["p50_s"], lambda s: s["e2e"]["p50_s"]),
           ("E2E p99", lambda c: c["e2e"]["p99_s"], lambda s: s["e2e"]["p99_s"])]


def main():
    print("| set | probe before (us) | in-loop probe median | time-weighted mean | grid read at |"
          " " + " | ".join(m for m, _, _ in METRICS) + " |")
    print("|---|---:|---:|---:|---:|" + "---:|" * len(METRICS))
    for sub, kind, name in SETS:
        d = os.path.join(HERE, sub)
        rec = load_record(d)
        r = rec["records"][0]
        its = r["iterations"]
        probes = [it["probe_us"] for it in its]
        w = [it["end_s"] - it["start_s"] for it in its]
        tw = sum(p * x for p, x in zip(probes, w)) / sum(w)
        at = int(round(tw / 10.0)) * 10
        grid = json.load(open(os.path.join(d, "grid.json")))["predictions_by_host_probe_us"]
        c = grid[str(at)][kind]
        s = r["summary"]
        errs = []
        for _, pred, meas in METRICS:
            errs.append("%+.1f%%" % (100 * (pred(c) / meas(s) - 1)))
        before = rec.get("environment", {}).get("host_probe_us", float("nan"))
        print("| %s | %.1f | %.0f | %.0f | %d | %s |" % (name, before, statistics.median(probes), tw,
                                                       at, " | ".join(errs)))


if __name__ == "__main__":
    main()
