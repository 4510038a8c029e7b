"""Ridge e2e: serving runs on one GPU, plain PyTorch eager (no CUDA graphs), random-weight
Llama-3.2 1B shape, bf16 (decode_llama.py's model: its forward is the op sequence Ridge's hf_eager
engine model times, workloads/transformer.cpp build_prefill / build_decode_step).

Two request sets, each recorded with its exact requests (arrival, prompt, output tokens):
  static      HF-generate-style static batching: batches of BATCH requests in id order (all arrive
              at t = 0), prompts of equal length, one batched prefill, then decode steps of the
              whole batch at one position (finished rows keep running) until the batch's longest
              output is done; a request completes when its batch does (generate returns the batch).
  continuous  iteration-level batching over SLOTS cache rows, vLLM V0's order: whenever a request
              waits and a row is free, the iteration is the prefill of the oldest waiting request
              alone; otherwise ONE batched decode step of every running sequence: decode_llama's
              forward over rows 0..n-1 with one write column C for all rows (the KV cache is
              left-padded: a sequence admitted when the write column is C holds its prompt in
              columns C-PROMPT..C-1), index_copy_ at C, SDPA over columns 0..C with no mask, greedy
              argmax copied back into the token rows. This is Ridge's eager decode graph at batch n
              and context C (= the longest running sequence's tokens: when the sequence that started
              at column 0 finishes, the remaining rows are shifted left so that the oldest again
              starts at column 0). A finished sequence frees its row at once; the last row's
              sequence moves into it (its cache columns copied) so running rows stay 0..n-1. The
              shift and the move are the loop's housekeeping, timed apart (housekeeping_s).
              Poisson arrivals; the loop sleeps until the next arrival when nothing runs.
What the loop does not do that a real engine would: mask the pad columns (the attention reads them,
as Ridge's graph reads the longest context for every row; a boolean mask would take another SDPA
backend), per-row RoPE positions (every row uses column C's: the same ops and kernels; timing does
not depend on positions' values, the weights are random).
Every iteration ends with torch.cuda.synchronize() (a token is known before the next iteration).
After each iteration the loop times e2e_common.cpu_probe_us() (the host's Python speed then);
an iteration's probe_us is the larger of the probes before and after it. Per request: first-token,
last-token and finish times from the run's start; per iteration: kind, rows, kv_len, column,
start, forward end, end, housekeeping and probe.
Host probe (run 5): after the warm-up and before the first timed set, HOST_PROBE_STEPS decode
steps of a shape the warm-up ran (batch BATCH, kv_len PROMPT + 1), each synchronised and followed
by e2e_common.cpu_probe_us(), as the loop probes between its iterations; the median probe is the
record's environment.host_probe_us, the input Ridge's prediction takes (`engine.host_probe`).
With --graphs (run 14): every step the loop runs in a set replays a CUDA graph captured before
the set (after the warm-up, outside the timed window), vLLM's full-graph mode in miniature: the
prefill of one prompt per cache row (continuous; BATCH x PROMPT for the static set), its greedy
first token in the graph, and the decode step per (rows padded up to the next of CAPTURE_SIZES,
KV window): the attention reads the cache's first W columns, W = the step's kv_len rounded up to
a multiple of KV_WINDOW (the graph's shapes are fixed; the padding rows and columns are computed
and ignored, as a padded vLLM graph computes its padding). Inputs go in through static buffers
(the write column, the prompt's positions and tokens: one small copy or fill each, outside the
graph). Every graph's SDPA build happens at capture, so no timed iteration builds one. A decode
past the largest window (not reached by this loop's lengths) would run eagerly; the record says
which graph each iteration replayed (`graph`). Ridge's engine `model: hf_graph`.
Usage: python3 validate/e2e/serve_llama.py --out OUT/e2e_serve.json --budget 240 [--rate 3]
       [--static-seed 1234 --cont-seed 4321]  (run 3: other seeds and rate, the same loop)
       [--runs continuous]  (run 4: a second process that runs only the continuous set after
                             the same warm-up; default: static, then continuous)
       [--cont-requests 150]  (run 5: the continuous set's length; default 64)
"""

import gc
import math
import os
import random
import sys
import time
from collections import deque

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from decode_llama import MAX_LEN, MODELS, build_bf16, gqa_supported, make_caches  # noqa: E402
from e2e_common import (CPU_PROBE_WORK, Budget, RecordFile, cpu_probe_us, log,  # noqa: E402
                        start_run)

CFG = [m for m in MODELS if m["model"] == "llama3.2-1b"][0]
PROMPT = 256
STATIC_REQUESTS, BATCH = 32, 8
CONT_REQUESTS, SLOTS = 64, 16
# Offered load of the continuous set. Chosen before measuring from Ridge's prediction of this loop
# (validate/README.md, serving, run 2): about 40% of the rate the loop serves when overloaded.
RATE = 3.0
OUT_LO, OUT_HI = 16, 256
SEED = 1234
CONT_SEED = 4321
HOST_PROBE_STEPS = 300
# --graphs: captured decode sizes (vLLM's [1, 2, 4] + multiples of 8, up to SLOTS) and KV windows.
CAPTURE_SIZES = (1, 2, 4, 8, 16)
KV_WINDOW = 64
MAX_WINDOW = 1024
GRAPHS = [False]


def capture(torch, body):
    """A CUDA graph of body(): two runs on a side stream first (allocator, cuBLAS and SDPA
    builds), then the capture."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        body()
        body()
    torch.cuda.current_stream().wait_stream(side)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        body()
    torch.cuda.synchronize()
    return g


def window(kv_len):
    return -(-kv_len // KV_WINDOW) * KV_WINDOW


class StepGraphs:
    """The --graphs loop's captured steps over one static cache (`caches`, rows 0..R-1) and token
    buffer `tokbuf` [R, 1]: decode(n, col) replays (pad(n), window(col + 1)); prefill(key) replays
    a prefill captured by add_prefill."""

    def __init__(self, torch, model, caches, tokbuf, sizes, max_kv):
        self.torch, self.model, self.caches, self.tokbuf = torch, model, caches, tokbuf
        self.sizes = tuple(sizes)
        self.pos = torch.zeros(1, dtype=torch.long, device="cuda")
        self.dec, self.pre = {}, {}
        t = time.perf_counter()
        for n in self.sizes:
            views = [(k[:n], v[:n]) for k, v in caches]
            for w in range(window(PROMPT + 1), max_kv + 1, KV_WINDOW):
                def body(n=n, w=w, views=views):
                    logits = model(tokbuf[:n], self.pos, views, w, False)
                    tokbuf[:n].copy_(logits[:, -1, :].argmax(dim=-1, keepdim=True))
                self.pos.fill_(w - 1)
                self.dec[(n, w)] = capture(torch, body)
        self.capture_s = time.perf_counter() - t

    def add_prefill(self, key, tokens, pos, views, out):
        """Captures model(tokens, pos, views, PROMPT, prefill) with its argmax into `out`."""
        def body():
            logits = self.model(tokens, pos, views, PROMPT, True)
            out.copy_(logits[:, -1, :].argmax(dim=-1, keepdim=True))
        t = time.perf_counter()
        self.pre[key] = capture(self.torch, body)
        self.capture_s += time.perf_counter() - t

    def decode(self, n, col):
        """Replays the step of n rows writing column col; returns (padded rows, window) or None
        when no graph covers it (the caller runs the step eagerly)."""
        w = window(col + 1)
        pad = next((s for s in self.sizes if s >= n), None)
        g = self.dec.get((pad, w))
        if g is None:
            return None
        self.pos.fill_(col)
        g.replay()
        return [pad, w]


def request_lists(rate, seed=SEED, cont_seed=CONT_SEED, cont_requests=CONT_REQUESTS,
                  static_requests=STATIC_REQUESTS):
    rng = random.Random(seed)
    static = [dict(id=i, arrival_s=0.0, prompt_tokens=PROMPT,
                   output_tokens=rng.randint(OUT_LO, OUT_HI)) for i in range(static_requests)]
    rng = random.Random(cont_seed)
    t = 0.0
    cont = []
    for i in range(cont_requests):
        t += rng.expovariate(rate)
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


class Probes:
    """One CPU probe between consecutive iterations; an iteration's probe is the larger of the
    probes on either side of it."""

    def __init__(self):
        self.last = cpu_probe_us()

    def after(self, it):
        p = cpu_probe_us()
        it["probe_us"] = round(max(self.last, p), 3)
        self.last = p


def host_probe(torch, model, ar):
    """The host's speed before the timed sets: HOST_PROBE_STEPS decode steps at a shape the
    warm-up ran (BATCH rows, kv_len PROMPT + 1: no SDPA build), a CPU probe after each synchronised
    step. Returns (median probe, the probes, the steps' median seconds)."""
    caches = make_caches(torch, CFG, BATCH)
    tok = torch.randint(0, CFG["vocab"], (BATCH, 1), device="cuda")
    c = PROMPT
    probes, steps = [], []
    torch.cuda.synchronize()
    for _ in range(HOST_PROBE_STEPS):
        ts = time.perf_counter()
        logits = model(tok, ar[c:c + 1], caches, c + 1, False)
        tok.copy_(logits[:, -1, :].argmax(dim=-1, keepdim=True))
        torch.cuda.synchronize()
        steps.append(time.perf_counter() - ts)
        probes.append(round(cpu_probe_us(), 3))
    del caches
    return pct(probes, 50), probes, pct(steps, 50)


# --graphs: the last set's capture time and graph count (the record's summary).
STATS = {}


# The last set's start on time.perf_counter() (CLOCK_MONOTONIC on Linux: one clock for every
# process, so side_probe.py's samples can be matched to the set; run 7).
SET_T0 = [None]


def run_static(torch, model, reqs, ar):
    res, iters = {}, []
    vocab = CFG["vocab"]
    caches = make_caches(torch, CFG, BATCH)
    nb = (len(reqs) + BATCH - 1) // BATCH
    prompts = [torch.randint(0, vocab, (min(BATCH, len(reqs) - b * BATCH), PROMPT), device="cuda")
               for b in range(nb)]
    views = {n: [(k[:n], v[:n]) for k, v in caches] for n in range(1, BATCH + 1)}
    pos_pre = ar[:PROMPT]
    sg = None
    if GRAPHS[0]:
        # One cache of BATCH rows; a smaller last batch replays the padded graph.
        tok = torch.zeros((BATCH, 1), dtype=torch.long, device="cuda")
        sg = StepGraphs(torch, model, caches, tok, [BATCH], window(PROMPT + OUT_HI))
        sprompt = torch.zeros((BATCH, PROMPT), dtype=torch.long, device="cuda")
        sg.add_prefill("static", sprompt, pos_pre, views[BATCH], tok)
    torch.cuda.synchronize()
    probes = Probes()
    t0 = time.perf_counter()
    SET_T0[0] = t0
    for bi in range(nb):
        batch = reqs[bi * BATCH:(bi + 1) * BATCH]
        n = len(batch)
        cs = views[n]
        omax = max(r["output_tokens"] for r in batch)
        ts = time.perf_counter()
        if sg:
            sprompt[:n].copy_(prompts[bi])
            sg.pre["static"].replay()
        else:
            logits = model(prompts[bi], pos_pre, cs, PROMPT, True)
            tok = logits[:, -1, :].argmax(dim=-1, keepdim=True)
        torch.cuda.synchronize()
        te = time.perf_counter()
        it = dict(kind="prefill", rows=n, kv_len=PROMPT, start_s=ts - t0, forward_end_s=te - t0,
                  end_s=te - t0)
        if sg:
            it["graph"] = ["prefill", BATCH]
        for r in batch:
            res[r["id"]] = dict(first_token_s=te - t0, last_token_s=te - t0, generated=1)
        probes.after(it)
        iters.append(it)
        for step in range(1, omax):
            c = PROMPT + step - 1
            ts = time.perf_counter()
            gk = sg.decode(n, c) if sg else None
            if gk is None:
                logits = model(tok[:n], ar[c:c + 1], cs, c + 1, False)
                tok[:n].copy_(logits[:, -1, :].argmax(dim=-1, keepdim=True))
            torch.cuda.synchronize()
            te = time.perf_counter()
            it = dict(kind="decode", rows=n, kv_len=c + 1, start_s=ts - t0,
                      forward_end_s=te - t0, end_s=te - t0)
            if sg:
                it["graph"] = gk
            for r in batch:
                q = res[r["id"]]
                if q["generated"] < r["output_tokens"]:
                    q["generated"] += 1
                    q["last_token_s"] = te - t0
            probes.after(it)
            iters.append(it)
        fin = time.perf_counter() - t0  # generate() returns the whole batch
        for r in batch:
            res[r["id"]]["finish_s"] = fin
    if sg:
        STATS["capture_s"] = sg.capture_s
        STATS["graphs"] = len(sg.dec) + len(sg.pre)
    del caches, views, sg
    return res, iters


def move_row(caches, tokbuf, s, last, lo, col):
    """Housekeeping: the last row's sequence (cache columns lo..col-1, its next token) moves into
    the freed row s."""
    for k, v in caches:
        k[s, :, lo:col].copy_(k[last, :, lo:col])
        v[s, :, lo:col].copy_(v[last, :, lo:col])
    tokbuf[s].copy_(tokbuf[last])


def shift_rows(caches, n, sh, col):
    """Housekeeping: rows 0..n-1 shift left by sh columns (the oldest then starts at column 0)."""
    for k, v in caches:
        k[:n, :, :col - sh].copy_(k[:n, :, sh:col].clone())
        v[:n, :, :col - sh].copy_(v[:n, :, sh:col].clone())


def run_continuous(torch, model, reqs, ar):
    vocab = CFG["vocab"]
    caches = make_caches(torch, CFG, SLOTS)
    views = {n: [(k[:n], v[:n]) for k, v in caches] for n in range(1, SLOTS + 1)}
    rowv = {s: [(k[s:s + 1], v[s:s + 1]) for k, v in caches] for s in range(SLOTS)}
    prompts = torch.randint(0, vocab, (len(reqs), PROMPT), device="cuda")
    tokbuf = torch.zeros((SLOTS, 1), dtype=torch.long, device="cuda")
    sg = None
    if GRAPHS[0]:
        sg = StepGraphs(torch, model, caches, tokbuf, CAPTURE_SIZES, MAX_WINDOW)
        pprompt = torch.zeros((1, PROMPT), dtype=torch.long, device="cuda")
        ppos = ar[:PROMPT].clone()
        for s in range(SLOTS):
            sg.add_prefill(s, pprompt, ppos, rowv[s], tokbuf[s:s + 1])
    res, iters = {}, []
    waiting, active = deque(), []
    nxt, done = 0, 0
    col = 0  # the next write column of every running row
    torch.cuda.synchronize()
    probes = Probes()
    t0 = time.perf_counter()
    SET_T0[0] = t0
    while done < len(reqs):
        now = time.perf_counter() - t0
        while nxt < len(reqs) and reqs[nxt]["arrival_s"] <= now:
            waiting.append(reqs[nxt])
            nxt += 1
        if not waiting and not active:
            time.sleep(max(0.0, reqs[nxt]["arrival_s"] - now))
            probes.last = cpu_probe_us()
            continue
        ts = time.perf_counter()
        finished = []
        gk = None
        if waiting and len(active) < SLOTS:
            r = waiting.popleft()
            s = len(active)
            if not active:
                col = PROMPT
            if sg:
                pprompt.copy_(prompts[r["id"]:r["id"] + 1])
                ppos.copy_(ar[col - PROMPT:col])
                sg.pre[s].replay()
                gk = ["prefill", s]
            else:
                logits = model(prompts[r["id"]:r["id"] + 1], ar[col - PROMPT:col], rowv[s],
                               PROMPT, True)
                tokbuf[s:s + 1].copy_(logits[:, -1, :].argmax(dim=-1, keepdim=True))
            torch.cuda.synchronize()
            tf = time.perf_counter()
            res[r["id"]] = dict(first_token_s=tf - t0, last_token_s=tf - t0)
            active.append(dict(req=r, start=col - PROMPT, generated=1))
            if r["output_tokens"] <= 1:
                finished.append(s)
            kind, rows, kv, at = "prefill", 1, PROMPT, col
        else:
            n = len(active)
            gk = sg.decode(n, col) if sg else None
            if gk is None:
                logits = model(tokbuf[:n], ar[col:col + 1], views[n], col + 1, False)
                tokbuf[:n].copy_(logits[:, -1, :].argmax(dim=-1, keepdim=True))
            torch.cuda.synchronize()
            tf = time.perf_counter()
            kind, rows, kv, at = "decode", n, col + 1, col
            col += 1
            for i, a in enumerate(active):
                a["generated"] += 1
                res[a["req"]["id"]]["last_token_s"] = tf - t0
                if a["generated"] >= a["req"]["output_tokens"]:
                    finished.append(i)
        # Housekeeping: free finished rows (the last row moves in), then shift left so that the
        # oldest running sequence starts at column 0.
        moved = shifted = 0
        for s in sorted(finished, reverse=True):
            a = active[s]
            res[a["req"]["id"]]["finish_s"] = res[a["req"]["id"]]["last_token_s"]
            done += 1
            last = len(active) - 1
            if s != last:
                move_row(caches, tokbuf, s, last, active[last]["start"], col)
                active[s] = active[last]
                moved += 1
            active.pop()
        if active:
            sh = min(a["start"] for a in active)
            if sh > 0:
                shift_rows(caches, len(active), sh, col)
                for a in active:
                    a["start"] -= sh
                col -= sh
                shifted = sh
        if moved or shifted:
            torch.cuda.synchronize()
        te = time.perf_counter()
        it = dict(kind=kind, rows=rows, kv_len=kv, column=at, start_s=ts - t0,
                  forward_end_s=tf - t0, end_s=te - t0, housekeeping_s=te - tf,
                  rows_moved=moved, shift=shifted)
        if sg:
            it["graph"] = gk
        probes.after(it)
        iters.append(it)
    if sg:
        STATS["capture_s"] = sg.capture_s
        STATS["graphs"] = len(sg.dec) + len(sg.pre)
    del caches, views, rowv, sg
    return res, iters


def main():
    import argparse

    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="e2e_serve.json")
    ap.add_argument("--budget", type=float, default=240)
    ap.add_argument("--rate", type=float, default=RATE, help="continuous set: Poisson req/s")
    ap.add_argument("--static-seed", type=int, default=SEED, help="static set's output lengths")
    ap.add_argument("--cont-seed", type=int, default=CONT_SEED, help="continuous set's seed")
    ap.add_argument("--cont-requests", type=int, default=CONT_REQUESTS,
                    help="continuous set: number of requests")
    ap.add_argument("--runs", default="static,continuous",
                    help="which sets to run, in this order (static first when both)")
    ap.add_argument("--static-requests", type=int, default=STATIC_REQUESTS,
                    help="static set: number of requests (run 14: 128)")
    ap.add_argument("--graphs", action="store_true",
                    help="replay captured CUDA graphs of every step (run 14; see above)")
    args = ap.parse_args(sys.argv[1:])
    GRAPHS[0] = args.graphs
    runs = [x for x in args.runs.split(",") if x]
    if not runs or any(x not in ("static", "continuous") for x in runs) or \
            runs != sorted(set(runs), key=("static", "continuous").index):
        ap.error("--runs: static and/or continuous, in that order")
    budget = Budget(args.budget)
    out = RecordFile(args.out, "validate/e2e/serve_llama.py")
    torch, nn, F = start_run(out, "serve_llama", e2e=False)
    use_gqa = gqa_supported(torch, F)
    out.doc["environment"]["sdpa_enable_gqa"] = use_gqa
    out.doc["environment"]["cuda_graphs"] = args.graphs
    if args.graphs:
        out.doc["environment"]["graphs"] = dict(capture_sizes=list(CAPTURE_SIZES),
                                                kv_window=KV_WINDOW, max_window=MAX_WINDOW)
    out.doc["environment"]["cpu_probe"] = CPU_PROBE_WORK
    torch.manual_seed(SEED)
    if args.cont_requests < 1 or args.static_requests < 1:
        ap.error("--cont-requests, --static-requests: at least 1")
    static_reqs, cont_reqs = request_lists(args.rate, args.static_seed, args.cont_seed,
                                           args.cont_requests, args.static_requests)
    with torch.inference_mode():
        model = build_bf16(torch, nn, F, CFG, use_gqa)
        ar = torch.arange(MAX_LEN, device="cuda")
        # Warm-up: every code path once (cuBLAS heuristics, SDPA backends, allocator), untimed.
        try:
            warm = [dict(id=i, arrival_s=0.0, prompt_tokens=PROMPT, output_tokens=8 + 2 * i)
                    for i in range(SLOTS + 2)]
            run_continuous(torch, model, warm, ar)
            run_static(torch, model, [dict(r) for r in warm[:BATCH]], ar)
            log("warm-up done")
        except Exception as e:  # noqa: BLE001
            out.error("warmup", e)
        try:
            hp, hps, hstep = host_probe(torch, model, ar)
            env = out.doc["environment"]
            env["host_probe_us"] = hp
            env["host_probe_probes_us"] = hps
            env["host_probe_step_s"] = hstep
            env["host_probe_method"] = (
                "median of %d CPU probes, each after a synchronised decode step (batch %d, "
                "kv_len %d, a warm-up shape), before the first timed set"
                % (HOST_PROBE_STEPS, BATCH, PROMPT + 1))
            log("host probe: median %.1f us over %d steps (fastest %.1f us); decode step p50 "
                "%.2f ms" % (hp, len(hps), min(hps), hstep * 1e3))
        except Exception as e:  # noqa: BLE001
            out.error("host_probe", e)
        for name, reqs, fn in (("static", static_reqs, run_static),
                               ("continuous", cont_reqs, run_continuous)):
            if name not in runs:
                continue
            case = "e2e/serve/%s/llama3.2-1b" % name
            if not budget.ok(20):
                out.skip(case, "budget (%.1fs left)" % budget.left())
                continue
            try:
                log("%s: %d requests" % (case, len(reqs)))
                res, iters = fn(torch, model, reqs, ar)
                s = summary(reqs, res)
                probes = [i["probe_us"] for i in iters]
                fastest = min(probes)
                s["probe_fastest_us"] = fastest
                s["probe_median_us"] = pct(probes, 50)
                s["iterations_nominal"] = sum(1 for p in probes if p <= 1.25 * fastest)
                s["housekeeping_s"] = sum(i.get("housekeeping_s", 0.0) for i in iters)
                if args.graphs:
                    s["graph_capture_s"] = STATS.get("capture_s")
                    s["graphs_captured"] = STATS.get("graphs")
                    s["iterations_eager"] = sum(1 for i in iters if i.get("graph") is None)
                out.add(dict(id=case, op="serve", params=dict(
                    model="llama3.2-1b", policy=name, prompt=PROMPT,
                    batch=BATCH if name == "static" else None,
                    slots=SLOTS if name == "continuous" else None,
                    rate_per_s=args.rate if name == "continuous" else None,
                    seed=args.static_seed if name == "static" else args.cont_seed,
                    cuda_graph=args.graphs),
                    requests=reqs, results=[dict(id=r["id"], **res[r["id"]]) for r in reqs],
                    iterations=iters, summary=s, t0_perf_counter_s=SET_T0[0]))
                log("%s: %.2f req/s, ttft p50 %.1f ms, tpot p50 %.2f ms, e2e p50 %.1f ms p99 "
                    "%.1f ms, %d iterations (%d at nominal host speed, probe fastest %.0f us "
                    "median %.0f us)"
                    % (case, s["requests_per_s"], s["ttft"]["p50_s"] * 1e3,
                       s["tpot"]["p50_s"] * 1e3, s["e2e"]["p50_s"] * 1e3,
                       s["e2e"]["p99_s"] * 1e3, len(iters), s["iterations_nominal"], fastest,
                       s["probe_median_us"]))
            except Exception as e:  # noqa: BLE001
                out.error(case, e)
            gc.collect()
            torch.cuda.empty_cache()
    out.finish()
    log("serve_llama: done, %d records, %d errors" % (len(out.doc["records"]),
                                                       len(out.doc["errors"])))


if __name__ == "__main__":
    main()
