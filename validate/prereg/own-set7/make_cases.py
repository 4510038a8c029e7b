"""Writes validate/prereg/own-set7/cases.json: own-program pre-registered set 7 (issue 18 point 6).

  python3 validate/prereg/own-set7/make_cases.py

Every case is one validate/ridge-bench program at a shape or size that none of the committed
records measured (checked by op and params against validate/data/h200/{gemm,kernels,memory,
launch,compute}.json and the cases of own-set1 to own-set6; the script stops if one is). The file
is a ridge.records/1 document without timings: `ridge predict` predicts it and `ridge-bench
--cases` measures it. Deterministic: the same script writes the same bytes.

Set 7 is set 4's mix of classes (the whole kernel model, not one mechanism) at the shapes of
public models' layers, chosen before the model it is predicted with was frozen: the projections
of Llama-3 8B and 70B, Mistral 7B, GPT-2 small and XL, Phi-2, DeepSeek-V3 and Llama-3 405B at
decode (m 1-64) and prefill / training token counts, their LM heads over GPT-2's unpadded 50257
and a 32001-entry vocabulary (rows of C or k not a multiple of 16 bytes: "gemm misaligned"), and
the elementwise, row, copy and launch classes at sizes and gaps not measured before.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import own_prereg as op  # noqa: E402
from own_prereg import MiB  # noqa: E402


def gemm_cases():
    # (m, n, k) of y = x W^T: m tokens, n output features, k input features.
    shapes = {
        # Llama-3 8B (hidden 4096, QKV 6144, MLP 14336) and 70B (hidden 8192, QKV 10240, gate and
        # up fused 57344, MLP 28672).
        "bf16": [(24, 6144, 4096), (6144, 6144, 4096), (8192, 28672, 4096), (2048, 4096, 14336),
                 (512, 10240, 8192), (128, 57344, 8192), (3072, 8192, 28672), (2, 10240, 8192)],
        # GPT-2 XL (hidden 1600, QKV 4800, MLP 6400), Phi-2 (hidden 2560, MLP 10240).
        "fp16": [(8192, 4800, 1600), (8192, 1600, 6400), (1024, 6400, 1600), (32, 1600, 1600),
                 (4096, 2560, 2560), (64, 10240, 2560), (2048, 2560, 10240), (6144, 7680, 2560)],
        # Llama-3 8B, DeepSeek-V3 (hidden 7168, dense MLP 18432), Llama-3 405B (hidden 16384).
        "fp8_e4m3": [(12288, 6144, 4096), (16384, 4096, 14336), (32, 28672, 4096),
                     (2048, 7168, 7168), (4096, 18432, 7168), (96, 4096, 14336),
                     (256, 16384, 16384), (6144, 16384, 6144)],
        # GPT-2 small (hidden 768, QKV 2304, MLP 3072, vocab padded to 50304) in tf32 and fp32.
        "tf32": [(2048, 768, 768), (4096, 3072, 768), (4096, 768, 3072), (256, 1024, 1024),
                 (128, 50304, 768), (512, 2304, 768), (8192, 2048, 2048), (1024, 4096, 1024)],
        "fp32": [(1024, 768, 768), (2048, 3072, 768), (48, 3072, 768), (4096, 1024, 4096),
                 (768, 2304, 768), (1536, 6144, 1536), (8192, 256, 8192), (2048, 2304, 768)],
    }
    # Rows not a multiple of 16 bytes ("gemm misaligned"): LM heads over GPT-2's 50257 entries
    # (rows of C), their input gradients (k = 50257), a 32001-entry vocabulary, odd cubes.
    misaligned = [("fp16", 8192, 50257, 768),   # n 100514 B: 2-byte rows of C
                  ("bf16", 2048, 50257, 1600),  # n: 2
                  ("tf32", 1024, 50257, 768),   # n 201028 B: 4
                  ("fp16", 4096, 768, 50257),   # k 100514 B: 2 (the head's input gradient)
                  ("bf16", 2048, 1600, 50257),  # k: 2
                  ("bf16", 512, 32001, 4096),   # n 64002 B: 2
                  ("fp16", 16, 32001, 4096),    # n: 2, decode-sized m
                  ("fp16", 4095, 4095, 4095),   # k 8190 B: 2
                  ("tf32", 1001, 2002, 3003),   # k 12012 B: 4
                  ("tf32", 4096, 4096, 1026)]   # k 4104 B: 8
    return op.gemm_cases(shapes, misaligned)


def elementwise_cases():
    contiguous = [("gelu", "bf16", 8192 * 6400), ("silu", "bf16", 4096 * 14336),
                  ("relu", "fp32", 12_000_000), ("add", "fp16", 1 << 26),
                  ("mul", "bf16", 3072 * 4096), ("copy", "fp32", 5_000_000),
                  ("gelu", "fp32", 3 << 23), ("silu", "fp16", 700_000)]
    # Gaps (element bytes x stride) 4-1280 bytes, with the buffer sets ridge-bench rotates over.
    strided = [("copy", "bf16", 1 << 20, 3), ("add", "fp32", 1 << 20, 6),
               ("copy", "fp32", 1 << 19, 48), ("gelu", "fp16", 1 << 19, 160),
               ("relu", "bf16", 1 << 18, 640), ("silu", "fp32", 1 << 17, 96),
               ("mul", "fp16", 1 << 21, 12), ("copy", "fp16", 1 << 22, 2)]
    return op.elementwise_cases(contiguous, strided)


def row_cases():
    # cols a multiple of the 16-byte vector, at most 32768 bf16 / 24576 fp32 (one block per row).
    sets = {
        "softmax": [(65536, 2048, "bf16"), (49152, 1024, "fp32"), (512, 32000, "bf16"),
                    (8192, 4096, "fp32"), (36864, 768, "bf16"), (2048, 12288, "fp32"),
                    (200000, 64, "bf16"), (6000, 5120, "bf16")],
        "layernorm": [(8192, 1600, "bf16"), (16384, 768, "fp32"), (4096, 12288, "bf16"),
                      (2048, 2560, "fp32"), (65536, 1024, "bf16"), (1024, 20480, "fp32"),
                      (30000, 512, "bf16"), (3000, 6400, "fp32")],
        "rmsnorm": [(6144, 4096, "bf16"), (4096, 8192, "fp32"), (16384, 3584, "bf16"),
                    (2048, 7168, "fp32"), (1024, 16384, "bf16"), (60000, 384, "fp32"),
                    (32768, 2304, "bf16"), (500, 24576, "fp32")],
    }
    return op.row_cases(sets)


def membw_cases():
    return op.membw_cases([("read", 44 * MiB), ("write", 960 * MiB), ("copy", 320 * MiB),
                           ("read", 2304 * MiB), ("write", 12 * MiB), ("copy", 36 * MiB),
                           ("read", 640 * MiB), ("write", 5120 * MiB)])


def copy_cases():
    d2d = [256 * 1024, 9 * MiB, 30 * MiB, 136 * MiB, 320 * MiB, 960 * MiB, 1664 * MiB,
           3584 * MiB]
    return op.copy_cases(d2d, [384 * 1024, 20 * MiB, 224 * MiB, 2048 * MiB],
                         [7 * MiB, 28 * MiB, 80 * MiB, 640 * MiB])


def launch_cases():
    return op.launch_cases([80, 400, 1800, 3500, 9000],
                           [("eager", 120), ("eager", 900), ("eager", 4000), ("graph", 250),
                            ("graph", 2200)])


def main():
    cases = (gemm_cases() + elementwise_cases() + row_cases() + membw_cases() + copy_cases() +
             launch_cases())
    op.write_cases("own-set7", HERE, cases,
                   ("own-set1", "own-set2", "own-set3", "own-set4", "own-set5", "own-set6"))


if __name__ == "__main__":
    main()
