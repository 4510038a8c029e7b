"""The host-set classes of the own-program sets (issue 18): pageable copies and launches, checked
across every committed record that has them (validate/data/h200/memory.json, launch.json and
own-set1..4) for what carries from one lent host to the next.

  python3 validate/prereg/host_classes.py

Prints, from the records alone (no model run):
  1. pageable h2d past the host cache: the two largest copies of each data set, the smaller's
     rate over the larger's, against what a cached prefix of host_cache_bytes would give;
  2. pageable d2h start-up: per data set, T = copy_latency + a + bytes / r with the set's own rate
     r free (the host's level) and a the start-up, each set alone and left out in turn;
  3. each host's levels (cached h2d, DRAM h2d, d2h), the spread a fixed rate cannot follow, and
     the same-call host probe (own-set3 and 4) as a scale, each set from the other's ratio;
  4. launches: the queued period, the eager (host) period, and dependent chains past the queue
     priced with the same call's eager period, with the queue depth each record implies.
All fitted figures printed here are FITS on these records; see docs/accuracy.md ("Host-set
classes").
"""
import json
import math
import os
import statistics

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
DATA = os.path.join(ROOT, "validate", "data", "h200")
FILES = {"memory": "memory.json", "launch": "launch.json"}
FILES.update({f"set{k}": f"own-set{k}/own-set{k}.json" for k in range(1, 5)})
COPY_SETS = ["memory", "set1", "set2", "set3", "set4"]
LAUNCH_SETS = ["launch", "set1", "set2", "set3", "set4"]
COPY_LATENCY = 3.81e-6       # configs/hw/h200-sxm-141gb.calibrated.yaml copy_latency
HOST_CACHE = 35e6            # hw/model_params.cpp host_cache_bytes
QUEUE = 1024                 # models/launch.hpp kLaunchQueueDepth
FIRST = 1.74e-6              # hw/model_params.cpp queued_first_kernel
MiB = 1 << 20


def records(name):
    with open(os.path.join(DATA, FILES[name])) as f:
        return json.load(f)["records"]


def pageable(name, direction):
    """(bytes, median seconds) of a data set's pageable copies in one direction, by size."""
    out = [(r["params"]["bytes"], r["timing"]["median_us"] * 1e-6) for r in records(name)
           if r["op"] == "copy" and r["params"].get("memory") == "pageable"
           and r["params"]["direction"] == direction]
    return sorted(out)


def rate_fit(pts, a):
    """Least squares in log of T = copy_latency + a + B / r over r: the geometric mean."""
    return math.exp(sum(math.log(b / (t - COPY_LATENCY - a)) for b, t in pts) / len(pts))


def cost(pts, a, r):
    return sum(math.log((COPY_LATENCY + a + b / r) / t) ** 2 for b, t in pts)


def startup_fit(groups):
    """Common start-up a (0.1 us grid) with each group's own rate: (a, sum of squares)."""
    best = None
    for i in range(0, 1500):
        a = i * 1e-7
        if any(t - COPY_LATENCY - a <= 0 for g in groups for _, t in g):
            break
        c = sum(cost(g, a, rate_fit(g, a)) for g in groups)
        if best is None or c < best[1]:
            best = (a, c)
    return best


def rms(pts, a):
    return math.sqrt(cost(pts, a, rate_fit(pts, a)) / len(pts))


def section_h2d():
    print("1. pageable h2d past the host cache: smaller / larger copy's rate (a host's own level "
          "cancels)")
    for s in COPY_SETS:
        h = pageable(s, "h2d")
        (b1, t1), (b2, t2) = h[-2], h[-1]
        measured = (b1 / t1) / (b2 / t2)

        def prefix(b):  # time units of the DRAM rate, cached part 1.75x faster
            c = min(b, HOST_CACHE)
            return c / 1.75 + (b - c)
        pred = (b1 / prefix(b1)) / (b2 / prefix(b2))
        print(f"   {s:7} {b1 / MiB:6g} vs {b2 / MiB:6g} MiB: measured {measured:.3f}, "
              f"cached-prefix form {pred:.3f}, whole-or-nothing 1.000")


def section_d2h():
    print("2. pageable d2h start-up (each set's own rate free; FIT)")
    groups = {s: pageable(s, "d2h") for s in COPY_SETS}
    for s, g in groups.items():
        a, _ = startup_fit([g])
        print(f"   {s:7} alone: a = {a * 1e6:5.1f} us, rms log {rms(g, a):.3f} (a = 0: "
              f"{rms(g, 0.0):.3f}), rate {rate_fit(g, a) / 1e9:.2f} GB/s")
    for s in COPY_SETS:
        a, _ = startup_fit([g for k, g in groups.items() if k != s])
        g = groups[s]
        print(f"   without {s:7}: a = {a * 1e6:5.1f} us; on {s}: rms log {rms(g, a):.3f} "
              f"against {rms(g, 0.0):.3f} without a start-up")


def levels(s):
    h = pageable(s, "h2d")
    cached = [x for x in h if x[0] <= HOST_CACHE]
    dram = [x for x in h if x[0] > 64 * MiB]  # past every host's edge
    d2h = pageable(s, "d2h")
    a, _ = startup_fit([d2h])
    return rate_fit(cached, 0.0), rate_fit(dram, 0.0), rate_fit(d2h, a)


def section_levels():
    print("3. each host's levels in GB/s (cached h2d <= 35 MB, DRAM h2d > 64 MiB, d2h with its "
          "start-up)")
    lv = {s: levels(s) for s in COPY_SETS}
    for s, (c, u, d) in lv.items():
        print(f"   {s:7} cached {c / 1e9:5.2f}  DRAM {u / 1e9:5.2f}  d2h {d / 1e9:5.2f}  "
              f"cached/DRAM {c / u:.2f}  d2h/DRAM {d / u:.2f}")
    for i, name in enumerate(("cached", "DRAM", "d2h")):
        v = [x[i] for x in lv.values()]
        lo, hi = min(v), max(v)
        # The best any one fixed rate can do for the slowest and fastest host at once.
        print(f"   {name:6}: {lo / 1e9:.2f}-{hi / 1e9:.2f} GB/s, max/min {hi / lo:.2f}: a fixed "
              f"rate misses one of them by at least {100 * (hi - lo) / (hi + lo):.0f}%")
    probes = {}
    for s in ("set3", "set4"):
        k = s[-1]
        pr = [json.load(open(os.path.join(DATA, f"own-set{k}", f"host-probe-{w}.json")))
              for w in ("before", "after")]
        probes[s] = {q: (pr[0][q] + pr[1][q]) / 2 for q in ("h2d_cached_gbs", "h2d_gbs",
                                                            "d2h_gbs")}
        print(f"   {s} probe (mean of before {pr[0]['h2d_gbs']:.2f} / after "
              f"{pr[1]['h2d_gbs']:.2f} h2d): " + ", ".join(
                  f"{q} {v:.2f}" for q, v in probes[s].items()))
    qs = ("h2d_cached_gbs", "h2d_gbs", "d2h_gbs")
    for s, other in (("set3", "set4"), ("set4", "set3")):
        ratio = [lv[other][i] / 1e9 / probes[other][q] for i, q in enumerate(qs)]
        pred = [ratio[i] * probes[s][q] for i, q in enumerate(qs)]
        err = [100 * (p - lv[s][i] / 1e9) / (lv[s][i] / 1e9) for i, p in enumerate(pred)]
        print(f"   {s} levels from {other}'s level/probe ratios ({', '.join(f'{r:.2f}' for r in ratio)})"
              f" x {s}'s probe: " + ", ".join(f"{n} {e:+.0f}%" for n, e in
                                              zip(("cached", "DRAM", "d2h"), err)))


def queued(n, d, h):
    """models/launch.cpp queued_launches_s per kernel, in us."""
    if n <= QUEUE or h <= d:
        return (FIRST * 1e6 + n * d) / n
    dry = QUEUE * d * h / (h - d)
    done = dry / d
    if done >= n:
        return (FIRST * 1e6 + n * d) / n
    return (FIRST * 1e6 + dry + (n - done) * h) / n


def section_launch():
    print("4. launches (us per kernel); the model: queued period 1.359, host period 4.509")
    for s in LAUNCH_SETS:
        rs = [(r["params"]["kind"], r["params"]["kernels"], r["per_kernel_us"])
              for r in records(s) if r["op"] == "launch"]
        eager = [pk for k, n, pk in rs if k == "eager"]
        h = statistics.median(eager)
        dq = [pk for k, n, pk in rs if k == "dependent" and 100 <= n <= QUEUE]
        d = statistics.median(dq) if dq else 1.359
        graph = [f"{n}:{pk:.3f}" for k, n, pk in rs if k == "graph"]
        print(f"   {s:7} eager {' '.join(f'{pk:.2f}' for pk in eager)} (median {h:.2f}); "
              f"queued period {d:.3f}; graph {' '.join(graph)}")
        for k, n, pk in rs:
            if k != "dependent" or n <= QUEUE:
                continue
            model = queued(n, 1.359, 4.509)
            same = queued(n, d, h)
            # Past the point where the refilled queue runs dry (n > Q h / (h - d)) the chain
            # takes first + (n - Q) h: the depth that record implies at this call's h.
            past = n > QUEUE * h / (h - d)
            q = f"{n - (pk * n - FIRST * 1e6) / h:.0f}" if past else "- (queue not yet dry)"
            print(f"      dependent/{n}: measured {pk:.3f}, model {model:.3f} "
                  f"({100 * (model - pk) / pk:+.1f}%), with this call's periods {same:.3f} "
                  f"({100 * (same - pk) / pk:+.1f}%); queue depth implied {q}")


if __name__ == "__main__":
    section_h2d()
    section_d2h()
    section_levels()
    section_launch()
