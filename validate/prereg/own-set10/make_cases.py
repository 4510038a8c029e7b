"""Writes validate/prereg/own-set10/cases.json: own-program pre-registered set 10 (issue 18 point 6).

  python3 validate/prereg/own-set10/make_cases.py

Every case is one validate/ridge-bench program at a shape or size that none of the committed
records measured (checked by op and params against validate/data/h200/{gemm,kernels,memory,
launch,compute}.json and the cases of own-set1 to own-set9; the script stops if one is). The file
is a ridge.records/1 document without timings: `ridge predict` predicts it and `ridge-bench
--cases` measures it. Deterministic: the same script writes the same bytes.

Set 10 is set 9's mix of classes again, at the shapes of public models none of sets 1-9 took,
written before the round-4 model it is predicted with was merged (the cases do not see it):
Falcon-7B, Baichuan2-13B, InternLM2-20B, Command-R, Nemotron-4 15B / GPT-NeoX-20B, Granite-3 8B,
BLOOM-7B1 / MPT-7B, DiT-XL/2 and SD3's MMDiT widths; fp32 training shapes of ALBERT, ELECTRA-small,
a ResNet-50 3x3 convolution as an im2col GEMM and a small MLP; heads over 32003 and 50281 entries and
odd widths a user's layer has.
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
        # Falcon-7B (hidden 4544, MLP 18176), Baichuan2-13B (5120, 13696), InternLM2-20B (6144,
        # 16384), Command-R (8192, 22528).
        "bf16": [(56, 4672, 4544), (2048, 18176, 4544), (4096, 4544, 18176), (768, 27392, 5120),
                 (6144, 5120, 13696), (20, 16384, 6144), (3584, 6144, 16384),
                 (1024, 22528, 8192)],
        # Nemotron-4 15B / GPT-NeoX-20B (6144, 24576), Granite-3 8B (4096, 12800), DiT-XL/2
        # (1152, 4608; 256 tokens x batch), SD3 MMDiT (1536, 6144).
        "fp16": [(4096, 24576, 6144), (28, 6144, 24576), (1536, 12800, 4096), (8192, 4096, 12800),
                 (16384, 4608, 1152), (8192, 1152, 4608), (9728, 6144, 1536), (4864, 1536, 1536)],
        # BLOOM-7B1 / MPT-7B (4096, 16384), InternLM2-20B, Command-R at decode and prefill.
        "fp8_e4m3": [(6144, 16384, 4096), (3000, 4096, 16384), (24, 16384, 4096),
                     (512, 12288, 6144), (9216, 6144, 6144), (40, 8192, 22528),
                     (2816, 22528, 8192), (1280, 8192, 8192)],
        # DiT-XL/2 and Falcon-7B training shapes in tf32.
        "tf32": [(4096, 4608, 1152), (2048, 1152, 4608), (6144, 3456, 1152), (320, 4544, 4544),
                 (1536, 18176, 4544), (704, 4544, 18176), (12288, 1152, 1152), (96, 4608, 1152)],
        # ALBERT (768, MLP 3072, factorized embeddings 128), ELECTRA-small (256, 1024), a
        # ResNet-50 3x3 convolution as im2col (56x56 x batch 8 = 25088 rows, 64 -> 64 channels,
        # k = 576), a small MLP.
        "fp32": [(4096, 768, 128), (8192, 1024, 256), (8192, 256, 1024), (25088, 64, 576),
                 (6272, 128, 1152), (1536, 3072, 768), (384, 768, 3072), (4096, 512, 512)],
    }
    # Rows not a multiple of 16 bytes ("gemm misaligned"): heads over vocabularies of odd size
    # (32003, 50281), their input gradients (k = the vocabulary), and odd widths.
    misaligned = [("bf16", 1024, 32003, 4096),  # n 64006 B: 2-byte rows of C
                  ("fp16", 2048, 50281, 1024),  # n: 2
                  ("fp16", 1024, 4096, 32003),  # k 64006 B: 2
                  ("bf16", 4096, 1024, 50281),  # k: 2
                  ("bf16", 2000, 2500, 2501),   # k 5002 B: 2
                  ("fp16", 3000, 3000, 3006),   # k 6012 B: 4
                  ("bf16", 512, 7000, 7002),    # k 14004 B: 4
                  ("tf32", 2048, 2048, 2049),   # k 8196 B: 4
                  ("tf32", 3000, 1024, 3002),   # k 12008 B: 8
                  ("fp32", 1500, 1500, 1499)]   # k 5996 B: 4 (SIMT)
    return op.gemm_cases(shapes, misaligned)


def elementwise_cases():
    contiguous = [("gelu", "fp16", 4096 * 18176), ("silu", "bf16", 3072 * 16384),
                  ("relu", "bf16", 5_000_000), ("add", "fp32", 9_000_000),
                  ("mul", "fp16", 6144 * 6144), ("copy", "bf16", 70_000_000),
                  ("gelu", "fp32", 800_000), ("silu", "fp32", 16_000_000)]
    # Gaps (element bytes x stride) 4-2048 bytes, with the buffer sets ridge-bench rotates over.
    strided = [("copy", "fp16", 3 << 20, 2), ("mul", "bf16", 1 << 21, 3),
               ("add", "fp16", 1 << 20, 7), ("copy", "fp32", 1 << 20, 16),
               ("gelu", "fp16", 1 << 19, 100), ("relu", "bf16", 1 << 18, 512),
               ("silu", "fp32", 1 << 20, 3), ("copy", "bf16", 1 << 20, 2)]
    return op.elementwise_cases(contiguous, strided)


def row_cases():
    # cols a multiple of the 16-byte vector, at most 32768 bf16 / 24576 fp32 (one block per row).
    sets = {
        "softmax": [(98304, 1536, "bf16"), (12288, 3072, "fp32"), (448, 27392, "bf16"),
                    (160000, 96, "bf16"), (36864, 768, "fp16"), (3072, 8192, "fp32"),
                    (600, 4096, "bf16"), (90000, 160, "fp32")],
        "layernorm": [(12288, 1152, "bf16"), (3072, 1536, "fp32"), (384, 4544, "bf16"),
                      (50000, 512, "bf16"), (2000, 2560, "fp32"), (1000, 12288, "fp32"),
                      (16384, 4544, "bf16"), (96000, 192, "fp32")],
        "rmsnorm": [(6144, 6144, "bf16"), (12288, 1536, "fp32"), (900, 16384, "bf16"),
                    (24576, 4096, "bf16"), (320, 22528, "fp32"), (140000, 64, "bf16"),
                    (5000, 5120, "bf16"), (20000, 1024, "fp32")],
    }
    return op.row_cases(sets)


def membw_cases():
    return op.membw_cases([("read", 24 * MiB), ("write", 1216 * MiB), ("copy", 416 * MiB),
                           ("read", 1408 * MiB), ("write", 68 * MiB), ("copy", 104 * MiB),
                           ("read", 608 * MiB), ("copy", 2240 * MiB)])


def copy_cases():
    d2d = [448 * 1024, 19 * MiB, 34 * MiB, 120 * MiB, 344 * MiB, 888 * MiB, 2048 * MiB,
           4352 * MiB]
    return op.copy_cases(d2d, [1664 * 1024, 46 * MiB, 240 * MiB, 1200 * MiB],
                         [10 * MiB, 40 * MiB, 104 * MiB, 400 * MiB])


def launch_cases():
    return op.launch_cases([35, 750, 1700, 5000, 12000],
                           [("eager", 250), ("eager", 2700), ("eager", 12000), ("graph", 350),
                            ("graph", 4500)])


def main():
    cases = (gemm_cases() + elementwise_cases() + row_cases() + membw_cases() + copy_cases() +
             launch_cases())
    op.write_cases("own-set10", HERE, cases,
                   ("own-set1", "own-set2", "own-set3", "own-set4", "own-set5", "own-set6",
                    "own-set7", "own-set8", "own-set9"))


if __name__ == "__main__":
    main()
