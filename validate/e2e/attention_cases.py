"""Ridge: PyTorch scaled_dot_product_attention timed on one GPU at the shapes a cases file lists.

  python3 validate/e2e/attention_cases.py CASES.json --out OUT.json [--budget-s S]

CASES.json is a ridge.records/1 document of `attention` ops without timings (params batch, heads,
kv_heads, seq_q, seq_kv, head_dim, causal, dtype bf16|fp16, pass fwd|fwd_bwd), as `ridge predict`
reads it; OUT.json gets the same records with their timings and the kernels that ran, in the
cases' order.

Timing (`kernel` method, validate/README.md: calls back to back, no host gaps):
- fwd: `reps` calls of SDPA captured in one CUDA graph; CUDA events around 7 replays of it,
  median over the replays divided by reps (timing.graph true). So the shortest kernels (decode,
  small prefill) are timed without SDPA's ~30 us host dispatch, unlike validate/e2e/
  attention_sdpa.py's eager loop.
- fwd_bwd: eager calls issued back to back (forward, then torch.autograd.grad of a fixed output
  gradient, so no gradient is accumulated into a leaf's .grad), CUDA
  events around `reps` calls, median of 7 blocks; only GPU-bound sizes belong in such cases (the
  autograd backward's host cost is ~300 us a call: timing.host_bound_below_us says where).
One extra call is profiled (CUDA activity only) to name the kernels. Every error is recorded
against its case; the file is rewritten after every case (e2e_common.RecordFile).
"""

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_common import (RecordFile, cuda_kernel_names, device_info, log,  # noqa: E402
                        percentile, torch_env)

FWD_BWD_HOST_US = 500.0  # below this per call the host can set the pace of fwd_bwd


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cases")
    ap.add_argument("--out", required=True)
    ap.add_argument("--budget-s", type=float, default=240.0)
    args = ap.parse_args()
    with open(args.cases) as f:
        cases = json.load(f)["records"]
    out = RecordFile(args.out, "validate/e2e/attention_cases.py")
    import torch
    import torch.nn.functional as F

    out.doc["device"] = device_info()
    out.doc["environment"] = torch_env()
    out.doc["cases_file"] = args.cases
    out.write()
    torch.manual_seed(1234)
    t0 = time.time()

    def events_over(fn, n):
        e0 = torch.cuda.Event(enable_timing=True)
        e1 = torch.cuda.Event(enable_timing=True)
        e0.record()
        for _ in range(n):
            fn()
        e1.record()
        torch.cuda.synchronize()
        return e0.elapsed_time(e1) * 1e3  # us

    for c in cases:
        cid = c["id"]
        if time.time() - t0 > args.budget_s:
            out.skip(cid, "time budget spent")
            continue
        p = c["params"]
        try:
            b, h, kvh = p["batch"], p["heads"], p["kv_heads"]
            sq, skv, d = p["seq_q"], p["seq_kv"], p["head_dim"]
            causal, passes = bool(p["causal"]), p["pass"]
            dt = {"bf16": torch.bfloat16, "fp16": torch.float16}[p["dtype"]]
            grad = passes == "fwd_bwd"
            q = torch.randn(b, h, sq, d, device="cuda", dtype=dt, requires_grad=grad)
            k = torch.randn(b, kvh, skv, d, device="cuda", dtype=dt, requires_grad=grad)
            v = torch.randn(b, kvh, skv, d, device="cuda", dtype=dt, requires_grad=grad)
            gqa = kvh != h

            def fwd():
                return F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=gqa)

            timing = {"method": "kernel"}
            if passes == "fwd":
                with torch.inference_mode():
                    for _ in range(3):
                        fwd()
                    torch.cuda.synchronize()
                    est = min(events_over(fwd, 3) / 3 for _ in range(3))
                    reps = int(max(3, min(400, 20000.0 / max(est, 1.0))))
                    s = torch.cuda.Stream()
                    s.wait_stream(torch.cuda.current_stream())
                    with torch.cuda.stream(s):
                        for _ in range(3):
                            fwd()
                    torch.cuda.current_stream().wait_stream(s)
                    graph = torch.cuda.CUDAGraph()
                    with torch.cuda.graph(graph):
                        for _ in range(reps):
                            fwd()
                    graph.replay()
                    torch.cuda.synchronize()
                    per = [events_over(graph.replay, 1) / reps for _ in range(7)]
                    names = cuda_kernel_names(fwd)
                timing.update({"graph": True, "warmup": 6})
            else:
                g = torch.randn(b, h, sq, d, device="cuda", dtype=dt)

                def fn():
                    # The gradients returned, not accumulated into q.grad, k.grad, v.grad: a
                    # training step passes them on to the projections, and accumulating would add
                    # three elementwise kernels that attention's backward does not run.
                    torch.autograd.grad(fwd(), (q, k, v), g)

                for _ in range(3):
                    fn()
                torch.cuda.synchronize()
                est = events_over(fn, 3) / 3
                reps = int(max(3, min(100, 20000.0 / max(est, 1.0))))
                per = [events_over(fn, reps) / reps for _ in range(7)]
                names = cuda_kernel_names(fn)
                timing.update({"graph": False, "warmup": 3,
                               "host_bound_below_us": FWD_BWD_HOST_US})
            med = percentile(per, 50)
            timing.update({"reps": reps, "median_us": round(med, 3), "min_us": round(min(per), 3),
                           "max_us": round(max(per), 3),
                           "spread": round((max(per) - min(per)) / med, 4),
                           "samples_us": [round(x, 3) for x in per]})
            rec = {"id": cid, "suite": "attention_cases", "op": "attention", "params": p,
                   "timing": timing, "kernels": names}
            if "label" in c:
                rec["label"] = c["label"]
            out.add(rec)
            log("%-58s %10.2f us  %s" % (cid, med, " | ".join(n[:48] for n in names)))
            del q, k, v
        except Exception as e:  # noqa: BLE001
            out.error(cid, e)
        torch.cuda.empty_cache()
    out.finish()


if __name__ == "__main__":
    main()
