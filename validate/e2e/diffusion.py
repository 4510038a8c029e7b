"""Ridge e2e: a diffusion-like image pipeline on one GPU, PyTorch eager, bf16.

text encoder (CLIP-L-like) -> K x DiT-XL/2-like denoiser with classifier-free guidance
-> VAE-like conv decoder (channels_last) -> uint8 frame copied device->host into pinned memory.
T_total ~= K * T_denoiser + T_fixed. See validate/e2e/README.md for the exact op sequence.
Usage: python3 validate/e2e/diffusion.py --out OUT/e2e_diffusion.json --budget 50
"""

import gc
import math
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_common import (Budget, RecordFile, issue_stats, log, parse_common_args,  # noqa: E402
                        probe_stats, profile_fn, start_run, stats_us, time_calls)

TEXT = dict(layers=12, d_model=768, heads=12, seq=77, mlp=3072, vocab=49408, norm="layernorm",
            norm_eps=1e-5, act="gelu_tanh", attention="sdpa non-causal", batch=2,
            pooled="last token hidden state after final LN")
DIT = dict(layers=28, d_model=1152, heads=16, mlp=4608, act="gelu_tanh", patch=2,
           latent_channels=4, latent_hw=32, tokens=256, out_channels=4, cfg_batch=2,
           norm="layernorm no affine eps 1e-6", modulation="adaLN-Zero Linear(d,6d) per block",
           t_freq_dim=256, cond="c = t_mlp(sinusoid(t)) + Linear(768,d)(pooled text)",
           attention="sdpa non-causal, fused qkv Linear with bias",
           patch_embed="reshape+permute+Linear(16,d) (== Conv2d k2 s2)")
VAE = dict(latent_channels=4, latent_hw=32, conv_in=[4, 512], stages=[[512, 512], [512, 256], [256, 128]],
           upsample="nearest x2", block="[upsample, conv3x3 cin->cout, GN(32), SiLU, conv3x3 cout->cout, GN(32), SiLU]",
           conv_out=[128, 3], out_hw=256, memory_format="channels_last", groups=32, gn_eps=1e-6,
           batch=1, postprocess="((x.float()*0.5+0.5).clamp(0,1)*255).to(uint8), NHWC")
K_LIST = [1, 4, 20]
E2E_WARMUP, E2E_REPS = 1, 5
STAGE_WARMUP, STAGE_REPS = 3, 15
GUIDANCE = 4.0
SEED = 1234


def build_text_encoder(torch, nn, F):
    d, H, L, S, M, V = (TEXT[k] for k in ("d_model", "heads", "layers", "seq", "mlp", "vocab"))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1 = nn.LayerNorm(d)
            self.qkv = nn.Linear(d, 3 * d)
            self.proj = nn.Linear(d, d)
            self.ln_2 = nn.LayerNorm(d)
            self.fc1 = nn.Linear(d, M)
            self.fc2 = nn.Linear(M, d)

        def forward(self, x):
            B, T, C = x.shape
            q, k, v = self.qkv(self.ln_1(x)).split(C, dim=2)
            q = q.view(B, T, H, C // H).transpose(1, 2)
            k = k.view(B, T, H, C // H).transpose(1, 2)
            v = v.view(B, T, H, C // H).transpose(1, 2)
            y = F.scaled_dot_product_attention(q, k, v)
            y = y.transpose(1, 2).reshape(B, T, C)
            x = x + self.proj(y)
            x = x + self.fc2(F.gelu(self.fc1(self.ln_2(x)), approximate="tanh"))
            return x

    class TextEncoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok = nn.Embedding(V, d)
            self.pos = nn.Parameter(0.02 * torch.randn(1, S, d))
            self.blocks = nn.ModuleList([Block() for _ in range(L)])
            self.ln_f = nn.LayerNorm(d)

        def forward(self, ids):
            x = self.tok(ids) + self.pos
            for b in self.blocks:
                x = b(x)
            return self.ln_f(x)

    return TextEncoder()


def build_dit(torch, nn, F):
    d, H, L, M = (DIT[k] for k in ("d_model", "heads", "layers", "mlp"))
    p, C, HW = DIT["patch"], DIT["latent_channels"], DIT["latent_hw"]
    g = HW // p
    N = g * g
    Cout = DIT["out_channels"]
    TF = DIT["t_freq_dim"]
    text_d = TEXT["d_model"]

    def modulate(x, shift, scale):
        return x * (1 + scale.unsqueeze(1)) + shift.unsqueeze(1)

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.norm1 = nn.LayerNorm(d, elementwise_affine=False, eps=1e-6)
            self.qkv = nn.Linear(d, 3 * d)
            self.proj = nn.Linear(d, d)
            self.norm2 = nn.LayerNorm(d, elementwise_affine=False, eps=1e-6)
            self.fc1 = nn.Linear(d, M)
            self.fc2 = nn.Linear(M, d)
            self.adaLN = nn.Linear(d, 6 * d)

        def forward(self, x, c):
            B, T, _ = x.shape
            sh_msa, sc_msa, g_msa, sh_mlp, sc_mlp, g_mlp = self.adaLN(F.silu(c)).chunk(6, dim=1)
            h = modulate(self.norm1(x), sh_msa, sc_msa)
            qkv = self.qkv(h).reshape(B, T, 3, H, d // H).permute(2, 0, 3, 1, 4)
            q, k, v = qkv.unbind(0)
            a = F.scaled_dot_product_attention(q, k, v)
            a = self.proj(a.transpose(1, 2).reshape(B, T, d))
            x = x + g_msa.unsqueeze(1) * a
            h = modulate(self.norm2(x), sh_mlp, sc_mlp)
            x = x + g_mlp.unsqueeze(1) * self.fc2(F.gelu(self.fc1(h), approximate="tanh"))
            return x

    class DiT(nn.Module):
        def __init__(self):
            super().__init__()
            self.x_embed = nn.Linear(C * p * p, d)
            self.pos_embed = nn.Parameter(0.02 * torch.randn(1, N, d))
            self.t_fc1 = nn.Linear(TF, d)
            self.t_fc2 = nn.Linear(d, d)
            self.y_proj = nn.Linear(text_d, d)
            self.blocks = nn.ModuleList([Block() for _ in range(L)])
            self.norm_f = nn.LayerNorm(d, elementwise_affine=False, eps=1e-6)
            self.adaLN_f = nn.Linear(d, 2 * d)
            self.out = nn.Linear(d, p * p * Cout)
            half = TF // 2
            freqs = torch.exp(-math.log(10000.0) * torch.arange(half, dtype=torch.float32) / half)
            self.register_buffer("freqs", freqs, persistent=False)

        def forward(self, x, t, pooled):
            B = x.shape[0]
            # patchify [B, C, 32, 32] -> [B, 256, C*p*p]
            x = x.reshape(B, C, g, p, g, p).permute(0, 2, 4, 1, 3, 5).reshape(B, N, C * p * p)
            x = self.x_embed(x) + self.pos_embed
            args = t.float()[:, None] * self.freqs[None]
            temb = torch.cat([torch.cos(args), torch.sin(args)], dim=-1).to(x.dtype)
            c = self.t_fc2(F.silu(self.t_fc1(temb))) + self.y_proj(pooled)
            for b in self.blocks:
                x = b(x, c)
            sh, sc = self.adaLN_f(F.silu(c)).chunk(2, dim=1)
            x = self.out(modulate(self.norm_f(x), sh, sc))
            # unpatchify [B, 256, p*p*Cout] -> [B, Cout, 32, 32]
            x = x.reshape(B, g, g, p, p, Cout).permute(0, 5, 1, 3, 2, 4).reshape(B, Cout, HW, HW)
            return x

    return DiT()


def build_vae(torch, nn, F):
    G = VAE["groups"]
    eps = VAE["gn_eps"]

    class Stage(nn.Module):
        def __init__(self, cin, cout):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, padding=1)
            self.gn1 = nn.GroupNorm(G, cout, eps=eps)
            self.conv2 = nn.Conv2d(cout, cout, 3, padding=1)
            self.gn2 = nn.GroupNorm(G, cout, eps=eps)

        def forward(self, x):
            x = F.interpolate(x, scale_factor=2.0, mode="nearest")
            x = F.silu(self.gn1(self.conv1(x)))
            x = F.silu(self.gn2(self.conv2(x)))
            return x

    class Decoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv_in = nn.Conv2d(*VAE["conv_in"], 3, padding=1)
            self.stages = nn.ModuleList([Stage(a, b) for a, b in VAE["stages"]])
            self.conv_out = nn.Conv2d(*VAE["conv_out"], 3, padding=1)

        def forward(self, z):
            x = z.contiguous(memory_format=torch.channels_last)
            x = self.conv_in(x)
            for s in self.stages:
                x = s(x)
            x = self.conv_out(x)
            img = ((x.float() * 0.5 + 0.5).clamp(0.0, 1.0) * 255.0).to(torch.uint8)
            return img.permute(0, 2, 3, 1).contiguous()   # [B, H, W, 3] uint8

    return Decoder()


def build_calls(torch, nn, F):
    """The timed calls, on the GPU: the three models (bf16, eval, no grad), their inputs, and
    {"models": (te, dit, vae), "stages": [(name, fn, extra params)], "pipeline": fn(K),
    "common_params": fn() -> params of a pipeline record}. Shared with host_interleave.py, which
    times the same calls in alternation."""
    torch.manual_seed(SEED)
    prev_dtype = torch.get_default_dtype()
    torch.set_default_dtype(torch.bfloat16)
    try:
        with torch.device("cuda"):
            te = build_text_encoder(torch, nn, F)
            dit = build_dit(torch, nn, F)
            vae = build_vae(torch, nn, F)
    finally:
        torch.set_default_dtype(prev_dtype)
    dit.freqs = dit.freqs.float()
    vae = vae.to(memory_format=torch.channels_last)
    for m in (te, dit, vae):
        m.eval()
        for prm in m.parameters():
            prm.requires_grad_(False)
    counts = {n: sum(q.numel() for q in m.parameters()) for n, m in
              (("text_encoder", te), ("denoiser", dit), ("vae_decode", vae))}
    log("diffusion: built, params %s" % counts)

    lat = (1, DIT["latent_channels"], DIT["latent_hw"], DIT["latent_hw"])
    ids = torch.randint(0, TEXT["vocab"], (TEXT["batch"], TEXT["seq"]), device="cuda")
    x0 = torch.randn(lat, device="cuda", dtype=torch.bfloat16)
    frame_shape = (1, VAE["out_hw"], VAE["out_hw"], 3)
    host = torch.empty(frame_shape, dtype=torch.uint8, pin_memory=True)
    frame_bytes = host.numel() * host.element_size()

    def common_params():
        return {"text_encoder": TEXT, "denoiser": DIT, "vae": VAE, "dtype": "bf16",
                "latent_shape": list(lat), "cfg_batch": DIT["cfg_batch"], "guidance": GUIDANCE,
                "frame_shape": list(frame_shape), "frame_bytes": frame_bytes,
                "params_count": counts}

    with torch.inference_mode():
        def text_encode():
            h = te(ids)
            return h[:, -1, :]                                   # pooled [2, 768]

        pooled0 = text_encode()
        xin0 = torch.cat([x0, x0], dim=0)
        t0 = torch.full((DIT["cfg_batch"],), 500.0, device="cuda")

        def denoise_once():
            return dit(xin0, t0, pooled0)

        frame0 = vae(x0)

        def vae_decode():
            return vae(x0)

        def d2h():
            host.copy_(frame0, non_blocking=True)

        def pipeline(K):
            pooled = text_encode()
            x = x0.clone()
            ts = torch.linspace(1000.0, 0.0, K + 1, device="cuda")
            dt = 1.0 / K
            for i in range(K):
                xin = torch.cat([x, x], dim=0)
                t = ts[i:i + 1].expand(DIT["cfg_batch"])
                eps = dit(xin, t, pooled)
                e_c, e_u = eps.chunk(2, dim=0)
                e = e_u + GUIDANCE * (e_c - e_u)
                x = x - dt * e
            frame = vae(x)
            host.copy_(frame, non_blocking=True)
            torch.cuda.synchronize()
            return frame

    stages = [("text_encoder", text_encode, {"dims": TEXT}),
              ("denoiser", denoise_once, {"dims": DIT, "batch": DIT["cfg_batch"]}),
              ("vae_decode", vae_decode, {"dims": VAE}),
              ("d2h_copy", d2h, {"bytes": frame_bytes, "dst": "pinned host uint8",
                                 "shape": list(frame_shape), "non_blocking": True})]
    return {"models": (te, dit, vae), "stages": stages, "pipeline": pipeline,
            "common_params": common_params}


def main():
    args = parse_common_args(sys.argv[1:], "e2e_diffusion.json", 50)
    budget = Budget(args.budget)
    out = RecordFile(args.out, "validate/e2e/diffusion.py")
    torch, nn, F = start_run(out, "diffusion")

    calls = build_calls(torch, nn, F)
    pipeline = calls["pipeline"]
    common_params = calls["common_params"]
    te, dit, vae = calls["models"]

    with torch.inference_mode():
        # -------------------------------------------------------------- stages
        stages = calls["stages"]
        to_profile = []  # (case, record, fn): profiled after every case is timed
        for name, fn, extra in stages:
            case = "e2e/diffusion/stage/%s" % name
            if not budget.ok(5):
                out.skip(case, "budget (%.1fs left)" % budget.left())
                continue
            try:
                log("%s: timing" % case)
                reps = STAGE_REPS * 2 if name == "d2h_copy" else STAGE_REPS
                ev, wall = time_calls(fn, STAGE_WARMUP, reps, budget=budget)
                issue = issue_stats(STAGE_WARMUP)
                timing = stats_us(ev, "per_call", STAGE_WARMUP)
                wst = stats_us(wall, "per_call_wall", STAGE_WARMUP)
                params = {"stage": name, "dtype": "bf16"}
                params.update(extra)
                rec = {"id": case, "suite": "e2e", "op": "e2e_stage", "params": params,
                       "timing": timing, "wall_us": wst.get("median_us"), "wall_timing": wst,
                       "host_issue_timing": issue, "cpu_probe": probe_stats()}
                log("%s: median %.3f ms (wall %.3f ms)"
                    % (case, timing.get("median_us", 0) / 1e3, wst.get("median_us", 0) / 1e3))
                out.add(rec)
                if name in ("denoiser", "vae_decode", "text_encoder"):
                    to_profile.append((case, rec, fn))
            except Exception as e:  # noqa: BLE001
                out.error(case, e)

        # -------------------------------------------------------------- end to end
        for K in K_LIST:
            case = "e2e/diffusion/pipeline/K%d" % K
            if not budget.ok(5):
                out.skip(case, "budget (%.1fs left)" % budget.left())
                continue
            try:
                log("%s: timing" % case)
                ev, wall = time_calls(lambda: pipeline(K), E2E_WARMUP, E2E_REPS, budget=budget)
                issue = issue_stats(E2E_WARMUP)
                timing = stats_us(ev, "per_call", E2E_WARMUP)
                wst = stats_us(wall, "per_call_wall", E2E_WARMUP)
                params = common_params()
                params.update({"K": K, "sampler": "Euler x -= (1/K)*(e_u + g*(e_c - e_u)), "
                               "xin = cat([x, x]), t = linspace(1000,0,K+1)[i]",
                               "sync": "one torch.cuda.synchronize after the d2h copy"})
                rec = {"id": case, "suite": "e2e", "op": "e2e_diffusion", "params": params,
                       "timing": timing, "wall_us": wst.get("median_us"), "wall_timing": wst,
                       "host_issue_timing": issue, "cpu_probe": probe_stats()}
                log("%s: median %.3f ms (wall %.3f ms)"
                    % (case, timing.get("median_us", 0) / 1e3, wst.get("median_us", 0) / 1e3))
                out.add(rec)
                if K == 1:
                    to_profile.append((case, rec, lambda: pipeline(1)))
            except Exception as e:  # noqa: BLE001
                out.error(case, e)

        # -------------------------------------------------------------- profiles, after all timing
        # A torch.profiler session leaves the host slower for what the process times after it
        # (validate/e2e/README.md, host_interleave.py --profile-between), so no case is timed
        # after one.
        for case, rec, fn in to_profile:
            if args.no_profile or not budget.ok(6):
                continue
            try:
                rec["profile"] = profile_fn(fn, top=args.top, name=case)
                out.write()
                log("%s: profile %d kernels, busy %.3f ms"
                    % (case, rec["profile"]["kernel_launches"],
                       rec["profile"]["gpu_busy_us"] / 1e3))
            except Exception as e:  # noqa: BLE001
                out.error(case + "#profile", e)
    out.finish()
    log("diffusion: done, %d records, %d errors" % (len(out.doc["records"]), len(out.doc["errors"])))
    del te, dit, vae
    gc.collect()


if __name__ == "__main__":
    main()
