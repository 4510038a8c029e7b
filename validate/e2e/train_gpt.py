"""Ridge e2e: one training step of GPT-2 style models (nanoGPT-like), PyTorch eager, one GPU.

fp32 master params, bf16 autocast, fused AdamW, dropout 0. See validate/e2e/README.md.
Usage: python3 validate/e2e/train_gpt.py --out OUT/e2e_train.json --budget 60
"""

import gc
import math
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_common import (Budget, RecordFile, issue_stats, log, parse_common_args,  # noqa: E402
                        probe_stats, profile_fn, start_run, stats_us, time_calls)

CONFIGS = [
    # name, layers, d_model, heads, vocab, seq, micro_batch
    ("gpt2-small", 12, 768, 12, 50304, 1024, 8),
    ("gpt2-medium", 24, 1024, 16, 50304, 1024, 8),
]
# RIDGE_E2E_SET=prereg-e2e1: models no fit has seen (validate/prereg/e2e1/README.md): GPT-2 large
# and XL shapes (Radford et al. 2019, Table 2: 36 x 1280 and 48 x 1600, 20 and 25 heads).
if os.environ.get("RIDGE_E2E_SET") == "prereg-e2e1":
    CONFIGS = [
        ("gpt2-large", 36, 1280, 20, 50304, 1024, 8),
        ("gpt2-xl", 48, 1600, 25, 50304, 1024, 4),
    ]
# RIDGE_E2E_SET=prereg-e2e2: models no fit has seen (validate/prereg/e2e2/README.md), in this
# script's GPT-2 architecture: GPT-Neo 1.3B's shape (24 x 2048, 16 heads of 128; EleutherAI's
# config.json) at 2048 tokens and Pythia-410M's (24 x 1024, 16 heads of 64; Biderman et al. 2023,
# Table 1) at 4096 tokens.
if os.environ.get("RIDGE_E2E_SET") == "prereg-e2e2":
    CONFIGS = [
        ("gpt-neo-1.3b-shape", 24, 2048, 16, 50304, 2048, 4),
        ("pythia-410m-shape", 24, 1024, 16, 50304, 4096, 2),
    ]
# RIDGE_E2E_SET=prereg-e2e3: models no fit has seen (validate/prereg/e2e3/README.md), in this
# script's GPT-2 architecture: OPT-2.7B's shape (32 x 2560, 32 heads of 80; Zhang et al. 2022,
# Table 1) at 2048 tokens and BLOOM-560M's (24 x 1024, 16 heads of 64, its 250880-token vocabulary;
# bigscience/bloom-560m config.json) at 2048 tokens.
if os.environ.get("RIDGE_E2E_SET") == "prereg-e2e3":
    CONFIGS = [
        ("opt-2.7b-shape", 32, 2560, 32, 50304, 2048, 2),
        ("bloom-560m-shape", 24, 1024, 16, 250880, 2048, 4),
    ]
# RIDGE_E2E_SET=prereg-e2e4: models no fit has seen (validate/prereg/e2e4/README.md), in this
# script's GPT-2 architecture: OPT-1.3B's shape (24 x 2048, 32 heads of 64, vocabulary 50272;
# Zhang et al. 2022, Table 1) and BLOOM-1B1's (24 x 1536, 16 heads of 96, vocabulary 250880;
# bigscience/bloom-1b1 config.json), both at 2048 tokens.
if os.environ.get("RIDGE_E2E_SET") == "prereg-e2e4":
    CONFIGS = [
        ("opt-1.3b-shape", 24, 2048, 32, 50272, 2048, 4),
        ("bloom-1b1-shape", 24, 1536, 16, 250880, 2048, 4),
    ]
WARMUP = 3
REPS = 10
LR = 1e-4
SEED = 1234


def build_model(torch, nn, F, layers, d, heads, vocab, seq):
    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1 = nn.LayerNorm(d)                      # with bias, eps 1e-5
            self.c_attn = nn.Linear(d, 3 * d)                # fused qkv, bias
            self.c_proj = nn.Linear(d, d)                    # attention out proj, bias
            self.ln_2 = nn.LayerNorm(d)
            self.c_fc = nn.Linear(d, 4 * d)                  # MLP up, bias
            self.mlp_proj = nn.Linear(4 * d, d)              # MLP down, bias

        def forward(self, x):
            B, T, C = x.shape
            q, k, v = self.c_attn(self.ln_1(x)).split(C, dim=2)
            q = q.view(B, T, heads, C // heads).transpose(1, 2)
            k = k.view(B, T, heads, C // heads).transpose(1, 2)
            v = v.view(B, T, heads, C // heads).transpose(1, 2)
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            y = y.transpose(1, 2).contiguous().view(B, T, C)
            x = x + self.c_proj(y)
            x = x + self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))
            return x

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte = nn.Embedding(vocab, d)
            self.wpe = nn.Embedding(seq, d)
            self.h = nn.ModuleList([Block() for _ in range(layers)])
            self.ln_f = nn.LayerNorm(d)
            self.lm_head = nn.Linear(d, vocab, bias=False)
            self.lm_head.weight = self.wte.weight            # tied
            for name, p in self.named_parameters():
                if p.dim() >= 2:
                    std = 0.02
                    if name.endswith("c_proj.weight") or name.endswith("mlp_proj.weight"):
                        std = 0.02 / math.sqrt(2 * layers)
                    torch.nn.init.normal_(p, mean=0.0, std=std)

        def forward(self, idx, targets):
            B, T = idx.shape
            pos = torch.arange(0, T, dtype=torch.long, device=idx.device)
            x = self.wte(idx) + self.wpe(pos)
            for blk in self.h:
                x = blk(x)
            x = self.ln_f(x)
            logits = self.lm_head(x)
            return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))

    return GPT()


def phase_times(torch, model, opt, idx, tgt, reps=5):
    """Per-phase GPU (CUDA events) and host (perf_counter, no synchronisation inside the step)
    times of a training step: zero_grad, forward+loss, backward, optimizer. Medians over reps.

    gpu_us[p]: event time from the end of the previous phase's work to the end of this phase's
    on the GPU (includes any time the GPU waited for the host); host_us[p]: host time issuing it.
    """
    import time as _t

    names = ["zero_grad", "forward", "backward", "optimizer"]
    gpu = {n: [] for n in names}
    host = {n: [] for n in names}
    for _ in range(reps):
        torch.cuda.synchronize()
        ev = [torch.cuda.Event(enable_timing=True) for _ in range(5)]
        hs = [_t.perf_counter()]
        ev[0].record()
        opt.zero_grad(set_to_none=True)
        ev[1].record()
        hs.append(_t.perf_counter())
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(idx, tgt)
        ev[2].record()
        hs.append(_t.perf_counter())
        loss.backward()
        ev[3].record()
        hs.append(_t.perf_counter())
        opt.step()
        ev[4].record()
        hs.append(_t.perf_counter())
        torch.cuda.synchronize()
        for i, n in enumerate(names):
            gpu[n].append(ev[i].elapsed_time(ev[i + 1]) * 1e3)
            host[n].append((hs[i + 1] - hs[i]) * 1e6)
    from e2e_common import percentile
    return {"reps": reps,
            "gpu_us": {n: round(percentile(gpu[n], 50), 3) for n in names},
            "host_us": {n: round(percentile(host[n], 50), 3) for n in names},
            "method": "events at phase boundaries, host perf_counter without sync inside the step"}


def training_step(torch, nn, F, cfg):
    """The timed training step of one CONFIGS entry: (model, opt, idx, tgt, step), where step()
    is zero_grad, forward + loss under bf16 autocast, backward and the fused AdamW step.
    Shared with clock_probe.py and host_stall_probe.py, which time the same step."""
    name, L, d, H, V, T, B = cfg
    torch.manual_seed(SEED)
    with torch.device("cuda"):
        model = build_model(torch, nn, F, L, d, H, V, T)
    opt = torch.optim.AdamW(model.parameters(), lr=LR, fused=True)
    idx = torch.randint(0, V, (B, T), device="cuda")
    tgt = torch.randint(0, V, (B, T), device="cuda")

    def step():
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(idx, tgt)
        loss.backward()
        opt.step()
        return loss

    return model, opt, idx, tgt, step


def train_case(cfg):
    name, L, d, H, V, T, B = cfg
    return "e2e/train/%s/b%d_s%d" % (name, B, T)


def train_params(cfg, n_params):
    """Params of a training-step record of one CONFIGS entry."""
    name, L, d, H, V, T, B = cfg
    return {
        "model": name, "layers": L, "d_model": d, "heads": H, "kv_heads": H,
        "head_dim": d // H, "ffn": 4 * d, "vocab": V, "seq": T, "micro_batch": B,
        "dtype": "bf16", "master_dtype": "fp32", "autocast": "bf16",
        "optimizer": "adamw_fused", "lr": LR, "recompute": "none", "dropout": 0.0,
        "tied_embeddings": True, "norm": "layernorm", "norm_eps": 1e-5, "norm_bias": True,
        "mlp": "gelu_tanh", "qkv": "fused_linear_bias", "linear_bias": True,
        "pos_embedding": "learned", "attention": "sdpa_causal", "loss": "cross_entropy",
        "params_count": n_params, "grad_accum": 1,
    }


def run_config(torch, nn, F, out, budget, cfg, args):
    name, L, d, H, V, T, B = cfg
    case = train_case(cfg)
    log("case %s: build" % case)
    model, opt, idx, tgt, step = training_step(torch, nn, F, cfg)
    n_params = sum(p.numel() for p in model.parameters())

    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    log("case %s: %d params, warmup %d + %d timed steps" % (case, n_params, WARMUP, REPS))
    ev_us, wall_us = time_calls(step, WARMUP, REPS, budget=budget)
    issue = issue_stats(WARMUP)
    peak = torch.cuda.max_memory_allocated()
    loss_val = float(step().item())
    torch.cuda.synchronize()
    timing = stats_us(ev_us, "per_call", WARMUP)
    wall = stats_us(wall_us, "per_call_wall", WARMUP)
    log("case %s: median %.2f ms (wall %.2f ms), peak %.2f GiB, loss %.3f"
        % (case, timing.get("median_us", 0) / 1e3, wall.get("median_us", 0) / 1e3, peak / 2**30,
           loss_val))
    n_embed_pos = T * d
    flops = 6 * (n_params - n_embed_pos) * B * T + 12 * L * d * T * B * T
    rec = {
        "id": case, "suite": "e2e", "op": "e2e_train",
        "params": train_params(cfg, n_params),
        "timing": timing,
        "wall_us": wall.get("median_us"),
        "wall_timing": wall,
        "host_issue_timing": issue,
        "cpu_probe": probe_stats(),
        "phases": phase_times(torch, model, opt, idx, tgt),
        "peak_memory_bytes": int(peak),
        "flops": int(flops),
        "flops_formula": "6*(N-pos_emb)*B*T + 12*L*d*T*B*T (nanoGPT estimate_mfu, causal not halved)",
        "loss_after": loss_val,
    }
    out.add(rec)
    # Profiled after every case is timed (main()): a torch.profiler session leaves the host slower
    # for what the process times after it (validate/e2e/README.md, host_interleave.py).
    return case, rec, step, (model, opt, idx, tgt)


def profile_case(out, budget, args, case, rec, step):
    if args.no_profile:
        return
    if not budget.ok(8):
        out.skip(case + "#profile", "budget")
        return
    try:
        log("case %s: profile one step" % case)
        rec["profile"] = profile_fn(step, top=args.top, name=case)
        out.write()
        log("case %s: profile %d kernels, busy %.2f ms"
            % (case, rec["profile"]["kernel_launches"], rec["profile"]["gpu_busy_us"] / 1e3))
    except Exception as e:  # noqa: BLE001
        out.error(case + "#profile", e)


def main():
    args = parse_common_args(sys.argv[1:], "e2e_train.json", 60)
    budget = Budget(args.budget)
    out = RecordFile(args.out, "validate/e2e/train_gpt.py")
    torch, nn, F = start_run(out, "train_gpt")
    est = {"gpt2-small": 10, "gpt2-medium": 15, "gpt2-large": 20, "gpt2-xl": 25}
    timed = []  # (case, rec, step, keep-alive): every case stays resident (< 16 GiB each) until
    #            the profiles, which run after all the timing
    for cfg in CONFIGS:
        case = "e2e/train/%s" % cfg[0]
        if not budget.ok(est.get(cfg[0], 10)):
            out.skip(case, "budget (%.1fs left)" % budget.left())
            continue
        try:
            timed.append(run_config(torch, nn, F, out, budget, cfg, args))
        except Exception as e:  # noqa: BLE001
            out.error(case, e)
            gc.collect()
            try:
                torch.cuda.empty_cache()
            except Exception:  # noqa: BLE001
                pass
    for case, rec, step, _keep in timed:
        profile_case(out, budget, args, case, rec, step)
    del timed
    gc.collect()
    torch.cuda.empty_cache()
    out.finish()
    log("train_gpt: done, %d records, %d errors" % (len(out.doc["records"]), len(out.doc["errors"])))


if __name__ == "__main__":
    main()
