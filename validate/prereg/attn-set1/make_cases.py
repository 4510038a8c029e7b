"""Writes validate/prereg/attn-set1/cases.json: pre-registered attention set 1 (issue 18 points 3
and 6), PyTorch SDPA at the attention shapes of public models, timed by
validate/e2e/attention_cases.py.

  python3 validate/prereg/attn-set1/make_cases.py

Written before the sweep it tests the model of (validate/e2e/attention_sweep1.cases.json) was
measured, and before any attention model change built on that sweep; none of these shapes is in
the sweep or in validate/data/h200/attention_sdpa (the script checks). Prefill (causal and not),
decode over the cache, query chunks over a cache and forward+backward, at the shapes of Llama-3.1
405B and 70B, Qwen2.5-7B, Mistral-7B at 32K, Gemma-2 9B (head_dim 256), Phi-3-mini (96), GPT-2 XL,
Llama-3.2 3B and Llama-2 13B (fp16), and the non-causal attention of SD3, Flux, ViT-H/14 (head_dim
80), Whisper's encoder and a CogVideoX-sized video sequence. Deterministic.
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.join(ROOT, "validate", "e2e"))
from attention_sweep1_cases import case  # noqa: E402

SHAPES = [
    # prefill, causal (batch, heads, kv_heads, seq, head_dim, label)
    ("fwd", 1, 128, 8, 2048, 2048, 128, True, "bf16", "llama3.1-405b prefill 2k"),
    ("fwd", 1, 128, 8, 8192, 8192, 128, True, "bf16", "llama3.1-405b prefill 8k"),
    ("fwd", 1, 64, 8, 6144, 6144, 128, True, "bf16", "llama3.1-70b prefill 6k"),
    ("fwd", 3, 28, 4, 3072, 3072, 128, True, "bf16", "qwen2.5-7b prefill 3 x 3k"),
    ("fwd", 1, 32, 8, 32768, 32768, 128, True, "bf16", "mistral-7b prefill 32k"),
    ("fwd", 2, 16, 8, 4096, 4096, 256, True, "bf16", "gemma-2-9b prefill 2 x 4k"),
    ("fwd", 2, 32, 32, 4096, 4096, 96, True, "bf16", "phi-3-mini prefill 2 x 4k"),
    ("fwd", 8, 25, 25, 1024, 1024, 64, True, "bf16", "gpt2-xl prefill 8 x 1k"),
    ("fwd", 1, 40, 40, 4096, 4096, 128, True, "fp16", "llama2-13b prefill 4k fp16"),
    # non-causal (diffusion, vision, audio)
    ("fwd", 2, 24, 24, 4250, 4250, 64, False, "bf16", "sd3-medium 1024px joint attention"),
    ("fwd", 1, 24, 24, 4608, 4608, 128, False, "bf16", "flux 1024px"),
    ("fwd", 64, 16, 16, 257, 257, 80, False, "bf16", "vit-h/14 batch 64"),
    ("fwd", 8, 20, 20, 1500, 1500, 64, False, "bf16", "whisper-large encoder batch 8"),
    ("fwd", 1, 48, 48, 17550, 17550, 64, False, "bf16", "cogvideox-sized video sequence"),
    # decode: one query over the cache
    ("fwd", 16, 64, 8, 1, 8000, 128, False, "bf16", "llama3.1-70b decode b16 ctx 8000"),
    ("fwd", 128, 64, 8, 1, 2000, 128, False, "bf16", "llama3.1-70b decode b128 ctx 2000"),
    ("fwd", 32, 28, 4, 1, 12000, 128, False, "bf16", "qwen2.5-7b decode b32 ctx 12000"),
    ("fwd", 8, 16, 8, 1, 4096, 256, False, "bf16", "gemma-2-9b decode b8 ctx 4096"),
    ("fwd", 1, 24, 8, 1, 100000, 128, False, "bf16", "llama3.2-3b decode b1 ctx 100000"),
    ("fwd", 4, 32, 32, 1, 3000, 96, False, "bf16", "phi-3-mini decode b4 ctx 3000"),
    ("fwd", 64, 25, 25, 1, 900, 64, False, "bf16", "gpt2-xl decode b64 ctx 900"),
    # query chunks over a cache
    ("fwd", 2, 32, 8, 128, 8192, 128, False, "bf16", "chunked prefill 128 on 8k"),
    ("fwd", 1, 64, 8, 512, 32768, 128, False, "bf16", "chunked prefill 512 on 32k"),
    ("fwd", 16, 32, 8, 32, 2048, 128, False, "bf16", "speculative verify 32 on 2k"),
    # forward + backward (training)
    ("fwd_bwd", 32, 25, 25, 1024, 1024, 64, True, "bf16", "gpt2-xl train b32 1k"),
    ("fwd_bwd", 2, 24, 8, 4096, 4096, 128, True, "bf16", "llama3.2-3b train 2 x 4k"),
    ("fwd_bwd", 1, 28, 4, 8192, 8192, 128, True, "bf16", "qwen2.5-7b train 8k"),
    ("fwd_bwd", 1, 16, 8, 4096, 4096, 256, True, "bf16", "gemma-2-9b train 4k"),
    ("fwd_bwd", 2, 32, 32, 4096, 4096, 96, True, "bf16", "phi-3-mini train 2 x 4k"),
    ("fwd_bwd", 2, 24, 24, 4250, 4250, 64, False, "bf16", "sd3-medium train 1024px"),
]


def params_key(p):
    return json.dumps({k: p[k] for k in sorted(p)}, sort_keys=True)


def main():
    recs = [case(*s[:9], label=s[9]) for s in SHAPES]
    seen = set()
    for path in (os.path.join(ROOT, "validate/e2e/attention_sweep1.cases.json"),
                 os.path.join(ROOT, "validate/data/h200/attention_sdpa/gpu_bound.json"),
                 os.path.join(ROOT, "validate/data/h200/attention_sdpa/host_limited.json")):
        with open(path) as f:
            seen |= {params_key(r["params"]) for r in json.load(f)["records"]}
    clash = [r["id"] for r in recs if params_key(r["params"]) in seen]
    if clash:
        sys.exit("measured before: %s" % clash)
    ids = [r["id"] for r in recs]
    assert len(ids) == len(set(ids))
    doc = {"schema": "ridge.records/1",
           "generated_by": {"tool": "validate/prereg/attn-set1/make_cases.py"},
           "records": recs}
    with open(os.path.join(HERE, "cases.json"), "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    print("validate/prereg/attn-set1/cases.json: %d cases" % len(recs))


if __name__ == "__main__":
    main()
