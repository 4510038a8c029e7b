"""Ridge e2e: serving runs on one GPU, plain PyTorch, random-weight Llama-3.2 1B shape, bf16.

Two request sets, each recorded with its exact requests (arrival, prompt, output tokens):
  static      HF-generate-style static batching: batches of BATCH requests in id order, prompts of
              equal length, one batched prefill (decode_llama.py's model and op sequence), then
              decode steps of the whole batch (finished rows keep running) until the batch's
              longest output is done; a request completes when its batch does.
  continuous  iteration-level batching over SLOTS sequence slots, vLLM V0's order: whenever a
              request waits and a slot is free, the iteration is the prefill of the oldest waiting
              request alone (decode_llama.py's prefill into its slot's cache rows); otherwise one
              decode step of every running sequence, each at its own position (per-row RoPE,
              per-row cache write by index_put, SDPA over the longest context with a per-row
              boolean mask). A finished sequence frees its slot at once; the last slot's sequence
              moves into it (its cache rows copied) so that running sequences stay in rows 0..n-1.
              Poisson arrivals, the loop waits for arrivals in real time.
Every iteration ends with torch.cuda.synchronize() (a token is known before the next iteration, as
an engine needs for stopping and streaming). Per request: first-token and finish times from the
run's start; per iteration: kind, rows, kv_len, wall time, and the time outside the forward call.
Usage: python3 validate/e2e/serve_llama.py --out OUT/e2e_serve.json --budget 150
"""

import gc
import math
import os
import random
import sys
import time
from collections import deque

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from decode_llama import MODELS, build_bf16, gqa_supported, make_caches  # noqa: E402
from e2e_common import Budget, RecordFile, log, parse_common_args, start_run  # noqa: E402

CFG = [m for m in MODELS if m["model"] == "llama3.2-1b"][0]
PROMPT = 256
STATIC_REQUESTS, BATCH = 32, 8
CONT_REQUESTS, SLOTS, RATE = 64, 16, 10.0
OUT_LO, OUT_HI = 16, 256
SEED = 1234


def request_lists():
    rng = random.Random(SEED)
    static = [dict(id=i, arrival_s=0.0, prompt_tokens=PROMPT,
                   output_tokens=rng.randint(OUT_LO, OUT_HI)) for i in range(STATIC_REQUESTS)]
    t = 0.0
    cont = []
    for i in range(CONT_REQUESTS):
        t += rng.expovariate(RATE)
        cont.append(dict(id=i, arrival_s=round(t, 6), prompt_tokens=PROMPT,
                         output_tokens=rng.randint(OUT_LO, OUT_HI)))
    return static, cont


def pct(xs, p):
    """Nearest rank: the smallest value with at least p% of the values at or below it."""
    xs = sorted(xs)
    if not xs:
        return None
    k = max(1, math.ceil(p / 100.0 * len(xs)))
    return xs[min(len(xs), k) - 1]


def summary(reqs, res):
    ttft = [res[r["id"]]["first_token_s"] - r["arrival_s"] for r in reqs]
    e2e = [res[r["id"]]["finish_s"] - r["arrival_s"] for r in reqs]
    tpot = [(res[r["id"]]["last_token_s"] - res[r["id"]]["first_token_s"])
            / (r["output_tokens"] - 1) for r in reqs if r["output_tokens"] > 1]
    start = min(r["arrival_s"] for r in reqs)
    end = max(res[r["id"]]["finish_s"] for r in reqs)
    out = sum(r["output_tokens"] for r in reqs)
    s = {"duration_s": end - start, "requests_per_s": len(reqs) / (end - start),
         "output_tokens_per_s": out / (end - start)}
    for name, xs in (("ttft", ttft), ("tpot", tpot), ("e2e", e2e)):
        s[name] = {"p50_s": pct(xs, 50), "p90_s": pct(xs, 90), "p99_s": pct(xs, 99),
                   "mean_s": sum(xs) / len(xs)}
    return s


def lm_logits(torch, F, model, x):
    x = model.norm(x)
    if CFG["tied_embeddings"]:
        return F.linear(x, model.embed_tokens.weight)
    return model.lm_head(x)


def make_decode_rows(torch, F, model, use_gqa):
    """One decode step of rows 0..n-1, each at its own position; returns the argmax tokens."""
    H, KV, hd = CFG["heads"], CFG["kv_heads"], CFG["head_dim"]
    rep = H // KV

    def rotate_half(x):
        x1 = x[..., : x.shape[-1] // 2]
        x2 = x[..., x.shape[-1] // 2:]
        return torch.cat((-x2, x1), dim=-1)

    def step(tok, pos, caches, kv_len):
        n = tok.shape[0]
        rows = torch.arange(n, device="cuda")
        x = model.embed_tokens(tok)                                     # [n, 1, d]
        cos = model.cos_table.index_select(0, pos).to(x.dtype)[:, None, None, :]
        sin = model.sin_table.index_select(0, pos).to(x.dtype)[:, None, None, :]
        mask = (torch.arange(kv_len, device="cuda")[None, :] <= pos[:, None])[:, None, None, :]
        for i, layer in enumerate(model.layers):
            a = layer.self_attn
            h = layer.input_layernorm(x)
            q = a.q_proj(h).view(n, 1, H, hd).transpose(1, 2)
            k = a.k_proj(h).view(n, 1, KV, hd).transpose(1, 2)
            v = a.v_proj(h).view(n, 1, KV, hd).transpose(1, 2)
            q = q * cos + rotate_half(q) * sin
            k = k * cos + rotate_half(k) * sin
            kc, vc = caches[i]
            kc[rows, :, pos] = k[:, :, 0, :]
            vc[rows, :, pos] = v[:, :, 0, :]
            kk = kc[:n, :, :kv_len]
            vv = vc[:n, :, :kv_len]
            if use_gqa:
                o = F.scaled_dot_product_attention(q, kk, vv, attn_mask=mask, enable_gqa=True)
            else:
                o = F.scaled_dot_product_attention(q, kk.repeat_interleave(rep, dim=1),
                                                   vv.repeat_interleave(rep, dim=1),
                                                   attn_mask=mask)
            o = o.transpose(1, 2).reshape(n, 1, H * hd)
            x = x + a.o_proj(o)
            x = x + layer.mlp(layer.post_attention_layernorm(x))
        return lm_logits(torch, F, model, x)[:, -1, :].argmax(dim=-1, keepdim=True)

    return step


def run_static(torch, model, reqs):
    res, iters = {}, []
    vocab = CFG["vocab"]
    caches = make_caches(torch, CFG, BATCH)
    pos_pre = torch.arange(PROMPT, device="cuda")
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for b in range(0, len(reqs), BATCH):
        batch = reqs[b:b + BATCH]
        n = len(batch)
        cs = caches if n == BATCH else [(k[:n], v[:n]) for k, v in caches]
        omax = max(r["output_tokens"] for r in batch)
        ts = time.perf_counter()
        tokens = torch.randint(0, vocab, (n, PROMPT), device="cuda")
        logits = model(tokens, pos_pre, cs, PROMPT, True)
        tok = logits[:, -1, :].argmax(dim=-1, keepdim=True)
        torch.cuda.synchronize()
        te = time.perf_counter()
        iters.append(dict(kind="prefill", rows=n, kv_len=PROMPT, start_s=ts - t0, end_s=te - t0))
        for r in batch:
            res[r["id"]] = dict(first_token_s=te - t0, last_token_s=te - t0, generated=1)
        for step in range(1, omax):
            ts = time.perf_counter()
            pos = torch.tensor([PROMPT + step - 1], device="cuda")
            logits = model(tok, pos, cs, PROMPT + step, False)
            tok = logits[:, -1, :].argmax(dim=-1, keepdim=True)
            torch.cuda.synchronize()
            te = time.perf_counter()
            iters.append(dict(kind="decode", rows=n, kv_len=PROMPT + step, start_s=ts - t0,
                              end_s=te - t0))
            for r in batch:
                q = res[r["id"]]
                if q["generated"] < r["output_tokens"]:
                    q["generated"] += 1
                    q["last_token_s"] = te - t0
        for r in batch:
            res[r["id"]]["finish_s"] = time.perf_counter() - t0  # generate() returns the batch
    del caches
    return res, iters


def run_continuous(torch, model, step_fn, reqs, timed=True):
    vocab = CFG["vocab"]
    caches = make_caches(torch, CFG, SLOTS)
    tokbuf = torch.zeros((SLOTS, 1), dtype=torch.long, device="cuda")
    pos_pre = torch.arange(PROMPT, device="cuda")
    res, iters = {}, []
    waiting, active = deque(), []
    nxt, done = 0, 0
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    while done < len(reqs):
        now = time.perf_counter() - t0
        while nxt < len(reqs) and reqs[nxt]["arrival_s"] <= now:
            waiting.append(reqs[nxt])
            nxt += 1
        if not waiting and not active:
            time.sleep(max(0.0, reqs[nxt]["arrival_s"] - now))
            continue
        ts = time.perf_counter()
        finished = []
        if waiting and len(active) < SLOTS:
            r = waiting.popleft()
            s = len(active)
            cs = [(k[s:s + 1], v[s:s + 1]) for k, v in caches]
            tokens = torch.randint(0, vocab, (1, PROMPT), device="cuda")
            logits = model(tokens, pos_pre, cs, PROMPT, True)
            tokbuf[s:s + 1].copy_(logits[:, -1, :].argmax(dim=-1, keepdim=True))
            torch.cuda.synchronize()
            tf = time.perf_counter()
            st = dict(req=r, pos=PROMPT, generated=1)
            res[r["id"]] = dict(first_token_s=tf - t0, last_token_s=tf - t0)
            active.append(st)
            if r["output_tokens"] <= 1:
                finished.append(s)
            kind, rows, kv = "prefill", 1, PROMPT
        else:
            n = len(active)
            pos = torch.tensor([a["pos"] for a in active], device="cuda")
            kv = max(a["pos"] for a in active) + 1
            tokbuf[:n].copy_(step_fn(tokbuf[:n], pos, caches, kv))
            torch.cuda.synchronize()
            tf = time.perf_counter()
            for i, a in enumerate(active):
                a["pos"] += 1
                a["generated"] += 1
                res[a["req"]["id"]]["last_token_s"] = tf - t0
                if a["generated"] >= a["req"]["output_tokens"]:
                    finished.append(i)
            kind, rows = "decode", n
        for s in sorted(finished, reverse=True):
            a = active[s]
            res[a["req"]["id"]]["finish_s"] = res[a["req"]["id"]]["last_token_s"]
            done += 1
            last = len(active) - 1
            if s != last:
                L = active[last]["pos"]
                for k, v in caches:
                    k[s, :, :L].copy_(k[last, :, :L])
                    v[s, :, :L].copy_(v[last, :, :L])
                tokbuf[s].copy_(tokbuf[last])
                active[s] = active[last]
            active.pop()
        te = time.perf_counter()
        iters.append(dict(kind=kind, rows=rows, kv_len=kv, start_s=ts - t0, forward_end_s=tf - t0,
                          end_s=te - t0))
    del caches
    return res, iters


def main():
    args = parse_common_args(sys.argv[1:], "e2e_serve.json", 150)
    budget = Budget(args.budget)
    out = RecordFile(args.out, "validate/e2e/serve_llama.py")
    torch, nn, F = start_run(out, "serve_llama", e2e=False)
    use_gqa = gqa_supported(torch, F)
    out.doc["environment"]["sdpa_enable_gqa"] = use_gqa
    torch.manual_seed(SEED)
    static_reqs, cont_reqs = request_lists()
    with torch.inference_mode():
        model = build_bf16(torch, nn, F, CFG, use_gqa)
        step_fn = make_decode_rows(torch, F, model, use_gqa)
        # Warm-up: every code path once (cuBLAS heuristics, SDPA backends, allocator), untimed.
        try:
            warm = [dict(id=i, arrival_s=0.0, prompt_tokens=PROMPT, output_tokens=12)
                    for i in range(SLOTS + 2)]
            run_continuous(torch, model, step_fn, warm)
            run_static(torch, model, [dict(r) for r in warm[:BATCH]])
            log("warm-up done")
        except Exception as e:  # noqa: BLE001
            out.error("warmup", e)
        for name, reqs, fn in (("static", static_reqs, lambda: run_static(torch, model, static_reqs)),
                               ("continuous", cont_reqs,
                                lambda: run_continuous(torch, model, step_fn, cont_reqs))):
            case = "e2e/serve/%s/llama3.2-1b" % name
            if not budget.ok(20):
                out.skip(case, "budget (%.1fs left)" % budget.left())
                continue
            try:
                log("%s: %d requests" % (case, len(reqs)))
                res, iters = fn()
                s = summary(reqs, res)
                out.add(dict(id=case, op="serve", params=dict(
                    model="llama3.2-1b", policy=name, prompt=PROMPT,
                    batch=BATCH if name == "static" else None,
                    slots=SLOTS if name == "continuous" else None,
                    rate_per_s=RATE if name == "continuous" else None, seed=SEED),
                    requests=reqs, results=[dict(id=r["id"], **res[r["id"]]) for r in reqs],
                    iterations=iters, summary=s))
                log("%s: %.2f req/s, ttft p50 %.1f ms, e2e p50 %.1f ms p99 %.1f ms, %d iterations"
                    % (case, s["requests_per_s"], s["ttft"]["p50_s"] * 1e3,
                       s["e2e"]["p50_s"] * 1e3, s["e2e"]["p99_s"] * 1e3, len(iters)))
            except Exception as e:  # noqa: BLE001
                out.error(case, e)
            gc.collect()
            torch.cuda.empty_cache()
    out.finish()
    log("serve_llama: done, %d records, %d errors" % (len(out.doc["records"]),
                                                       len(out.doc["errors"])))


if __name__ == "__main__":
    main()
