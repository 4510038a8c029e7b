"""Writes validate/prereg/own-set11/cases.json: own-program pre-registered set 11 (issue 18 point 6).

  python3 validate/prereg/own-set11/make_cases.py

Every case is one validate/ridge-bench program at a shape or size that none of the committed
records measured (checked by op and params against validate/data/h200/{gemm,kernels,memory,
launch,compute}.json and the cases of own-set1 to own-set10; the script stops if one is). The file
is a ridge.records/1 document without timings: `ridge predict` predicts it and `ridge-bench
--cases` measures it. Deterministic: the same script writes the same bytes.

Set 11 is set 10's mix of classes again, at the shapes of public models none of sets 1-10 took,
written before the model it is predicted with (round 5: the calibrated overlay regenerated with
the launch records of every set) was committed, so the cases do not see it: Llama-3 8B and 70B,
Qwen2.5 7B and 14B, Mistral-Nemo 12B, Gemma-2 9B and 27B, Phi-3-mini, StableLM-3B, Qwen2 1.5B,
DBRX experts, ViT-H/14; fp32 training shapes of DistilBERT, a ResNet-50 1x1 convolution as a
GEMM, a small transformer and an MLP head; odd vocabularies (128256 + 3, 151646) and widths. Every
buffer fits in an H100's 80 GB as well as an H200's, so the set can be measured on either.
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
        # Llama-3 8B (hidden 4096, MLP 14336, KV 1024), Llama-3 70B (8192, 28672), Qwen2.5-7B
        # (3584, 18944), Qwen2.5-14B (5120, 13824).
        "bf16": [(48, 6144, 4096), (3072, 28672, 4096), (2560, 4096, 14336), (12, 57344, 8192),
                 (1536, 8192, 28672), (5120, 37888, 3584), (36, 3584, 18944),
                 (7168, 13824, 5120)],
        # Mistral-Nemo 12B (5120, 14336), Gemma-2 9B (3584, 14336), Gemma-2 27B (4608, 36864),
        # Phi-3-mini (3072, 8192).
        "fp16": [(2304, 28672, 5120), (44, 5120, 14336), (6656, 3584, 14336),
                 (640, 36864, 4608), (3584, 4608, 36864), (10240, 9216, 3072),
                 (768, 3072, 8192), (14336, 4608, 4608)],
        # DBRX experts (6144, 10752), Llama-3 8B and Qwen2.5-14B in fp8.
        "fp8_e4m3": [(1792, 10752, 6144), (2560, 6144, 10752), (28, 14336, 4096),
                     (5632, 28672, 4096), (3328, 5120, 13824), (52, 27648, 5120),
                     (11264, 4096, 4096), (896, 18944, 3584)],
        # StableLM-3B (2560, 6912), Qwen2 1.5B (1536, 8960), ViT-H/14 (1280, 5120; 257 tokens).
        "tf32": [(2048, 6912, 2560), (1280, 2560, 6912), (3072, 8960, 1536), (6144, 1536, 8960),
                 (4112, 5120, 1280), (2056, 1280, 5120), (160, 2560, 2560), (8192, 3840, 1280)],
        # DistilBERT (768, 3072), a ResNet-50 1x1 convolution (28x28 x batch 16 = 12544 rows,
        # 512 -> 128 channels), a small transformer (512, 2048) and an MLP head.
        "fp32": [(2304, 3072, 768), (2560, 768, 3072), (12544, 128, 512), (3136, 512, 2048),
                 (6144, 2048, 512), (1024, 512, 2048), (256, 10000, 512), (8192, 384, 384)],
    }
    # Rows not a multiple of 16 bytes ("gemm misaligned"): heads over odd vocabularies (128259 =
    # Llama-3's 128256 + 3 added tokens, 151646 = Qwen2's tokenizer size), their input gradients
    # (k = the vocabulary), and odd widths.
    misaligned = [("bf16", 512, 128259, 4096),  # n 256518 B: 2-byte rows of C
                  ("fp16", 1024, 151646, 1536),  # n 303292 B: 4
                  ("bf16", 3584, 1024, 151646),  # k: 4
                  ("fp16", 2048, 2048, 128259),  # k: 2
                  ("bf16", 2304, 3000, 3001),   # k 6002 B: 2
                  ("fp16", 1800, 4000, 4002),   # k 8004 B: 4
                  ("bf16", 6000, 1000, 1002),   # k 2004 B: 4
                  ("tf32", 1500, 3000, 3001),   # k 12004 B: 4
                  ("tf32", 2500, 2048, 1026),   # k 4104 B: 8
                  ("fp32", 2000, 1000, 999)]    # k 3996 B: 4 (SIMT)
    return op.gemm_cases(shapes, misaligned)


def elementwise_cases():
    contiguous = [("gelu", "bf16", 3072 * 14336), ("silu", "fp16", 2048 * 18944),
                  ("relu", "fp32", 7_000_000), ("add", "bf16", 12_000_000),
                  ("mul", "fp32", 4096 * 4608), ("copy", "fp16", 90_000_000),
                  ("gelu", "fp16", 600_000), ("silu", "bf16", 26_000_000)]
    # Gaps (element bytes x stride) 4-2048 bytes, with the buffer sets ridge-bench rotates over.
    strided = [("copy", "bf16", 5 << 19, 2), ("add", "fp16", 3 << 19, 3),
               ("mul", "fp32", 3 << 18, 5), ("copy", "fp16", 1 << 20, 24),
               ("gelu", "bf16", 3 << 18, 64), ("relu", "fp32", 1 << 18, 256),
               ("silu", "bf16", 5 << 18, 2), ("copy", "fp32", 3 << 19, 3)]
    return op.elementwise_cases(contiguous, strided)


def row_cases():
    # cols a multiple of the 16-byte vector, at most 32768 bf16 / 24576 fp32 (one block per row).
    sets = {
        "softmax": [(65536, 2560, "bf16"), (8192, 5120, "fp32"), (320, 28672, "bf16"),
                    (200000, 80, "bf16"), (24576, 1280, "fp16"), (2304, 12288, "fp32"),
                    (800, 6144, "bf16"), (120000, 224, "fp32")],
        "layernorm": [(16384, 1280, "bf16"), (4096, 2560, "fp32"), (256, 8192, "bf16"),
                      (70000, 384, "bf16"), (1500, 3584, "fp32"), (700, 16384, "fp32"),
                      (8192, 7168, "bf16"), (80000, 160, "fp32")],
        "rmsnorm": [(9216, 3584, "bf16"), (16384, 2048, "fp32"), (640, 18944, "bf16"),
                    (12288, 5120, "bf16"), (288, 20480, "fp32"), (180000, 96, "bf16"),
                    (3500, 4608, "bf16"), (24000, 768, "fp32")],
    }
    return op.row_cases(sets)


def membw_cases():
    return op.membw_cases([("read", 60 * MiB), ("write", 1600 * MiB), ("copy", 520 * MiB),
                           ("read", 1792 * MiB), ("write", 88 * MiB), ("copy", 152 * MiB),
                           ("read", 736 * MiB), ("copy", 2752 * MiB)])


def copy_cases():
    d2d = [704 * 1024, 23 * MiB, 46 * MiB, 152 * MiB, 408 * MiB, 1000 * MiB, 3328 * MiB,
           5376 * MiB]
    return op.copy_cases(d2d, [2432 * 1024, 60 * MiB, 312 * MiB, 1400 * MiB],
                         [14 * MiB, 56 * MiB, 136 * MiB, 464 * MiB])


def launch_cases():
    return op.launch_cases([45, 1100, 2100, 6500, 15000],
                           [("eager", 320), ("eager", 3400), ("eager", 15000), ("graph", 550),
                            ("graph", 5500)])


def main():
    cases = (gemm_cases() + elementwise_cases() + row_cases() + membw_cases() + copy_cases() +
             launch_cases())
    op.write_cases("own-set11", HERE, cases,
                   ("own-set1", "own-set2", "own-set3", "own-set4", "own-set5", "own-set6",
                    "own-set7", "own-set8", "own-set9", "own-set10"))


if __name__ == "__main__":
    main()
