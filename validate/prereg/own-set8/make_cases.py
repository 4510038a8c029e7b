"""Writes validate/prereg/own-set8/cases.json: own-program pre-registered set 7 (issue 18 point 6).

  python3 validate/prereg/own-set8/make_cases.py

Every case is one validate/ridge-bench program at a shape or size that none of the committed
records measured (checked by op and params against validate/data/h200/{gemm,kernels,memory,
launch,compute}.json and the cases of own-set1 to own-set6; the script stops if one is). The file
is a ridge.records/1 document without timings: `ridge predict` predicts it and `ridge-bench
--cases` measures it. Deterministic: the same script writes the same bytes.

Set 8 is set 7's mix of classes again, at the shapes of other public models, chosen before the
model it is predicted with was frozen: the projections of Qwen2.5 7B, 14B and 72B, Mistral-Nemo
12B, Gemma-2 9B and 27B, BERT-large, ViT-H and a diffusion UNet's attention widths at decode and
prefill token counts; fp32 training shapes of BERT-base, GPT-2 medium and ViT-B; LM heads over
GPT-2's 50257 entries at other widths, and rows of 1000-4100 elements a user's own layer has.
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
        # Qwen2.5 7B (hidden 3584, QKV 4608, MLP 18944), 72B (hidden 8192, MLP 29568), Gemma-2
        # 27B (hidden 4608, MLP 36864).
        "bf16": [(40, 4608, 3584), (4096, 4608, 3584), (4096, 18944, 3584), (1024, 3584, 18944),
                 (256, 29568, 8192), (6144, 8192, 29568), (8, 36864, 4608), (2048, 4608, 36864)],
        # Mistral-Nemo 12B (hidden 5120, MLP 14336), BERT-large (1024, MLP 4096), ViT-H (1280,
        # MLP 5120), a diffusion UNet's attention widths (320, 640, 1280).
        "fp16": [(16384, 1024, 1024), (16384, 4096, 1024), (8192, 1280, 5120), (12, 14336, 5120),
                 (3072, 5120, 14336), (4096, 320, 320), (16384, 640, 640), (2560, 1280, 1280)],
        # Qwen2.5 14B (hidden 5120, MLP 13824), Gemma-2 9B (hidden 3584, MLP 14336), 72B.
        "fp8_e4m3": [(8192, 5120, 5120), (4096, 13824, 5120), (16, 13824, 5120),
                     (2048, 3584, 14336), (512, 29568, 8192), (64, 8192, 29568),
                     (10240, 14336, 3584), (1536, 5120, 13824)],
        # BERT-base (768, MLP 3072), GPT-2 medium (1024, MLP 4096), ViT-B/16 (768, 197 tokens).
        "tf32": [(4096, 2304, 768), (8192, 1024, 4096), (1576, 3072, 768), (2048, 3072, 1024),
                 (512, 4096, 1024), (64, 768, 3072), (3152, 768, 768), (6144, 1024, 1024)],
        "fp32": [(4096, 3072, 768), (2048, 1024, 4096), (1576, 768, 3072), (512, 3072, 1024),
                 (8192, 768, 768), (256, 2304, 768), (1024, 4096, 1024), (96, 1024, 1024)],
    }
    # Rows not a multiple of 16 bytes ("gemm misaligned"): GPT-2 medium/large heads over 50257
    # entries (rows of C), their input gradients (k = 50257), and a user's own odd widths.
    misaligned = [("bf16", 4096, 50257, 1024),  # n 100514 B: 2-byte rows of C
                  ("fp16", 1024, 50257, 1280),  # n: 2
                  ("bf16", 4096, 1024, 50257),  # k 100514 B: 2
                  ("fp16", 8192, 1280, 50257),  # k: 2
                  ("fp16", 2048, 3000, 1001),   # k 2002 B: 2
                  ("bf16", 1000, 4100, 4100),   # k 8200 B: 8
                  ("fp16", 512, 2050, 2050),    # k 4100 B: 4
                  ("tf32", 2048, 1000, 1001),   # k 4004 B: 4
                  ("tf32", 512, 4096, 2050),    # k 8200 B: 8
                  ("fp32", 3000, 3000, 1001)]   # k 4004 B: 4 (SIMT)
    return op.gemm_cases(shapes, misaligned)


def elementwise_cases():
    contiguous = [("gelu", "fp16", 16384 * 4096), ("silu", "bf16", 4096 * 18944),
                  ("relu", "bf16", 9_000_000), ("add", "bf16", 8192 * 5120),
                  ("mul", "fp32", 30_000_000), ("copy", "bf16", 1 << 25),
                  ("gelu", "bf16", 1_500_000), ("silu", "fp32", 6_000_000)]
    # Gaps (element bytes x stride) 6-2560 bytes, with the buffer sets ridge-bench rotates over.
    strided = [("copy", "fp16", 1 << 21, 3), ("add", "bf16", 1 << 20, 10),
               ("copy", "bf16", 1 << 19, 40), ("gelu", "fp32", 1 << 18, 80),
               ("relu", "fp16", 1 << 18, 320), ("silu", "bf16", 1 << 17, 1280),
               ("mul", "fp32", 1 << 20, 5), ("copy", "fp32", 1 << 22, 2)]
    return op.elementwise_cases(contiguous, strided)


def row_cases():
    # cols a multiple of the 16-byte vector, at most 32768 bf16 / 24576 fp32 (one block per row).
    sets = {
        "softmax": [(114688, 1024, "bf16"), (28672, 2048, "fp32"), (256, 31744, "bf16"),
                    (16384, 3072, "bf16"), (40960, 512, "fp32"), (1536, 16384, "fp32"),
                    (300000, 32, "bf16"), (5000, 6144, "fp32")],
        "layernorm": [(16384, 1024, "bf16"), (4096, 1280, "fp32"), (6144, 5120, "bf16"),
                      (1576, 768, "fp32"), (100000, 320, "bf16"), (512, 24576, "fp32"),
                      (20000, 640, "bf16"), (6000, 4608, "fp32")],
        "rmsnorm": [(8192, 3584, "bf16"), (4096, 5120, "fp32"), (16384, 4608, "bf16"),
                    (2048, 8192, "fp32"), (512, 29568, "bf16"), (80000, 256, "fp32"),
                    (24576, 1536, "bf16"), (1200, 18944, "fp32")],
    }
    return op.row_cases(sets)


def membw_cases():
    return op.membw_cases([("read", 52 * MiB), ("write", 1408 * MiB), ("copy", 192 * MiB),
                           ("read", 3328 * MiB), ("write", 20 * MiB), ("copy", 28 * MiB),
                           ("read", 832 * MiB), ("write", 4608 * MiB)])


def copy_cases():
    d2d = [640 * 1024, 11 * MiB, 44 * MiB, 208 * MiB, 416 * MiB, 1344 * MiB, 2432 * MiB,
           5120 * MiB]
    return op.copy_cases(d2d, [1280 * 1024, 36 * MiB, 352 * MiB, 1536 * MiB],
                         [11 * MiB, 18 * MiB, 120 * MiB, 480 * MiB])


def launch_cases():
    return op.launch_cases([60, 600, 1300, 2800, 7500],
                           [("eager", 200), ("eager", 1500), ("eager", 6000), ("graph", 450),
                            ("graph", 5000)])


def main():
    cases = (gemm_cases() + elementwise_cases() + row_cases() + membw_cases() + copy_cases() +
             launch_cases())
    op.write_cases("own-set8", HERE, cases,
                   ("own-set1", "own-set2", "own-set3", "own-set4", "own-set5", "own-set6",
                    "own-set7"))


if __name__ == "__main__":
    main()
