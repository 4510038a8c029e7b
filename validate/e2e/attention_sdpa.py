"""Ridge: PyTorch scaled_dot_product_attention timed on one GPU (the attention op's real kernels).

validate/ridge-bench's attention suite times its own WMMA reference kernel, far slower than the
FlashAttention-class kernels frameworks use; this times what PyTorch runs (cuDNN or FlashAttention
backends, chosen by PyTorch) for the same shapes and for the e2e models' shapes, forward and
forward+backward, bf16.

Timing: `kernel` method as validate/README.md defines it: CUDA events around `reps` calls issued
back to back after warm-up, median over 7 such blocks, divided by the calls. One extra call is
profiled (CUDA activity only) to name the kernels that ran.
Usage: python3 validate/e2e/attention_sdpa.py --out attention_sdpa.json
Also writes gpu_bound.json and host_limited.json beside it (split_by_host_limit): what
`ridge calibrate --attention` and the README's attention table read is gpu_bound.json.
"""

import argparse
import copy
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_common import (RecordFile, cuda_kernel_names, device_info, log,  # noqa: E402
                        percentile, torch_env)

# (batch, heads, kv_heads, seq_q, seq_kv, head_dim, causal, label)
FWD = [
    (1, 32, 8, 4096, 4096, 128, True, "llama3-8b prefill 4k"),
    (1, 32, 8, 4096, 4096, 128, False, "llama3-8b 4k non-causal"),
    (1, 32, 8, 8192, 8192, 128, True, "llama3-8b prefill 8k"),
    (4, 32, 8, 2048, 2048, 128, True, "llama3-8b batch 4 x 2k"),
    (2, 64, 8, 4096, 4096, 128, True, "llama-70b-like prefill 4k"),
    (1, 96, 96, 2048, 2048, 128, True, "gpt3-175b 2k"),
    (8, 32, 32, 1024, 1024, 128, False, "mha 1k"),
    (8, 16, 16, 2048, 2048, 64, True, "d64 causal 2k"),
    (16, 16, 16, 512, 512, 64, False, "d64 512"),
    (8, 32, 8, 16, 4096, 128, False, "chunk of 16 queries on 4k cache (no mask)"),
    (32, 32, 8, 1, 4096, 128, False, "decode 1 query on 4k cache"),
    (64, 32, 8, 1, 1024, 128, False, "decode 1 query on 1k cache"),
    # the e2e models' shapes
    (8, 12, 12, 1024, 1024, 64, True, "gpt2-small train b8"),
    (8, 16, 16, 1024, 1024, 64, True, "gpt2-medium train b8"),
    (1, 32, 8, 1024, 1024, 128, True, "llama3-8b prefill 1k"),
    (1, 32, 8, 1024, 1024, 64, True, "llama3.2-1b prefill 1k"),
    (1, 32, 8, 1, 1025, 128, False, "llama3-8b decode b1 ctx 1k"),
    (16, 32, 8, 1, 1025, 64, False, "llama3.2-1b decode b16 ctx 1k"),
    (2, 16, 16, 256, 256, 72, False, "dit-xl2 denoiser"),
    (2, 12, 12, 77, 77, 64, False, "clip text encoder"),
]
BWD = [
    (8, 12, 12, 1024, 1024, 64, True, "gpt2-small train b8"),
    (8, 16, 16, 1024, 1024, 64, True, "gpt2-medium train b8"),
    (8, 16, 16, 2048, 2048, 64, True, "d64 causal 2k"),
    (1, 32, 8, 4096, 4096, 128, True, "llama3-8b 4k"),
    (4, 32, 8, 2048, 2048, 128, True, "llama3-8b batch 4 x 2k"),
    (1, 96, 96, 2048, 2048, 128, True, "gpt3-175b 2k"),
]


# Per call at or above these, the GPU sets the pace; below, SDPA's ~30 us host dispatch (and the
# autograd backward's ~300 us) can, so those timings are not kernel times.
GPU_BOUND_US = {"fwd": 100.0, "fwd_bwd": 500.0}


def split_by_host_limit(path):
    """Writes gpu_bound.json and host_limited.json beside `path` by GPU_BOUND_US."""
    with open(path) as f:
        doc = json.load(f)
    note = ("split by validate/e2e/attention_sdpa.py: per call >= %s us is GPU-bound kernel time "
            "(gpu_bound.json); below it the host can set the pace (host_limited.json)"
            % GPU_BOUND_US)
    parts = {"gpu_bound": [], "host_limited": []}
    for r in doc["records"]:
        fast = r["timing"]["median_us"] < GPU_BOUND_US[r["params"]["pass"]]
        parts["host_limited" if fast else "gpu_bound"].append(r)
    for name, recs in parts.items():
        d = copy.deepcopy(doc)
        d["records"] = recs
        d["split"] = note
        with open(os.path.join(os.path.dirname(os.path.abspath(path)), name + ".json"), "w") as f:
            json.dump(d, f, indent=1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="attention_sdpa.json")
    args = ap.parse_args()
    out = RecordFile(args.out, "validate/e2e/attention_sdpa.py")
    import torch
    import torch.nn.functional as F

    out.doc["device"] = device_info()
    out.doc["environment"] = torch_env()
    out.write()
    torch.manual_seed(1234)

    def timed(fn, reps):
        for _ in range(5):
            fn()
        torch.cuda.synchronize()
        per = []
        for _ in range(7):
            e0 = torch.cuda.Event(enable_timing=True)
            e1 = torch.cuda.Event(enable_timing=True)
            e0.record()
            for _ in range(reps):
                fn()
            e1.record()
            torch.cuda.synchronize()
            per.append(e0.elapsed_time(e1) * 1e3 / reps)
        return per

    for passes, shapes in (("fwd", FWD), ("fwd_bwd", BWD)):
        for b, h, kvh, sq, skv, d, causal, label in shapes:
            case = "attention_sdpa/%s/b%d_h%d_kv%d_q%d_k%d_d%d%s" % (
                passes, b, h, kvh, sq, skv, d, "_causal" if causal else "")
            try:
                q = torch.randn(b, h, sq, d, device="cuda", dtype=torch.bfloat16,
                                requires_grad=passes == "fwd_bwd")
                k = torch.randn(b, kvh, skv, d, device="cuda", dtype=torch.bfloat16,
                                requires_grad=passes == "fwd_bwd")
                v = torch.randn(b, kvh, skv, d, device="cuda", dtype=torch.bfloat16,
                                requires_grad=passes == "fwd_bwd")
                gqa = kvh != h

                def fwd():
                    return F.scaled_dot_product_attention(q, k, v, is_causal=causal,
                                                          enable_gqa=gqa)

                if passes == "fwd":
                    with torch.inference_mode():
                        fn = fwd
                        ms_est = timed(fn, 3)
                        reps = max(3, min(200, int(20000 / max(1.0, percentile(ms_est, 50)))))
                        per = timed(fn, reps)
                        names = cuda_kernel_names(fn)
                else:
                    g = torch.randn(b, h, sq, d, device="cuda", dtype=torch.bfloat16)

                    def fn():
                        o = fwd()
                        o.backward(g)

                    ms_est = timed(fn, 3)
                    reps = max(3, min(100, int(20000 / max(1.0, percentile(ms_est, 50)))))
                    per = timed(fn, reps)
                    names = cuda_kernel_names(fn)
                med = percentile(per, 50)
                rec = {"id": case, "suite": "attention_sdpa", "op": "attention",
                       "params": {"batch": b, "heads": h, "kv_heads": kvh, "seq_q": sq,
                                  "seq_kv": skv, "head_dim": d, "causal": causal,
                                  "dtype": "bf16", "pass": passes},
                       "label": label,
                       "timing": {"method": "kernel", "warmup": 5, "reps": reps,
                                  "median_us": round(med, 3), "min_us": round(min(per), 3),
                                  "max_us": round(max(per), 3),
                                  "spread": round((max(per) - min(per)) / med, 4),
                                  "samples_us": [round(x, 3) for x in per]},
                       "kernels": names}
                out.add(rec)
                log("%-62s %10.1f us  %s" % (case, med, " | ".join(n[:50] for n in names)))
                del q, k, v
            except Exception as e:  # noqa: BLE001
                out.error(case, e)
            torch.cuda.empty_cache()
    out.finish()
    split_by_host_limit(args.out)


if __name__ == "__main__":
    main()
