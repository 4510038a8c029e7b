"""Ridge e2e: Llama-style prefill and decode on one GPU, PyTorch eager and CUDA graph, bf16.

Models: Llama-3 8B and Llama-3.2 1B architectures, random weights, static KV cache.
See validate/e2e/README.md for the exact op sequence.
Usage: python3 validate/e2e/decode_llama.py --out OUT/e2e_decode.json --budget 80
"""

import gc
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_common import (Budget, RecordFile, issue_stats, log, parse_common_args,  # noqa: E402
                        probe_stats, profile_fn, start_run, stats_us, time_back_to_back,
                        time_calls)

MODELS = [
    dict(model="llama3-8b", layers=32, d_model=4096, heads=32, kv_heads=8, head_dim=128,
         ffn=14336, vocab=128256, tied_embeddings=False, rope_theta=500000.0, norm_eps=1e-5),
    dict(model="llama3.2-1b", layers=16, d_model=2048, heads=32, kv_heads=8, head_dim=64,
         ffn=8192, vocab=128256, tied_embeddings=True, rope_theta=500000.0, norm_eps=1e-5),
]
# RIDGE_E2E_SET=prereg-e2e1: a model no fit has seen (validate/prereg/e2e1/README.md): Llama-3.2
# 3B's shape (its Hugging Face config.json: 28 layers, hidden 3072, 24 heads, 8 KV heads, head_dim
# 128, intermediate 8192, vocab 128256, tied embeddings).
if os.environ.get("RIDGE_E2E_SET") == "prereg-e2e1":
    MODELS = [
        dict(model="llama3.2-3b", layers=28, d_model=3072, heads=24, kv_heads=8, head_dim=128,
             ffn=8192, vocab=128256, tied_embeddings=True, rope_theta=500000.0, norm_eps=1e-5),
    ]
# RIDGE_E2E_SET=prereg-e2e2: models no fit has seen (validate/prereg/e2e2/README.md): Llama-2 7B's
# shape (its config.json: 32 layers, hidden 4096, 32 heads, 32 KV heads, intermediate 11008, vocab
# 32000, untied, rope_theta 10000) and Qwen2.5-1.5B's (28 layers, hidden 1536, 12 heads, 2 KV
# heads, intermediate 8960, vocab 151936, tied, rope_theta 1e6, eps 1e-6), without Qwen's QKV bias.
if os.environ.get("RIDGE_E2E_SET") == "prereg-e2e2":
    MODELS = [
        dict(model="llama2-7b-shape", layers=32, d_model=4096, heads=32, kv_heads=32, head_dim=128,
             ffn=11008, vocab=32000, tied_embeddings=False, rope_theta=10000.0, norm_eps=1e-5),
        dict(model="qwen2.5-1.5b-shape", layers=28, d_model=1536, heads=12, kv_heads=2,
             head_dim=128, ffn=8960, vocab=151936, tied_embeddings=True, rope_theta=1000000.0,
             norm_eps=1e-6),
    ]
# RIDGE_E2E_SET=prereg-e2e3: models no fit has seen (validate/prereg/e2e3/README.md): Mistral 7B's
# shape (v0.1 config.json: 32 layers, hidden 4096, 32 heads, 8 KV heads, intermediate 14336, vocab
# 32000, untied, rope_theta 10000; without its sliding window, which a 1024-token context never
# reaches) and Llama-2 13B's (40 layers, hidden 5120, 40 heads, 40 KV heads, intermediate 13824,
# vocab 32000, untied, rope_theta 10000).
if os.environ.get("RIDGE_E2E_SET") == "prereg-e2e3":
    MODELS = [
        dict(model="mistral-7b-shape", layers=32, d_model=4096, heads=32, kv_heads=8, head_dim=128,
             ffn=14336, vocab=32000, tied_embeddings=False, rope_theta=10000.0, norm_eps=1e-5),
        dict(model="llama2-13b-shape", layers=40, d_model=5120, heads=40, kv_heads=40,
             head_dim=128, ffn=13824, vocab=32000, tied_embeddings=False, rope_theta=10000.0,
             norm_eps=1e-5),
    ]
# RIDGE_E2E_SET=prereg-e2e4: models no fit has seen (validate/prereg/e2e4/README.md): Qwen2.5-7B's
# shape (its config.json: 28 layers, hidden 3584, 28 heads, 4 KV heads, intermediate 18944, vocab
# 152064, untied, rope_theta 1e6, eps 1e-6; without its QKV bias) and Phi-3-mini's (32 layers,
# hidden 3072, 32 heads of 96, no GQA, intermediate 8192, vocab 32064, untied, rope_theta 10000;
# its fused qkv and gate_up projections as separate Linears, as this script runs every model).
if os.environ.get("RIDGE_E2E_SET") == "prereg-e2e4":
    MODELS = [
        dict(model="qwen2.5-7b-shape", layers=28, d_model=3584, heads=28, kv_heads=4,
             head_dim=128, ffn=18944, vocab=152064, tied_embeddings=False,
             rope_theta=1000000.0, norm_eps=1e-6),
        dict(model="phi-3-mini-shape", layers=32, d_model=3072, heads=32, kv_heads=32,
             head_dim=96, ffn=8192, vocab=32064, tied_embeddings=False, rope_theta=10000.0,
             norm_eps=1e-5),
    ]
MAX_LEN = 2048
PREFILL_LEN = 1024
CONTEXT = 1024
BATCHES = [1, 16]
PREFILL_WARMUP, PREFILL_REPS = 2, 10
DECODE_WARMUP, DECODE_REPS = 5, 30
B2B_STEPS = 30
SEED = 1234
# With RIDGE_E2E_TIMELINE_DIR set: captured graphs kept alive (with their static tensors) until the
# profile pass, which profiles one replay of each: (model name, case id, replay, keep-alive).
GRAPH_REPLAYS = []


def gqa_supported(torch, F):
    try:
        q = torch.randn(1, 4, 2, 64, device="cuda", dtype=torch.bfloat16)
        k = torch.randn(1, 2, 2, 64, device="cuda", dtype=torch.bfloat16)
        F.scaled_dot_product_attention(q, k, k, enable_gqa=True)
        torch.cuda.synchronize()
        return True
    except Exception as e:  # noqa: BLE001
        log("enable_gqa unavailable (%r): using repeat_interleave" % (e,))
        return False


def build(torch, nn, F, cfg, use_gqa):
    L, d, H, KV, hd, ffn, V = (cfg[k] for k in
                               ("layers", "d_model", "heads", "kv_heads", "head_dim", "ffn", "vocab"))
    eps = cfg["norm_eps"]
    rep = H // KV

    class RMSNorm(nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(d, dtype=torch.bfloat16))

        def forward(self, x):
            in_dtype = x.dtype
            h = x.to(torch.float32)
            var = h.pow(2).mean(-1, keepdim=True)
            h = h * torch.rsqrt(var + eps)
            return self.weight * h.to(in_dtype)

    def rotate_half(x):
        x1 = x[..., : x.shape[-1] // 2]
        x2 = x[..., x.shape[-1] // 2:]
        return torch.cat((-x2, x1), dim=-1)

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.q_proj = nn.Linear(d, H * hd, bias=False)
            self.k_proj = nn.Linear(d, KV * hd, bias=False)
            self.v_proj = nn.Linear(d, KV * hd, bias=False)
            self.o_proj = nn.Linear(H * hd, d, bias=False)

        def forward(self, x, cos, sin, pos, k_cache, v_cache, kv_len, prefill):
            B, T, _ = x.shape
            q = self.q_proj(x).view(B, T, H, hd).transpose(1, 2)
            k = self.k_proj(x).view(B, T, KV, hd).transpose(1, 2)
            v = self.v_proj(x).view(B, T, KV, hd).transpose(1, 2)
            q = q * cos + rotate_half(q) * sin
            k = k * cos + rotate_half(k) * sin
            k_cache.index_copy_(2, pos, k)
            v_cache.index_copy_(2, pos, v)
            if prefill:
                kk, vv = k, v
            else:
                kk = k_cache[:, :, :kv_len]
                vv = v_cache[:, :, :kv_len]
            if use_gqa:
                o = F.scaled_dot_product_attention(q, kk, vv, is_causal=prefill, enable_gqa=True)
            else:
                kk = kk.repeat_interleave(rep, dim=1)
                vv = vv.repeat_interleave(rep, dim=1)
                o = F.scaled_dot_product_attention(q, kk, vv, is_causal=prefill)
            o = o.transpose(1, 2).reshape(B, T, H * hd)
            return self.o_proj(o)

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.gate_proj = nn.Linear(d, ffn, bias=False)
            self.up_proj = nn.Linear(d, ffn, bias=False)
            self.down_proj = nn.Linear(ffn, d, bias=False)

        def forward(self, x):
            return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))

    class Layer(nn.Module):
        def __init__(self):
            super().__init__()
            self.input_layernorm = RMSNorm()
            self.self_attn = Attention()
            self.post_attention_layernorm = RMSNorm()
            self.mlp = MLP()

        def forward(self, x, cos, sin, pos, kc, vc, kv_len, prefill):
            x = x + self.self_attn(self.input_layernorm(x), cos, sin, pos, kc, vc, kv_len, prefill)
            x = x + self.mlp(self.post_attention_layernorm(x))
            return x

    class Llama(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed_tokens = nn.Embedding(V, d)
            self.layers = nn.ModuleList([Layer() for _ in range(L)])
            self.norm = RMSNorm()
            if not cfg["tied_embeddings"]:
                self.lm_head = nn.Linear(d, V, bias=False)
            inv_freq = 1.0 / (cfg["rope_theta"] ** (
                torch.arange(0, hd, 2, dtype=torch.float32) / hd))
            t = torch.arange(MAX_LEN, dtype=torch.float32)
            freqs = torch.outer(t, inv_freq)
            emb = torch.cat((freqs, freqs), dim=-1)
            self.register_buffer("cos_table", emb.cos(), persistent=False)   # fp32 [MAX_LEN, hd]
            self.register_buffer("sin_table", emb.sin(), persistent=False)

        def forward(self, tokens, pos, caches, kv_len, prefill):
            x = self.embed_tokens(tokens)
            cos = self.cos_table.index_select(0, pos).to(x.dtype)
            sin = self.sin_table.index_select(0, pos).to(x.dtype)
            for i, layer in enumerate(self.layers):
                kc, vc = caches[i]
                x = layer(x, cos, sin, pos, kc, vc, kv_len, prefill)
            if prefill:
                x = x[:, -1:, :]
            x = self.norm(x)
            if cfg["tied_embeddings"]:
                return F.linear(x, self.embed_tokens.weight)
            return self.lm_head(x)

    # Built under default dtype bf16 (see build_bf16): Linear weights nn.Linear default
    # (kaiming uniform), embedding N(0, 1), RMSNorm weight 1 + 0.1*N(0,1); RoPE tables fp32.
    model = Llama()
    for p in model.parameters():
        p.requires_grad_(False)
    return model


def build_bf16(torch, nn, F, cfg, use_gqa):
    """build() on the GPU with bf16 as the default dtype (restored afterwards): the timed models'
    and the host probes' way of making one."""
    prev = torch.get_default_dtype()
    torch.set_default_dtype(torch.bfloat16)
    try:
        with torch.device("cuda"):
            return build(torch, nn, F, cfg, use_gqa)
    finally:
        torch.set_default_dtype(prev)


def make_caches(torch, cfg, batch):
    shape = (batch, cfg["kv_heads"], MAX_LEN, cfg["head_dim"])
    caches = []
    for _ in range(cfg["layers"]):
        kc = torch.randn(shape, device="cuda", dtype=torch.bfloat16)
        vc = torch.randn(shape, device="cuda", dtype=torch.bfloat16)
        caches.append((kc, vc))
    return caches


def base_params(cfg, use_gqa):
    p = dict(cfg)
    p.update({"dtype": "bf16", "max_len": MAX_LEN, "norm": "rmsnorm_fp32_hf", "mlp": "swiglu",
              "linear_bias": False, "qkv": "separate_q_k_v_linear", "rope": "rotate_half_hf",
              "rope_scaling": "none", "kv_cache": "static [batch, kv_heads, max_len, head_dim]",
              "cache_write": "index_copy_(dim=2, pos)",
              "gqa": "sdpa_enable_gqa" if use_gqa else "repeat_interleave"})
    return p


def make_decode_step(torch, cfg, model, batch):
    """One eager decode step at context CONTEXT (call under inference_mode): (step, caches, tok,
    pos); step() runs the model on the last token, argmaxes and feeds the token back."""
    caches = make_caches(torch, cfg, batch)
    tok = torch.randint(0, cfg["vocab"], (batch, 1), device="cuda")
    pos = torch.full((1,), CONTEXT, device="cuda", dtype=torch.long)
    kv_len = CONTEXT + 1

    def decode_step():
        logits = model(tok, pos, caches, kv_len, False)
        nxt = logits[:, -1, :].argmax(dim=-1, keepdim=True)
        tok.copy_(nxt)
        return logits

    return decode_step, caches, tok, pos


def prefill_params(cfg, use_gqa, n_params):
    """Params of a prefill record (batch 1, PREFILL_LEN tokens)."""
    params = base_params(cfg, use_gqa)
    params.update({"batch": 1, "prompt_len": PREFILL_LEN, "context": 0, "graph": False,
                   "attention": "sdpa is_causal=True on fresh k,v",
                   "lm_head": "last token only", "params_count": n_params})
    return params


def decode_params(cfg, use_gqa, batch, use_graph, n_params):
    """Params of a decode-step record (context CONTEXT)."""
    params = base_params(cfg, use_gqa)
    params.update({
        "batch": batch, "context": CONTEXT, "graph": use_graph,
        "attn_kv_len": CONTEXT + 1,
        "attention": "sdpa over k_cache[:, :, :context+1] (no mask)",
        "sampling": "greedy argmax fed back into the static token tensor",
        "position": "fixed at context (every timed step rewrites slot context)",
        "params_count": n_params})
    return params


def run_model(torch, nn, F, out, budget, cfg, use_gqa, args):
    name = cfg["model"]
    log("model %s: build" % name)
    torch.manual_seed(SEED)
    t0 = time.perf_counter()
    model = build_bf16(torch, nn, F, cfg, use_gqa)
    torch.cuda.synchronize()
    n_params = sum(p.numel() for p in model.parameters())
    weight_bytes = sum(p.numel() * p.element_size() for p in model.parameters())
    log("model %s: %d params (%.2f GB) built in %.1fs"
        % (name, n_params, weight_bytes / 1e9, time.perf_counter() - t0))
    V = cfg["vocab"]
    recs = {}

    # ------------------------------------------------------------------ prefill
    case = "e2e/prefill/%s/b1_s%d" % (name, PREFILL_LEN)
    if budget.ok(10):
        try:
            with torch.inference_mode():
                caches = make_caches(torch, cfg, 1)
                toks = torch.randint(0, V, (1, PREFILL_LEN), device="cuda")
                pos = torch.arange(PREFILL_LEN, device="cuda", dtype=torch.long)

                def prefill():
                    return model(toks, pos, caches, PREFILL_LEN, True)

                log("%s: timing" % case)
                ev, wall = time_calls(prefill, PREFILL_WARMUP, PREFILL_REPS, budget=budget)
                issue = issue_stats(PREFILL_WARMUP)
                timing = stats_us(ev, "per_call", PREFILL_WARMUP)
                wstats = stats_us(wall, "per_call_wall", PREFILL_WARMUP)
                params = prefill_params(cfg, use_gqa, n_params)
                rec = {"id": case, "suite": "e2e", "op": "e2e_prefill", "params": params,
                       "timing": timing, "wall_us": wstats.get("median_us"),
                       "wall_timing": wstats, "host_issue_timing": issue, "cpu_probe": probe_stats(),
                       "weight_bytes": weight_bytes,
                       "flops": 2 * n_params * PREFILL_LEN}
                log("%s: median %.3f ms (wall %.3f ms)"
                    % (case, timing.get("median_us", 0) / 1e3, wstats.get("median_us", 0) / 1e3))
                out.add(rec)
                recs[("prefill", 1, False)] = rec
                del caches
        except Exception as e:  # noqa: BLE001
            out.error(case, e)
    else:
        out.skip(case, "budget (%.1fs left)" % budget.left())
    gc.collect()
    torch.cuda.empty_cache()

    # ------------------------------------------------------------------ decode
    # All eager cases first, then the CUDA-graph cases (a failed capture cannot poison eager).
    for use_graph in (False, True):
        for batch in BATCHES:
            case = "e2e/decode/%s/b%d_ctx%d/%s" % (name, batch, CONTEXT,
                                                   "graph" if use_graph else "eager")
            if not budget.ok(6):
                out.skip(case, "budget (%.1fs left)" % budget.left())
                continue
            caches = None
            graph = None
            try:
                with torch.inference_mode():
                    decode_step, caches, tok, pos = make_decode_step(torch, cfg, model, batch)
                    kv_len = CONTEXT + 1
                    fn = decode_step
                    extra = {}
                    if use_graph:
                        log("%s: capture" % case)
                        s = torch.cuda.Stream()
                        s.wait_stream(torch.cuda.current_stream())
                        with torch.cuda.stream(s):
                            for _ in range(3):
                                decode_step()
                        torch.cuda.current_stream().wait_stream(s)
                        torch.cuda.synchronize()
                        graph = torch.cuda.CUDAGraph()
                        tc = time.perf_counter()
                        with torch.cuda.graph(graph):
                            decode_step()
                        torch.cuda.synchronize()
                        extra["capture_s"] = round(time.perf_counter() - tc, 4)
                        fn = graph.replay
                        if os.environ.get("RIDGE_E2E_TIMELINE_DIR"):
                            GRAPH_REPLAYS.append((name, case, graph.replay,
                                                  (graph, caches, tok, pos)))
                    log("%s: timing" % case)
                    ev, wall = time_calls(fn, DECODE_WARMUP, DECODE_REPS, budget=budget)
                    issue = issue_stats(DECODE_WARMUP)
                    b2b = time_back_to_back(fn, B2B_STEPS)
                    timing = stats_us(ev, "per_call", DECODE_WARMUP)
                    wstats = stats_us(wall, "per_call_wall", DECODE_WARMUP)
                    params = decode_params(cfg, use_gqa, batch, use_graph, n_params)
                    kv_bytes = (2 * cfg["layers"] * batch * cfg["kv_heads"] * kv_len
                                * cfg["head_dim"] * 2)
                    rec = {"id": case, "suite": "e2e", "op": "e2e_decode", "params": params,
                           "timing": timing, "wall_us": wstats.get("median_us"),
                           "wall_timing": wstats, "host_issue_timing": issue, "cpu_probe": probe_stats(),
                           "back_to_back": b2b,
                           "weight_bytes": weight_bytes, "kv_read_bytes": kv_bytes,
                           "flops": 2 * n_params * batch}
                    rec.update(extra)
                    log("%s: median %.3f ms (wall %.3f ms, back-to-back %.3f ms/step)"
                        % (case, timing.get("median_us", 0) / 1e3,
                           wstats.get("median_us", 0) / 1e3, b2b["wall_us_per_call"] / 1e3))
                    out.add(rec)
                    recs[("decode", batch, use_graph)] = rec
            except Exception as e:  # noqa: BLE001
                out.error(case, e)
            del graph, caches
            gc.collect()
            try:
                torch.cuda.synchronize()
                torch.cuda.empty_cache()
            except Exception as e:  # noqa: BLE001
                out.error(case + "#cleanup", e)
    return model, recs


def profile_model(torch, out, budget, cfg, model, recs, args):
    """Profile pass, run after all timing and CUDA-graph captures of every model, so that the
    profiler (CUPTI) is never active before a graph capture."""
    name = cfg["model"]
    V = cfg["vocab"]
    with torch.inference_mode():
        for (kind, batch, use_graph), rec in recs.items():
            if use_graph:
                continue
            case = rec["id"]
            if not budget.ok(6):
                out.skip(case + "#profile", "budget (%.1fs left)" % budget.left())
                continue
            caches = None
            try:
                log("%s: profile" % case)
                caches = make_caches(torch, cfg, batch)
                if kind == "prefill":
                    toks = torch.randint(0, V, (1, PREFILL_LEN), device="cuda")
                    pos = torch.arange(PREFILL_LEN, device="cuda", dtype=torch.long)

                    def fn():
                        return model(toks, pos, caches, PREFILL_LEN, True)
                else:
                    tok = torch.randint(0, V, (batch, 1), device="cuda")
                    pos = torch.full((1,), CONTEXT, device="cuda", dtype=torch.long)

                    def fn():
                        logits = model(tok, pos, caches, CONTEXT + 1, False)
                        tok.copy_(logits[:, -1, :].argmax(dim=-1, keepdim=True))
                        return logits
                for _ in range(2):
                    fn()
                p = profile_fn(fn, top=args.top, name=case)
                p["gpu_busy_fraction_of_profiled_wall"] = (
                    round(p["gpu_busy_us"] / p["wall_us_profiled"], 4)
                    if p.get("wall_us_profiled") else None)
                rec["profile"] = p
                out.write()
                log("%s: profile %d kernels, busy %.3f ms, profiled wall %.3f ms"
                    % (case, p["kernel_launches"], p["gpu_busy_us"] / 1e3,
                       p["wall_us_profiled"] / 1e3))
            except Exception as e:  # noqa: BLE001
                out.error(case + "#profile", e)
            del caches
            gc.collect()
            torch.cuda.empty_cache()
    for mname, case, replay, _keep in GRAPH_REPLAYS:
        if mname != name or not budget.ok(4):
            continue
        try:
            log("%s: profile graph replay" % case)
            for r in out.doc["records"]:
                if r.get("id") == case:
                    r["profile"] = profile_fn(replay, top=args.top, name=case)
            out.write()
        except Exception as e:  # noqa: BLE001
            out.error(case + "#profile", e)
    GRAPH_REPLAYS[:] = [g for g in GRAPH_REPLAYS if g[0] != name]
    log("model %s: profiles done" % name)


def main():
    args = parse_common_args(sys.argv[1:], "e2e_decode.json", 80)
    budget = Budget(args.budget)
    out = RecordFile(args.out, "validate/e2e/decode_llama.py")
    torch, nn, F = start_run(out, "decode_llama")
    use_gqa = gqa_supported(torch, F)
    out.doc["environment"]["sdpa_enable_gqa"] = use_gqa
    out.write()
    built = []
    for cfg in MODELS:
        if not budget.ok(15):
            out.skip("e2e/*/%s" % cfg["model"], "budget (%.1fs left)" % budget.left())
            continue
        try:
            model, recs = run_model(torch, nn, F, out, budget, cfg, use_gqa, args)
            built.append((cfg, model, recs))
        except Exception as e:  # noqa: BLE001
            out.error("model %s" % cfg["model"], e)
            gc.collect()
            try:
                torch.cuda.empty_cache()
            except Exception:  # noqa: BLE001
                pass
    # Profiles last (both models stay resident: ~16 GB + ~2.5 GB of bf16 weights).
    if not args.no_profile:
        for cfg, model, recs in built:
            try:
                profile_model(torch, out, budget, cfg, model, recs, args)
            except Exception as e:  # noqa: BLE001
                out.error("profile %s" % cfg["model"], e)
    out.finish()
    log("decode_llama: done, %d records, %d errors"
        % (len(out.doc["records"]), len(out.doc["errors"])))


if __name__ == "__main__":
    main()
