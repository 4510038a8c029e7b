"""Ridge e2e: host cost of PyTorch eager dispatch, per op, on tiny tensors (no profiler).

Each case calls one eager op (as the e2e models call it) N times back to back on tensors so
small that the GPU finishes each kernel long before the host issues the next; the host time per
call (perf_counter over the N calls, then one synchronize, whose wait is excluded) is the host
cost of that dispatch: Python, the dispatcher, the allocator and cudaLaunchKernel. Also
measured: the GPU-side kernel count of one call (torch.profiler, separately), so a cost can be
divided into per-op and per-kernel parts.

Host speed: the lent machine's host CPU runs 1.5-2x slower in stretches of 0.1 s to seconds, so
every repetition (N calls) of a case is bracketed by e2e_common.cpu_probe_us() (a fixed pure-Python
loop); a repetition whose probe (the larger of before/after) is within NOMINAL_PROBE_RATIO of the
fastest probe of the whole run ran at nominal host speed. Per case the record keeps every
repetition's us/call and probe (`reps_us_per_call`, `reps_probe_us`) and
`host_us_per_call_nominal`, the median over the nominal repetitions (null, with
`nominal_note`, when fewer than MIN_NOMINAL_REPS qualify). `host_us_per_call` stays the median
over all repetitions.

Usage: python3 validate/e2e/host_dispatch.py --out OUT/host_dispatch.json [--n 2000] [--reps 15]
Writes ridge.records/1 records, op "host_dispatch", one per case.
"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_common import (CPU_PROBE_WORK, RecordFile, cpu_probe_us,  # noqa: E402
                        cuda_kernel_names, device_info, log, percentile, torch_env)

NOMINAL_PROBE_RATIO = 1.25  # a rep is nominal when its probe <= this x the run's fastest probe
MIN_NOMINAL_REPS = 3


def cases(torch, nn, F):
    bf = torch.bfloat16
    dev = "cuda"
    x = torch.randn(1, 8, 64, device=dev, dtype=bf)
    x32 = x.float()
    w = torch.randn(64, 64, device=dev, dtype=bf)
    b = torch.randn(64, device=dev, dtype=bf)
    lin = nn.Linear(64, 64, device=dev, dtype=bf)
    lin_nb = nn.Linear(64, 64, bias=False, device=dev, dtype=bf)
    ln = nn.LayerNorm(64, device=dev, dtype=bf)
    gn = nn.GroupNorm(8, 64, device=dev, dtype=bf)
    conv = nn.Conv2d(64, 64, 3, padding=1, device=dev, dtype=bf).to(
        memory_format=torch.channels_last)
    img = torch.randn(1, 64, 8, 8, device=dev, dtype=bf).contiguous(
        memory_format=torch.channels_last)
    q = torch.randn(1, 4, 8, 16, device=dev, dtype=bf)
    kc = torch.randn(1, 4, 32, 16, device=dev, dtype=bf)
    pos = torch.tensor([3], device=dev)
    knew = torch.randn(1, 4, 1, 16, device=dev, dtype=bf)
    emb = nn.Embedding(128, 64, device=dev, dtype=bf)
    ids = torch.randint(0, 128, (1, 8), device=dev)
    logits = torch.randn(8, 128, device=dev, dtype=bf)
    tgt = torch.randint(0, 128, (8,), device=dev)
    # DiT / text-encoder shapes: batch 2 (modulate's x * (1 + s.unsqueeze(1)), non-causal SDPA)
    xb = torch.randn(2, 8, 64, device=dev, dtype=bf)
    sb = torch.randn(2, 64, device=dev, dtype=bf)
    tb = torch.randn(2, 1, 64, device=dev, dtype=bf)
    qb = torch.randn(2, 4, 8, 16, device=dev, dtype=bf)
    kb = torch.randn(2, 4, 8, 16, device=dev, dtype=bf)
    vb = torch.randn(2, 4, 8, 16, device=dev, dtype=bf)
    ln_na = nn.LayerNorm(64, elementwise_affine=False, device=dev, dtype=bf)
    c6 = torch.randn(2, 384, device=dev, dtype=bf)
    # The same calls at the e2e models' own sizes (still host-bound: the GPU work is 1-3 us): DiT
    # activations [2, 256, 1152] bf16 (1.18 MB, above the caching allocator's 1 MB small-block
    # limit) and text-encoder activations [1, 77, 768] (118 kB).
    xL = torch.randn(2, 256, 1152, device=dev, dtype=bf)
    tL = torch.randn(2, 1, 1152, device=dev, dtype=bf)
    linL = nn.Linear(1152, 1152, device=dev, dtype=bf)
    lnL = nn.LayerNorm(1152, elementwise_affine=False, device=dev, dtype=bf)
    xT = torch.randn(1, 77, 768, device=dev, dtype=bf)
    linT = nn.Linear(768, 768, device=dev, dtype=bf)
    lnT = nn.LayerNorm(768, device=dev, dtype=bf)
    xF = torch.randn(2, 256, 4608, device=dev, dtype=bf)  # the DiT's MLP hidden size (4.7 MB)

    # A chain of 16 adds whose results all stay alive until the chain ends, as a forward pass's
    # activations do (one call = 16 ops; divide by 16): whether the caching allocator's cost per
    # op grows with the number of live blocks and with their size (blocks above 1 MB come from
    # its large pool).
    def chain16(t):
        def fn():
            outs = []
            y = t
            for _ in range(16):
                y = y + t
                outs.append(y)
            return outs
        return fn

    c = [
        # name, category (Ridge's op kind it stands for), fn
        ("linear_module_bias", "gemm", lambda: lin(x)),
        ("linear_module_nobias", "gemm", lambda: lin_nb(x)),
        ("F.linear_bias", "gemm", lambda: F.linear(x, w, b)),
        ("matmul", "gemm", lambda: x @ w),
        ("add", "elementwise", lambda: x + x),
        ("mul", "elementwise", lambda: x * x),
        ("mul_scalar", "elementwise", lambda: x * 2.0),
        ("silu", "elementwise", lambda: F.silu(x)),
        ("gelu_tanh", "elementwise", lambda: F.gelu(x, approximate="tanh")),
        ("to_fp32", "elementwise", lambda: x.to(torch.float32)),
        ("pow2", "elementwise", lambda: x32.pow(2)),
        ("rsqrt", "elementwise", lambda: torch.rsqrt(x32)),
        ("mean_lastdim", "reduction", lambda: x32.mean(-1, keepdim=True)),
        ("cat_lastdim", "elementwise", lambda: torch.cat((x, x), dim=-1)),
        ("contiguous_transpose", "elementwise", lambda: x.transpose(0, 1).contiguous()),
        ("index_copy_", "elementwise", lambda: kc.index_copy_(2, pos, knew)),
        ("layernorm_module", "norm", lambda: ln(x)),
        ("groupnorm_module", "norm", lambda: gn(img)),
        ("sdpa_causal", "attention", lambda: F.scaled_dot_product_attention(q, q, q, is_causal=True)),
        ("sdpa_gqa_decode", "attention",
         lambda: F.scaled_dot_product_attention(q[:, :, :1], kc[:, :2], kc[:, :2], enable_gqa=True)),
        ("conv2d_module", "conv", lambda: conv(img)),
        ("embedding_module", "embedding", lambda: emb(ids)),
        ("cross_entropy", "cross_entropy", lambda: F.cross_entropy(logits, tgt)),
        ("view_transpose_nokernel", "view", lambda: x.view(1, 8, 4, 16).transpose(1, 2)),
        ("split3_nokernel", "view", lambda: x.split(16, dim=2)),
        # DiT modulate x * (1 + s.unsqueeze(1)), one call each
        ("add_scalar_small", "elementwise", lambda: 1 + sb),
        ("mul_broadcast", "elementwise", lambda: xb * tb),
        ("add_broadcast", "elementwise", lambda: xb + tb),
        ("sdpa_noncausal_small", "attention", lambda: F.scaled_dot_product_attention(qb, kb, vb)),
        ("layernorm_module_noaffine", "norm", lambda: ln_na(xb)),
        ("chunk6", "view", lambda: c6.chunk(6, dim=1)),
        ("unsqueeze", "view", lambda: sb.unsqueeze(1)),
        ("add_dit_size", "elementwise", lambda: xL + xL),
        ("mul_broadcast_dit_size", "elementwise", lambda: xL * tL),
        ("gelu_tanh_dit_size", "elementwise", lambda: F.gelu(xL, approximate="tanh")),
        ("linear_module_bias_dit_size", "gemm", lambda: linL(xL)),
        ("layernorm_noaffine_dit_size", "norm", lambda: lnL(xL)),
        ("add_text_size", "elementwise", lambda: xT + xT),
        ("linear_module_bias_text_size", "gemm", lambda: linT(xT)),
        ("layernorm_module_text_size", "norm", lambda: lnT(xT)),
        ("chain16_add_tiny", "chain", chain16(x)),
        ("chain16_add_text_size", "chain", chain16(xT)),
        ("chain16_add_dit_size", "chain", chain16(xL)),
        ("chain16_add_dit_mlp_size", "chain", chain16(xF)),
        ("empty_python_call", "none", lambda: None),
    ]
    return c


def time_host(torch, fn, n):
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    t1 = time.perf_counter()
    torch.cuda.synchronize()
    return (t1 - t0) * 1e6 / n


def time_reps(torch, fn, n, reps):
    """reps x time_host(fn, n), each bracketed by cpu_probe_us(): (us/call list, probe list)."""
    per, probes = [], []
    for _ in range(reps):
        before = cpu_probe_us()
        per.append(time_host(torch, fn, n))
        after = cpu_probe_us()
        probes.append(max(before, after))
    return per, probes


def rep_fields(per, probes):
    return {"reps_us_per_call": [round(v, 3) for v in per],
            "reps_probe_us": [round(v, 2) for v in probes]}


def fill_nominal(records):
    """Set host_us_per_call_nominal on every record with per-rep probes (after the whole run)."""
    probes = [p for r in records for p in r.get("reps_probe_us", [])]
    if not probes:
        return None
    fastest = min(probes)
    limit = NOMINAL_PROBE_RATIO * fastest
    for r in records:
        if "reps_probe_us" not in r:
            continue
        good = [u for u, p in zip(r["reps_us_per_call"], r["reps_probe_us"]) if p <= limit]
        r["nominal_reps"] = len(good)
        r["nominal_fraction"] = round(len(good) / len(r["reps_probe_us"]), 3)
        if len(good) >= MIN_NOMINAL_REPS:
            r["host_us_per_call_nominal"] = round(percentile(good, 50), 3)
        else:
            r["host_us_per_call_nominal"] = None
            r["nominal_note"] = ("only %d of %d reps at nominal host speed (probe <= %.2f x %.1f us);"
                                 " need %d" % (len(good), len(r["reps_probe_us"]),
                                               NOMINAL_PROBE_RATIO, fastest, MIN_NOMINAL_REPS))
    return fastest


def kernels_per_call(torch, fn):
    return len(cuda_kernel_names(fn))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="host_dispatch.json")
    ap.add_argument("--n", type=int, default=2000, help="calls per repetition")
    ap.add_argument("--reps", type=int, default=15)
    args = ap.parse_args()
    out = RecordFile(args.out, "validate/e2e/host_dispatch.py")
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    out.doc["device"] = device_info()
    out.doc["environment"] = torch_env()
    out.write()
    with torch.inference_mode():
        cs = cases(torch, nn, F)
        for name, cat, fn in cs:
            try:
                for _ in range(50):
                    fn()
                per, probes = time_reps(torch, fn, args.n, args.reps)
                k = kernels_per_call(torch, fn)
                rec = {"id": "host_dispatch/%s" % name, "suite": "host_dispatch",
                       "op": "host_dispatch",
                       "params": {"call": name, "category": cat, "calls_per_rep": args.n,
                                  "reps": args.reps},
                       "host_us_per_call": round(percentile(per, 50), 3),
                       "host_us_per_call_min": round(min(per), 3),
                       "host_us_per_call_max": round(max(per), 3),
                       "kernels_per_call": k}
                rec.update(rep_fields(per, probes))
                out.add(rec)
                log("%-26s %-13s %7.2f us/call (min %.2f) kernels %d"
                    % (name, cat, rec["host_us_per_call"], rec["host_us_per_call_min"], k))
            except Exception as e:  # noqa: BLE001
                out.error("host_dispatch/" + name, e)
    # autograd: backward of a chain of `depth` small Linear layers, host time per backward node
    try:
        for depth in (8, 32):
            layers = [nn.Linear(64, 64, device="cuda", dtype=torch.bfloat16) for _ in range(depth)]
            xin = torch.randn(8, 64, device="cuda", dtype=torch.bfloat16, requires_grad=True)

            def fwd():
                h = xin
                for m in layers:
                    h = m(h)
                return h.sum()

            def fwd_bwd():
                fwd().backward()

            for _ in range(20):
                fwd_bwd()
            f_us = percentile([time_host(torch, fwd, 200) for _ in range(5)], 50)
            fb_us = percentile([time_host(torch, fwd_bwd, 200) for _ in range(5)], 50)
            k = kernels_per_call(torch, fwd_bwd)
            rec = {"id": "host_dispatch/autograd_linear_chain_%d" % depth, "suite": "host_dispatch",
                   "op": "host_dispatch",
                   "params": {"call": "Linear chain forward + .sum().backward()", "depth": depth,
                              "category": "autograd"},
                   "forward_host_us": round(f_us, 3), "forward_backward_host_us": round(fb_us, 3),
                   "kernels_per_call": k}
            out.add(rec)
            log("autograd depth %d: fwd %.1f us, fwd+bwd %.1f us, kernels %d"
                % (depth, f_us, fb_us, k))
    except Exception as e:  # noqa: BLE001
        out.error("host_dispatch/autograd", e)
    # training step code path at tiny sizes: GPT-2 blocks (the e2e train_gpt.py model, d=64, 2
    # heads, seq 16, batch 2) under bf16 autocast with fp32 params: host time of the forward
    # (+loss) and of loss.backward(), and the kernels each launches.
    try:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import train_gpt

        for L in (2, 6):
            torch.manual_seed(0)
            with torch.device("cuda"):
                model = train_gpt.build_model(torch, nn, F, L, 64, 2, 256, 16)
            idx = torch.randint(0, 256, (2, 16), device="cuda")
            tgt = torch.randint(0, 256, (2, 16), device="cuda")

            def fwd():
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    return model(idx, tgt)

            fw, bw = [], []
            for i in range(60):
                model.zero_grad(set_to_none=True)
                torch.cuda.synchronize()
                t0 = time.perf_counter()
                loss = fwd()
                t1 = time.perf_counter()
                loss.backward()
                t2 = time.perf_counter()
                torch.cuda.synchronize()
                if i >= 10:
                    fw.append((t1 - t0) * 1e6)
                    bw.append((t2 - t1) * 1e6)
            model.zero_grad(set_to_none=True)
            kf = kernels_per_call(torch, fwd)
            kfb = kernels_per_call(torch, lambda: fwd().backward())
            rec = {"id": "host_dispatch/train_gpt_tiny_L%d" % L, "suite": "host_dispatch",
                   "op": "host_dispatch",
                   "params": {"call": "train_gpt.py model, d=64 heads=2 seq=16 batch=2 vocab=256, "
                              "autocast bf16, fp32 params", "layers": L, "category": "autograd"},
                   "forward_host_us": round(percentile(fw, 50), 3),
                   "backward_host_us": round(percentile(bw, 50), 3),
                   "forward_kernels": kf, "backward_kernels": kfb - kf}
            out.add(rec)
            log("train tiny L=%d: fwd %.1f us (%d kernels), bwd %.1f us (%d kernels)"
                % (L, rec["forward_host_us"], kf, rec["backward_host_us"], kfb - kf))
    except Exception as e:  # noqa: BLE001
        out.error("host_dispatch/train_gpt_tiny", e)
    # inference code path at tiny sizes: the e2e decode_llama.py model (d=64, 4 heads, 2 KV heads,
    # head_dim 16, ffn 128, vocab 256), one eager decode step in inference mode, issued back to
    # back with no synchronisation (host-bound at these sizes): host time per step and kernels.
    try:
        import decode_llama

        for L in (2, 6):
            cfg = dict(model="tiny", layers=L, d_model=64, heads=4, kv_heads=2, head_dim=16,
                       ffn=128, vocab=256, tied_embeddings=False, rope_theta=500000.0,
                       norm_eps=1e-5)
            torch.manual_seed(0)
            model = decode_llama.build_bf16(torch, nn, F, cfg, True)
            with torch.inference_mode():
                caches = decode_llama.make_caches(torch, cfg, 1)
                tok = torch.randint(0, 256, (1, 1), device="cuda")
                pos = torch.full((1,), 64, device="cuda", dtype=torch.long)

                def step():
                    logits = model(tok, pos, caches, 65, False)
                    tok.copy_(logits[:, -1, :].argmax(dim=-1, keepdim=True))

                for _ in range(20):
                    step()
                per, probes = time_reps(torch, step, 100, args.reps)
                k = kernels_per_call(torch, step)
            rec = {"id": "host_dispatch/decode_llama_tiny_L%d" % L, "suite": "host_dispatch",
                   "op": "host_dispatch",
                   "params": {"call": "decode_llama.py decode step, d=64 heads=4 kv=2 hd=16 "
                              "ffn=128 vocab=256, inference_mode, bf16", "layers": L,
                              "category": "inference_model"},
                   "host_us_per_call": round(percentile(per, 50), 3), "kernels_per_call": k}
            rec.update(rep_fields(per, probes))
            out.add(rec)
            log("decode tiny L=%d: %.1f us per step, %d kernels" % (L, rec["host_us_per_call"], k))
    except Exception as e:  # noqa: BLE001
        out.error("host_dispatch/decode_llama_tiny", e)
    # fused AdamW: host time of opt.step() over P parameter tensors
    try:
        for P in (16, 64, 256):
            ps = [torch.nn.Parameter(torch.randn(64, device="cuda")) for _ in range(P)]
            for p in ps:
                p.grad = torch.randn_like(p)
            opt = torch.optim.AdamW(ps, lr=1e-4, fused=True)
            for _ in range(10):
                opt.step()
            per, probes = time_reps(torch, opt.step, 50, args.reps)
            us = percentile(per, 50)
            k = kernels_per_call(torch, opt.step)
            zg = percentile([time_host(torch, lambda: opt.zero_grad(set_to_none=True), 200)
                             for _ in range(5)], 50)
            rec = {"id": "host_dispatch/adamw_fused_%d" % P, "suite": "host_dispatch",
                   "op": "host_dispatch",
                   "params": {"call": "AdamW(fused=True).step()", "tensors": P,
                              "category": "optimizer"},
                   "host_us_per_call": round(us, 3), "zero_grad_host_us": round(zg, 3),
                   "kernels_per_call": k}
            rec.update(rep_fields(per, probes))
            out.add(rec)
            log("adamw fused P=%d: step %.1f us, zero_grad %.1f us, kernels %d" % (P, us, zg, k))
    except Exception as e:  # noqa: BLE001
        out.error("host_dispatch/adamw", e)
    fastest = fill_nominal(out.doc["records"])
    out.doc["host_speed"] = {"probe": CPU_PROBE_WORK, "fastest_probe_us": fastest,
                             "nominal_probe_ratio": NOMINAL_PROBE_RATIO,
                             "min_nominal_reps": MIN_NOMINAL_REPS}
    for r in out.doc["records"]:
        if "reps_probe_us" in r:
            log("%-26s nominal %s us/call (%d/%d reps nominal; all-rep median %.2f)"
                % (r["id"].split("/", 1)[1], r["host_us_per_call_nominal"], r["nominal_reps"],
                   len(r["reps_probe_us"]), r["host_us_per_call"]))
    out.finish()


if __name__ == "__main__":
    main()
