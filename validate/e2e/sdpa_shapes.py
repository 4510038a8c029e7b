"""Ridge e2e: the per-new-shape cost of scaled_dot_product_attention in eager PyTorch, in isolation.

Serving run 2 (validate/data/h200/serve2) found that the first decode step at each new
(batch, kv_len) attention shape costs ~40 ms more than a repeat. This script times SDPA alone,
with the exact tensors the serving loop (serve_llama.py, decode_llama.py's model) hands it:
Llama-3.2 1B GQA (32 query heads, 8 KV heads, head_dim 64), bf16, enable_gqa=True; decode: q of
(B, 32, 1, 64) as a transposed view of the projection (after the RoPE elementwise ops), K/V the
slices cache[:B, :, :kv_len] of a (rows, 8, 2048, 64) cache, no mask; prefill: q/k/v of
(B, heads, 256, 64) transposed views of the projections, is_causal=True.

One process per backend setting (--cudnn 1: PyTorch's default, cuDNN SDP enabled; --cudnn 0:
torch.backends.cuda.enable_cudnn_sdp(False)), so that each starts with an empty cache.
Per timed call: host_us (perf_counter around the call alone: the host's time to issue it, which is
where a graph build on the host shows), wall_us (call + torch.cuda.synchronize), gpu_us (CUDA
events around it; with --sleep, the events are queued behind a torch.cuda._sleep so that they
time the GPU work alone, valid where host_us is below the sleep), and probe_us (the larger of the
e2e_common.cpu_probe_us() probes before and after: the host's Python speed then).

Experiments (all shapes chosen so that the first call of each is its first in the process):
  layers   decode at B=8, kv 300..339: the 16 layers' SDPA calls of one step (16 distinct caches),
           then the 16 again (a repeated step). Is the cost per shape or per call / per tensor?
  key      which dimensions make a shape new: base pairs (2,400) and (4,401) first; then new
           kv_len at a seen batch (B=2, kv 402..409), new batch at a seen kv_len (B in
           1,3,5,6,7,9,10,11 at kv 400), a new pair of a seen batch and a seen kv_len ((2,401),
           (4,400)), a seen pair on another tensor of other strides (contiguous copy of (2,400)),
           and the layers experiment's shapes again after all that (cache kept or evicted).
  gpu      decode at B=16, kv 600..607, first and repeat, each queued behind a 150 ms GPU sleep:
           host vs GPU time of the new-shape call.
  prefill  B in 1, 8 at 256 tokens causal, first and repeats; then B=1 at 257 tokens.
Usage: python3 validate/e2e/sdpa_shapes.py --cudnn 1 --out OUT/sdpa_cudnn_on.json
"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_common import CPU_PROBE_WORK, RecordFile, cpu_probe_us, log, start_run  # noqa: E402

H, KV, HD, LAYERS, MAX_LEN, ROWS, PROMPT = 32, 8, 64, 16, 2048, 16, 256
SLEEP_MS = 150.0


def med(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2] if xs else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--cudnn", type=int, choices=(0, 1), required=True)
    args = ap.parse_args()
    out = RecordFile(args.out, "validate/e2e/sdpa_shapes.py")
    torch, nn, F = start_run(out, "sdpa_shapes", e2e=False)
    torch.backends.cuda.enable_cudnn_sdp(bool(args.cudnn))
    out.doc["environment"]["sdp_cudnn_enabled"] = torch.backends.cuda.cudnn_sdp_enabled()
    out.doc["environment"]["cpu_probe"] = CPU_PROBE_WORK
    dt = torch.bfloat16
    dev = "cuda"
    caches = [(torch.randn(ROWS, KV, MAX_LEN, HD, dtype=dt, device=dev),
               torch.randn(ROWS, KV, MAX_LEN, HD, dtype=dt, device=dev)) for _ in range(LAYERS)]
    qproj = torch.randn(ROWS, PROMPT + 1, H * HD, dtype=dt, device=dev)
    kproj = torch.randn(ROWS, PROMPT + 1, KV * HD, dtype=dt, device=dev)
    cs = torch.randn(PROMPT + 1, HD, dtype=dt, device=dev)

    def rope(x, t):
        c, s = cs[:t], cs[:t]
        x2 = torch.cat((-x[..., HD // 2:], x[..., :HD // 2]), dim=-1)
        return x * c + x2 * s

    def decode_args(b, kv, layer, contiguous=False):
        q = rope(qproj[:b, :1].view(b, 1, H, HD).transpose(1, 2), 1)
        k, v = caches[layer]
        kk, vv = k[:b, :, :kv], v[:b, :, :kv]
        if contiguous:
            kk, vv = kk.contiguous(), vv.contiguous()
        return q, kk, vv, False

    def prefill_args(b, t):
        q = rope(qproj[:b, :t].view(b, t, H, HD).transpose(1, 2), t)
        k = rope(kproj[:b, :t].view(b, t, KV, HD).transpose(1, 2), t)
        v = kproj[:b, :t].view(b, t, KV, HD).transpose(1, 2)
        return q, k, v, True

    e0 = torch.cuda.Event(enable_timing=True)
    e1 = torch.cuda.Event(enable_timing=True)
    cycles_per_ms = [None]

    def timed(a, sleep=False, **tags):
        q, k, v, causal = a
        torch.cuda.synchronize()
        p0 = cpu_probe_us()
        if sleep:
            torch.cuda._sleep(int(SLEEP_MS * cycles_per_ms[0]))
        e0.record()
        t0 = time.perf_counter()
        F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=True)
        t1 = time.perf_counter()
        e1.record()
        torch.cuda.synchronize()
        t2 = time.perf_counter()
        p1 = cpu_probe_us()
        r = dict(tags, batch=q.shape[0], q_len=q.shape[2], kv_len=k.shape[2],
                 host_us=round((t1 - t0) * 1e6, 2), wall_us=round((t2 - t0) * 1e6, 2),
                 gpu_us=round(e0.elapsed_time(e1) * 1e3, 2), probe_us=round(max(p0, p1), 2))
        if sleep:
            r["gpu_sleep_ms"] = SLEEP_MS
            r["gpu_clean"] = r["host_us"] < 0.8 * SLEEP_MS * 1e3
        return r

    with torch.inference_mode():
        # GPU sleep calibration: cycles per ms of torch.cuda._sleep at the clock then.
        torch.cuda._sleep(1000)
        torch.cuda.synchronize()
        e0.record()
        torch.cuda._sleep(int(5e7))
        e1.record()
        torch.cuda.synchronize()
        cycles_per_ms[0] = 5e7 / e0.elapsed_time(e1)
        out.doc["environment"]["sleep_cycles_per_ms"] = round(cycles_per_ms[0], 1)
        # Kernel names of one decode call (a shape no experiment uses) with the profiler.
        a = decode_args(8, 1000, 0)
        F.scaled_dot_product_attention(a[0], a[1], a[2], enable_gqa=True)
        torch.cuda.synchronize()
        names = []
        try:
            from torch.profiler import ProfilerActivity, profile
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                F.scaled_dot_product_attention(a[0], a[1], a[2], enable_gqa=True)
                torch.cuda.synchronize()
            names = sorted({e.name for e in prof.events()
                            if str(getattr(e, "device_type", "")).endswith("CUDA")})
        except Exception as e:  # noqa: BLE001
            names = ["profiler failed: %r" % (e,)]
        out.doc["environment"]["decode_kernels"] = names
        log("kernels: %s" % names)

        recs = []
        # layers
        for kv in range(300, 340):
            for rep in (0, 1):
                for layer in range(LAYERS):
                    recs.append(timed(decode_args(8, kv, layer), exp="layers", rep=rep,
                                      layer=layer, first=(rep == 0 and layer == 0)))
        # key
        recs.append(timed(decode_args(2, 400, 0), exp="key", case="base", first=True))
        recs.append(timed(decode_args(4, 401, 0), exp="key", case="base", first=True))
        for kv in range(402, 410):
            recs.append(timed(decode_args(2, kv, 0), exp="key", case="new_kv_seen_batch",
                              first=True))
            recs.append(timed(decode_args(2, kv, 1), exp="key", case="new_kv_seen_batch",
                              first=False))
        for b in (1, 3, 5, 6, 7, 9, 10, 11):
            recs.append(timed(decode_args(b, 400, 0), exp="key", case="new_batch_seen_kv",
                              first=True))
            recs.append(timed(decode_args(b, 400, 1), exp="key", case="new_batch_seen_kv",
                              first=False))
        for b, kv in ((2, 401), (4, 400)):
            recs.append(timed(decode_args(b, kv, 0), exp="key", case="new_pair_seen_batch_and_kv",
                              first=True))
        recs.append(timed(decode_args(2, 400, 0, contiguous=True), exp="key",
                          case="seen_pair_other_strides", first=True))
        recs.append(timed(decode_args(2, 400, 0), exp="key", case="seen_pair_repeat",
                          first=False))
        for kv in range(300, 340):
            recs.append(timed(decode_args(8, kv, 0), exp="key", case="revisit_layers_shapes",
                              first=False))
        # gpu
        for kv in range(600, 608):
            recs.append(timed(decode_args(16, kv, 0), sleep=True, exp="gpu", first=True))
            recs.append(timed(decode_args(16, kv, 1), sleep=True, exp="gpu", first=False))
        # prefill
        for b, t in ((1, PROMPT), (8, PROMPT), (1, PROMPT + 1)):
            for rep in range(3):
                recs.append(timed(prefill_args(b, t), exp="prefill", rep=rep, first=(rep == 0)))

    def summ(rs):
        return dict(n=len(rs), host_us_p50=med([r["host_us"] for r in rs]),
                    wall_us_p50=med([r["wall_us"] for r in rs]),
                    gpu_us_p50=med([r["gpu_us"] for r in rs]),
                    probe_us_p50=med([r["probe_us"] for r in rs]))

    groups = {}
    for r in recs:
        key = "%s/%s/%s" % (r["exp"], r.get("case", "-"), "first" if r["first"] else "repeat")
        groups.setdefault(key, []).append(r)
    summary = {k: summ(v) for k, v in sorted(groups.items())}
    lay = [r for r in recs if r["exp"] == "layers" and r["rep"] == 0 and r["layer"] > 0]
    summary["layers/-/first_step_other_layers"] = summ(lay)
    lay = [r for r in recs if r["exp"] == "layers" and r["rep"] == 1]
    summary["layers/-/second_step_all_layers"] = summ(lay)
    for k, s in summary.items():
        log("%-50s n=%3d host %9.1f us wall %9.1f us gpu %9.1f us probe %6.0f us"
            % (k, s["n"], s["host_us_p50"], s["wall_us_p50"], s["gpu_us_p50"],
               s["probe_us_p50"]))
    out.add(dict(id="e2e/sdpa_shapes/%s" % ("cudnn_on" if args.cudnn else "cudnn_off"),
                 op="sdpa_shapes", params=dict(heads=H, kv_heads=KV, head_dim=HD, layers=LAYERS,
                                               max_len=MAX_LEN, rows=ROWS, dtype="bf16",
                                               enable_gqa=True, cudnn_sdp=bool(args.cudnn)),
                 calls=recs, summary=summary))
    out.finish()


if __name__ == "__main__":
    main()
