#!/usr/bin/env python3
"""serve_compare.py predict --rate record (serving run 12) reads the rate the measured process ran
at from the record's continuous params.rate_per_s, and nothing else.

  python3 tests/serving/rate_record_test.py RIDGE

A synthetic record at 1.73 req/s (seed 12001, 150 requests) carries other rates that a wrong read
would pick up: summary.requests_per_s 1.61, environment.host_probe_us 301.4, a static record's
null rate, serve_llama.py's default 3.0. The check does not compare the written trace with one
made by the same code path: Python's random.expovariate(lambd) is -log(1 - random()) / lambd
(its documented definition), so with one seed every arrival time scales as 1 / rate, and the
trace written at the record's rate times 1.73 must be the rate-1 list's arrivals, to the 6
decimals serve_llama.py rounds to (tolerance: 0.5e-6 x 1.73 + 0.5e-6 s). Then two records that
must be refused: params.rate_per_s missing, and requests that are not the list at the rate read.
"""
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "validate", "e2e"))
import serve_llama as sl  # noqa: E402

RATE, SEED, N = 1.73, 12001, 150
FAILS = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        FAILS.append(what)


def record(d, rate_param, list_rate):
    cont = sl.request_lists(list_rate, sl.SEED, SEED, N)[1]
    rec = {"id": "e2e/serve/continuous/llama3.2-1b",
           "params": {"policy": "continuous", "seed": SEED, "slots": sl.SLOTS},
           "requests": cont, "summary": {"requests_per_s": 1.61}}
    if rate_param is not None:
        rec["params"]["rate_per_s"] = rate_param
    static = {"id": "e2e/serve/static/llama3.2-1b",
              "params": {"policy": "static", "rate_per_s": None, "seed": sl.SEED}}
    doc = {"environment": {"host_probe_us": 301.4}, "records": [static, rec]}
    with open(os.path.join(d, "e2e_serve.json"), "w") as f:
        json.dump(doc, f)


def predict(ridge, d):
    return subprocess.run(
        [sys.executable, os.path.join(ROOT, "validate", "e2e", "serve_compare.py"), "predict",
         ridge, d, "--rate", "record", "--runs", "continuous", "--cont-seed", str(SEED),
         "--cont-requests", str(N), "--host-probe-us", "300"],
        capture_output=True, text=True)


def main():
    ridge = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory() as d:
        record(d, RATE, RATE)
        r = predict(ridge, d)
        check(r.returncode == 0, "predict --rate record runs (%s)" % r.stderr.strip()[-300:])
        if r.returncode == 0:
            reg = json.load(open(os.path.join(d, "predictions.json")))
            check(reg["rate_per_s"] == RATE, "predictions.json rate_per_s %r == %r"
                  % (reg["rate_per_s"], RATE))
            with open(os.path.join(d, "continuous_requests.csv")) as f:
                f.readline()
                got = [float(line.split(",")[0]) for line in f if line.strip()]
            unit = [q["arrival_s"] for q in sl.request_lists(1.0, sl.SEED, SEED, N)[1]]
            tol = 0.5e-6 * RATE + 0.5e-6
            worst = max(abs(a * RATE - b) for a, b in zip(got, unit))
            check(len(got) == N and worst <= tol,
                  "trace arrivals x %g = the rate-1 list's (worst %.2e s, tolerance %.2e s)"
                  % (RATE, worst, tol))
    with tempfile.TemporaryDirectory() as d:
        record(d, None, RATE)
        r = predict(ridge, d)
        check(r.returncode != 0 and "rate_per_s" in r.stderr,
              "a record without params.rate_per_s is refused")
    with tempfile.TemporaryDirectory() as d:
        record(d, RATE, 1.74)
        r = predict(ridge, d)
        check(r.returncode != 0 and "not serve_llama.py's list" in r.stderr,
              "a record whose requests are not the list at its rate is refused")
    sys.exit(1 if FAILS else 0)


if __name__ == "__main__":
    main()
