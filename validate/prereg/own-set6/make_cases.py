"""Writes validate/prereg/own-set6/cases.json: own-program pre-registered set 6 (issue 18), strided
elementwise reads only: the swept-L2 hit fraction and the cold cap of commit d72d8e5 tested
by extrapolation.

  python3 validate/prereg/own-set6/make_cases.py

Every case is one validate/ridge-bench elementwise program at a gap (stride x element bytes) that
no committed H200 record and no case of sets 1-5 measured: 640, 2560, 5120, 8192, 10240, 16384,
20480, 24576, 131072 and 262144 bytes. Footprints of touched 128-byte lines (with the output)
spread over 10-90 MiB, five of them over 2 or 3 buffer sets (ridge-bench rotates over them
when the span is under 4 x L2; sets 1-5 had no strided case below 80 MiB with more than 1 set
but one), four of them with two inputs; three cold cases at 16-24 KiB gaps (73-90 MiB of lines,
10-14 GiB spans) test the cap of the per-atom rise at an HBM3 page; two at 128 and 256 KiB with
2-4 MiB of lines test that lines far apart are kept all the same. The script checks op and params
against the committed records and the five earlier sets (stops on a match). Each case carries,
beside its params, the buffer sets `buffers` that ridge-bench will rotate over
(validate/suite_elementwise.cu run_ew_case: rotation_sets(inputs x n x stride x element + n x
element, L2, 128)), which the model reads as elementwise's `buffers`. Deterministic: the same
script writes the same bytes.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from own_prereg import strided_rec, write_cases  # noqa: E402


# (op, dtype, n, stride): gap = stride x element bytes; lines = n x 128 B per input.
STRIDED = [
    ("copy", "fp32", 81920, 640),      # 2560 B, 2 sets, 20.6 MiB
    ("silu", "bf16", 196608, 320),     # 640 B, 2 sets, 48.8 MiB
    ("gelu", "fp32", 163840, 160),     # 640 B, 3 sets, 61.9 MiB
    ("mul", "fp32", 65536, 160),       # 640 B, two inputs, 3 sets, 48.8 MiB
    ("add", "fp16", 114688, 320),      # 640 B, two inputs, 2 sets, 56.4 MiB
    ("copy", "bf16", 81920, 2560),     # 5120 B, 10.2 MiB
    ("relu", "fp32", 229376, 1280),    # 5120 B, 28.9 MiB
    ("copy", "fp16", 327680, 2560),    # 5120 B, 40.6 MiB
    ("silu", "fp32", 344064, 2048),    # 8192 B, 43.3 MiB
    ("copy", "fp32", 458752, 2560),    # 10240 B, 57.8 MiB
    ("add", "bf16", 229376, 1280),     # 2560 B, two inputs, 56.4 MiB
    ("relu", "fp16", 524288, 1280),    # 2560 B, 65 MiB
    ("mul", "bf16", 294912, 2560),     # 5120 B, two inputs, 72.6 MiB
    ("copy", "fp32", 622592, 640),     # 2560 B, 78.4 MiB
    ("copy", "fp32", 655360, 4096),    # 16384 B, 82.5 MiB, 10 GiB span: cold
    ("relu", "bf16", 720896, 10240),   # 20480 B, 89.4 MiB, 13.75 GiB span: cold
    ("gelu", "fp16", 589824, 12288),   # 24576 B, 73.1 MiB, 13.5 GiB span: cold
    ("copy", "fp32", 32768, 32768),    # 131072 B, 4.1 MiB, 4 GiB span
    ("copy", "bf16", 16384, 131072),   # 262144 B, 2 MiB, 4 GiB span
]


def main():
    cases = [strided_rec(*c) for c in STRIDED]
    write_cases("own-set6", HERE, cases,
                ("own-set1", "own-set2", "own-set3", "own-set4", "own-set5"))


if __name__ == "__main__":
    main()
