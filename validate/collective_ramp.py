#!/usr/bin/env python3
"""The mid-size shortfall of NCCL's SM-bound collectives on two H200s, against what NCCL's plan
could make of it (docs/collectives.md, "What the mid-size ramp is not").
   python3 validate/collective_ramp.py [validate/data/h200x2/collectives.json]

For each all-reduce series of 2 MiB and more: the measured time, the per-channel pipeline units
NCCL 2.28.9 runs (src/enqueue.cc calcCollChunking, src/device/all_reduce.h runRing /
runTreeSplit, prims_simple.h slices, 24 channels as NCCL logged), the excess over the series' own
2-8 GiB marginal rate, and three least-squares fits (relative error) of the time:
  a + S/B;  a + S/B + tau x units;  a + S/B + c x loops.
A per-unit or per-loop cost can only add time: a negative tau or c rules the plan out."""
import json
import math
import sys

MIB = 1 << 20
CHANNELS = 24  # NCCL's channel{Lo..Hi} = {0..23} for every call of 2 MiB and more (logs.tar.gz)


def lsq(rows):
    """Least squares on rows of (x..., y), each row divided by y (relative error)."""
    k = len(rows[0]) - 1
    a = [[v / r[-1] for v in r[:-1]] for r in rows]
    m = [[sum(x[i] * x[j] for x in a) for j in range(k)] + [sum(x[i] for x in a)] for i in range(k)]
    for i in range(k):
        p = max(range(i, k), key=lambda r: abs(m[r][i]))
        m[i], m[p] = m[p], m[i]
        for r in range(k):
            if r != i:
                f = m[r][i] / m[i][i]
                m[r] = [u - f * v for u, v in zip(m[r], m[i])]
    return [m[i][k] / m[i][i] for i in range(k)]


def ring_plan(size, proto):
    """(units, loops) per channel of a 2-rank ring all-reduce: a loop is send, recv-reduce-copy-
    send, recv (3 primitives) over 2 chunks; Simple: 2 MiB chunks (4 steps of 512 KiB), each
    primitive in 2 slices of at least 32 KiB, the last loop's chunk cut to half what is left;
    LL128: 576,000 B chunks, one step per primitive."""
    c = size / CHANNELS
    chunk = 2 * MIB if proto == "Simple" else 576000
    units = loops = 0
    off = 0.0
    while off < c:
        rem = c - off
        ck = chunk if rem >= 2 * chunk else math.ceil(rem / 2 / 16) * 16
        per = 3 * (math.ceil(ck / max(math.ceil(ck / 32) * 16, 32768)) if proto == "Simple" else 1)
        units += per
        loops += 1
        off += 2 * chunk
    return units, loops


def tree_plan(size, proto):
    """(units, loops) per channel of a 2-rank tree all-reduce: one chunk per step; Simple 512 KiB,
    LL128 NCCL's size rule (NcclTuner::tree_ll128_chunk)."""
    c = size / CHANNELS
    if proto == "Simple":
        chunk = 512 * 1024
    else:
        chunk = 576000
        while c // chunk < 38.4 and chunk > 131072:
            chunk //= 2
        while c // chunk < 9.6 and chunk > 32768:
            chunk //= 2
        chunk = chunk // 1920 * 1920
    n = math.ceil(c / chunk)
    return n, n


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "validate/data/h200x2/collectives.json"
    with open(path) as f:
        recs = json.load(f)["records"]
    for series, plan in [("allreduce/Ring/Simple", ring_plan), ("allreduce/Ring/LL128", ring_plan),
                         ("allreduce/Tree/Simple", tree_plan), ("allreduce/Tree/LL128", tree_plan)]:
        proto = series.rsplit("/", 1)[1]
        rows = sorted((r["params"]["bytes"], r["timing"]["median_us"]) for r in recs
                      if r["id"].rsplit("/", 1)[0] == series and r["params"]["bytes"] >= 2 * MIB)
        (s2, t2), (s8, t8) = rows[-2], rows[-1]
        rate = (s8 - s2) / (t8 - t2) / 1e3  # GB/s, the 2-8 GiB marginal rate
        print(f"{series}: 2-8 GiB marginal rate {rate:.1f} GB/s")
        print("      bytes     time_us  units  loops  excess_us  marginal_GBs_from_previous")
        prev = None
        for s, t in rows:
            u, l = plan(s, proto)
            marg = f"{(s - prev[0]) / (t - prev[1]) / 1e3:.1f}" if prev else ""
            print(f"  {s:11d} {t:10.1f} {u:6d} {l:6d} {t - s / rate / 1e3:10.1f}  {marg}")
            prev = (s, t)
        for name, cols in [("a + S/B", lambda s: [1, s]),
                           ("a + S/B + tau x units", lambda s: [1, s, plan(s, proto)[0]]),
                           ("a + S/B + c x loops", lambda s: [1, s, plan(s, proto)[1]])]:
            coef = lsq([cols(s) + [t] for s, t in rows])
            err = [sum(c * v for c, v in zip(coef, cols(s))) / t - 1 for s, t in rows]
            extra = f", per unit/loop {coef[2]:+.2f} us" if len(coef) > 2 else ""
            print(f"  fit {name:22s}: a {coef[0]:.1f} us, B {1e-3 / coef[1]:.1f} GB/s{extra}; "
                  f"max |error| {100 * max(abs(e) for e in err):.1f}%")
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
