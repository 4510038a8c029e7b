"""Errors of the pre-registered own-program predictions (validate/prereg/own-set10).

  python3 validate/prereg/own-set10/errors.py [--measured M.json] [--predicted P.json]
                                             [--write] [--readme]

Defaults: measured validate/data/h200/own-set10/own-set10.json, predicted
validate/prereg/own-set10/predictions.json. Error = (predicted - measured) / measured of
timing.median_us (the method each case names: kernel, or per_call for host copies).

The scoring rule, fixed before measuring (README.md): every case is scored. Op classes as
`ridge calibrate` names them (models/calibration.cpp op_class: GEMMs by dtype, elementwise vs
strided elementwise, copies by direction, else the op) except that GEMMs with a leading dimension
(k of A and B, n of C; C is bf16 for fp8 inputs) that is not a multiple of 16 bytes form their own
class, "gemm misaligned". Pageable copies are scored on predictions.json as it is (the fitted
pageable rates; the host probe, run in the same call, is data only).
Targets (issue 18 point 6): median |error| <= 5%, p90 <= 15%, every op class's median <= 10%.
--write writes errors.md and errors.json beside this script; --readme replaces the table between
<!-- own-set10:begin --> and <!-- own-set10:end --> in validate/README.md.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import own_prereg  # noqa: E402  (validate/prereg/own_prereg.py: the scoring all sets share)

UNSCORED = ("attention",)  # no attention case in set 10; everything else is scored


if __name__ == "__main__":
    sys.exit(own_prereg.errors_main("own-set10", HERE, own_prereg.op_class_misaligned_apart,
                                    UNSCORED, "none: every case is scored"))
