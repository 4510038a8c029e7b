"""Runs 6-11 under other host-speed inputs than their pre-registered rules (a diagnostic on seen
data, so every figure it prints is a fit or a post-hoc reading, not a prediction; runs 9 and 10's
own rule is loop-trace (and run 11's), their pre-registered figures come from their committed predictions): each
set is
copied to a temporary folder, Ridge predicts it with `serve_compare.py predict --host-probe-us
RULE` there (RULE: loop-trace, the loop's own probe per iteration as engine.host_probe_trace;
side-trace, the side process's samples over the set; side, their mean, run 7's rule; the side
rules for runs 7-11 only), and the issue's 21 targets
are scored against the measured record. Nothing in the committed folders is written.

  python3 validate/data/h200/serve8/trace_diag.py [RIDGE] [RULE ...]
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..", "..", "..")
sys.path.insert(0, os.path.join(HERE, "..", "serve7"))
from analysis import METRICS  # noqa: E402
import serve_compare  # noqa: E402  (on the path analysis.py adds)

RUNS = {"serve6": (6601, 6602, 6603), "serve7": (7701, 7702, 7703),
        "serve8": (8801, 8802, 8803), "serve9": (9901, 9902, 9903),
        "serve10": (10001, 10002, 10003), "serve11": (11001, 11002, 11003)}


def main():
    ridge = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                            os.path.join(ROOT, "build/dev/cli/ridge"))
    rules = sys.argv[2:] or ["loop-trace", "side-trace"]
    sc = os.path.join(ROOT, "validate/e2e/serve_compare.py")
    for rule in rules:
        for run, (s1, s2, s3) in RUNS.items():
            if rule.startswith("side") and run == "serve6":
                continue  # run 6 had no side probe
            with tempfile.TemporaryDirectory() as tmp:
                d = os.path.join(tmp, run)
                shutil.copytree(os.path.join(ROOT, "validate/data/h200", run), d)
                sets = [("", "continuous", ["--rate", "1.4", "--cont-seed", str(s1)]),
                        ("rate2", "continuous", ["--rate", "2.0", "--cont-seed", str(s2)]),
                        ("static", "static", ["--static-seed", str(s3)])]
                met, lines = 0, []
                for sub, kind, args in sets:
                    dd = os.path.join(d, sub)
                    extra = ["--cont-requests", "150"] if kind == "continuous" else []
                    subprocess.run([sys.executable, sc, "predict", ridge, dd, "--host-probe-us",
                                    rule, "--runs", kind] + args + extra, check=True,
                                   capture_output=True)
                    m = serve_compare.load_record(dd)["records"][0]
                    p = json.load(open(os.path.join(dd, "predictions.json")))["predictions"][kind]
                    errs = []
                    for name, tol, get in METRICS:
                        e = get(p) / get(m["summary"]) - 1
                        met += abs(e) <= tol
                        errs.append("%+.1f%%" % (100 * e))
                    lines.append("| %s | %s | %s |" % (run, sub or "1.4 req/s", " | ".join(errs)))
                print("\n%s, %s: %d of 21 within the targets\n" % (run, rule, met))
                print("| run | set | " + " | ".join(n for n, _, _ in METRICS) + " |")
                print("|---|---|" + "---:|" * len(METRICS))
                print("\n".join(lines))


if __name__ == "__main__":
    main()
