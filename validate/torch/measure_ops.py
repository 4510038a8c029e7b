"""Ridge validate/torch: framework ops measured through PyTorch, each with its kernel list.

Reads a cases file (a JSON list of {"id", "op", "params"} in Ridge's op vocabulary, the
torch_* ops of models/op_framework.hpp plus `elementwise` strided copies), runs each op the way
a PyTorch model runs it, and writes a ridge.records/1 file that `ridge predict` and
`ridge compare` read.

Per case:
  - inputs: torch.randn (never zeros), seed 1234, created on the GPU; the case is replicated over
    enough independent input sets (`buffers`) that one pass over them all is >= 3x the 60 MB L2,
    and the calls rotate over them, so no call finds its inputs in L2 left by the previous one.
  - backward cases build the forward graph once per input set (outside the timed region) and time
    torch.autograd.grad(out, inputs, grad_out, retain_graph=True): the backward kernels alone,
    with no accumulation into .grad.
  - warm-up: WARMUP calls; then ITERS calls under torch.profiler (CUDA activity only), each call
    inside a record_function range; every GPU kernel/memset/memcpy is assigned to its call through
    its launch's correlation id. timing.median_us = median over calls of the sum of the call's
    kernel durations (CUPTI), the `kernel` method; `kernels` lists each distinct kernel (name,
    grid, block, registers, shared memory, median duration per call, launches per call).
  - per_call_us: median of PER_CALL calls each timed alone with CUDA events (launch included).
  - clocks: NVML before and after each case and a 20 ms sampler during it (SM and memory MHz,
    power W); never changed (the card is measured as found).

Usage: python3 validate/torch/measure_ops.py --cases CASES.json --out OUT.json [--budget S]
"""

import argparse
import datetime
import gc
import json
import math
import os
import platform
import shlex
import subprocess
import sys
import tempfile
import threading
import time

import torch
import torch.nn.functional as F

SCHEMA = "ridge.records/1"
WARMUP = 3
ITERS = 15
PER_CALL = 10
L2_BYTES = 60 * 1024 * 1024
MIN_FOOTPRINT = 3 * L2_BYTES
MAX_BUFFERS = 24
DT = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def pct(v, p):
    v = sorted(v)
    if not v:
        return 0.0
    pos = p / 100 * (len(v) - 1)
    lo = int(math.floor(pos))
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)


# ----------------------------------------------------------------------------- clocks
class Clocks:
    def __init__(self):
        self.nv = None
        try:
            import pynvml as nv
            nv.nvmlInit()
            self.h = nv.nvmlDeviceGetHandleByIndex(0)
            self.nv = nv
        except Exception as e:  # noqa: BLE001
            log("NVML unavailable:", e)
        self.samples = []
        self._stop = threading.Event()
        self._t = None

    def read(self):
        if not self.nv:
            return {}
        nv, h = self.nv, self.h
        out = {}
        for k, f in (("sm_mhz", lambda: nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_SM)),
                     ("mem_mhz", lambda: nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_MEM)),
                     ("power_w", lambda: nv.nvmlDeviceGetPowerUsage(h) / 1000.0),
                     ("temperature_c", lambda: nv.nvmlDeviceGetTemperature(h, 0))):
            try:
                out[k] = f()
            except Exception:  # noqa: BLE001
                pass
        return out

    def info(self):
        if not self.nv:
            return {}
        nv, h = self.nv, self.h
        out = {"source": "nvml"}
        for k, f in (("sm_max_mhz", lambda: nv.nvmlDeviceGetMaxClockInfo(h, nv.NVML_CLOCK_SM)),
                     ("mem_max_mhz", lambda: nv.nvmlDeviceGetMaxClockInfo(h, nv.NVML_CLOCK_MEM)),
                     ("power_limit_w", lambda: nv.nvmlDeviceGetEnforcedPowerLimit(h) / 1000.0),
                     ("driver", lambda: nv.nvmlSystemGetDriverVersion())):
            try:
                v = f()
                out[k] = v.decode() if isinstance(v, bytes) else v
            except Exception:  # noqa: BLE001
                pass
        return out

    def start(self):
        self.samples = []
        if not self.nv:
            return
        self._stop.clear()

        def run():
            while not self._stop.is_set():
                r = self.read()
                if r:
                    self.samples.append(r)
                time.sleep(0.02)
        self._t = threading.Thread(target=run, daemon=True)
        self._t.start()

    def stop(self):
        if self._t:
            self._stop.set()
            self._t.join()
            self._t = None
        s = [x["sm_mhz"] for x in self.samples if "sm_mhz" in x]
        m = [x["mem_mhz"] for x in self.samples if "mem_mhz" in x]
        p = [x["power_w"] for x in self.samples if "power_w" in x]
        if not s:
            return {"samples": 0}
        return {"samples": len(s), "sm_mhz_min": min(s), "sm_mhz_max": max(s),
                "sm_mhz_median": pct(s, 50), "mem_mhz_min": min(m), "mem_mhz_max": max(m),
                "power_w_max": max(p) if p else None}


# ----------------------------------------------------------------------------- op builders
# Each builder returns (make, bytes_per_set): make() creates one independent input set on the GPU
# and returns the call to time.

def rnd(shape, dtype, requires_grad=False):
    return torch.randn(*shape, device="cuda", dtype=dtype).requires_grad_(requires_grad)


def backward_call(fwd, inputs, out_shape, out_dtype):
    """Forward once (untimed); the call is the backward alone."""
    out = fwd(*inputs)
    g = torch.randn_like(out) if out.dim() > 0 else torch.ones_like(out)
    need = [t for t in inputs if isinstance(t, torch.Tensor) and t.requires_grad]

    def call():
        return torch.autograd.grad(out, need, g, retain_graph=True)
    return call


def composed_rmsnorm(x, w, eps=1e-6):
    # The Hugging Face Llama form (LlamaRMSNorm.forward): upcast, mean of squares, rsqrt, scale,
    # cast back, weight.
    dt = x.dtype
    h = x.to(torch.float32)
    var = h.pow(2).mean(-1, keepdim=True)
    h = h * torch.rsqrt(var + eps)
    return w * h.to(dt)


def builder(op, p):
    bwd = p.get("pass", "fwd") == "bwd"
    if op == "torch_softmax":
        r, c, dt = p["rows"], p["cols"], DT[p.get("dtype", "bf16")]
        f = (lambda x: F.log_softmax(x, -1)) if p.get("log", False) else (lambda x: F.softmax(x, -1))
        nbytes = r * c * torch.tensor([], dtype=dt).element_size() * (3 if bwd else 2)

        def make():
            x = rnd((r, c), dt, bwd)
            return backward_call(f, [x], None, dt) if bwd else (lambda: f(x))
        return make, nbytes
    if op == "torch_nll_loss":
        r, v = p["rows"], p["vocab"]
        dt = DT[p.get("dtype", "fp32")]

        def make():
            lp = F.log_softmax(rnd((r, v), dt), -1).detach().requires_grad_(bwd)
            t = torch.randint(0, v, (r,), device="cuda")
            f = lambda a: F.nll_loss(a, t)  # noqa: E731
            return backward_call(f, [lp], None, dt) if bwd else (lambda: f(lp))
        return make, r * v * 4 * (2 if bwd else 1)
    if op == "torch_cross_entropy":
        r, v = p["rows"], p["vocab"]
        ld, sd = DT[p.get("logits_dtype", "fp32")], DT[p.get("loss_dtype", "fp32")]

        def make():
            x = rnd((r, v), ld, bwd)
            t = torch.randint(0, v, (r,), device="cuda")
            f = lambda a: F.cross_entropy(a.to(sd), t)  # noqa: E731
            return backward_call(f, [x], None, ld) if bwd else (lambda: f(x))
        return make, r * v * (4 if ld == torch.float32 else 2) * (3 if bwd else 2)
    if op == "torch_layernorm":
        r, c, dt = p["rows"], p["cols"], DT[p.get("dtype", "bf16")]

        def make():
            x = rnd((r, c), dt, bwd)
            w = rnd((c,), dt, bwd)
            b = rnd((c,), dt, bwd)
            f = lambda a, ww, bb: F.layer_norm(a, (c,), ww, bb, 1e-5)  # noqa: E731
            return backward_call(f, [x, w, b], None, dt) if bwd else (lambda: f(x, w, b))
        return make, r * c * torch.tensor([], dtype=dt).element_size() * (3 if bwd else 2)
    if op == "torch_rmsnorm":
        r, c, dt = p["rows"], p["cols"], DT[p.get("dtype", "bf16")]
        fused = p.get("impl", "fused") == "fused"

        def make():
            x = rnd((r, c), dt, bwd)
            if fused:
                m = torch.nn.RMSNorm(c, eps=1e-6, device="cuda", dtype=dt)
                with torch.no_grad():
                    m.weight.copy_(torch.randn(c, device="cuda", dtype=dt))
                m.weight.requires_grad_(bwd)
                f = lambda a, ww: m(a)  # noqa: E731
                w = m.weight
            else:
                w = rnd((c,), dt, bwd)
                f = composed_rmsnorm
            return backward_call(f, [x, w], None, dt) if bwd else (lambda: f(x, w))
        return make, r * c * torch.tensor([], dtype=dt).element_size() * (3 if bwd else 2)
    if op == "torch_gelu":
        n, dt, ap = p["n"], DT[p.get("dtype", "bf16")], p.get("approximate", "none")

        def make():
            x = rnd((n,), dt, bwd)
            f = lambda a: F.gelu(a, approximate=ap)  # noqa: E731
            return backward_call(f, [x], None, dt) if bwd else (lambda: f(x))
        return make, n * torch.tensor([], dtype=dt).element_size() * (3 if bwd else 2)
    if op == "torch_transpose_copy":
        o, a, b, i, dt = p["outer"], p["a"], p["b"], p.get("inner", 1), DT[p.get("dtype", "bf16")]

        def make():
            x = rnd((o, a, b, i), dt)
            return lambda: x.transpose(1, 2).contiguous()
        return make, o * a * b * i * torch.tensor([], dtype=dt).element_size() * 2
    if op == "torch_cat":
        k, r, c, dt = p["pieces"], p["rows"], p["cols"], DT[p.get("dtype", "bf16")]
        dim = 0 if p.get("dim", "rows") == "rows" else 1
        split_bwd = p.get("via", "cat") == "split_bwd"

        def make():
            if split_bwd:
                full = rnd((r * k, c) if dim == 0 else (r, c * k), dt, True)
                outs = torch.split(full, r if dim == 0 else c, dim)
                gs = [torch.randn_like(o) for o in outs]
                return lambda: torch.autograd.grad(outs, [full], gs, retain_graph=True)
            xs = [rnd((r, c), dt) for _ in range(k)]
            return lambda: torch.cat(xs, dim)
        return make, k * r * c * torch.tensor([], dtype=dt).element_size() * 2
    if op == "torch_strided_copy":
        n, dt, s = p["n"], DT[p.get("dtype", "fp32")], p.get("stride", 2)

        def make():
            x = rnd((n * s,), dt)
            return lambda: x[::s].contiguous()
        return make, n * s * torch.tensor([], dtype=dt).element_size() + n * 4
    if op == "elementwise":
        n, dt, s = p["n"], DT[p.get("dtype", "bf16")], p.get("stride", 1)
        assert p.get("op", "copy") == "copy"

        def make():
            x = rnd((n * s,), dt)
            return lambda: x[::s].contiguous()
        return make, n * s * torch.tensor([], dtype=dt).element_size() + n * 2
    raise ValueError(f"no builder for op {op}")


# ----------------------------------------------------------------------------- timing
def profile_calls(calls, iters):
    from torch.profiler import ProfilerActivity, profile, record_function
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for i in range(iters):
            with record_function(f"ridge_call_{i}"):
                calls[i % len(calls)]()
        torch.cuda.synchronize()
    fd, path = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    prof.export_chrome_trace(path)
    with open(path) as f:
        tr = json.load(f)
    os.unlink(path)
    ev = tr["traceEvents"] if isinstance(tr, dict) else tr
    ranges = []
    launches = {}
    gpu = []
    for e in ev:
        if e.get("ph") != "X":
            continue
        cat = e.get("cat", "")
        name = e.get("name", "")
        if cat == "user_annotation" and name.startswith("ridge_call_"):
            ranges.append((e["ts"], e["ts"] + e["dur"], int(name.rsplit("_", 1)[1])))
        elif cat in ("cuda_runtime", "cuda_driver"):
            c = e.get("args", {}).get("correlation")
            if c is not None:
                launches[c] = e["ts"]
        elif cat in ("kernel", "gpu_memset", "gpu_memcpy"):
            gpu.append(e)
    per_call = [[] for _ in range(iters)]
    for e in gpu:
        c = e.get("args", {}).get("correlation")
        ts = launches.get(c)
        if ts is None:
            continue
        for lo, hi, i in ranges:
            if lo <= ts <= hi:
                per_call[i].append(e)
                break
    for c in per_call:
        c.sort(key=lambda e: e["ts"])
    return per_call


def summarize(per_call):
    totals = [sum(e["dur"] for e in c) for c in per_call]
    counts = [len(c) for c in per_call]
    # Distinct kernels of a typical call (the most common launch count), in launch order.
    typical = max(set(counts), key=counts.count)
    sample = [c for c in per_call if len(c) == typical]
    kernels = []
    for j in range(typical):
        e0 = sample[0][j]
        a = e0.get("args", {})
        durs = [c[j]["dur"] for c in sample]
        kernels.append({"name": e0["name"][:300], "cat": e0.get("cat"),
                        "grid": a.get("grid"), "block": a.get("block"),
                        "registers_per_thread": a.get("registers per thread"),
                        "shared_bytes": a.get("shared memory"),
                        "blocks_per_sm": a.get("blocks per SM"),
                        "occupancy": a.get("est. achieved occupancy %"),
                        "median_us": pct(durs, 50)})
    return totals, counts, kernels


def per_call_events(calls, n):
    out = []
    for i in range(n):
        s = torch.cuda.Event(enable_timing=True)
        e = torch.cuda.Event(enable_timing=True)
        torch.cuda.synchronize()
        s.record()
        calls[i % len(calls)]()
        e.record()
        torch.cuda.synchronize()
        out.append(s.elapsed_time(e) * 1000.0)
    return out


def run_case(case, clocks):
    op, p = case["op"], case["params"]
    make, nbytes = builder(op, p)
    nbuf = max(1, min(MAX_BUFFERS, math.ceil(MIN_FOOTPRINT / max(1, nbytes))))
    torch.manual_seed(1234)
    calls = [make() for _ in range(nbuf)]
    torch.cuda.synchronize()
    before = clocks.read()
    clocks.start()
    for i in range(WARMUP * len(calls) if len(calls) <= 4 else max(WARMUP, len(calls))):
        calls[i % len(calls)]()
    torch.cuda.synchronize()
    per_call = profile_calls(calls, max(ITERS, len(calls)))
    ev = per_call_events(calls, PER_CALL)
    sampled = clocks.stop()
    after = clocks.read()
    totals, counts, kernels = summarize(per_call)
    del calls
    if not kernels or min(totals) <= 0:
        raise RuntimeError(f"no GPU kernels seen (launches per call: {counts})")
    rec = {"id": case["id"], "suite": "torch", "op": op, "params": p,
           "timing": {"method": "kernel", "warmup": WARMUP, "reps": len(totals),
                      "median_us": pct(totals, 50), "min_us": min(totals),
                      "p10_us": pct(totals, 10), "p90_us": pct(totals, 90),
                      "spread": (pct(totals, 90) - pct(totals, 10)) / max(1e-9, pct(totals, 50)),
                      "sm_mhz": sampled.get("sm_mhz_median")},
           "kernel_launches_per_call": counts,
           "kernels": kernels,
           "per_call_us": pct(ev, 50),
           "buffers": nbuf,
           "clocks": {"before": before, "after": after, "during": sampled}}
    return rec


def device_info(clocks):
    props = torch.cuda.get_device_properties(0)
    d = {"name": props.name, "sm_count": props.multi_processor_count,
         "cc": f"{props.major}.{props.minor}", "memory_bytes": props.total_memory,
         "l2_bytes": getattr(props, "L2_cache_size", None),
         "torch": torch.__version__, "cuda_runtime": torch.version.cuda,
         "cudnn": torch.backends.cudnn.version(), "python": platform.python_version()}
    d.update({"clocks": clocks.info()})
    if "driver" in d["clocks"]:
        d["driver"] = d["clocks"].pop("driver")
    try:
        d["nvidia_smi"] = subprocess.run(
            ["nvidia-smi", "--query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm,"
             "clocks.max.mem,power.draw,power.limit,temperature.gpu", "--format=csv"],
            capture_output=True, text=True, timeout=20).stdout.strip()
    except Exception as e:  # noqa: BLE001
        d["nvidia_smi"] = f"failed: {e}"
    return d


def write(doc, out, t0):
    # Rewritten atomically after every case, so a run stopped at its limit keeps what it measured.
    doc["generated_by"]["elapsed_s"] = round(time.time() - t0, 1)
    tmp = out + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1, sort_keys=False)
    os.replace(tmp, out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--budget", type=float, default=400.0, help="seconds; later cases skipped")
    a = ap.parse_args()
    t0 = time.time()
    with open(a.cases) as f:
        cases = json.load(f)
    clocks = Clocks()
    torch.backends.cuda.matmul.allow_tf32 = False
    doc = {"schema": SCHEMA,
           "generated_by": {"tool": "validate/torch/measure_ops.py",
                            "command": " ".join(shlex.quote(x) for x in sys.argv),
                            "cases": os.path.basename(a.cases),
                            "date": datetime.datetime.now(datetime.timezone.utc).strftime(
                                "%Y-%m-%dT%H:%M:%SZ")},
           "device": device_info(clocks), "failures": [], "skipped": [], "records": []}
    # A first profiler session pays CUPTI's start-up outside every case.
    x = torch.randn(1024, device="cuda")
    profile_calls([lambda: x * 2], 2)
    for c in cases:
        if time.time() - t0 > a.budget:
            doc["skipped"].append(c["id"])
            continue
        try:
            r = run_case(c, clocks)
            doc["records"].append(r)
            log(f"{c['id']:60s} {r['timing']['median_us']:10.2f} us  "
                f"{len(r['kernels'])} kernels  {r['kernels'][0]['name'][:60] if r['kernels'] else ''}")
        except Exception as e:  # noqa: BLE001
            doc["failures"].append({"id": c["id"], "error": repr(e)[:500]})
            log("FAILED", c["id"], repr(e)[:300])
        gc.collect()
        torch.cuda.empty_cache()
        write(doc, a.out, t0)
    write(doc, a.out, t0)
    log(f"wrote {len(doc['records'])} records, {len(doc['failures'])} failures, "
        f"{len(doc['skipped'])} skipped in {doc['generated_by']['elapsed_s']} s")


if __name__ == "__main__":
    main()
