"""Errors of the pre-registered attention predictions (validate/prereg/attn-set1).

  python3 validate/prereg/attn-set1/errors.py [--predicted P.json] [--measured M.json]
                                              [--write] [--readme]

Scores validate/data/h200/attn-set1/attn-set1.json (validate/e2e/attention_cases.py on
cases.json) against predictions.json, or another predictions file of this folder given by
--predicted (README.md says which files were committed before the measurement, with which
model). Error = (predicted - measured) / measured of timing.median_us.

The scoring rule, fixed before measuring (README.md): every case is scored. Classes by what the
kernel does: "attention prefill causal" and "attention prefill full" (seq_q > 256, forward,
causal or not), "attention chunk" (forward, 2 <= seq_q <= 512 over a longer cache), "attention
decode" (forward, seq_q 1), "attention fwd_bwd" (forward and backward). Targets (issue 18 point
6): median |error| <= 5%, p90 <= 15%, every class's median <= 10%.
--write writes errors.md and errors.json beside this script; --readme replaces the table between
<!-- attn-set1:begin --> and <!-- attn-set1:end --> in validate/README.md.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import own_prereg  # noqa: E402  (validate/prereg/own_prereg.py: the scoring all sets share)


def attention_class(r):
    p = r["params"]
    if p["pass"] == "fwd_bwd":
        return "attention fwd_bwd"
    if p["seq_q"] == 1:
        return "attention decode"
    if p["seq_q"] < p["seq_kv"] and p["seq_q"] <= 512:
        return "attention chunk"
    return "attention prefill causal" if p["causal"] else "attention prefill full"


if __name__ == "__main__":
    sys.exit(own_prereg.errors_main("attn-set1", HERE, attention_class, (),
                                    "none: every case is scored"))
