"""Issue 18 round 4: what the launch records of every data set say about host_launch_cuda.

  python3 validate/launch_host_fit.py

Reads the launch records (ids launch/eager|dependent|graph/N) of validate/data/h200/launch.json
and own-set1..4, 7..9 (sets 5 and 6 have none) and prices them with a copy of the launch model
(models/launch.cpp: eager = host_launch_cuda + kernel_startup / n per kernel, host-bound;
dependent = queued_launches_s / n; graph = (graph_replay_first + n x graph_node_period) / n),
with the other parameters as configs/hw/h200-sxm-141gb.calibrated.yaml and hw/model_params.cpp
have them. With host_launch_cuda = 4.509 us this copy gives the launch-class medians that
`ridge predict` + errors.py give (sets 3, 4, 7, 9: 4.7, 9.3, 5.4, 10.2%), which checks the copy.
Prints:
  1. each data set's own host period (eager records, kernel_startup / n taken off) and its own
     least-squares fit of host_launch_cuda;
  2. a pooled fit (least squares in relative error, eager records of all sets; and eager plus
     dependent) and, leaving each set out in turn, the held-out set's launch-class median / p90
     |error| against the committed 4.509 us;
  3. the same for the recent-hosts subset (sets 3, 4, 7, 8, 9);
  4. dependent chains past the 1024-deep queue: the queue depth that each record implies when the
     set's own eager period and queued period are used.
Every host_launch_cuda printed here is a FIT.
"""
import json
import math
import os
import statistics as st

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
DATA = os.path.join(ROOT, "validate", "data", "h200")
FILES = {"launch": "launch.json"}
FILES.update({f"set{k}": f"own-set{k}/own-set{k}.json" for k in (1, 2, 3, 4, 7, 8, 9)})
STARTUP = 2.246e-6       # calibrated kernel_startup
PERIOD = 1.359e-6        # hw/model_params.cpp queued_kernel_period
FIRST = 1.74e-6          # queued_first_kernel
GRAPH_FIRST, GRAPH_NODE = 1.337e-6, 0.5009e-6
QUEUE = 1024             # models/launch.hpp kLaunchQueueDepth
COMMITTED = 4.509e-6     # calibrated host_launch_cuda (launch.json's 4 records)
RECENT = ["set3", "set4", "set7", "set8", "set9"]

_cache = {}


def recs(s):
    if s not in _cache:
        with open(os.path.join(DATA, FILES[s])) as f:
            _cache[s] = [r for r in json.load(f)["records"] if r["id"].startswith("launch/")
                         and r["params"]["kind"] in ("eager", "dependent", "graph")]
    return _cache[s]


def dependent(n, h, d=PERIOD, q=QUEUE):
    """models/launch.cpp queued_launches_s, per kernel."""
    if n <= q or h <= d:
        return (FIRST + n * d) / n
    dry = q * d * h / (h - d)
    done = dry / d
    if done >= n:
        return (FIRST + n * d) / n
    return (FIRST + dry + (n - done) * h) / n


def predict(r, h):
    n, kind = r["params"]["kernels"], r["params"]["kind"]
    if kind == "eager":
        return h + STARTUP / n
    if kind == "dependent":
        return dependent(n, h)
    return (GRAPH_FIRST + n * GRAPH_NODE) / n


def errors(s, h, kinds=("eager", "dependent", "graph")):
    return [predict(r, h) / (r["per_kernel_us"] * 1e-6) - 1 for r in recs(s)
            if r["params"]["kind"] in kinds]


def fit(sets, kinds):
    """Least squares in relative error over the records of `kinds` in `sets` (ternary search)."""
    cost = lambda h: sum(x * x for s in sets for x in errors(s, h, kinds))  # noqa: E731
    a, b = 2.5e-6, 6.0e-6
    for _ in range(100):
        m1, m2 = a + (b - a) / 3, b - (b - a) / 3
        if cost(m1) < cost(m2):
            b = m2
        else:
            a = m1
    return (a + b) / 2


def med(xs):
    return 100 * st.median(abs(x) for x in xs)


def p90(xs):
    a = sorted(abs(x) for x in xs)
    return 100 * a[min(len(a) - 1, math.ceil(0.9 * len(a)) - 1)]


def loso(sets, kinds, label):
    h = fit(sets, kinds)
    print(f"\n{label}: pooled fit on {'+'.join(kinds)} records: host_launch_cuda {h * 1e6:.3f} us")
    print("  held-out set: its fit from the others, launch-class median / p90 |error| "
          "committed 4.509 us -> held-out fit")
    allb, alla = [], []
    for s in sets:
        hl = fit([t for t in sets if t != s], kinds)
        b, a = errors(s, COMMITTED), errors(s, hl)
        allb += b
        alla += a
        print(f"  {s:7s} {hl * 1e6:.3f} us   {med(b):4.1f} / {p90(b):4.1f}% -> "
              f"{med(a):4.1f} / {p90(a):4.1f}%   eager+dependent errors (%): "
              f"{[round(100 * x, 1) for x in errors(s, hl, ('eager', 'dependent'))]}")
    print(f"  all held-out launch records: {med(allb):.1f} / {p90(allb):.1f}% -> "
          f"{med(alla):.1f} / {p90(alla):.1f}%")


def main():
    sets = list(FILES)
    print("1. Each host's eager period (per kernel less kernel_startup / n, us) and its own fit")
    own = {}
    for s in sets:
        eager = [r["per_kernel_us"] - STARTUP * 1e6 / r["params"]["kernels"] for r in recs(s)
                 if r["params"]["kind"] == "eager"]
        own[s] = fit([s], ("eager",))
        print(f"  {s:7s} {[round(x, 3) for x in eager]}  fit {own[s] * 1e6:.3f} us")
    v = list(own.values())
    print(f"  spread of the per-set fits: {min(v) * 1e6:.3f}-{max(v) * 1e6:.3f} us, "
          f"median {st.median(v) * 1e6:.3f} us")
    loso(sets, ("eager",), "2a. all sets")
    loso(sets, ("eager", "dependent"), "2b. all sets")
    loso(RECENT, ("eager",), "3. recent hosts (sets 3, 4, 7, 8, 9)")
    print("\n4. Dependent chains past the queue, with the set's own eager and queued periods")
    for s in sets:
        eager = st.median(r["per_kernel_us"] - STARTUP * 1e6 / r["params"]["kernels"]
                          for r in recs(s) if r["params"]["kind"] == "eager") * 1e-6
        d = st.median(r["per_kernel_us"] for r in recs(s) if r["params"]["kind"] == "dependent"
                      and r["params"]["kernels"] <= QUEUE) * 1e-6
        for r in recs(s):
            n = r["params"]["kernels"]
            if r["params"]["kind"] != "dependent" or n <= QUEUE:
                continue
            m = r["per_kernel_us"] * 1e-6
            q = min(range(1, 8000), key=lambda q: abs(dependent(n, eager, d, q) - m))
            print(f"  {s:7s} n={n:5d} measured {m * 1e6:.3f} us, own periods "
                  f"{dependent(n, eager, d) * 1e6:.3f} us ({100 * (dependent(n, eager, d) / m - 1):+.1f}%), "
                  f"queue depth implied {q}")


if __name__ == "__main__":
    main()
