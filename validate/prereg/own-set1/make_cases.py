"""Writes validate/prereg/own-set1/cases.json: the own-program pre-registered set (issue 18 point 6).

  python3 validate/prereg/own-set1/make_cases.py [--check-only]

Every case is one validate/ridge-bench program at a shape or size that none of the committed
records measured (checked here by op and params against validate/data/h200/{gemm,kernels,memory,
launch,compute}.json; the script stops if one is). The file is a ridge.records/1 document without
timings: `ridge predict` predicts it and `ridge-bench --cases` measures it, writing records with the
same ids and params. Deterministic: the same script writes the same bytes.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from own_prereg import (GiB, MiB, copy_rec, elementwise_rec, gemm_rec, launch_rec,  # noqa: E402
                        membw_rec, rec, row_rec, write_cases)


def gemm_cases():
    # (m, n, k, group): K beyond the sweeps (28672-65536), skinny m the sweeps skip (3-768), odd
    # sizes, and layers of models never measured (Llama-3 70B: hidden 8192, qkv 10240, gate/up
    # 2 x 28672, down k 28672; Mistral/Qwen-like hidden 5120).
    shapes = {
        "bf16": [(2048, 4096, 32768, "long-k"), (512, 8192, 65536, "long-k"),
                 (3, 5120, 5120, "skinny-5120"), (48, 5120, 5120, "skinny-5120"),
                 (384, 5120, 5120, "skinny-5120"), (3000, 5000, 4000, "odd"),
                 (1000, 7000, 3000, "odd"), (6144, 6144, 6144, "square-6144"),
                 (2048, 10240, 8192, "llama3-70b-qkv"), (2048, 57344, 8192, "llama3-70b-gate-up"),
                 (2048, 8192, 28672, "llama3-70b-down"), (96, 28672, 8192, "llama3-70b-gate")],
        "fp16": [(4096, 4096, 28672, "long-k"), (24, 8192, 8192, "skinny"),
                 (768, 5120, 5120, "skinny-5120"), (2500, 3500, 4500, "odd"),
                 (1024, 10240, 8192, "llama3-70b-qkv"), (3072, 3072, 3072, "square-3072"),
                 (128, 28672, 8192, "llama3-70b-gate"), (8192, 2560, 10240, "odd")],
        "fp8_e4m3": [(4096, 8192, 32768, "long-k"), (48, 8192, 8192, "skinny"),
                     (768, 5120, 5120, "skinny-5120"), (3008, 5008, 4000, "odd"),
                     (2048, 57344, 8192, "llama3-70b-gate-up"), (6144, 6144, 6144, "square-6144"),
                     (1024, 10240, 8192, "llama3-70b-qkv"), (256, 28672, 8192, "llama3-70b-gate")],
        "tf32": [(2048, 4096, 32768, "long-k"), (96, 8192, 8192, "skinny"),
                 (384, 5120, 5120, "skinny-5120"), (3000, 5000, 4000, "odd"),
                 (2048, 10240, 8192, "llama3-70b-qkv"), (6144, 6144, 6144, "square-6144"),
                 (4096, 4096, 28672, "long-k"), (24, 5120, 5120, "skinny-5120")],
        "fp32": [(1024, 4096, 32768, "long-k"), (48, 8192, 8192, "skinny"),
                 (384, 5120, 5120, "skinny-5120"), (3000, 5000, 4000, "odd"),
                 (2048, 10240, 8192, "llama3-70b-qkv"), (3072, 3072, 3072, "square-3072"),
                 (8, 5120, 5120, "skinny-5120"), (4096, 2560, 10240, "odd")],
    }
    out = []
    for dtype, lst in shapes.items():
        for m, n, k, _group in lst:
            out.append(gemm_rec(dtype, m, n, k))
    return out


def elementwise_cases():
    out = []
    contiguous = [("add", "bf16", 3_000_000), ("mul", "fp32", 3_000_000), ("copy", "bf16", 50_000_000),
                  ("gelu", "fp32", 50_000_000), ("silu", "bf16", 100_000_000),
                  ("relu", "fp32", 100_000_000), ("add", "fp32", 500_000_000),
                  ("gelu", "bf16", 500_000_000), ("mul", "bf16", 1 << 26), ("silu", "fp32", 1 << 22)]
    strided = [("copy", "fp32", 1 << 22, 3), ("add", "bf16", 1 << 22, 6), ("gelu", "fp32", 10_000_000, 12),
               ("relu", "bf16", 10_000_000, 24), ("mul", "fp32", 1 << 26, 3), ("silu", "bf16", 1 << 26, 5),
               ("copy", "bf16", 1 << 20, 64), ("add", "fp32", 1 << 20, 48)]
    for op, dt, n in contiguous:
        out.append(elementwise_rec(op, dt, n, 1))
    for op, dt, n, s in strided:
        out.append(elementwise_rec(op, dt, n, s))
    return out


def row_cases():
    # cols: a multiple of the 16-byte vector; at most 8 vectors per thread of 1024 threads
    # (bf16 65536 columns, fp32 32768).
    sets = {
        "softmax": [(12288, 768, "bf16"), (6144, 3072, "bf16"), (2048, 6144, "fp32"),
                    (65536, 256, "bf16"), (512, 49152, "bf16"), (3072, 12288, "fp32"),
                    (49152, 128, "fp32"), (1536, 24576, "fp32")],
        "layernorm": [(16384, 1536, "bf16"), (4096, 3072, "fp32"), (2048, 6144, "bf16"),
                      (12288, 2560, "fp32"), (512, 20480, "bf16"), (24576, 512, "fp32"),
                      (3000, 7168, "bf16"), (6144, 10240, "fp32")],
        "rmsnorm": [(16384, 1536, "fp32"), (4096, 3072, "bf16"), (2048, 6144, "fp32"),
                    (12288, 2560, "bf16"), (512, 20480, "fp32"), (24576, 512, "bf16"),
                    (3000, 7168, "fp32"), (6144, 10240, "bf16")],
    }
    out = []
    for op, lst in sets.items():
        for r, c, dt in lst:
            out.append(row_rec(op, r, c, dt))
    return out


def membw_cases():
    out = []
    for kind, b in [("read", 96 * MiB), ("write", 96 * MiB), ("copy", 48 * MiB),
                    ("read", 768 * MiB), ("write", 1536 * MiB), ("copy", 384 * MiB),
                    ("read", 3 * GiB), ("write", 6 * GiB), ("copy", 3 * GiB),
                    ("read", 12 * MiB), ("copy", 6 * MiB)]:
        out.append(membw_rec(kind, b))
    return out


def copy_cases():
    out = []
    for b in [3 * MiB, 12 * MiB, 24 * MiB, 96 * MiB, 384 * MiB, 768 * MiB, 1536 * MiB, 3 * GiB]:
        out.append(copy_rec("d2d", "device", b))
    for d in ["h2d", "d2h"]:
        for mem in ["pinned", "pageable"]:
            for b in [2 * MiB, 24 * MiB, 192 * MiB, 768 * MiB]:
                out.append(copy_rec(d, mem, b))
    return out


def launch_cases():
    out = []
    for n in [30, 300, 3000]:
        for kind in ["dependent", "eager", "graph"]:
            out.append(launch_rec(kind, n))
    return out


def attention_cases():
    lst = [(1, 32, 8, 3072, 3072, 128, True), (2, 40, 8, 2048, 2048, 128, True),
           (1, 64, 8, 6144, 6144, 128, True), (4, 16, 16, 1536, 1536, 64, False),
           (2, 24, 24, 3072, 3072, 64, True), (16, 32, 8, 1, 2048, 128, False),
           (8, 64, 8, 1, 8192, 128, False), (4, 32, 8, 64, 3072, 128, True)]
    out = []
    for b, h, kv, sq, skv, d, causal in lst:
        id_ = f"attention/b{b}_h{h}_kv{kv}_q{sq}_k{skv}_d{d}" + ("_causal" if causal else "")
        out.append(rec(id_, "attention", {"batch": b, "heads": h, "kv_heads": kv, "seq_q": sq,
                                          "seq_kv": skv, "head_dim": d, "causal": causal,
                                          "dtype": "bf16", "pass": "fwd"}))
    return out


def main():
    cases = (gemm_cases() + elementwise_cases() + row_cases() + membw_cases() + copy_cases() +
             launch_cases() + attention_cases())
    write_cases("own-set1", HERE, cases, ())


if __name__ == "__main__":
    main()
