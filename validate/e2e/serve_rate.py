#!/usr/bin/env python3
"""Serving run 12: the continuous set's Poisson rate from the host's speed just before the set.

  python3 validate/e2e/serve_rate.py RATE_TABLE.json SET [--repeats 101] [--period 0.02]

Times e2e_common.cpu_probe_us() (the fixed pure-Python loop Ridge's engine.host_probe reads)
REPEATS times, one every PERIOD seconds (101 over ~2 s by default), takes the median, and looks
the rate up in the committed table (validate/data/h200/serve12/rate_table.json): the set's
pre-registered load fraction x Ridge's capacity of the loop at that probe, the capacity linear
between the table's probes (10 us apart) and held at the table's ends outside them, rounded to
0.01 req/s. Prints one line, `PROBE_US RATE FRACTION CAPACITY`, for run12.sh to read.
`--probe-us P` skips the probing and looks P up (the dry run, tests).
"""
import argparse
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_common import cpu_probe_us  # noqa: E402


def capacity_at(cap, probe_us):
    """The table's capacity (req/s) at probe_us: linear between its probes, clamped at its ends."""
    pts = sorted((float(k), float(v)) for k, v in cap.items())
    if probe_us <= pts[0][0]:
        return pts[0][1]
    if probe_us >= pts[-1][0]:
        return pts[-1][1]
    for (a, ca), (b, cb) in zip(pts, pts[1:]):
        if a <= probe_us <= b:
            return ca + (cb - ca) * (probe_us - a) / (b - a)
    raise AssertionError("unreachable")


def rate_for(table, set_name, probe_us):
    f = table["fractions"][set_name]
    c = capacity_at(table["capacity_by_probe_us"], probe_us)
    return round(f * c, 2), f, c


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("table")
    ap.add_argument("set")
    ap.add_argument("--repeats", type=int, default=101)
    ap.add_argument("--period", type=float, default=0.02)
    ap.add_argument("--probe-us", type=float, default=None)
    a = ap.parse_args()
    table = json.load(open(a.table))
    if a.set not in table["fractions"]:
        ap.error("set: one of %s" % ", ".join(sorted(table["fractions"])))
    if a.probe_us is None:
        probes = []
        for _ in range(a.repeats):
            probes.append(cpu_probe_us())
            time.sleep(a.period)
        probe = statistics.median(probes)
    else:
        probe = a.probe_us
    rate, f, c = rate_for(table, a.set, probe)
    print("%.1f %.2f %g %.4f" % (probe, rate, f, c))


if __name__ == "__main__":
    main()
