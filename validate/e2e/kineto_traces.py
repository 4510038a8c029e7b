#!/usr/bin/env python3
"""Records small, real PyTorch profiler (Kineto) Chrome traces for `ridge import kineto`.

Usage: python3 validate/e2e/kineto_traces.py OUTDIR

Writes OUTDIR/<case>.json.gz, each the profiler's own export_chrome_trace output (gzipped, not
re-encoded), profiled with CPU + CUDA activities and record_shapes=True so that aten ops carry
their input shapes:

  train_gpt_l2   one training step of a 2-layer GPT (d=768, 12 heads, B=4, T=512, vocab 8192,
                 bf16 autocast, SDPA, fused AdamW), with a pinned H2D copy of the batch, a memset,
                 a side stream joined by an event, and an all-reduce of one gradient through NCCL
                 (world size 1) when the NCCL backend starts.
  infer_graph    the same model's forward under torch.inference_mode, captured in a CUDA graph and
                 replayed twice, then once eagerly.
  mlp_gemms      eager bf16/fp32 matmuls and elementwise ops of assorted shapes (GPU-bound).
  train_gpt_big  one training step of a 4-layer GPT (d=1024, 16 heads, B=16, T=2048, vocab
                 32768, bf16 autocast, SDPA, fused AdamW): GPU-bound even under the profiler.

`python3 validate/e2e/kineto_traces.py OUTDIR CASE...` records only the cases named.

Also writes OUTDIR/meta.json: torch/CUDA versions, device name, each case's CUDA-event time.
Weights and inputs are random, torch.manual_seed(1234).
"""
import gzip
import json
import os
import shutil
import sys
import tempfile

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile


class Block(nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.h = h
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.fc = nn.Linear(d, 4 * d)
        self.fc2 = nn.Linear(4 * d, d)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        q = q.view(b, t, self.h, d // self.h).transpose(1, 2)
        k = k.view(b, t, self.h, d // self.h).transpose(1, 2)
        v = v.view(b, t, self.h, d // self.h).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, d))
        return x + self.fc2(F.gelu(self.fc(self.ln2(x))))


class Gpt(nn.Module):
    def __init__(self, vocab=8192, d=768, h=12, layers=2, t=512):
        super().__init__()
        self.wte = nn.Embedding(vocab, d)
        self.wpe = nn.Embedding(t, d)
        self.blocks = nn.ModuleList([Block(d, h) for _ in range(layers)])
        self.lnf = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)

    def forward(self, idx):
        pos = torch.arange(idx.shape[1], device=idx.device)
        x = self.wte(idx) + self.wpe(pos)
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.lnf(x))


def save_trace(prof, path):
    fd, tmp = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    prof.export_chrome_trace(tmp)
    with open(tmp, "rb") as f, gzip.open(path, "wb", compresslevel=9) as g:
        shutil.copyfileobj(f, g)
    os.remove(tmp)


def timed(fn):
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    s.record()
    fn()
    e.record()
    torch.cuda.synchronize()
    return s.elapsed_time(e) * 1e3


def main():
    out = sys.argv[1]
    only = set(sys.argv[2:])
    want = lambda c: not only or c in only  # noqa: E731
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(1234)
    dev = "cuda"
    meta = {"torch": torch.__version__, "cuda": torch.version.cuda,
            "device": torch.cuda.get_device_name(0), "cases": {}}

    pg = None
    try:
        import torch.distributed as dist
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ.setdefault("MASTER_PORT", "29517")
        dist.init_process_group("nccl", rank=0, world_size=1, device_id=torch.device("cuda:0"))
        pg = dist
    except Exception as e:  # noqa: BLE001
        meta["nccl_error"] = repr(e)

    model = Gpt().to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    B, T, V = 4, 512, 8192
    host_batch = torch.randint(0, V, (B, T + 1)).pin_memory()
    side = torch.cuda.Stream()
    scratch = torch.empty(1 << 20, device=dev)

    def train_step():
        batch = host_batch.to(dev, non_blocking=True)
        idx, tgt = batch[:, :T], batch[:, 1:]
        scratch.zero_()
        ev = torch.cuda.Event()
        with torch.cuda.stream(side):
            side.wait_stream(torch.cuda.current_stream())
            s2 = scratch * 2.0
            ev.record(side)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(idx)
            loss = F.cross_entropy(logits.float().view(-1, V), tgt.reshape(-1))
        loss.backward()
        torch.cuda.current_stream().wait_event(ev)
        if pg is not None:
            pg.all_reduce(model.head.weight.grad)
        opt.step()
        opt.zero_grad(set_to_none=True)
        return s2

    if want("train_gpt_big"):
        big_model = Gpt(vocab=32768, d=1024, h=16, layers=4, t=2048).to(dev)
        big_opt = torch.optim.AdamW(big_model.parameters(), lr=1e-4, fused=True)
        big_idx = torch.randint(0, 32768, (16, 2049), device=dev)

        def big_step():
            with torch.autocast("cuda", dtype=torch.bfloat16):
                logits = big_model(big_idx[:, :2048])
                loss = F.cross_entropy(logits.float().view(-1, 32768), big_idx[:, 1:].reshape(-1))
            loss.backward()
            big_opt.step()
            big_opt.zero_grad(set_to_none=True)

        for _ in range(3):
            big_step()
        meta["cases"]["train_gpt_big"] = {"event_us": timed(big_step)}
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                     record_shapes=True) as prof:
            big_step()
            torch.cuda.synchronize()
        save_trace(prof, os.path.join(out, "train_gpt_big.json.gz"))
        del big_model, big_opt
        torch.cuda.empty_cache()
    if not want("train_gpt_l2"):
        with open(os.path.join(out, "meta.json"), "w") as f:
            json.dump(meta, f, indent=1)
        print(json.dumps(meta, indent=1))
        return

    for _ in range(3):
        train_step()
    meta["cases"]["train_gpt_l2"] = {"event_us": timed(train_step)}
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                 record_shapes=True) as prof:
        train_step()
        torch.cuda.synchronize()
    save_trace(prof, os.path.join(out, "train_gpt_l2.json.gz"))

    model.eval()
    idx = torch.randint(0, V, (1, 256), device=dev)
    with torch.inference_mode(), torch.autocast("cuda", dtype=torch.bfloat16):
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(3):
                model(idx)
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            static_out = model(idx)

        def infer():
            g.replay()
            g.replay()
            return model(idx), static_out

        for _ in range(3):
            infer()
        meta["cases"]["infer_graph"] = {"event_us": timed(infer)}
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                     record_shapes=True) as prof:
            infer()
            torch.cuda.synchronize()
    save_trace(prof, os.path.join(out, "infer_graph.json.gz"))

    shapes = [(4096, 4096, 4096, torch.bfloat16), (2048, 8192, 1024, torch.bfloat16),
              (1024, 1024, 8192, torch.bfloat16), (16, 4096, 4096, torch.bfloat16),
              (8192, 2048, 2048, torch.float16), (2048, 2048, 2048, torch.float32)]
    mats = [(torch.randn(m, k, device=dev, dtype=dt), torch.randn(k, n, device=dev, dtype=dt))
            for m, n, k, dt in shapes]
    big = torch.randn(64 << 20, device=dev, dtype=torch.bfloat16)

    def gemms():
        outs = []
        for a, b in mats:
            c = a @ b
            outs.append(torch.relu(c))
        outs.append(big + big)
        outs.append(big * 3.0)
        outs.append(torch.softmax(mats[0][0], dim=-1))
        outs.append(big.sum())
        outs.append(big.clone())
        return outs

    for _ in range(3):
        gemms()
    meta["cases"]["mlp_gemms"] = {"event_us": timed(gemms)}
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                 record_shapes=True) as prof:
        gemms()
        torch.cuda.synchronize()
    save_trace(prof, os.path.join(out, "mlp_gemms.json.gz"))

    with open(os.path.join(out, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
    if pg is not None:
        pg.destroy_process_group()
    print(json.dumps(meta, indent=1))


if __name__ == "__main__":
    main()
