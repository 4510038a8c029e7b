"""Errors of the pre-registered own-program predictions (validate/prereg/own-set6).

  python3 validate/prereg/own-set6/errors.py [--measured M.json] [--predicted P.json] [--write]

Defaults: measured validate/data/h200/own-set6/own-set6.json, predicted
validate/prereg/own-set6/predictions.json. Error = (predicted - measured) / measured of
timing.median_us (kernel time).

The scoring rule, fixed before measuring (README.md): every case is scored, all in one class,
"elementwise strided" (models/calibration.cpp op_class). Targets (issue 18): median
|error| <= 5%, p90 <= 15%, the class median <= 10%. --write writes errors.md and errors.json beside
this script.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import own_prereg  # noqa: E402  (validate/prereg/own_prereg.py: the scoring all sets share)

UNSCORED = ()  # every case is scored


def op_class(r):
    return own_prereg.base_op_class(r)


if __name__ == "__main__":
    sys.exit(own_prereg.errors_main("own-set6", HERE, op_class, UNSCORED,
                                    "none: every case is scored"))
