"""Writes validate/prereg/own-set3/cases.json: own-program pre-registered set 3 (issue 18 point 6).

  python3 validate/prereg/own-set3/make_cases.py [--check-only]

Every case is one validate/ridge-bench program at a shape or size that none of the committed
records measured (checked by op and params against validate/data/h200/{gemm,kernels,memory,
launch,compute}.json and the cases of own-set1 and own-set2; the script stops if one is). The file
is a ridge.records/1 document without timings: `ridge predict` predicts it and `ridge-bench
--cases` measures it. Deterministic: the same script writes the same bytes.

Aimed at what set 2 missed and the mechanisms added since (models at the pre-registration commit):
GEMMs whose rows are 8, 4 and 2 bytes aligned (now scored), dependent launch chains across the
launch queue's depth, strided reads 256, 512 and 1024 bytes apart, bf16 and fp16 GELU / SiLU
(fp16 elementwise is new to validate/: suite_elementwise.cu runs it with __half since this set),
and pageable copies priced from the host probe run in the same call (README.md).
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from own_prereg import (GiB, MiB, copy_rec, elementwise_rec, gemm_rec, launch_rec,  # noqa: E402
                        membw_rec, row_rec, write_cases)


def gemm_cases():
    # (m, n, k). Aligned shapes: leading dimensions (k of A and B, n of C) multiples of 16 bytes;
    # models never measured (Llama-3 70B 28672 x 8192, Qwen 13824, Mistral 14336 with m 16-128),
    # K to 36864, and sizes off every sweep.
    shapes = {
        "bf16": [(16, 28672, 8192), (96, 16384, 5120), (3072, 3072, 3072), (6144, 13824, 5120),
                 (8192, 8192, 14336), (256, 7168, 2048), (10240, 2560, 10240), (1280, 3840, 1280)],
        "fp16": [(24, 4096, 14336), (128, 18432, 4608), (3584, 3584, 7168), (6144, 2048, 24576),
                 (16384, 6144, 2048), (768, 768, 3072), (2816, 11264, 2816), (5000, 4000, 3000)],
        "fp8_e4m3": [(32, 16384, 8192), (128, 8192, 28672), (6144, 6144, 12288),
                     (12288, 12288, 4096), (1536, 3072, 1536), (4096, 2048, 36864),
                     (9216, 9216, 9216), (768, 28672, 8192)],
        "tf32": [(48, 12288, 4096), (128, 4096, 8192), (2560, 2560, 10240), (6144, 6144, 3072),
                 (1000, 2000, 3000), (300, 6000, 1500), (8192, 1024, 16384), (1200, 1200, 1200)],
        "fp32": [(24, 6144, 6144), (128, 8192, 4096), (1500, 1500, 1500), (2560, 5120, 2048),
                 (600, 3000, 900), (6144, 6144, 1024), (3072, 3072, 8192), (200, 20000, 2000)],
    }
    # Rows not a multiple of 16 bytes (scored since this set: "gemm misaligned"): 8-, 4- and
    # 2-byte rows, fp16, bf16 and tf32 (row bytes of k for A and B, n for C).
    misaligned = [("fp16", 2048, 2048, 4100),   # k 8200 B: 8-byte rows
                  ("fp16", 4096, 3000, 2050),   # k 4100 B: 4
                  ("fp16", 1024, 1024, 1025),   # k 2050 B: 2
                  ("bf16", 1024, 6000, 3001),   # k 6002 B: 2
                  ("bf16", 3000, 5004, 4096),   # n 10008 B: 8
                  ("bf16", 4100, 4100, 1030),   # k 2060 B: 4, n 8200 B: 8
                  ("tf32", 2000, 3000, 1001),   # k 4004 B: 4
                  ("tf32", 1536, 2050, 2048)]   # n 8200 B: 8
    out = []
    for dtype, lst in shapes.items():
        for m, n, k in lst:
            out.append(gemm_rec(dtype, m, n, k))
    for dtype, m, n, k in misaligned:
        out.append(gemm_rec(dtype, m, n, k))
    return out


def elementwise_cases():
    out = []
    # bf16 and fp16 activations (GELU, SiLU: the issue-bound kernels), and fp16's other ops.
    contiguous = [("gelu", "bf16", 1 << 26), ("gelu", "fp16", 6_000_000),
                  ("silu", "fp16", 1 << 25), ("silu", "bf16", 48_000_000),
                  ("gelu", "fp16", 200_000_000), ("relu", "fp16", 100_000_000),
                  ("add", "fp16", 1 << 24), ("mul", "fp16", 30_000_000),
                  ("gelu", "bf16", 1 << 22), ("silu", "fp32", 1 << 26)]
    # Gaps (element bytes x stride) of 256, 512 and 1024 bytes (the DRAM-row spread), and three
    # below an atom.
    strided = [("copy", "fp32", 1 << 21, 64), ("add", "bf16", 1 << 20, 128),
               ("relu", "fp32", 1 << 20, 128), ("copy", "bf16", 1 << 20, 256),
               ("gelu", "fp16", 1 << 19, 256), ("copy", "fp32", 1 << 19, 256),
               ("silu", "bf16", 1 << 19, 512), ("add", "fp16", 1 << 22, 2),
               ("mul", "fp16", 1 << 23, 8), ("relu", "fp32", 1 << 23, 6)]
    for op, dt, n in contiguous:
        out.append(elementwise_rec(op, dt, n, 1))
    for op, dt, n, s in strided:
        out.append(elementwise_rec(op, dt, n, s))
    return out


def row_cases():
    # cols a multiple of the 16-byte vector, at most 32768 bf16 / 24576 fp32 (one block per row).
    sets = {
        "softmax": [(8192, 1152, "bf16"), (4096, 3072, "fp32"), (512, 24576, "bf16"),
                    (16384, 896, "fp32"), (6000, 2048, "bf16"), (1536, 12288, "fp32"),
                    (40000, 320, "bf16"), (3000, 7168, "fp32")],
        "layernorm": [(8192, 2304, "bf16"), (6000, 1024, "fp32"), (2048, 18432, "bf16"),
                      (12288, 1536, "fp32"), (30000, 384, "bf16"), (1536, 20480, "fp32"),
                      (5000, 5120, "bf16"), (65536, 128, "fp32")],
        "rmsnorm": [(8192, 2304, "fp32"), (6000, 1024, "bf16"), (2048, 18432, "fp32"),
                    (12288, 1536, "bf16"), (30000, 384, "fp32"), (1536, 20480, "bf16"),
                    (5000, 5120, "fp32"), (65536, 128, "bf16")],
    }
    out = []
    for op, lst in sets.items():
        for r, c, dt in lst:
            out.append(row_rec(op, r, c, dt))
    return out


def membw_cases():
    out = []
    for kind, b in [("read", 80 * MiB), ("write", 768 * MiB), ("copy", 1280 * MiB),
                    ("read", 14 * MiB), ("write", 3 * GiB), ("copy", 200 * MiB),
                    ("read", 2560 * MiB), ("write", 48 * MiB)]:
        out.append(membw_rec(kind, b))
    return out


def copy_cases():
    out = []
    for b in [1536 * 1024, 7 * MiB, 20 * MiB, 112 * MiB, 448 * MiB, 896 * MiB, 1792 * MiB,
              2304 * MiB]:
        out.append(copy_rec("d2d", "device", b))
    # Pageable on both sides of the host cache (35 MB), priced with the host probe (README.md).
    sizes = {"pinned": [1536 * 1024, 18 * MiB, 96 * MiB, 512 * MiB],
             "pageable": [1536 * 1024, 20 * MiB, 96 * MiB, 224 * MiB]}
    for d in ["h2d", "d2h"]:
        for mem in ["pinned", "pageable"]:
            for b in sizes[mem]:
                out.append(copy_rec(d, mem, b))
    return out


def launch_cases():
    # Dependent chains below, near and past the launch queue's 1024 entries; eager and graph.
    out = []
    for n in [50, 200, 800, 1200, 1600, 4000]:
        out.append(launch_rec("dependent", n))
    for kind, n in [("eager", 50), ("eager", 1200), ("graph", 50), ("graph", 4000)]:
        out.append(launch_rec(kind, n))
    return out


def main():
    cases = (gemm_cases() + elementwise_cases() + row_cases() + membw_cases() + copy_cases() +
             launch_cases())
    write_cases("own-set3", HERE, cases, ("own-set1", "own-set2"))


if __name__ == "__main__":
    main()
