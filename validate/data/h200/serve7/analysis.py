"""Serving run 7, after the measurement: what preregistration.md says to report beside the rule's
result. Per set: the rule's input (the side probe's mean over the set), the probe before the set
(run 6's rule), the loop's own probes (median, iteration-time-weighted mean: run 6's diagnostic);
per target, the error at the rule's probe read from grid.json (committed before the run; the
rule's prediction lies between two grid points, so the row gives the grid's local slope
d ln(metric) / d ln(probe) there), and the error of the grid read at the loop's time-weighted
probe and at the probe before the set.

  python3 validate/data/h200/serve7/analysis.py [DIR]     (DIR: a run's folder, default serve7)
"""
import json
import math
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "e2e"))
import serve_compare  # noqa: E402  (the rule's own window and mean)

SETS = [("", "continuous", "1.4 req/s"), ("rate2", "continuous", "2.0 req/s"),
        ("static", "static", "static")]
METRICS = [("requests/s", 0.10, lambda s: s["requests_per_s"]),
           ("TTFT p50", 0.10, lambda s: s["ttft"]["p50_s"]),
           ("TTFT p99", 0.20, lambda s: s["ttft"]["p99_s"]),
           ("TPOT p50", 0.10, lambda s: s["tpot"]["p50_s"]),
           ("TPOT p99", 0.20, lambda s: s["tpot"]["p99_s"]),
           ("E2E p50", 0.10, lambda s: s["e2e"]["p50_s"]),
           ("E2E p99", 0.20, lambda s: s["e2e"]["p99_s"])]


def at(grid, kind, probe, get):
    """The grid's metric at `probe` (us), linear in ln(probe) between its 10 us points."""
    lo = int(probe // 10) * 10
    hi = lo + 10
    if str(hi) not in grid:  # past the grid's last point (360 us)
        return float("nan"), float("nan")
    a = get(grid[str(lo)][kind])
    b = get(grid[str(hi)][kind])
    f = (math.log(probe) - math.log(lo)) / (math.log(hi) - math.log(lo))
    return math.exp(math.log(a) + f * (math.log(b) - math.log(a))), \
        (math.log(b) - math.log(a)) / (math.log(hi) - math.log(lo))


def main():
    met = total = 0
    for sub, kind, name in SETS:
        d = os.path.join(sys.argv[1] if len(sys.argv) > 1 else HERE, sub)
        rec = serve_compare.load_record(d)
        r = rec["records"][0]
        its = r["iterations"]
        probes = [it["probe_us"] for it in its]
        w = [it["end_s"] - it["start_s"] for it in its]
        tw = sum(p * x for p, x in zip(probes, w)) / sum(w)
        side = serve_compare.side_probe(d)
        before = rec["environment"]["host_probe_us"]
        grid = json.load(open(os.path.join(d, "grid.json")))["predictions_by_host_probe_us"]
        pred = json.load(open(os.path.join(d, "predictions.json")))
        print("\n## %s: side probe mean %.0f us (rule), probe before %.1f us, loop probes median "
              "%.0f us, mean per iteration %.0f us, time-weighted %.0f us\n" % (
                  name, side, before, statistics.median(probes), statistics.mean(probes), tw))
        print("| target | measured | Ridge (rule) | error | target met | slope at rule's probe |"
              " grid at rule's probe | grid at time-weighted loop probe | grid at probe before |")
        print("|---|---:|---:|---:|---|---:|---:|---:|---:|")
        for m, tol, get in METRICS:
            meas = get(r["summary"])
            ridge = get(pred["predictions"][kind])
            err = ridge / meas - 1
            g_side, slope = at(grid, kind, side, get)
            g_tw, _ = at(grid, kind, tw, get)
            g_b, _ = at(grid, kind, before, get)
            ok = abs(err) <= tol
            met += ok
            total += 1
            print("| %s | %.4g | %.4g | %+.1f%% | %s | %.2f | %+.1f%% | %+.1f%% | %+.1f%% |" % (
                m, meas, ridge, 100 * err, "yes" if ok else "**no**", slope, 100 * (g_side / meas - 1),
                100 * (g_tw / meas - 1), 100 * (g_b / meas - 1)))
    print("\nTargets met at the rule: %d of %d" % (met, total))


if __name__ == "__main__":
    main()
