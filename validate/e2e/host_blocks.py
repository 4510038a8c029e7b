"""Ridge e2e: where the host time of an eager forward goes, model by model (no profiler).

The e2e host-bound cases disagree with Ridge's sum of tight-loop op costs by a factor that
depends on the model (runs 5-7 at nominal host speed: the text encoder costs about 0.95x the
sum, the Llama-3.2-1B decode step about 1.05x, the DiT denoiser about 1.3x). This script times,
on the e2e models themselves (the same builders, the same sizes), nested pieces of one forward
in tight loops, so the factor can be traced to a piece:

  whole forward  >  one block / layer (the same block every call, and cycling through all of
  them)  >  the block's parts (norm+modulate, attention, MLP, gating...)  >  single ops at the
  block's own shapes.

Every repetition (n back-to-back calls, then one synchronize whose wait is excluded) is
bracketed by e2e_common.cpu_probe_us(); records keep each repetition's us/call and probe, so a
figure can be read at nominal host speed or in probe units (us per call / probe us), which
repeat across leases far better than raw times (validate/e2e/README.md).

Usage: python3 validate/e2e/host_blocks.py --out OUT/host_blocks.json [--reps 15]
Writes ridge.records/1 records, op "host_blocks", one per case.
"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_common import RecordFile, log, percentile, start_run  # noqa: E402
from host_dispatch import (MIN_NOMINAL_REPS, NOMINAL_PROBE_RATIO, fill_nominal,  # noqa: E402
                           kernels_per_call, rep_fields, time_reps)

TARGET_REP_S = 0.04  # each repetition runs about this long


def calls_per_rep(torch, fn):
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    per = (time.perf_counter() - t0) / 3
    return max(3, min(2000, int(TARGET_REP_S / max(per, 1e-6))))


def diffusion_cases(torch, nn, F):
    import diffusion as dm

    torch.manual_seed(dm.SEED)
    prev = torch.get_default_dtype()
    torch.set_default_dtype(torch.bfloat16)
    try:
        with torch.device("cuda"):
            te = dm.build_text_encoder(torch, nn, F)
            dit = dm.build_dit(torch, nn, F)
    finally:
        torch.set_default_dtype(prev)
    dit.freqs = dit.freqs.float()
    for m in (te, dit):
        m.eval()
        for prm in m.parameters():
            prm.requires_grad_(False)
    with torch.inference_mode():  # inputs are inference tensors, as in diffusion.py
        return _diffusion_cases(torch, F, dm, te, dit)


def _diffusion_cases(torch, F, dm, te, dit):
    T, D = dm.TEXT, dm.DIT
    bf = torch.bfloat16
    ids = torch.randint(0, T["vocab"], (T["batch"], T["seq"]), device="cuda")
    pooled = te(ids)[:, -1, :]
    B = D["cfg_batch"]
    x0 = torch.randn(1, D["latent_channels"], D["latent_hw"], D["latent_hw"], device="cuda",
                     dtype=bf)
    xin = torch.cat([x0, x0], dim=0)
    t = torch.full((B,), 500.0, device="cuda")
    d, H = D["d_model"], D["heads"]
    N = D["tokens"]
    xt = torch.randn(B, N, d, device="cuda", dtype=bf)
    c = torch.randn(B, d, device="cuda", dtype=bf)
    blk = dit.blocks[0]
    sh, sc, g, sh2, sc2, g2 = blk.adaLN(F.silu(c)).chunk(6, dim=1)
    h = blk.norm1(xt)
    hm = xt * (1 + sc.unsqueeze(1)) + sh.unsqueeze(1)
    qkv = blk.qkv(hm).reshape(B, N, 3, H, d // H).permute(2, 0, 3, 1, 4)
    q, k, v = qkv.unbind(0)
    a = blk.proj(F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(B, N, d))
    f1 = blk.fc1(hm)
    y6 = blk.adaLN(c)
    ti = [0]

    def modulate(x, shift, scale):
        return x * (1 + scale.unsqueeze(1)) + shift.unsqueeze(1)

    def dit_block_cycle():
        i = ti[0] = (ti[0] + 1) % len(dit.blocks)
        return dit.blocks[i](xt, c)

    def dit_attn():
        qkv_ = blk.qkv(hm).reshape(B, N, 3, H, d // H).permute(2, 0, 3, 1, 4)
        q_, k_, v_ = qkv_.unbind(0)
        a_ = F.scaled_dot_product_attention(q_, k_, v_)
        return blk.proj(a_.transpose(1, 2).reshape(B, N, d))

    dt, dH = T["d_model"], T["heads"]
    x77 = torch.randn(T["batch"], T["seq"], dt, device="cuda", dtype=bf)
    tb = te.blocks[0]
    q7, k7, v7 = (z.view(T["batch"], T["seq"], dH, dt // dH).transpose(1, 2)
                  for z in tb.qkv(tb.ln_1(x77)).split(dt, dim=2))
    f7 = tb.fc1(x77)
    tj = [0]

    def te_block_cycle():
        i = tj[0] = (tj[0] + 1) % len(te.blocks)
        return te.blocks[i](x77)

    def te_attn():
        Bt, Tt, C = x77.shape
        qq, kk, vv = tb.qkv(x77).split(C, dim=2)
        qq = qq.view(Bt, Tt, dH, C // dH).transpose(1, 2)
        kk = kk.view(Bt, Tt, dH, C // dH).transpose(1, 2)
        vv = vv.view(Bt, Tt, dH, C // dH).transpose(1, 2)
        y = F.scaled_dot_product_attention(qq, kk, vv)
        return tb.proj(y.transpose(1, 2).reshape(Bt, Tt, C))

    cases = [
        # (name, family, level, fn)
        ("te_forward", "text_encoder", "model", lambda: te(ids)[:, -1, :]),
        ("te_block0", "text_encoder", "block", lambda: tb(x77)),
        ("te_block_cycle", "text_encoder", "block", te_block_cycle),
        ("te_ln", "text_encoder", "part", lambda: tb.ln_1(x77)),
        ("te_attn", "text_encoder", "part", te_attn),
        ("te_mlp", "text_encoder", "part",
         lambda: tb.fc2(F.gelu(tb.fc1(tb.ln_2(x77)), approximate="tanh"))),
        ("te_residual_add", "text_encoder", "op", lambda: x77 + x77),
        ("te_linear_qkv", "text_encoder", "op", lambda: tb.qkv(x77)),
        ("te_linear_proj", "text_encoder", "op", lambda: tb.proj(x77)),
        ("te_sdpa", "text_encoder", "op", lambda: F.scaled_dot_product_attention(q7, k7, v7)),
        ("te_gelu", "text_encoder", "op", lambda: F.gelu(f7, approximate="tanh")),
        ("dit_forward", "denoiser", "model", lambda: dit(xin, t, pooled)),
        ("dit_block0", "denoiser", "block", lambda: blk(xt, c)),
        ("dit_block_cycle", "denoiser", "block", dit_block_cycle),
        ("dit_adaln", "denoiser", "part", lambda: blk.adaLN(F.silu(c)).chunk(6, dim=1)),
        ("dit_norm_modulate", "denoiser", "part", lambda: modulate(blk.norm1(xt), sh, sc)),
        ("dit_attn", "denoiser", "part", dit_attn),
        ("dit_gate_residual", "denoiser", "part", lambda: xt + g.unsqueeze(1) * a),
        ("dit_mlp", "denoiser", "part",
         lambda: blk.fc2(F.gelu(blk.fc1(hm), approximate="tanh"))),
        ("dit_silu_c", "denoiser", "op", lambda: F.silu(c)),
        ("dit_linear_adaln", "denoiser", "op", lambda: blk.adaLN(c)),
        ("dit_chunk6", "denoiser", "op", lambda: y6.chunk(6, dim=1)),
        ("dit_layernorm", "denoiser", "op", lambda: blk.norm1(xt)),
        ("dit_add_scalar", "denoiser", "op", lambda: 1 + sc.unsqueeze(1)),
        ("dit_mul_broadcast", "denoiser", "op", lambda: h * sc.unsqueeze(1)),
        ("dit_add_broadcast", "denoiser", "op", lambda: h + sh.unsqueeze(1)),
        ("dit_linear_qkv", "denoiser", "op", lambda: blk.qkv(hm)),
        ("dit_sdpa", "denoiser", "op", lambda: F.scaled_dot_product_attention(q, k, v)),
        ("dit_linear_proj", "denoiser", "op", lambda: blk.proj(hm)),
        ("dit_linear_fc1", "denoiser", "op", lambda: blk.fc1(hm)),
        ("dit_gelu", "denoiser", "op", lambda: F.gelu(f1, approximate="tanh")),
        ("dit_linear_fc2", "denoiser", "op", lambda: blk.fc2(f1)),
        ("dit_add", "denoiser", "op", lambda: xt + a),
    ]
    return cases


def llama_cases(torch, nn, F):
    import decode_llama as dl

    cfg = [m for m in dl.MODELS if m["model"] == "llama3.2-1b"][0]
    torch.manual_seed(dl.SEED)
    use_gqa = dl.gqa_supported(torch, F)
    model = dl.build_bf16(torch, nn, F, cfg, use_gqa)
    with torch.inference_mode():  # caches and inputs are inference tensors, as in decode_llama.py
        return _llama_cases(torch, F, dl, cfg, model)


def _llama_cases(torch, F, dl, cfg, model):
    caches = dl.make_caches(torch, cfg, 1)
    ctx = dl.CONTEXT
    tok = torch.randint(0, cfg["vocab"], (1, 1), device="cuda")
    pos = torch.full((1,), ctx, device="cuda", dtype=torch.long)
    kv_len = ctx + 1
    d, H, KV, hd = cfg["d_model"], cfg["heads"], cfg["kv_heads"], cfg["head_dim"]
    x = model.embed_tokens(tok)
    cos = model.cos_table.index_select(0, pos).to(x.dtype)
    sin = model.sin_table.index_select(0, pos).to(x.dtype)
    lay = model.layers[0]
    at = lay.self_attn
    kc, vc = caches[0]
    q = at.q_proj(x).view(1, 1, H, hd).transpose(1, 2)
    k = at.k_proj(x).view(1, 1, KV, hd).transpose(1, 2)
    o = torch.randn(1, H, 1, hd, device="cuda", dtype=torch.bfloat16)  # SDPA's output
    hf = torch.randn(1, 1, cfg["ffn"], device="cuda", dtype=torch.bfloat16)
    li = [0]

    def rotate_half(z):
        z1 = z[..., : z.shape[-1] // 2]
        z2 = z[..., z.shape[-1] // 2:]
        return torch.cat((-z2, z1), dim=-1)

    def step():
        logits = model(tok, pos, caches, kv_len, False)
        tok.copy_(logits[:, -1, :].argmax(dim=-1, keepdim=True))

    def layer_cycle():
        i = li[0] = (li[0] + 1) % len(model.layers)
        k_, v_ = caches[i]
        return model.layers[i](x, cos, sin, pos, k_, v_, kv_len, False)

    def qkv_views():
        return (at.q_proj(x).view(1, 1, H, hd).transpose(1, 2),
                at.k_proj(x).view(1, 1, KV, hd).transpose(1, 2),
                at.v_proj(x).view(1, 1, KV, hd).transpose(1, 2))

    def rope():
        return q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin

    def cache_sdpa():
        kc.index_copy_(2, pos, k)
        vc.index_copy_(2, pos, k)
        return F.scaled_dot_product_attention(q, kc[:, :, :kv_len], vc[:, :, :kv_len],
                                              enable_gqa=True)

    cases = [
        ("llama_step", "llama3.2-1b_decode", "model", step),
        ("llama_layer0", "llama3.2-1b_decode", "block",
         lambda: lay(x, cos, sin, pos, kc, vc, kv_len, False)),
        ("llama_layer_cycle", "llama3.2-1b_decode", "block", layer_cycle),
        ("llama_rmsnorm", "llama3.2-1b_decode", "part", lambda: lay.input_layernorm(x)),
        ("llama_qkv_views", "llama3.2-1b_decode", "part", qkv_views),
        ("llama_rope", "llama3.2-1b_decode", "part", rope),
        ("llama_cache_sdpa", "llama3.2-1b_decode", "part", cache_sdpa),
        ("llama_oproj", "llama3.2-1b_decode", "part",
         lambda: at.o_proj(o.transpose(1, 2).reshape(1, 1, H * hd))),
        ("llama_mlp", "llama3.2-1b_decode", "part", lambda: lay.mlp(x)),
        ("llama_residual_add", "llama3.2-1b_decode", "op", lambda: x + x),
        ("llama_linear_q", "llama3.2-1b_decode", "op", lambda: at.q_proj(x)),
        ("llama_linear_gate", "llama3.2-1b_decode", "op", lambda: lay.mlp.gate_proj(x)),
        ("llama_linear_down", "llama3.2-1b_decode", "op",
         lambda: lay.mlp.down_proj(hf)),
        ("llama_sdpa_gqa", "llama3.2-1b_decode", "op",
         lambda: F.scaled_dot_product_attention(q, kc[:, :, :kv_len], vc[:, :, :kv_len],
                                                enable_gqa=True)),
        ("llama_mul_rope", "llama3.2-1b_decode", "op", lambda: q * cos),
        ("llama_to_fp32", "llama3.2-1b_decode", "op", lambda: x.to(torch.float32)),
        ("llama_index_copy", "llama3.2-1b_decode", "op", lambda: kc.index_copy_(2, pos, k)),
    ]
    return cases


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="host_blocks.json")
    ap.add_argument("--reps", type=int, default=15)
    args = ap.parse_args()
    out = RecordFile(args.out, "validate/e2e/host_blocks.py")
    torch, nn, F = start_run(out, "host_blocks", e2e=False)
    groups = []
    for make in (diffusion_cases, llama_cases):
        try:
            groups.append(make(torch, nn, F))
        except Exception as e:  # noqa: BLE001
            out.error("build " + make.__name__, e)
    with torch.inference_mode():
        for cs in groups:
            for name, family, level, fn in cs:
                try:
                    for _ in range(5):
                        fn()
                    n = calls_per_rep(torch, fn)
                    per, probes = time_reps(torch, fn, n, args.reps)
                    k = kernels_per_call(torch, fn)
                    ratios = sorted(u / p for u, p in zip(per, probes))
                    rec = {"id": "host_blocks/%s" % name, "suite": "host_blocks",
                           "op": "host_blocks",
                           "params": {"call": name, "family": family, "level": level,
                                      "calls_per_rep": n, "reps": args.reps},
                           "host_us_per_call": round(percentile(per, 50), 3),
                           "host_us_per_call_min": round(min(per), 3),
                           "per_probe_median": round(percentile(ratios, 50), 5),
                           "kernels_per_call": k}
                    rec.update(rep_fields(per, probes))
                    out.add(rec)
                    log("%-22s %-20s %-6s %9.2f us/call (min %.2f) %.4f/probe kernels %d n %d"
                        % (name, family, level, rec["host_us_per_call"],
                           rec["host_us_per_call_min"], rec["per_probe_median"], k, n))
                except Exception as e:  # noqa: BLE001
                    out.error("host_blocks/" + name, e)
    fastest = fill_nominal(out.doc["records"])
    out.doc["host_speed"] = {"fastest_probe_us": fastest,
                             "nominal_probe_ratio": NOMINAL_PROBE_RATIO,
                             "min_nominal_reps": MIN_NOMINAL_REPS}
    out.finish()


if __name__ == "__main__":
    main()
