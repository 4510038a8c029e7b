"""Writes validate/prereg/own-set9/cases.json: own-program pre-registered set 9 (issue 18 point 6).

  python3 validate/prereg/own-set9/make_cases.py

Every case is one validate/ridge-bench program at a shape or size that none of the committed
records measured (checked by op and params against validate/data/h200/{gemm,kernels,memory,
launch,compute}.json and the cases of own-set1 to own-set8; the script stops if one is). The file
is a ridge.records/1 document without timings: `ridge predict` predicts it and `ridge-bench
--cases` measures it. Deterministic: the same script writes the same bytes.

Set 9 is set 8's mix of classes again, at the shapes of public models none of sets 1-8 took,
written before the round-3 model it is predicted with was merged (the cases do not see it):
Llama-2 7B and 13B, Yi-34B, OPT-30B, Phi-3-medium, Llama-3.2 3B, Gemma 7B, DeepSeek-V2-Lite,
StableLM-3B, Mixtral-8x7B's experts at a routed token count; T5-XXL, CLIP ViT-L/14 (257 tokens),
Whisper-large's encoder; fp32 training shapes of RoBERTa-base, DistilBERT, GPT-2 small and a
ResNet-style 1x1 convolution as a GEMM; heads over vocabularies of odd size (32001, 50257 at width
768, 30522) and odd widths a user's layer has.
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
        # Llama-2 7B (hidden 4096, MLP 11008), 13B (5120, 13824), Yi-34B (7168, 20480), OPT-30B
        # (7168, 28672).
        "bf16": [(24, 11008, 4096), (2048, 12288, 4096), (4096, 11008, 4096), (512, 5120, 13824),
                 (3072, 20480, 7168), (128, 7168, 20480), (1536, 28672, 7168), (8192, 7168, 7168)],
        # Phi-3-medium (5120, MLP 17920), Llama-3.2 3B (3072, 8192), Gemma 7B (3072, 24576),
        # Whisper-large encoder (1280, 5120, 1500 frames), CLIP ViT-L/14 (1024, 4096, 257 tokens).
        "fp16": [(32, 17920, 5120), (2048, 15360, 5120), (6144, 8192, 3072), (1000, 3072, 24576),
                 (3000, 5120, 1280), (1500, 1280, 5120), (8224, 4096, 1024), (257, 3072, 1024)],
        # DeepSeek-V2-Lite (2048, MLP 10944), StableLM-3B (2560, 6912), Mixtral-8x7B's experts
        # (4096, 14336) at 700 routed tokens, Llama-2 13B.
        "fp8_e4m3": [(4096, 10944, 2048), (48, 2048, 10944), (8192, 6912, 2560),
                     (2560, 2560, 6912), (700, 14336, 4096), (700, 4096, 14336),
                     (12288, 5120, 5120), (256, 13824, 5120)],
        # T5-XXL (4096, d_ff 10240, 64 heads of 64), CLIP ViT-L/14 training shapes.
        "tf32": [(2048, 10240, 4096), (1024, 4096, 10240), (384, 4096, 4096), (8224, 1024, 1024),
                 (2056, 4096, 1024), (128, 10240, 4096), (16448, 3072, 1024), (4112, 1024, 4096)],
        # RoBERTa-base / DistilBERT (768, MLP 3072) at 512 tokens x batch, GPT-2 small, a 1x1
        # convolution of 256 -> 1024 channels over 56x56 pixels.
        "fp32": [(6144, 3072, 768), (3072, 768, 3072), (128, 2304, 768), (12544, 256, 1024),
                 (3136, 1024, 256), (1280, 768, 768), (640, 3072, 768), (2560, 2304, 768)],
    }
    # Rows not a multiple of 16 bytes ("gemm misaligned"): heads over vocabularies of odd size
    # (Llama-2's 32000 plus a pad token, GPT-2 small's 50257 at width 768, BERT's 30522: rows of
    # 4 bytes' alignment in fp16), their input gradients (k = the vocabulary), and odd widths.
    misaligned = [("bf16", 2048, 32001, 4096),  # n 64002 B: 2-byte rows of C
                  ("fp16", 4096, 50257, 768),   # n: 2
                  ("bf16", 2048, 4096, 32001),  # k 64002 B: 2
                  ("fp16", 2048, 768, 50257),   # k: 2
                  ("fp16", 4096, 30522, 768),   # n 61044 B: 4
                  ("bf16", 3000, 1500, 1499),   # k 2998 B: 2
                  ("fp16", 1024, 6000, 3002),   # k 6004 B: 4
                  ("tf32", 4096, 3000, 999),    # k 3996 B: 4
                  ("tf32", 1024, 2048, 6002),   # k 24008 B: 8
                  ("fp32", 2000, 2000, 2001)]   # k 8004 B: 4 (SIMT)
    return op.gemm_cases(shapes, misaligned)


def elementwise_cases():
    contiguous = [("gelu", "bf16", 8192 * 11008), ("silu", "fp16", 4096 * 13824),
                  ("relu", "fp32", 11_000_000), ("add", "fp16", 6144 * 7168),
                  ("mul", "bf16", 3_000_000), ("copy", "fp32", 20_000_000),
                  ("gelu", "fp32", 2_500_000), ("silu", "bf16", 700 * 14336)]
    # Gaps (element bytes x stride) 4-3072 bytes, with the buffer sets ridge-bench rotates over.
    strided = [("copy", "bf16", 1 << 21, 2), ("add", "fp32", 1 << 20, 3),
               ("mul", "fp16", 1 << 20, 12), ("copy", "fp32", 1 << 19, 24),
               ("gelu", "bf16", 1 << 18, 160), ("relu", "fp32", 1 << 17, 768),
               ("silu", "fp16", 1 << 19, 6), ("add", "bf16", 1 << 22, 2)]
    return op.elementwise_cases(contiguous, strided)


def row_cases():
    # cols a multiple of the 16-byte vector, at most 32768 bf16 / 24576 fp32 (one block per row).
    sets = {
        "softmax": [(57344, 2048, "bf16"), (6144, 4096, "fp32"), (384, 32000, "bf16"),
                    (200000, 64, "fp16"), (24576, 512, "bf16"), (2560, 12288, "fp32"),
                    (1000, 2048, "bf16"), (49152, 256, "fp32")],
        "layernorm": [(10240, 4096, "bf16"), (2048, 1024, "fp32"), (257, 1024, "fp32"),
                      (40000, 768, "bf16"), (3000, 1280, "bf16"), (768, 16384, "fp32"),
                      (12000, 2560, "bf16"), (73728, 128, "fp32")],
        "rmsnorm": [(4096, 4096, "bf16"), (10240, 2048, "fp32"), (700, 14336, "bf16"),
                    (32768, 3072, "bf16"), (256, 20480, "fp32"), (120000, 128, "bf16"),
                    (3072, 7168, "bf16"), (16384, 640, "fp32")],
    }
    return op.row_cases(sets)


def membw_cases():
    return op.membw_cases([("read", 36 * MiB), ("write", 1088 * MiB), ("copy", 352 * MiB),
                           ("read", 2176 * MiB), ("write", 44 * MiB), ("copy", 72 * MiB),
                           ("read", 448 * MiB), ("copy", 2816 * MiB)])


def copy_cases():
    d2d = [384 * 1024, 13 * MiB, 26 * MiB, 88 * MiB, 288 * MiB, 736 * MiB, 1600 * MiB,
           3840 * MiB]
    return op.copy_cases(d2d, [896 * 1024, 22 * MiB, 200 * MiB, 960 * MiB],
                         [6 * MiB, 26 * MiB, 72 * MiB, 288 * MiB])


def launch_cases():
    return op.launch_cases([40, 900, 2200, 4200, 10000],
                           [("eager", 450), ("eager", 3300), ("eager", 9000), ("graph", 150),
                            ("graph", 2500)])


def main():
    cases = (gemm_cases() + elementwise_cases() + row_cases() + membw_cases() + copy_cases() +
             launch_cases())
    op.write_cases("own-set9", HERE, cases,
                   ("own-set1", "own-set2", "own-set3", "own-set4", "own-set5", "own-set6",
                    "own-set7", "own-set8"))


if __name__ == "__main__":
    main()
