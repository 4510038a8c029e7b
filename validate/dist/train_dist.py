"""Ridge dist: multi-GPU training steps of a GPT-shaped model (random weights), torch.distributed.

One process per GPU, started by torchrun (validate/dist/run_dist.sh):
  torchrun --nproc_per_node N validate/dist/train_dist.py --mode MODE --out FILE.json

MODE (every mode runs at any world size N >= 1; N must divide what it splits):
  ddp    DistributedDataParallel: every rank the whole model, its own micro-batch; gradients
         all-reduced in buckets (bucket_cap_mb, default 25) overlapped with the backward pass.
  fsdp   FSDP2 fully_shard per block and at the root (full shard: parameters, gradients and
         optimizer state sharded over N; parameters all-gathered before each block's forward and
         again in backward, gradients reduce-scattered), bf16 parameters in compute, fp32 reduce.
  tp     Megatron-style tensor parallelism over all N ranks, plain PyTorch: qkv and MLP-up are
         column-parallel, attention-out and MLP-down row-parallel; one all-reduce of the activation
         after each row-parallel Linear in forward and one after each column-parallel input in
         backward (2 + 2 per block). Heads are split over ranks.
  tp_sp  the same with sequence parallelism: LayerNorms and residuals on a 1/N slice of the
         sequence; all-gather before each column-parallel Linear and reduce-scatter after each
         row-parallel one (their transposes in backward).
  pp     pipeline 1F1B with torch.distributed.pipelining (PipelineStage + Schedule1F1B): layers
         split evenly over N stages, embeddings on the first, final norm + lm_head + loss on the
         last; activations sent point-to-point between neighbours.

The model (all modes): GPT-2 style pre-LN blocks (LayerNorm with bias, fused qkv with bias, causal
SDPA, GELU-tanh MLP 4d), learned positions, UNTIED input embedding and lm_head (so the pipeline's
first and last stages hold one each). fp32 master parameters, bf16 autocast (FSDP: bf16
parameters through its mixed-precision policy), fused AdamW, no dropout. In tp/tp_sp the
embeddings, final norm and lm_head are replicated on every rank, not vocab-parallel (each rank
computes the whole lm_head on its tokens; with tp_sp the replicated parameters' gradients are
summed over the ranks after backward, as Megatron does for LayerNorm under sequence parallelism).

Batching (record params say it exactly): ddp and fsdp are weak-scaled (micro_batch per rank,
global batch micro_batch x N); tp and tp_sp process one micro_batch per step whatever N; pp one
global batch of n_micro micro-batches of pp_micro_batch each.

Timing: CUDA events around each whole step (zero_grad, forward, backward, optimizer), median of the
timed steps after warm-up, with the CPU probe of validate/e2e around each; a barrier before each
timed step so the ranks start together. The record holds rank 0's timing and every rank's median,
wall time and peak memory (torch.cuda.max_memory_allocated and max_memory_reserved). After all
timing, optionally (--trace-dir) one step per rank under torch.profiler, written as
<trace-dir>/<mode>_rank<r>.json.gz, and a kernel summary in the record.
"""

import gc
import gzip
import json
import math
import os
import shutil
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
from e2e_common import (CPU_PROBE_WORK, RecordFile, cpu_probe_us, device_info, log,  # noqa: E402
                        percentile, stats_us, summarize_trace_events, torch_env)

SEED = 1234
LR = 1e-4
MODES = ("ddp", "fsdp", "tp", "tp_sp", "pp")


def parse_args(argv):
    import argparse

    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", required=True, choices=MODES)
    ap.add_argument("--out", required=True, help="record file (rank 0 writes it)")
    ap.add_argument("--layers", type=int, default=24)
    ap.add_argument("--d-model", type=int, default=2048)
    ap.add_argument("--heads", type=int, default=16)
    ap.add_argument("--vocab", type=int, default=50304)
    ap.add_argument("--seq", type=int, default=2048)
    ap.add_argument("--micro-batch", type=int, default=4,
                    help="ddp/fsdp: per rank; tp/tp_sp: per step")
    ap.add_argument("--pp-micro-batch", type=int, default=1)
    ap.add_argument("--n-micro", type=int, default=8, help="pp: micro-batches per step")
    ap.add_argument("--bucket-mb", type=float, default=25.0, help="ddp bucket_cap_mb")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--trace-dir", default="", help="per-rank profiler traces after all timing")
    ap.add_argument("--command", default="", help="the launcher's command line, recorded")
    return ap.parse_args(argv)


# ----------------------------------------------------------------------------- model pieces
def make_modules(torch, nn, F, dist):
    """Classes of the model, with the tensor-parallel autograd functions bound to the default
    group (the whole world)."""

    def world():
        return dist.get_world_size()

    class CopyToTP(torch.autograd.Function):
        """Identity forward; all-reduce of the gradient in backward (Megatron's f)."""

        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            g = g.contiguous()
            dist.all_reduce(g)
            return g

    class ReduceFromTP(torch.autograd.Function):
        """All-reduce forward; identity backward (Megatron's g)."""

        @staticmethod
        def forward(ctx, x):
            x = x.contiguous()
            dist.all_reduce(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    def _gather0(x):
        n = world()
        x = x.contiguous()
        out = torch.empty((x.shape[0] * n,) + tuple(x.shape[1:]), dtype=x.dtype, device=x.device)
        dist.all_gather_into_tensor(out, x)
        return out

    def _scatter0(x):
        n = world()
        x = x.contiguous()
        out = torch.empty((x.shape[0] // n,) + tuple(x.shape[1:]), dtype=x.dtype, device=x.device)
        dist.reduce_scatter_tensor(out, x)
        return out

    class GatherSeq(torch.autograd.Function):
        """Sequence parallel: all-gather along dim 0 (sequence) forward, reduce-scatter backward."""

        @staticmethod
        def forward(ctx, x):
            return _gather0(x)

        @staticmethod
        def backward(ctx, g):
            return _scatter0(g)

    class ScatterSeq(torch.autograd.Function):
        """Sequence parallel: reduce-scatter along dim 0 forward, all-gather backward."""

        @staticmethod
        def forward(ctx, x):
            return _scatter0(x)

        @staticmethod
        def backward(ctx, g):
            return _gather0(g)

    class Block(nn.Module):
        """Pre-LN GPT block on [T, B, d] (sequence first). tp = 1: plain. tp > 1: heads and MLP
        columns split over ranks; sp: the input/output hold T/tp positions."""

        def __init__(self, d, heads, tp=1, sp=False):
            super().__init__()
            assert heads % tp == 0 and (4 * d) % tp == 0
            self.tp, self.sp, self.d = tp, sp, d
            self.h_local = heads // tp
            self.hd = d // heads
            self.ln_1 = nn.LayerNorm(d)
            self.c_attn = nn.Linear(d, 3 * d // tp)          # column-parallel (q, k, v of local heads)
            self.c_proj = nn.Linear(d // tp, d, bias=False)  # row-parallel; bias after the reduce
            self.c_proj_bias = nn.Parameter(torch.zeros(d))
            self.ln_2 = nn.LayerNorm(d)
            self.c_fc = nn.Linear(d, 4 * d // tp)            # column-parallel
            self.mlp_proj = nn.Linear(4 * d // tp, d, bias=False)  # row-parallel
            self.mlp_proj_bias = nn.Parameter(torch.zeros(d))
            self.parallel_mode = "sp" if sp else ("tp" if tp > 1 else "none")

        def _enter(self, x):
            if self.tp == 1:
                return x
            # bf16 before the all-gather (and the backward all-reduce / reduce-scatter), as
            # Megatron communicates activations: LayerNorm's output is fp32 under autocast.
            x = x.to(torch.bfloat16)
            return GatherSeq.apply(x) if self.sp else CopyToTP.apply(x)

        def _leave(self, x):
            if self.tp == 1:
                return x
            return ScatterSeq.apply(x) if self.sp else ReduceFromTP.apply(x)

        def forward(self, x):
            h = self._enter(self.ln_1(x))                    # [T, B, d]
            T, B, _ = h.shape
            qkv = self.c_attn(h).view(T, B, 3, self.h_local, self.hd)
            q, k, v = (qkv[:, :, i].permute(1, 2, 0, 3) for i in range(3))  # [B, h, T, hd]
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            y = y.permute(2, 0, 1, 3).reshape(T, B, self.h_local * self.hd)
            x = x + self._leave(self.c_proj(y)) + self.c_proj_bias
            h = self._enter(self.ln_2(x))
            h = self.mlp_proj(F.gelu(self.c_fc(h), approximate="tanh"))
            x = x + self._leave(h) + self.mlp_proj_bias
            return x

    class Embed(nn.Module):
        def __init__(self, vocab, d, seq):
            super().__init__()
            self.wte = nn.Embedding(vocab, d)
            self.wpe = nn.Embedding(seq, d)

        def forward(self, idx):                              # idx [B, T] -> [T, B, d]
            B, T = idx.shape
            pos = torch.arange(T, device=idx.device)
            return (self.wte(idx) + self.wpe(pos)).transpose(0, 1).contiguous()

    class Head(nn.Module):
        def __init__(self, vocab, d):
            super().__init__()
            self.ln_f = nn.LayerNorm(d)
            self.lm_head = nn.Linear(d, vocab, bias=False)

        def forward(self, x):                                # [T, B, d] -> logits [T, B, V]
            return self.lm_head(self.ln_f(x))

    class GPT(nn.Module):
        def __init__(self, layers, d, heads, vocab, seq, tp=1, sp=False, with_embed=True,
                     with_head=True):
            super().__init__()
            self.sp, self.tp = sp, tp
            self.embed = Embed(vocab, d, seq) if with_embed else None
            self.h = nn.ModuleList([Block(d, heads, tp, sp) for _ in range(layers)])
            self.head = Head(vocab, d) if with_head else None

        def forward(self, x):
            if self.embed is not None:
                x = self.embed(x)
                if self.sp and self.tp > 1:                  # keep this rank's slice of T
                    r = dist.get_rank()
                    n = x.shape[0] // self.tp
                    x = x[r * n:(r + 1) * n]
            for blk in self.h:
                x = blk(x)
            if self.head is not None:
                x = self.head(x)
            return x

    return GPT


def init_weights(torch, model, layers):
    for name, p in model.named_parameters():
        if p.dim() >= 2:
            std = 0.02
            if name.endswith("c_proj.weight") or name.endswith("mlp_proj.weight"):
                std = 0.02 / math.sqrt(2 * layers)
            torch.nn.init.normal_(p, mean=0.0, std=std)


def lm_loss(F, logits, tgt_tb):
    """Cross-entropy of [T, B, V] logits against [T, B] targets."""
    return F.cross_entropy(logits.float().reshape(-1, logits.shape[-1]), tgt_tb.reshape(-1))


# ----------------------------------------------------------------------------- the modes
def build_step(torch, nn, F, dist, args, rank, world, dev):
    """(step function, params dict, keep-alive objects)."""
    GPT = make_modules(torch, nn, F, dist)
    L, d, H, V, T = args.layers, args.d_model, args.heads, args.vocab, args.seq
    mode = args.mode
    p = {"mode": mode, "world_size": world, "layers": L, "d_model": d, "heads": H,
         "head_dim": d // H, "ffn": 4 * d, "vocab": V, "seq": T, "dtype": "bf16",
         "master_dtype": "fp32", "optimizer": "adamw_fused", "lr": LR, "dropout": 0.0,
         "tied_embeddings": False, "norm": "layernorm", "mlp": "gelu_tanh",
         "attention": "sdpa_causal", "loss": "cross_entropy", "recompute": "none"}
    # Same data on every rank where the mode needs it (tp, tp_sp, pp), rank-specific for ddp/fsdp.
    g = torch.Generator(device=dev)

    if mode in ("ddp", "fsdp"):
        B = args.micro_batch
        torch.manual_seed(SEED)                              # same initial weights everywhere
        with torch.device(dev):
            model = GPT(L, d, H, V, T)
        init_weights(torch, model, L)
        n_params = sum(q.numel() for q in model.parameters())
        g.manual_seed(SEED + rank)
        idx = torch.randint(0, V, (B, T), device=dev, generator=g)
        tgt = torch.randint(0, V, (T, B), device=dev, generator=g)
        if mode == "ddp":
            from torch.nn.parallel import DistributedDataParallel as DDP

            model = DDP(model, device_ids=[dev.index], bucket_cap_mb=args.bucket_mb,
                        gradient_as_bucket_view=True)
            p.update({"ddp_bucket_cap_mb": args.bucket_mb, "gradient_as_bucket_view": True,
                      "grad_reduce_dtype": "fp32", "autocast": "bf16"})
        else:
            from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard

            mp = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
            for blk in model.h:
                fully_shard(blk, mp_policy=mp, reshard_after_forward=True)
            fully_shard(model, mp_policy=mp, reshard_after_forward=True)
            p.update({"fsdp": "fsdp2 fully_shard per block + root, reshard_after_forward "
                      "(full shard)", "param_dtype_compute": "bf16", "grad_reduce_dtype": "fp32",
                      "autocast": "bf16"})
        opt = torch.optim.AdamW(model.parameters(), lr=LR, fused=True)

        def step():
            opt.zero_grad(set_to_none=True)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = lm_loss(F, model(idx), tgt)
            loss.backward()
            opt.step()
            return loss

        p.update({"micro_batch_per_rank": B, "global_batch": B * world,
                  "tokens_per_step": B * T * world, "params_count": n_params})
        return step, p, (model, opt, idx, tgt)

    if mode in ("tp", "tp_sp"):
        sp = mode == "tp_sp"
        B = args.micro_batch
        if H % world or (sp and T % world):
            raise ValueError("tp: heads (%d)%s must divide by world size %d"
                             % (H, " and seq (%d)" % T if sp else "", world))
        torch.manual_seed(SEED + rank)                       # shards differ per rank...
        with torch.device(dev):
            model = GPT(L, d, H, V, T, tp=world, sp=sp)
        init_weights(torch, model, L)
        torch.manual_seed(SEED)                              # ...replicated parts identical
        for m in (model.embed, model.head):
            init_weights(torch, m, L)
        replicated = list(model.embed.parameters()) + list(model.head.parameters())
        if sp:                                               # LayerNorms and row-parallel biases
            for blk in model.h:
                replicated += list(blk.ln_1.parameters()) + list(blk.ln_2.parameters())
                replicated += [blk.c_proj_bias, blk.mlp_proj_bias]
        n_local = sum(q.numel() for q in model.parameters())
        g.manual_seed(SEED)
        idx = torch.randint(0, V, (B, T), device=dev, generator=g)
        tgt = torch.randint(0, V, (T, B), device=dev, generator=g)
        tgt_local = tgt[rank * (T // world):(rank + 1) * (T // world)] if sp else tgt
        opt = torch.optim.AdamW(model.parameters(), lr=LR, fused=True)

        def step():
            opt.zero_grad(set_to_none=True)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = lm_loss(F, model(idx), tgt_local)
            loss.backward()
            if sp and world > 1:                             # sum replicated grads over the slices
                flat = torch._utils._flatten_dense_tensors([q.grad for q in replicated])
                dist.all_reduce(flat)
                for q, s in zip(replicated, torch._utils._unflatten_dense_tensors(
                        flat, [q.grad for q in replicated])):
                    q.grad.copy_(s)
            opt.step()
            return loss

        p.update({"tp": world, "sequence_parallel": sp, "micro_batch": B, "global_batch": B,
                  "tokens_per_step": B * T, "params_count_local": n_local,
                  "autocast": "bf16", "tp_comm_dtype": "bf16", "tp_collectives_per_block":
                  ("forward: 2 all-gather + 2 reduce-scatter; backward: the same" if sp else
                   "forward: 2 all-reduce; backward: 2 all-reduce"),
                  "replicated": "embeddings, ln_f, lm_head (not vocab-parallel)"
                  + ("; LayerNorms and row biases: grads all-reduced (one flat tensor)" if sp
                     else "")})
        return step, p, (model, opt, idx, tgt)

    if mode == "pp":
        from torch.distributed.pipelining import PipelineStage, Schedule1F1B

        if L % world:
            raise ValueError("pp: layers (%d) must divide by world size %d" % (L, world))
        per = L // world
        torch.manual_seed(SEED + rank)
        with torch.device(dev):
            inner = GPT(per, d, H, V, T, with_embed=(rank == 0), with_head=(rank == world - 1))
        init_weights(torch, inner, L)

        class Stage(nn.Module):                              # autocast inside the stage
            def __init__(self, m):
                super().__init__()
                self.m = m

            def forward(self, x):
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    return self.m(x)

        stage_mod = Stage(inner)
        n_local = sum(q.numel() for q in stage_mod.parameters())
        stage = PipelineStage(stage_mod, rank, world, dev)
        mb = args.pp_micro_batch
        nm = args.n_micro
        g.manual_seed(SEED)
        idx = torch.randint(0, V, (mb * nm, T), device=dev, generator=g)
        tgt = torch.randint(0, V, (mb * nm, T), device=dev, generator=g)

        def loss_fn(logits, target):                         # logits [T, mb, V], target [mb, T]
            return lm_loss(F, logits, target.transpose(0, 1))

        sched = Schedule1F1B(stage, n_microbatches=nm, loss_fn=loss_fn)
        opt = torch.optim.AdamW(stage_mod.parameters(), lr=LR, fused=True)

        def step():
            opt.zero_grad(set_to_none=True)
            first, last = rank == 0, rank == world - 1
            if first and last:
                sched.step(idx, target=tgt)
            elif first:
                sched.step(idx)
            elif last:
                sched.step(target=tgt)
            else:
                sched.step()
            opt.step()
            return None

        p.update({"pp_stages": world, "layers_per_stage": per, "schedule": "Schedule1F1B "
                  "(torch.distributed.pipelining)", "pp_micro_batch": mb, "n_micro": nm,
                  "global_batch": mb * nm, "tokens_per_step": mb * nm * T,
                  "params_count_local": n_local, "autocast": "bf16 inside each stage",
                  "stage_0": "embeddings + layers", "stage_last": "layers + ln_f + lm_head + loss"})
        return step, p, (stage_mod, stage, sched, opt, idx, tgt)

    raise ValueError(mode)


# ----------------------------------------------------------------------------- timing
def time_steps(torch, dist, step, warmup, reps):
    """Per step: barrier, synchronize, CPU probe, CUDA events around step(), synchronize, probe.
    Returns (event us, synchronised wall us, host issue us, probe us) lists."""
    for _ in range(warmup):
        step()
    torch.cuda.synchronize()
    ev, wall, issue, probe = [], [], [], []
    for _ in range(reps):
        dist.barrier()
        torch.cuda.synchronize()
        before = cpu_probe_us()
        e0 = torch.cuda.Event(enable_timing=True)
        e1 = torch.cuda.Event(enable_timing=True)
        t0 = time.perf_counter()
        e0.record()
        step()
        ti = time.perf_counter()
        e1.record()
        torch.cuda.synchronize()
        t1 = time.perf_counter()
        after = cpu_probe_us()
        ev.append(e0.elapsed_time(e1) * 1e3)
        wall.append((t1 - t0) * 1e6)
        issue.append((ti - t0) * 1e6)
        probe.append(max(before, after))
    return ev, wall, issue, probe


def profile_step(torch, step, path):
    """One step under torch.profiler (CPU + CUDA); writes the chrome trace gzipped to path and
    returns the kernel summary of validate/e2e."""
    from torch.profiler import ProfilerActivity, profile

    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        step()
        torch.cuda.synchronize()
    raw = path[:-3] if path.endswith(".gz") else path + ".raw"
    prof.export_chrome_trace(raw)
    with open(raw, "rb") as f, gzip.open(path, "wb") as z:
        shutil.copyfileobj(f, z)
    with open(raw) as f:
        tr = json.load(f)
    os.remove(raw)
    events = tr.get("traceEvents", []) if isinstance(tr, dict) else tr
    s = summarize_trace_events(events, top=25)
    nccl = [k for k in s["kernels"] if "nccl" in k["name"].lower()]
    s["nccl_kernels"] = [{"name": k["name"][:120], "count": k["count"], "total_us": k["total_us"]}
                         for k in nccl]
    s["trace_file"] = os.path.basename(path)
    return s


def main():
    args = parse_args(sys.argv[1:])
    os.environ.setdefault("NCCL_NVLS_ENABLE", "0")           # NVLink multicast stays off
    if os.environ.get("NCCL_NVLS_ENABLE") != "0":
        raise SystemExit("NCCL_NVLS_ENABLE must be 0 on these machines")
    import torch
    import torch.distributed as dist
    import torch.nn as nn
    import torch.nn.functional as F

    rank = int(os.environ.get("RANK", "0"))
    world = int(os.environ.get("WORLD_SIZE", "1"))
    local = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local)
    dev = torch.device("cuda", local)
    dist.init_process_group("nccl", device_id=dev)
    out = None
    if rank == 0:
        out = RecordFile(args.out, "validate/dist/train_dist.py")
        if args.command:
            out.doc["generated_by"]["launcher_command"] = args.command
        out.doc["generated_by"]["command"] = "torchrun --nproc_per_node %d %s" % (
            world, " ".join(["validate/dist/train_dist.py"] + sys.argv[1:]))
        dinfo = device_info()
        try:
            dinfo["nccl"] = ".".join(str(v) for v in torch.cuda.nccl.version())
        except Exception as e:  # noqa: BLE001
            dinfo["nccl"] = "unavailable: %r" % (e,)
        dinfo["world_size"] = world
        dinfo["gpus_visible"] = torch.cuda.device_count()
        out.doc["device"] = dinfo
        env = torch_env()
        env.update({k: os.environ.get(k) for k in ("NCCL_NVLS_ENABLE", "NCCL_ALGO", "NCCL_PROTO",
                                                  "TORCH_SYMM_MEM_DISABLE_MULTICAST",
                                                  "NVSHMEM_DISABLE_NVLS", "OMP_NUM_THREADS")})
        env["profiles"] = "after all timing"
        out.doc["environment"] = env
        out.write()
    case = "dist/%s/n%d" % (args.mode, world)
    rec = None
    try:
        log("rank %d/%d: %s build" % (rank, world, case))
        step, params, keep = build_step(torch, nn, F, dist, args, rank, world, dev)
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        ev, wall, issue, probe = time_steps(torch, dist, step, args.warmup, args.reps)
        peak = torch.cuda.max_memory_allocated()
        peak_res = torch.cuda.max_memory_reserved()
        mine = {"rank": rank, "median_us": percentile(ev, 50), "wall_median_us":
                percentile(wall, 50), "peak_memory_bytes": int(peak),
                "peak_reserved_bytes": int(peak_res), "samples_us": [round(x, 3) for x in ev]}
        allr = [None] * world
        dist.all_gather_object(allr, mine)
        log("rank %d: %s median %.2f ms, peak %.2f GiB" % (rank, case, mine["median_us"] / 1e3,
                                                           peak / 2**30))
        if rank == 0:
            # step time of the run: per timed step the slowest rank's event time, then the median
            slowest = [max(r["samples_us"][i] for r in allr) for i in range(len(ev))]
            rec = {"id": case, "suite": "dist", "op": "dist_train_step", "params": params,
                   "timing": stats_us(ev, "per_step_rank0", args.warmup),
                   "timing_slowest_rank": stats_us(slowest, "per_step_max_over_ranks",
                                                   args.warmup),
                   "wall_timing": stats_us(wall, "per_step_wall_rank0", args.warmup),
                   "host_issue_timing": stats_us(issue, "host_issue", args.warmup),
                   "cpu_probe": {"method": "cpu_probe", "work": CPU_PROBE_WORK,
                                 "samples_us": [round(x, 3) for x in probe]},
                   "ranks": [{k: (round(v, 3) if isinstance(v, float) else v)
                              for k, v in r.items() if k != "samples_us"} for r in allr],
                   "peak_memory_bytes": max(r["peak_memory_bytes"] for r in allr),
                   "peak_memory_note": "max over ranks of torch.cuda.max_memory_allocated "
                                       "over warm-up and timed steps",
                   "timing_note": "barrier + synchronize before each timed step; CUDA events "
                                  "on each rank's current stream around the whole step"}
            out.add(rec)
        if args.trace_dir:
            os.makedirs(args.trace_dir, exist_ok=True)
            dist.barrier()
            path = os.path.join(args.trace_dir, "%s_n%d_rank%d.json.gz" % (args.mode, world, rank))
            summ = profile_step(torch, step, path)
            summs = [None] * world
            dist.all_gather_object(summs, summ)
            if rank == 0:
                rec["profile_per_rank"] = summs
                out.write()
        del keep, step
    except Exception as e:  # noqa: BLE001
        log("rank %d: ERROR %r" % (rank, e))
        if rank == 0:
            out.error(case, e)
            out.finish("failed")
        raise
    gc.collect()
    dist.barrier()
    dist.destroy_process_group()
    if rank == 0:
        out.finish()
        log("%s: done" % case)


if __name__ == "__main__":
    main()
