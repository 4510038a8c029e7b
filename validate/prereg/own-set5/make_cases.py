"""Writes validate/prereg/own-set5/cases.json: own-program pre-registered set 5 (issue 18 point 6),
strided elementwise reads only: the L2-line residency mechanism of commit 3560504 tested by
extrapolation.

  python3 validate/prereg/own-set5/make_cases.py

Every case is one validate/ridge-bench elementwise program at a gap (stride x element bytes) that
no committed H200 record and no case of sets 1-4 measured: 1536, 3072, 6144, 12288 and 65536
bytes (sets 1-4 stop at 4096, and the cold ones at 1024), each at footprints of touched 128-byte
lines below L2 (4-33 MiB), near its 60 MiB (48-58 MiB) and above it (66-128 MiB), over spans of
192 MiB to 6 GiB (96 to 3072 pages of 2 MiB). The script checks op and params against the
committed records and the four earlier sets (stops on a match). Each case carries, beside its
params, the buffer sets `buffers` that ridge-bench will rotate over (validate/suite_elementwise.cu
run_ew_case: rotation_sets(inputs x n x stride x element + n x element, L2, 128)), which the
model reads as elementwise's `buffers`. Deterministic: the same script writes the same bytes.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from own_prereg import strided_rec, write_cases  # noqa: E402


# (op, dtype, n, stride): gap = stride x element bytes; lines = n x 128 B per input.
STRIDED = [
    ("copy", "fp16", 131072, 768),     # 1536 B, 16 MiB of lines: L2
    ("relu", "bf16", 1048576, 768),    # 1536 B, 128 MiB: HBM (cold past 1 KiB)
    ("copy", "fp16", 655360, 768),     # 1536 B, 80 MiB: HBM
    ("copy", "fp32", 196608, 768),     # 3072 B, 24 MiB: L2
    ("relu", "fp32", 393216, 768),     # 3072 B, 48 MiB (+1.5 output): L2, near capacity
    ("copy", "fp32", 458752, 768),     # 3072 B, 56 MiB (+1.75): L2, at capacity
    ("copy", "fp32", 655360, 768),     # 3072 B, 80 MiB: HBM
    ("copy", "bf16", 196608, 3072),    # 6144 B, 24 MiB: L2
    ("gelu", "bf16", 589824, 3072),    # 6144 B, 72 MiB: HBM
    ("copy", "fp32", 262144, 3072),    # 12288 B, 32 MiB (+1): L2, as set 4's -19% cases
    ("silu", "fp32", 524288, 3072),    # 12288 B, 64 MiB: HBM, 6 GiB span
    ("copy", "fp32", 65536, 16384),    # 65536 B, 8 MiB: L2, 4 GiB span
    ("copy", "fp16", 32768, 32768),    # 65536 B, 4 MiB: L2, 2 GiB span
    ("add", "fp32", 131072, 512),      # 2048 B, two inputs, 32 MiB: L2
    ("mul", "fp16", 196608, 1024),     # 2048 B, two inputs, 48 MiB: L2, near capacity
    ("add", "bf16", 327680, 1536),     # 3072 B, two inputs, 80 MiB: HBM
]


def main():
    cases = [strided_rec(*c) for c in STRIDED]
    write_cases("own-set5", HERE, cases, ("own-set1", "own-set2", "own-set3", "own-set4"))


if __name__ == "__main__":
    main()
