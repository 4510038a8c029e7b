"""Writes validate/prereg/own-set13/cases.json: own-program pre-registered set 13 (issue 18 point 6).

  python3 validate/prereg/own-set13/make_cases.py

Every case is one validate/ridge-bench program at a shape or size that none of the committed
records measured (checked by op and params against validate/data/h200/{gemm,kernels,memory,
launch,compute}.json and the cases of own-set1 to own-set12; the script stops if one is). The file
is a ridge.records/1 document without timings: `ridge predict` predicts it and `ridge-bench
--cases` measures it. Deterministic: the same script writes the same bytes.

Set 13 is set 12's mix of classes again, at the shapes of public models none of sets 1-12 took,
written before round 7's model was merged (so the cases do not see it): Llama-3.1 405B (16384,
53248), Nemotron-4 340B (18432, 73728), Command-R (8192, 22528), StarCoder2-15B (6144, 24576),
Granite-3 8B (4096, 12800), T5-XXL (4096, 10240), Llama-3.2 3B (3072, 8192), Qwen2.5-3B (2048,
11008), Gemma-2 2B (2304, 9216), DeepSeek-V2-Lite experts (2048, 1408), SD3 (1536, 6144), CLIP
ViT-bigG (1664, 8192); fp32 shapes of a ViT-B/16 (768, 3072 at 197-token images), ResNet-50
3x3 convolutions as GEMMs and an MLP; odd vocabularies (50257, 32001) and widths. Every buffer fits in an H100's
80 GB as well as an H200's. The launch cases run apart from the rest on the device, between two
host launch probes seconds apart (host_launch_probe.json, "bracket_launch_cases").
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
        # Llama-3.1 405B (16384, 53248), Nemotron-4 340B (18432, 73728), Command-R (8192, 22528).
        "bf16": [(48, 53248, 16384), (1792, 16384, 53248), (896, 73728, 18432), (12, 18432, 73728),
                 (3584, 22528, 8192), (5632, 8192, 22528), (28, 8192, 8192 * 3),
                 (2560, 18432, 18432)],
        # StarCoder2-15B (6144, 24576), Granite-3 8B (4096, 12800), T5-XXL (4096, 10240),
        # SD3 (1536, 6144).
        "fp16": [(2560, 24576, 6144), (80, 6144, 24576), (3840, 12800, 4096),
                 (6400, 4096, 12800), (1280, 10240, 4096), (512, 4096, 10240),
                 (9216, 6144, 1536), (7168, 1536, 6144)],
        # Llama-3.2 3B (3072, 8192), Qwen2.5-3B (2048, 11008), DeepSeek-V2-Lite experts
        # (2048, 1408) in fp8.
        "fp8_e4m3": [(5120, 8192, 3072), (2816, 3072, 8192), (44, 11008, 2048),
                     (7424, 2048, 11008), (14336, 1408, 2048), (6144, 2048, 1408),
                     (24, 8192, 3072), (10240, 11008, 2048)],
        # CLIP ViT-bigG (1664, 8192) and Gemma-2 2B (2304, 9216) in tf32.
        "tf32": [(2048, 8192, 1664), (2048, 1664, 8192), (4608, 9216, 2304), (768, 2304, 9216),
                 (160, 8192, 1664), (6656, 1664, 1664), (1024, 4992, 1664), (9216, 768, 2304)],
        # ViT-B/16 (768, 3072) at 8 and 24 images of 197 tokens, ResNet-50 3x3 convolutions as
        # GEMMs (28x28 x batch 16 = 12544 rows, 128 x 9 = 1152 -> 128; 14x14 x 16, 512 x 9 ->
        # 512), a small-batch MLP (2048 -> 8192) and square-ish odd sizes.
        "fp32": [(1576, 3072, 768), (4728, 768, 3072), (12544, 128, 1152), (3136, 512, 4608),
                 (256, 3072, 1024), (2048, 2048, 2048 + 512), (8192, 448, 448), (96, 8192, 2048)],
    }
    # Rows not a multiple of 16 bytes ("gemm misaligned"): heads over GPT-2's 50257 and Llama-2's
    # 32000 + 1 entries, their input gradients, and odd widths.
    misaligned = [("bf16", 512, 50257, 4096),   # n 100514 B: 2-byte rows of C
                  ("fp16", 384, 32001, 5120),   # n 64002 B: 2
                  ("bf16", 4096, 3072, 50257),  # k: 2
                  ("fp16", 5120, 1024, 32001),  # k: 2
                  ("bf16", 3000, 2000, 2001),   # k 4002 B: 2
                  ("fp16", 1500, 4500, 4506),   # k 9012 B: 4
                  ("bf16", 2200, 3300, 3302),   # k 6604 B: 4
                  ("tf32", 2500, 2000, 2003),   # k 8012 B: 4
                  ("tf32", 1300, 5200, 1302),   # k 5208 B: 8
                  ("fp32", 1800, 1800, 1799)]   # k 7196 B: 4 (SIMT)
    return op.gemm_cases(shapes, misaligned)


def elementwise_cases():
    contiguous = [("gelu", "bf16", 3584 * 22528), ("silu", "fp16", 2560 * 24576),
                  ("relu", "fp32", 13_000_000), ("add", "bf16", 6144 * 5120),
                  ("mul", "fp32", 7_300_000), ("copy", "bf16", 44_000_000),
                  ("gelu", "fp32", 1_200_000), ("silu", "bf16", 700_000)]
    # Gaps (element bytes x stride) 4-1536 bytes, with the buffer sets ridge-bench rotates over.
    strided = [("copy", "bf16", 11 << 18, 2), ("add", "fp16", 13 << 17, 3),
               ("mul", "fp32", 3 << 19, 2), ("copy", "fp16", 5 << 19, 16),
               ("gelu", "bf16", 7 << 16, 96), ("relu", "fp32", 3 << 16, 384),
               ("silu", "bf16", 9 << 17, 2), ("copy", "fp32", 7 << 18, 5)]
    return op.elementwise_cases(contiguous, strided)


def row_cases():
    # cols a multiple of the 16-byte vector, at most 32768 bf16 / 24576 fp32 (one block per row).
    sets = {
        "softmax": [(57344, 2560, "bf16"), (4096, 9216, "fp32"), (448, 20480, "bf16"),
                    (300000, 48, "bf16"), (24576, 1152, "fp16"), (2176, 12288, "fp32"),
                    (1400, 3584, "bf16"), (140000, 160, "fp32")],
        "layernorm": [(24576, 768, "bf16"), (3584, 2560, "fp32"), (416, 5120, "bf16"),
                      (110000, 256, "bf16"), (1500, 3072, "fp32"), (480, 22528, "bf16"),
                      (7680, 5120, "bf16"), (72000, 192, "fp32")],
        "rmsnorm": [(8192, 3072, "bf16"), (16384, 2304, "fp32"), (448, 24576, "bf16"),
                    (12288, 4608, "bf16"), (416, 12800, "fp32"), (260000, 64, "bf16"),
                    (3300, 4864, "bf16"), (36000, 448, "fp32")],
    }
    return op.row_cases(sets)


def membw_cases():
    return op.membw_cases([("read", 92 * MiB), ("write", 1632 * MiB), ("copy", 720 * MiB),
                           ("read", 2944 * MiB), ("write", 136 * MiB), ("copy", 232 * MiB),
                           ("read", 1056 * MiB), ("copy", 2688 * MiB)])


def copy_cases():
    d2d = [608 * 1024, 37 * MiB, 66 * MiB, 216 * MiB, 544 * MiB, 1408 * MiB, 3456 * MiB,
           6400 * MiB]
    return op.copy_cases(d2d, [5 * MiB, 88 * MiB, 440 * MiB, 1856 * MiB],
                         [30 * MiB, 84 * MiB, 200 * MiB, 656 * MiB])


def launch_cases():
    return op.launch_cases([90, 1900, 3300, 9500, 16500],
                           [("eager", 600), ("eager", 6600), ("eager", 16500), ("graph", 900),
                            ("graph", 5400)])


def main():
    cases = (gemm_cases() + elementwise_cases() + row_cases() + membw_cases() + copy_cases() +
             launch_cases())
    op.write_cases("own-set13", HERE, cases,
                   tuple(f"own-set{i}" for i in range(1, 13)))


if __name__ == "__main__":
    main()
