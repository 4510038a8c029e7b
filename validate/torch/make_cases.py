"""Writes the case lists of validate/torch's measurement sets (JSON lists of {id, op, params}).

  python3 validate/torch/make_cases.py train > validate/torch/sets/train.json

`train` is set 1 (measured first, used to understand the kernels and set the model's
parameters). Later sets are chosen after the model is frozen and pre-registered under
validate/prereg/<name>/ (validate/README.md, "Framework ops").
"""
import json
import sys


def case(kind, **p):
    key = "/".join(f"{k}{v}" if not isinstance(v, str) else v for k, v in p.items())
    return {"id": f"{kind}/{key}", "op": kind, "params": p}


def train():
    c = []
    for dt in ("bf16", "fp32"):
        for r, n in ((65536, 64), (16384, 256), (4096, 1024), (4096, 2048), (4096, 4096),
                     (1024, 8192), (1024, 16384), (256, 32768), (128, 65536)):
            c.append(case("torch_softmax", rows=r, cols=n, dtype=dt))
    for r, n in ((16384, 256), (4096, 2048), (1024, 16384)):
        c.append(case("torch_softmax", rows=r, cols=n, dtype="bf16", **{"pass": "bwd"}))
    for r, v in ((1024, 32000), (2048, 50257), (4096, 32000)):
        for ps in ("fwd", "bwd"):
            c.append(case("torch_softmax", rows=r, cols=v, dtype="fp32", log=True, **{"pass": ps}))
            c.append(case("torch_nll_loss", rows=r, vocab=v, **{"pass": ps}))
            c.append(case("torch_cross_entropy", rows=r, vocab=v, logits_dtype="fp32",
                          loss_dtype="fp32", **{"pass": ps}))
            c.append(case("torch_cross_entropy", rows=r, vocab=v, logits_dtype="bf16",
                          loss_dtype="fp32", **{"pass": ps}))
    for r, n in ((4096, 768), (8192, 1024), (8192, 2048), (2048, 4096)):
        for ps in ("fwd", "bwd"):
            for dt in ("bf16", "fp32"):
                c.append(case("torch_layernorm", rows=r, cols=n, dtype=dt, **{"pass": ps}))
            for impl in ("fused", "composed"):
                c.append(case("torch_rmsnorm", rows=r, cols=n, dtype="bf16", impl=impl,
                              **{"pass": ps}))
    for n in (1 << 20, 1 << 24, 1 << 26):
        for ap in ("none", "tanh"):
            for ps in ("fwd", "bwd"):
                c.append(case("torch_gelu", n=n, dtype="bf16", approximate=ap, **{"pass": ps}))
        c.append(case("torch_gelu", n=n, dtype="fp32", approximate="none", **{"pass": "fwd"}))
    # [B,S,H,D] -> [B,H,S,D] (attention heads), and 2-D transposes.
    for o, a, b, i in ((8, 1024, 16, 64), (4, 2048, 32, 128), (1, 4096, 4096, 1),
                       (1, 8192, 1024, 1), (32, 512, 12, 64)):
        c.append(case("torch_transpose_copy", outer=o, a=a, b=b, inner=i, dtype="bf16"))
    for k, r, n, dim in ((2, 8192, 2048, "cols"), (3, 4096, 4096, "cols"), (2, 8192, 2048, "rows"),
                         (4, 4096, 1024, "rows"), (3, 16384, 128, "cols")):
        for via in ("cat", "split_bwd"):
            c.append(case("torch_cat", pieces=k, rows=r, cols=n, dim=dim, dtype="bf16", via=via))
    for s in (1, 2, 4, 8):
        c.append(case("elementwise", op="copy", n=1 << 24, dtype="fp32", stride=s))
    return c


def set2():
    """Set 2, chosen after the model was frozen: other shapes than set 1, mostly larger rows,
    other hidden sizes (768..8192 -> 896, 1536, 2560, 5120, 6144, 12288, 20480), other
    vocabularies (32000/50257 -> 65536, 128256, 151936, 256000), more rows than nll_loss's
    thread clamp, a bf16 loss, fp32 tanh GELU, and other strides."""
    c = []
    for dt in ("bf16", "fp32"):
        for r, n in ((131072, 32), (32768, 512), (16384, 1024), (8192, 2048), (8192, 4096),
                     (2048, 6144), (512, 131072)):
            c.append(case("torch_softmax", rows=r, cols=n, dtype=dt))
    for r, n in ((4096, 12288), (2048, 20480), (64, 262144)):
        c.append(case("torch_softmax", rows=r, cols=n, dtype="bf16"))
    for r, n, dt in ((65536, 512, "bf16"), (8192, 4096, "bf16"), (2048, 32768, "fp32")):
        c.append(case("torch_softmax", rows=r, cols=n, dtype=dt, **{"pass": "bwd"}))
    for r, v in ((8192, 128256), (4096, 151936), (16384, 65536), (2048, 256000)):
        for ps in ("fwd", "bwd"):
            c.append(case("torch_softmax", rows=r, cols=v, dtype="fp32", log=True, **{"pass": ps}))
            c.append(case("torch_cross_entropy", rows=r, vocab=v, logits_dtype="fp32",
                          loss_dtype="fp32", **{"pass": ps}))
            c.append(case("torch_cross_entropy", rows=r, vocab=v, logits_dtype="bf16",
                          loss_dtype="fp32", **{"pass": ps}))
    for r, v in ((16384, 32000), (32768, 32000)):
        for ps in ("fwd", "bwd"):
            c.append(case("torch_nll_loss", rows=r, vocab=v, **{"pass": ps}))
    for ps in ("fwd", "bwd"):
        c.append(case("torch_cross_entropy", rows=4096, vocab=151936, logits_dtype="bf16",
                      loss_dtype="bf16", **{"pass": ps}))
    for r, n in ((16384, 1536), (4096, 5120), (32768, 768), (1024, 8192)):
        for ps in ("fwd", "bwd"):
            for dt in ("bf16", "fp32"):
                c.append(case("torch_layernorm", rows=r, cols=n, dtype=dt, **{"pass": ps}))
    for r, n in ((16384, 2560), (4096, 8192), (32768, 896), (8192, 5120)):
        for ps in ("fwd", "bwd"):
            for impl in ("fused", "composed"):
                c.append(case("torch_rmsnorm", rows=r, cols=n, dtype="bf16", impl=impl,
                              **{"pass": ps}))
    for n in (1 << 22, 1 << 25, 1 << 27):
        for ap in ("none", "tanh"):
            for ps in ("fwd", "bwd"):
                c.append(case("torch_gelu", n=n, dtype="bf16", approximate=ap, **{"pass": ps}))
    for ap in ("none", "tanh"):
        for ps in ("fwd", "bwd"):
            c.append(case("torch_gelu", n=1 << 25, dtype="fp32", approximate=ap, **{"pass": ps}))
    for o, a, b, i in ((16, 2048, 16, 64), (2, 4096, 40, 128), (1, 2048, 8192, 1),
                       (64, 256, 12, 64), (8, 1024, 32, 32), (1, 16384, 2048, 1)):
        c.append(case("torch_transpose_copy", outer=o, a=a, b=b, inner=i, dtype="bf16"))
    for k, r, n, dim in ((8, 2048, 1024, "cols"), (2, 16384, 4096, "rows"), (3, 8192, 768, "cols"),
                         (2, 4096, 11008, "cols"), (16, 1024, 512, "rows")):
        for via in ("cat", "split_bwd"):
            c.append(case("torch_cat", pieces=k, rows=r, cols=n, dim=dim, dtype="bf16", via=via))
    for s, dt in ((2, "fp32"), (3, "fp32"), (16, "fp32"), (4, "bf16"), (8, "bf16")):
        c.append(case("torch_strided_copy", n=1 << 25, stride=s, dtype=dt))
    return c


def set3():
    """Set 3, chosen after model v2 (fitted on sets 1 and 2) was frozen: shapes in neither set."""
    c = []
    for dt in ("bf16", "fp32"):
        for r, n in ((262144, 16), (49152, 256), (24576, 768), (12288, 2048), (6144, 4096),
                     (3072, 8192), (1024, 65536)):
            c.append(case("torch_softmax", rows=r, cols=n, dtype=dt))
    for r, n in ((8192, 10240), (256, 196608)):
        c.append(case("torch_softmax", rows=r, cols=n, dtype="bf16"))
    for r, n, dt in ((32768, 1024, "bf16"), (16384, 2048, "fp32"), (4096, 16384, "bf16"),
                     (1024, 65536, "fp32")):
        c.append(case("torch_softmax", rows=r, cols=n, dtype=dt, **{"pass": "bwd"}))
    for r, v in ((6144, 100352), (12288, 49152), (3072, 200064), (1024, 128256)):
        for ps in ("fwd", "bwd"):
            c.append(case("torch_softmax", rows=r, cols=v, dtype="fp32", log=True, **{"pass": ps}))
            c.append(case("torch_cross_entropy", rows=r, vocab=v, logits_dtype="fp32",
                          loss_dtype="fp32", **{"pass": ps}))
            c.append(case("torch_cross_entropy", rows=r, vocab=v, logits_dtype="bf16",
                          loss_dtype="fp32", **{"pass": ps}))
    for r, v in ((8192, 50257), (65536, 8192), (512, 32000)):
        for ps in ("fwd", "bwd"):
            c.append(case("torch_nll_loss", rows=r, vocab=v, **{"pass": ps}))
    for r, n in ((12288, 2048), (65536, 512), (2048, 12288), (8192, 3072)):
        for ps in ("fwd", "bwd"):
            for dt in ("bf16", "fp32"):
                c.append(case("torch_layernorm", rows=r, cols=n, dtype=dt, **{"pass": ps}))
    for r, n in ((8192, 4096), (16384, 3584), (2048, 16384), (65536, 1024)):
        for ps in ("fwd", "bwd"):
            for impl in ("fused", "composed"):
                c.append(case("torch_rmsnorm", rows=r, cols=n, dtype="bf16", impl=impl,
                              **{"pass": ps}))
    for n in (3 << 20, 3 << 24, 100000000):
        for ap in ("none", "tanh"):
            for ps in ("fwd", "bwd"):
                c.append(case("torch_gelu", n=n, dtype="bf16", approximate=ap, **{"pass": ps}))
    for o, a, b, i in ((4, 4096, 32, 128), (32, 1024, 8, 64), (1, 12288, 4096, 1),
                       (16, 512, 64, 16), (1, 3000, 5000, 1)):
        c.append(case("torch_transpose_copy", outer=o, a=a, b=b, inner=i, dtype="bf16"))
    for k, r, n, dim in ((4, 8192, 2048, "cols"), (2, 32768, 1024, "rows"), (3, 4096, 5120, "cols"),
                         (32, 512, 256, "rows")):
        for via in ("cat", "split_bwd"):
            c.append(case("torch_cat", pieces=k, rows=r, cols=n, dim=dim, dtype="bf16", via=via))
    for s, dt in ((12, "fp32"), (32, "fp32"), (2, "bf16"), (16, "bf16")):
        c.append(case("torch_strided_copy", n=1 << 25, stride=s, dtype=dt))
    return c


def set4():
    """Set 4, chosen after model v3 (fitted on sets 1-3) was frozen: shapes in none of them, and
    extrapolations: warp softmax at 8 and 128 columns, fp16 everywhere the ops take it, fp32
    rows in shared memory (cunn_SoftMaxForwardSmem), bf16 log_softmax over a vocabulary, a
    262144-entry vocabulary, LayerNorm over 256 and 16384 columns, 131072 rows, head_dim 96,
    fp32 transposes (2 elements a thread), cats of 5-8 pieces, strides 3-64 (stride 64 fp32:
    split into two kernels)."""
    c = []
    for r, n, dt in ((524288, 8, "bf16"), (98304, 128, "bf16"), (40960, 384, "fp32"),
                     (20480, 1536, "bf16"), (65536, 640, "fp16"), (4096, 5120, "bf16"),
                     (2560, 7168, "fp32"), (16384, 3072, "fp16"), (4096, 10240, "fp32"),
                     (3072, 14336, "bf16"), (2048, 24000, "fp16"), (384, 393216, "bf16"),
                     (192, 262144, "fp32")):
        c.append(case("torch_softmax", rows=r, cols=n, dtype=dt))
    for r, n, dt in ((131072, 128, "bf16"), (65536, 768, "fp16"), (8192, 8192, "bf16"),
                     (512, 262144, "fp32")):
        c.append(case("torch_softmax", rows=r, cols=n, dtype=dt, **{"pass": "bwd"}))
    for r, v, dt in ((2048, 152064, "fp32"), (4096, 65536, "bf16")):
        for ps in ("fwd", "bwd"):
            c.append(case("torch_softmax", rows=r, cols=v, dtype=dt, log=True, **{"pass": ps}))
    for r, v, dt in ((4096, 262144, "fp32"), (131072, 4096, "fp32"), (1024, 152064, "bf16")):
        for ps in ("fwd", "bwd"):
            c.append(case("torch_nll_loss", rows=r, vocab=v, dtype=dt, **{"pass": ps}))
    for r, v, ld, sd in ((4096, 152064, "fp32", "fp32"), (16384, 32768, "bf16", "fp32"),
                         (2048, 262144, "bf16", "bf16"), (8192, 49152, "fp16", "fp32")):
        for ps in ("fwd", "bwd"):
            c.append(case("torch_cross_entropy", rows=r, vocab=v, logits_dtype=ld, loss_dtype=sd,
                          **{"pass": ps}))
    for r, n, dt in ((16384, 1024, "fp16"), (4096, 7168, "bf16"), (1024, 16384, "fp32"),
                     (131072, 256, "bf16"), (6144, 2560, "fp32")):
        for ps in ("fwd", "bwd"):
            c.append(case("torch_layernorm", rows=r, cols=n, dtype=dt, **{"pass": ps}))
    for r, n, dt, impl in ((4096, 6144, "bf16", "fused"), (32768, 2048, "bf16", "fused"),
                           (16384, 5120, "fp16", "fused"), (4096, 6144, "bf16", "composed"),
                           (32768, 2048, "bf16", "composed")):
        for ps in ("fwd", "bwd"):
            c.append(case("torch_rmsnorm", rows=r, cols=n, dtype=dt, impl=impl, **{"pass": ps}))
    for n, dt, ap in ((5 << 22, "bf16", "none"), (1 << 28, "bf16", "tanh"),
                      (1 << 25, "fp16", "none"), (3 << 23, "fp32", "tanh")):
        for ps in ("fwd", "bwd"):
            c.append(case("torch_gelu", n=n, dtype=dt, approximate=ap, **{"pass": ps}))
    for o, a, b, i, dt in ((2, 8192, 32, 64, "bf16"), (8, 2048, 24, 96, "bf16"),
                           (1, 6144, 6144, 1, "bf16"), (16, 1024, 40, 128, "fp16"),
                           (4, 2048, 16, 64, "fp32"), (1, 2048, 16384, 1, "fp32")):
        c.append(case("torch_transpose_copy", outer=o, a=a, b=b, inner=i, dtype=dt))
    for k, r, n, dim, dt in ((5, 4096, 1024, "cols", "bf16"), (6, 2048, 2048, "rows", "bf16"),
                             (2, 8192, 4096, "cols", "fp32"), (8, 1024, 3584, "cols", "fp16")):
        for via in ("cat", "split_bwd"):
            c.append(case("torch_cat", pieces=k, rows=r, cols=n, dim=dim, dtype=dt, via=via))
    for n, s, dt in ((1 << 24, 5, "fp32"), (1 << 25, 6, "bf16"), (1 << 24, 64, "fp32"),
                     (1 << 25, 24, "bf16"), (1 << 24, 3, "bf16"), (1 << 25, 10, "fp32"),
                     (1 << 25, 2, "fp16")):
        c.append(case("torch_strided_copy", n=n, stride=s, dtype=dt))
    return c


def set5():
    """Set 5, chosen after model v4 (fitted on sets 1-3; set 4 seen) was frozen: the layers of
    public models at their own widths, none measured before. Attention-score softmax over
    sequence lengths (Llama-3 8B's 32 heads at 2048, 8 KV heads at 4096, GPT-2's 16 heads at
    1024, head counts of 25 and 40), sampling softmax over whole vocabularies (Llama-3's 128256,
    Qwen2's 151936) at few rows, log_softmax, NLL and cross-entropy over the vocabularies of
    Llama-3 (128256), DeepSeek-V3 (129280), Gemma-2 (256000), Phi-3 (32064) and GPT-2 (50257),
    LayerNorm at GPT-2's and GPT-3's widths (768-12288), RMSNorm at Llama, Qwen2, Gemma-2 and
    DeepSeek widths (2304-8192), GELU over MLP activations, head transposes with GQA's 8 KV
    heads and GPT-2 XL's 25 heads of 64, QKV and gate/up concatenations, strides 4-48."""
    c = []
    for r, n, dt in ((65536, 2048, "bf16"), (49152, 1024, "fp16"), (32768, 4096, "bf16"),
                     (36864, 768, "fp32"), (40, 128256, "fp32"), (256, 151936, "bf16"),
                     (8192, 512, "fp16"), (16384, 96, "bf16"), (2048, 32768, "fp32"),
                     (25600, 1536, "bf16")):
        c.append(case("torch_softmax", rows=r, cols=n, dtype=dt))
    for r, n, dt in ((65536, 2048, "bf16"), (24576, 1024, "fp16"), (4096, 16384, "fp32")):
        c.append(case("torch_softmax", rows=r, cols=n, dtype=dt, **{"pass": "bwd"}))
    for r, v, dt in ((4096, 128256, "bf16"), (2048, 32064, "fp32")):
        for ps in ("fwd", "bwd"):
            c.append(case("torch_softmax", rows=r, cols=v, dtype=dt, log=True, **{"pass": ps}))
    for r, v, dt in ((8192, 128256, "fp32"), (16384, 50257, "bf16"), (4096, 256000, "bf16")):
        for ps in ("fwd", "bwd"):
            c.append(case("torch_nll_loss", rows=r, vocab=v, dtype=dt, **{"pass": ps}))
    for r, v, ld, sd in ((6144, 128256, "bf16", "fp32"), (4096, 129280, "bf16", "bf16"),
                         (16384, 32064, "fp16", "fp32"), (1536, 256000, "fp32", "fp32")):
        for ps in ("fwd", "bwd"):
            c.append(case("torch_cross_entropy", rows=r, vocab=v, logits_dtype=ld, loss_dtype=sd,
                          **{"pass": ps}))
    for r, n, dt in ((8192, 1600, "fp16"), (16384, 1280, "bf16"), (4096, 12288, "bf16"),
                     (24576, 768, "fp32"), (2048, 5120, "fp16")):
        for ps in ("fwd", "bwd"):
            c.append(case("torch_layernorm", rows=r, cols=n, dtype=dt, **{"pass": ps}))
    for r, n, dt, impl in ((12288, 4096, "bf16", "fused"), (16384, 8192, "bf16", "fused"),
                           (4096, 7168, "bf16", "fused"), (8192, 3584, "fp16", "fused"),
                           (6144, 4096, "bf16", "composed"), (16384, 2304, "bf16", "composed")):
        for ps in ("fwd", "bwd"):
            c.append(case("torch_rmsnorm", rows=r, cols=n, dtype=dt, impl=impl, **{"pass": ps}))
    for n, dt, ap in ((8192 * 6400, "bf16", "none"), (16384 * 5120, "fp16", "tanh"),
                      (2048 * 49152, "bf16", "tanh"), (4096 * 3072, "fp32", "none")):
        for ps in ("fwd", "bwd"):
            c.append(case("torch_gelu", n=n, dtype=dt, approximate=ap, **{"pass": ps}))
    for o, a, b, i, dt in ((1, 8192, 32, 128, "bf16"), (4, 4096, 8, 128, "bf16"),
                           (2, 2048, 64, 128, "fp16"), (8, 1024, 25, 64, "bf16"),
                           (1, 4096, 8192, 1, "bf16"), (1, 12288, 3072, 1, "fp32")):
        c.append(case("torch_transpose_copy", outer=o, a=a, b=b, inner=i, dtype=dt))
    for k, r, n, dim, dt in ((3, 8192, 4096, "cols", "bf16"), (2, 16384, 14336, "cols", "bf16"),
                             (4, 4096, 2048, "rows", "fp16"), (2, 4096, 1024, "cols", "fp32")):
        for via in ("cat", "split_bwd"):
            c.append(case("torch_cat", pieces=k, rows=r, cols=n, dim=dim, dtype=dt, via=via))
    for n, s, dt in ((1 << 25, 7, "fp32"), (1 << 24, 16, "fp32"), (1 << 25, 12, "bf16"),
                     (1 << 24, 48, "bf16"), (1 << 25, 4, "fp16"), (1 << 24, 20, "fp32"),
                     (1 << 25, 9, "bf16")):
        c.append(case("torch_strided_copy", n=n, stride=s, dtype=dt))
    return c


def check_new(name, cases):
    """Every case of `name` has parameters that no earlier set has (compared as dicts, the op's
    defaults filled in as measure_ops.py fills them)."""
    defaults = {"pass": "fwd", "log": False}
    key = lambda x: (x["op"], json.dumps({**defaults, **x["params"]}, sort_keys=True))  # noqa
    earlier = set()
    for other in ("train", "set2", "set3", "set4", "set5"):
        if other == name:
            break
        earlier |= {key(x) for x in SETS[other]()}
    clash = [x["id"] for x in cases if key(x) in earlier]
    if clash:
        raise SystemExit(f"{name}: {len(clash)} cases already measured: {clash}")
    ids = [x["id"] for x in cases]
    if len(set(ids)) != len(ids):
        raise SystemExit(f"{name}: duplicate ids")


SETS = {"train": train, "set2": set2, "set3": set3, "set4": set4, "set5": set5}

if __name__ == "__main__":
    cases = SETS[sys.argv[1]]()
    if sys.argv[1] in ("set4", "set5"):
        check_new(sys.argv[1], cases)
    json.dump(cases, sys.stdout, indent=1)
    print()
