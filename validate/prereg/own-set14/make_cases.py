"""Writes validate/prereg/own-set14/cases.json: own-program pre-registered set 14 (issue 18 point 6).

  python3 validate/prereg/own-set14/make_cases.py

Every case is one validate/ridge-bench program at a shape or size that none of the committed
records measured (checked by op and params against validate/data/h200/{gemm,kernels,memory,
launch,compute}.json and the cases of own-set1 to own-set13; the script stops if one is). The file
is a ridge.records/1 document without timings: `ridge predict` predicts it and `ridge-bench
--cases` measures it. Deterministic: the same script writes the same bytes.

Set 14 is set 13's mix of classes again, a replication: the same frozen model (the one that
predicted set 13, plus the attention round, which no case here touches) at the shapes of public
models none of sets 1-13 took: Mixtral 8x7B experts (4096, 14336), Yi-34B (7168, 20480),
BLOOM-176B (14336, 57344), InternLM2-20B (6144, 16384), Baichuan2-13B (5120, 13696), MPT-30B
(7168, 28672), Phi-2 (2560, 10240), DBRX experts (6144, 10752), Falcon-180B (14848, 59392),
Qwen2-57B-A14B experts (3584, 2560), StableLM-2 1.6B (2048, 5632), Yi-9B (4096, 11008); tf32
BERT-large, ViT-L/14 and Whisper-medium shapes; fp32 ResNet-18/50 convolutions as GEMMs,
DistilBERT and small MLPs; odd widths. Every buffer fits in an H100's 80 GB as well as an H200's.
The launch cases run apart from the rest on the device, between two host launch probes
(host_launch_probe.json, "bracket_launch_cases").
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
        # Mixtral 8x7B experts (4096, 14336), Yi-34B (7168, 20480), BLOOM-176B (14336, 57344),
        # InternLM2-20B (6144, 16384).
        "bf16": [(64, 14336, 4096), (2304, 4096, 14336), (1536, 20480, 7168), (20, 7168, 20480),
                 (640, 57344, 14336), (3072, 14336, 57344), (4608, 16384, 6144),
                 (36, 6144, 16384)],
        # Baichuan2-13B (5120, 13696), MPT-30B (7168, 28672), Phi-2 (2560, 10240), DBRX experts
        # (6144, 10752).
        "fp16": [(2048, 13696, 5120), (96, 5120, 13696), (1024, 28672, 7168),
                 (4096, 7168, 28672), (6144, 10240, 2560), (10240, 2560, 10240),
                 (1792, 10752, 6144), (512, 6144, 10752)],
        # Falcon-180B (14848, 59392), Qwen2-57B-A14B experts (3584, 2560), StableLM-2 1.6B
        # (2048, 5632), Yi-9B (4096, 11008) in fp8.
        "fp8_e4m3": [(1024, 59392, 14848), (32, 14848, 59392), (8192, 2560, 3584),
                     (4096, 3584, 2560), (12288, 5632, 2048), (16, 5632, 2048),
                     (3072, 11008, 4096), (6144, 4096, 11008)],
        # BERT-large (1024, 4096) at 4096 and 6144 tokens, ViT-L/14 at 12 and 8 images of 257 tokens,
        # Whisper-medium's encoder (1024, 4096) at 1500 and 3000 frames, in tf32.
        "tf32": [(4096, 4096, 1024), (6144, 1024, 4096), (3084, 4096, 1024), (2056, 1024, 4096),
                 (128, 4096, 1024), (1500, 4096, 1024), (3000, 1024, 4096), (704, 2816, 1408)],
        # ResNet-18 3x3 (64 x 9 = 576 -> 64 at 56x56 x batch 6 = 18816 rows), ResNet-50 1x1
        # (256 -> 64 at the same rows), DistilBERT (768, 3072) at 8 x 128 tokens, a small-batch
        # MLP and odd sizes.
        "fp32": [(18816, 64, 576), (18816, 64, 256), (1024, 3072, 768), (1024, 768, 3072),
                 (64, 4096, 1024), (3000, 3000, 1000), (512, 1024, 8192), (16384, 256, 256)],
    }
    # Rows not a multiple of 16 bytes ("gemm misaligned"): GPT-2's 50257-entry head at another
    # width and its input gradient, Llama-2's 32000 + 1, and odd widths.
    misaligned = [("bf16", 256, 50257, 2048),   # n 100514 B: 2-byte rows of C
                  ("fp16", 2048, 2048, 50257),  # k: 2
                  ("fp16", 640, 32001, 4096),   # n 64002 B: 2
                  ("bf16", 1000, 3000, 1001),   # k 2002 B: 2
                  ("fp16", 3001, 1500, 2500),   # k 5000 B: 8
                  ("bf16", 4000, 4000, 4001),   # k 8002 B: 2
                  ("bf16", 1536, 1536, 1535),   # k 3070 B: 14
                  ("tf32", 3000, 1000, 1001),   # k 4004 B: 4
                  ("tf32", 2000, 3000, 3001),   # k 12004 B: 4
                  ("fp32", 2500, 700, 1001)]    # k 4004 B: 4 (SIMT)
    return op.gemm_cases(shapes, misaligned)


def elementwise_cases():
    contiguous = [("gelu", "bf16", 2304 * 14336), ("silu", "fp16", 1024 * 28672),
                  ("relu", "fp32", 17_000_000), ("add", "bf16", 7168 * 4096),
                  ("mul", "fp32", 5_500_000), ("copy", "bf16", 60_000_000),
                  ("gelu", "fp32", 900_000), ("silu", "bf16", 1_500_000)]
    # Gaps (element bytes x stride) 4-1024 bytes, with the buffer sets ridge-bench rotates over.
    strided = [("copy", "bf16", 9 << 18, 2), ("add", "fp16", 11 << 17, 3),
               ("mul", "fp32", 5 << 18, 2), ("copy", "fp16", 3 << 19, 8),
               ("gelu", "bf16", 5 << 16, 128), ("relu", "fp32", 5 << 16, 256),
               ("silu", "bf16", 13 << 16, 4), ("copy", "fp32", 9 << 17, 6)]
    return op.elementwise_cases(contiguous, strided)


def row_cases():
    # cols a multiple of the 16-byte vector, at most 32768 bf16 / 24576 fp32 (one block per row).
    sets = {
        "softmax": [(36864, 4096, "bf16"), (6144, 7168, "fp32"), (640, 16384, "bf16"),
                    (210000, 80, "bf16"), (16384, 1536, "fp16"), (1700, 14336, "fp32"),
                    (2600, 2560, "bf16"), (90000, 320, "fp32")],
        "layernorm": [(22528, 1024, "bf16"), (5632, 2048, "fp32"), (352, 7168, "bf16"),
                      (150000, 128, "bf16"), (2100, 4096, "fp32"), (600, 14336, "bf16"),
                      (6144, 6144, "bf16"), (50000, 288, "fp32")],
        "rmsnorm": [(12288, 4096, "bf16"), (9000, 3584, "fp32"), (384, 28672, "bf16"),
                    (10240, 5120, "bf16"), (640, 10240, "fp32"), (170000, 96, "bf16"),
                    (2500, 7168, "bf16"), (42000, 384, "fp32")],
    }
    return op.row_cases(sets)


def membw_cases():
    return op.membw_cases([("read", 84 * MiB), ("write", 1888 * MiB), ("copy", 560 * MiB),
                           ("read", 3456 * MiB), ("write", 168 * MiB), ("copy", 296 * MiB),
                           ("read", 1184 * MiB), ("copy", 2304 * MiB)])


def copy_cases():
    d2d = [736 * 1024, 31 * MiB, 78 * MiB, 200 * MiB, 608 * MiB, 1248 * MiB, 2944 * MiB,
           5632 * MiB]
    return op.copy_cases(d2d, [7 * MiB, 68 * MiB, 344 * MiB, 1472 * MiB],
                         [34 * MiB, 100 * MiB, 240 * MiB, 592 * MiB])


def launch_cases():
    return op.launch_cases([75, 1500, 4100, 8300, 14500],
                           [("eager", 800), ("eager", 5200), ("eager", 14000), ("graph", 1100),
                            ("graph", 6100)])


def main():
    cases = (gemm_cases() + elementwise_cases() + row_cases() + membw_cases() + copy_cases() +
             launch_cases())
    op.write_cases("own-set14", HERE, cases,
                   tuple(f"own-set{i}" for i in range(1, 14)))


if __name__ == "__main__":
    main()
