"""Errors of the pre-registered own-program predictions (validate/prereg/own-set14).

  python3 validate/prereg/own-set14/errors.py [--gpu h200|h100] [--host-blind] [--measured M.json]
                                             [--predicted P.json] [--probe PROBE.json]
                                             [--write] [--readme]

Set 14 is pre-registered for two GPUs, since the lent machine may be either: --gpu h200 (default)
scores validate/data/h200/own-set14/own-set14.json against predictions.json (the calibrated H200
overlay); --gpu h100 scores validate/data/h100/own-set14/own-set14.json against
predictions-h100.json (configs/hw/h100-sxm5-80gb.lent.yaml: the H100's datasheet figures with the
H200's fitted model figures and the lent H100's own front-end periods), into errors-h100.md/json
and the block own-set14-h100. Error = (predicted - measured) / measured of timing.median_us (the
method each case names: kernel, or per_call for host copies).

The scoring rule, fixed before measuring (README.md): every case is scored. Op classes as
`ridge calibrate` names them (models/calibration.cpp op_class: GEMMs by dtype, elementwise vs
strided elementwise, copies by direction, else the op) except that GEMMs with a leading dimension
(k of A and B, n of C; C is bf16 for fp8 inputs) that is not a multiple of 16 bytes form their own
class, "gemm misaligned". Launch cases are scored at the host's launch cost, measured by the
probe run just before and just after the launch cases, which run apart from the others (their
mean; launch-probe.json beside the measurement): each launch case's prediction is read off the pre-registered launch_table[-h100].json at the host_launch_cuda where
the table's probe prediction equals the measured probe (own_prereg.launch_conditioned);
--host-blind scores predictions[-h100].json as it is, for comparison. Pageable copies are scored
on the predictions as they are (the fitted pageable rates; the host probe, run in the same call,
is data only).
Targets (issue 18 point 6): median |error| <= 5%, p90 <= 15%, every op class's median <= 10%.
--write writes errors.md and errors.json beside this script; --readme replaces the table between
<!-- own-set14:begin --> and <!-- own-set14:end --> in validate/README.md.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import own_prereg  # noqa: E402  (validate/prereg/own_prereg.py: the scoring all sets share)

UNSCORED = ("attention",)  # no attention case in set 14; everything else is scored


if __name__ == "__main__":
    sys.exit(own_prereg.errors_main("own-set14", HERE, own_prereg.op_class_misaligned_apart,
                                    UNSCORED, "none: every case is scored",
                                    gpus=("h200", "h100"), launch_probe=True))
