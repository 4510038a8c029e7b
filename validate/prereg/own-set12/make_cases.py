"""Writes validate/prereg/own-set12/cases.json: own-program pre-registered set 12 (issue 18 point 6).

  python3 validate/prereg/own-set12/make_cases.py

Every case is one validate/ridge-bench program at a shape or size that none of the committed
records measured (checked by op and params against validate/data/h200/{gemm,kernels,memory,
launch,compute}.json and the cases of own-set1 to own-set11; the script stops if one is). The file
is a ridge.records/1 document without timings: `ridge predict` predicts it and `ridge-bench
--cases` measures it. Deterministic: the same script writes the same bytes.

Set 12 is set 11's mix of classes again, at the shapes of public models none of sets 1-11 took,
written before round 6's model was merged (so the cases do not see it): Mixtral 8x22B experts,
Qwen2.5 32B and 72B, Falcon-40B, GLM-4 9B, Yi-1.5 9B, DeepSeek-Coder 33B, Phi-3.5-MoE experts,
OLMoE experts, Flux (3072, 12288) and SDXL's UNet widths; fp32 training shapes of BERT-base, a
ResNet-50 bottleneck and an MLP; odd vocabularies (65024 + 1, 256000 + 3) and widths. Every buffer
fits in an H100's 80 GB as well as an H200's.
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
        # Mixtral 8x22B experts (hidden 6144, MLP 16384), Qwen2.5-32B (5120, 27648), Qwen2.5-72B
        # (8192, 29568), Falcon-40B (8192, 32768).
        "bf16": [(40, 16384, 6144), (2816, 6144, 16384), (1280, 27648, 5120), (16, 8192, 29568),
                 (2304, 29568, 8192), (6656, 8192, 8192), (24, 32768, 8192),
                 (1664, 8192, 32768)],
        # GLM-4 9B (4096, 13696), Yi-1.5 9B (4096, 11008), DeepSeek-Coder 33B (7168, 19200),
        # Flux (3072, 12288).
        "fp16": [(3328, 13696, 4096), (60, 4096, 13696), (4608, 11008, 4096),
                 (1792, 19200, 7168), (5376, 7168, 19200), (8704, 12288, 3072),
                 (4352, 3072, 12288), (448, 21504, 7168)],
        # Phi-3.5-MoE experts (4096, 6400), OLMoE experts (2048, 1024), Qwen2.5-72B in fp8.
        "fp8_e4m3": [(2304, 6400, 4096), (3584, 4096, 6400), (12800, 1024, 2048),
                     (9728, 2048, 1024), (36, 29568, 8192), (1536, 8192, 29568),
                     (7680, 12800, 5120), (20, 6400, 4096)],
        # SDXL UNet widths (640, 2560; 1280, 5120 at 1024 and 4096 tokens) and GLM-4 9B in tf32.
        "tf32": [(4096, 2560, 640), (4096, 640, 2560), (1024, 5120, 1280), (2048, 1280, 5120),
                 (1536, 13696, 4096), (3072, 4096, 1664), (224, 4096, 4096), (12288, 640, 640)],
        # BERT-base (768, 3072) at other batches, a ResNet-50 bottleneck (14x14 x batch 32 =
        # 6272 rows, 1024 -> 256 channels), an MLP (1024, 4096).
        "fp32": [(3072, 3072, 768), (1536, 768, 3072), (6272, 256, 1024), (6272, 1024, 256),
                 (512, 4096, 1024), (2560, 1024, 4096), (16384, 192, 768), (640, 640, 640)],
    }
    # Rows not a multiple of 16 bytes ("gemm misaligned"): heads over odd vocabularies (65025 =
    # Falcon's 65024 + 1 added token, 256003 = Gemma's 256000 + 3), their input gradients, and
    # odd widths.
    misaligned = [("bf16", 256, 65025, 8192),   # n 130050 B: 2-byte rows of C
                  ("fp16", 512, 256003, 2048),  # n 512006 B: 2
                  ("bf16", 8192, 2048, 65025),  # k: 2
                  ("fp16", 2048, 1024, 256003),  # k: 2
                  ("bf16", 4000, 1500, 1501),   # k 3002 B: 2
                  ("fp16", 2500, 2500, 2506),   # k 5012 B: 4
                  ("bf16", 1200, 6000, 6006),   # k 12012 B: 4
                  ("tf32", 3000, 1500, 1499),   # k 5996 B: 4
                  ("tf32", 1800, 3600, 2050),   # k 8200 B: 8
                  ("fp32", 1200, 2400, 1201)]   # k 4804 B: 4 (SIMT)
    return op.gemm_cases(shapes, misaligned)


def elementwise_cases():
    contiguous = [("gelu", "fp16", 2816 * 16384), ("silu", "bf16", 1280 * 27648),
                  ("relu", "bf16", 11_000_000), ("add", "fp32", 5_000_000),
                  ("mul", "bf16", 8192 * 3072), ("copy", "fp32", 30_000_000),
                  ("gelu", "bf16", 900_000), ("silu", "fp32", 9_000_000)]
    # Gaps (element bytes x stride) 4-2048 bytes, with the buffer sets ridge-bench rotates over.
    strided = [("copy", "fp16", 7 << 18, 2), ("mul", "bf16", 9 << 18, 3),
               ("add", "fp32", 5 << 18, 2), ("copy", "bf16", 3 << 20, 12),
               ("gelu", "fp16", 5 << 17, 48), ("relu", "bf16", 3 << 17, 384),
               ("silu", "fp16", 7 << 17, 2), ("copy", "fp32", 5 << 18, 3)]
    return op.elementwise_cases(contiguous, strided)


def row_cases():
    # cols a multiple of the 16-byte vector, at most 32768 bf16 / 24576 fp32 (one block per row).
    sets = {
        "softmax": [(81920, 2048, "bf16"), (6144, 6144, "fp32"), (384, 24576, "bf16"),
                    (250000, 64, "bf16"), (20480, 1664, "fp16"), (1792, 14336, "fp32"),
                    (1000, 5120, "bf16"), (100000, 288, "fp32")],
        "layernorm": [(20480, 1024, "bf16"), (5120, 2048, "fp32"), (320, 6144, "bf16"),
                      (90000, 320, "bf16"), (1200, 4608, "fp32"), (600, 18432, "fp32"),
                      (6144, 8192, "bf16"), (60000, 224, "fp32")],
        "rmsnorm": [(7168, 4096, "bf16"), (20480, 1536, "fp32"), (512, 21504, "bf16"),
                    (10240, 6144, "bf16"), (352, 16384, "fp32"), (220000, 80, "bf16"),
                    (2800, 5632, "bf16"), (28000, 640, "fp32")],
    }
    return op.row_cases(sets)


def membw_cases():
    return op.membw_cases([("read", 76 * MiB), ("write", 1344 * MiB), ("copy", 600 * MiB),
                           ("read", 2432 * MiB), ("write", 112 * MiB), ("copy", 184 * MiB),
                           ("read", 864 * MiB), ("copy", 3200 * MiB)])


def copy_cases():
    d2d = [896 * 1024, 29 * MiB, 54 * MiB, 184 * MiB, 472 * MiB, 1200 * MiB, 3712 * MiB,
           5888 * MiB]
    return op.copy_cases(d2d, [3072 * 1024, 72 * MiB, 376 * MiB, 1600 * MiB],
                         [22 * MiB, 68 * MiB, 168 * MiB, 560 * MiB])


def launch_cases():
    return op.launch_cases([70, 1400, 2600, 8000, 18000],
                           [("eager", 420), ("eager", 4200), ("eager", 18000), ("graph", 750),
                            ("graph", 6600)])


def main():
    cases = (gemm_cases() + elementwise_cases() + row_cases() + membw_cases() + copy_cases() +
             launch_cases())
    op.write_cases("own-set12", HERE, cases,
                   ("own-set1", "own-set2", "own-set3", "own-set4", "own-set5", "own-set6",
                    "own-set7", "own-set8", "own-set9", "own-set10"))


if __name__ == "__main__":
    main()
