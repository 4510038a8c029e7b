"""Ridge e2e: the host's speed sampled through a run by a second process (serving run 7).

  python3 validate/e2e/side_probe.py OUT.csv [--period 0.05]

Every PERIOD seconds, e2e_common.cpu_probe_us() (the fixed pure-Python loop whose time
`engine.host_probe` takes) in this process, written as a CSV line `perf_counter_s,probe_us`
(flushed at once) until the process is terminated. time.perf_counter() is CLOCK_MONOTONIC on
Linux (PEP 418), one clock for every process of the machine, so the samples can be matched to
serve_llama.py's sets (each record's t0_perf_counter_s). Unlike the loop's own probes (taken
between its iterations, so weighted by how long each iteration took), these sample the host at a
fixed rate, independent of what the loop does; the process takes one core of the 16.
"""
import argparse
import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_common import cpu_probe_us  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--period", type=float, default=0.05)
    a = ap.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    with open(a.out, "w") as f:
        f.write("perf_counter_s,probe_us\n")
        while True:
            p = cpu_probe_us()
            f.write("%.6f,%.3f\n" % (time.perf_counter(), p))
            f.flush()
            time.sleep(a.period)


if __name__ == "__main__":
    main()
