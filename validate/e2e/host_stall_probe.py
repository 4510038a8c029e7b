"""Ridge e2e: what makes host-bound eager steps slow? GC, descheduling, page faults, or none.

For gpt2-medium training (train_gpt.py config, b8 s1024) and the eager Llama-3.2-1B decode step at
batch 1 (decode_llama.py's model and step), after warm-up, each of these phases runs N steps back to
back (one synchronize at the end; a CUDA event at every step boundary):
  gc_on         Python GC enabled as by default
  gc_off        gc.collect(); gc.disable(); N steps; gc.enable()
  gc_frozen     gc.collect(); gc.freeze(); N steps; gc.unfreeze()
  gc_on_repeat  gc_on again (control for drift over the run)
Per step: GPU time between the step's boundary events, host wall time to issue it (perf_counter,
no sync), process and main-thread CPU time (process_time, thread_time), GC collections (count and
duration per generation, from gc.callbacks), getrusage deltas for the process and the main thread
(voluntary/involuntary context switches, minor/major faults), /proc/stat deltas (steal, busy) and
the core the main thread ended on. Per phase: affinity size, load average, /proc/cpuinfo MHz and
CPU pressure at start and end; step-time statistics; fast steps (wall within 3% of the phase's
minimum) vs slow, and what the slow steps' excess wall time is made of.
Writes one JSON (schema ridge.host_stall_probe/1), rewritten atomically after each case.

Usage: python3 validate/e2e/host_stall_probe.py --out OUT/host_stall_probe.json
"""

import argparse
import gc
import json
import os
import platform
import resource
import shlex
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_common import device_info, log, percentile, utc_iso  # noqa: E402
import decode_llama  # noqa: E402
import train_gpt  # noqa: E402

SCHEMA = "ridge.host_stall_probe/1"
FAST_TOL = 0.03
VERY_SLOW = 1.25      # second split: steps over 1.25x the phase's minimum step time
PHASES = ["gc_on", "gc_off", "gc_frozen", "gc_on_repeat"]
TRAIN_WARMUP = 5
DECODE_WARMUP = 10
RUSAGE_THREAD = getattr(resource, "RUSAGE_THREAD", None)


# ----------------------------------------------------------------------------- host readings
def _read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return None


def cpuinfo_mhz():
    txt = _read("/proc/cpuinfo") or ""
    mhz = [float(l.split(":")[1]) for l in txt.splitlines() if l.startswith("cpu MHz")]
    if not mhz:
        return None
    return {"n": len(mhz), "min": min(mhz), "median": percentile(mhz, 50), "max": max(mhz),
            "per_core": [round(m) for m in mhz]}


def proc_stat():
    """Aggregate /proc/stat cpu line: user nice system idle iowait irq softirq steal (jiffies)."""
    txt = _read("/proc/stat")
    if not txt:
        return None
    return [int(v) for v in txt.split("\n", 1)[0].split()[1:9]]


def cur_cpu():
    txt = _read("/proc/thread-self/stat")
    try:
        return int(txt[txt.rfind(")") + 2:].split()[36])
    except Exception:  # noqa: BLE001
        return None


def env_snapshot():
    d = {"utc": utc_iso(), "affinity_cpus": len(os.sched_getaffinity(0)),
         "loadavg": [round(x, 2) for x in os.getloadavg()], "cpu_mhz": cpuinfo_mhz(),
         "main_thread_cpu": cur_cpu(), "proc_stat_cpu": proc_stat(),
         "psi_cpu": (_read("/proc/pressure/cpu") or "").strip() or None,
         "gc_count": list(gc.get_count()), "gc_stats": gc.get_stats()}
    try:
        d["gc_frozen_objects"] = gc.get_freeze_count()
    except AttributeError:
        pass
    return d


class GcMeter:
    """gc.callbacks hook: cumulative collections and milliseconds per generation."""

    def __init__(self):
        self.n = [0, 0, 0]
        self.ms = [0.0, 0.0, 0.0]
        self._t0 = None

    def __call__(self, phase, info):
        if phase == "start":
            self._t0 = time.perf_counter()
        elif self._t0 is not None:
            g = info.get("generation", 0)
            self.n[g] += 1
            self.ms[g] += (time.perf_counter() - self._t0) * 1e3
            self._t0 = None

    def snap(self):
        return tuple(self.n), tuple(self.ms)


GCM = GcMeter()


def _snap_start():
    ru = resource.getrusage(resource.RUSAGE_SELF)
    rt = resource.getrusage(RUSAGE_THREAD) if RUSAGE_THREAD is not None else None
    g = GCM.snap()
    return ru, rt, g, time.process_time(), time.thread_time(), time.perf_counter()


def _snap_end():
    t = time.perf_counter()
    th = time.thread_time()
    pr = time.process_time()
    g = GCM.snap()
    rt = resource.getrusage(RUSAGE_THREAD) if RUSAGE_THREAD is not None else None
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru, rt, g, pr, th, t


def _ru(a, b):
    if a is None or b is None:
        return None
    return {"nvcsw": b.ru_nvcsw - a.ru_nvcsw, "nivcsw": b.ru_nivcsw - a.ru_nivcsw,
            "minflt": b.ru_minflt - a.ru_minflt, "majflt": b.ru_majflt - a.ru_majflt}


# ----------------------------------------------------------------------------- one phase
def run_phase(torch, step, n):
    evs = [torch.cuda.Event(enable_timing=True) for _ in range(n + 1)]
    raw = []
    torch.cuda.synchronize()
    stat0 = proc_stat()
    t_phase = time.perf_counter()
    evs[0].record()
    for i in range(n):
        s = _snap_start()
        step()
        e = _snap_end()
        evs[i + 1].record()
        raw.append((s, e, proc_stat(), cur_cpu()))   # outside the host window, inside the GPU one
    t_issue = time.perf_counter() - t_phase
    torch.cuda.synchronize()
    t_total = time.perf_counter() - t_phase
    rows = []
    prev_stat = stat0
    for i, (s, e, st, cpu) in enumerate(raw):
        r = {"i": i, "gpu_ms": round(evs[i].elapsed_time(evs[i + 1]), 4),
             "wall_ms": round((e[5] - s[5]) * 1e3, 4),
             "proc_cpu_ms": round((e[3] - s[3]) * 1e3, 4),
             "thread_cpu_ms": round((e[4] - s[4]) * 1e3, 4),
             "gc_n": [e[2][0][g] - s[2][0][g] for g in range(3)],
             "gc_ms": [round(e[2][1][g] - s[2][1][g], 4) for g in range(3)],
             "rusage_self": _ru(s[0], e[0]), "rusage_thread": _ru(s[1], e[1]), "cpu": cpu}
        if st is not None and prev_stat is not None:
            d = [b - a for a, b in zip(prev_stat, st)]
            tot = sum(d)
            r["stat_jiffies"] = {"total": tot, "steal": d[7], "busy": tot - d[3] - d[4]}
        prev_stat = st
        rows.append(r)
    return rows, {"issue_s": round(t_issue, 4), "total_s": round(t_total, 4)}


def _st(xs):
    if not xs:
        return None
    return {"median": round(percentile(xs, 50), 4), "min": round(min(xs), 4),
            "max": round(max(xs), 4), "p90": round(percentile(xs, 90), 4),
            "mean": round(sum(xs) / len(xs), 4)}


def _mean(rows, f):
    vals = [f(r) for r in rows]
    vals = [v for v in vals if v is not None]
    return sum(vals) / len(vals) if vals else None


METRICS = {
    "gpu_ms": lambda r: r["gpu_ms"],
    "wall_ms": lambda r: r["wall_ms"],
    "proc_cpu_ms": lambda r: r["proc_cpu_ms"],
    "thread_cpu_ms": lambda r: r["thread_cpu_ms"],
    # no thread of the process on a CPU (descheduled, or blocked in a sleep or syscall)
    "wall_minus_proc_cpu_ms": lambda r: r["wall_ms"] - r["proc_cpu_ms"],
    # main thread not on a CPU; in training this includes waiting for the autograd thread
    "wall_minus_thread_cpu_ms": lambda r: r["wall_ms"] - r["thread_cpu_ms"],
    "other_threads_cpu_ms": lambda r: r["proc_cpu_ms"] - r["thread_cpu_ms"],
    "gc_ms": lambda r: sum(r["gc_ms"]),
    "gc_n": lambda r: sum(r["gc_n"]),
    "minflt": lambda r: r["rusage_self"]["minflt"],
    "majflt": lambda r: r["rusage_self"]["majflt"],
    "nvcsw_self": lambda r: r["rusage_self"]["nvcsw"],
    "nivcsw_self": lambda r: r["rusage_self"]["nivcsw"],
    "nvcsw_thread": lambda r: r["rusage_thread"]["nvcsw"] if r["rusage_thread"] else None,
    "nivcsw_thread": lambda r: r["rusage_thread"]["nivcsw"] if r["rusage_thread"] else None,
    "steal_jiffies": lambda r: r["stat_jiffies"]["steal"] if "stat_jiffies" in r else None,
    "busy_cores": lambda r: (r["stat_jiffies"]["busy"] / r["stat_jiffies"]["total"]
                             * os.cpu_count()) if r.get("stat_jiffies", {}).get("total") else None,
}


def summarize(rows, times=None):
    """Step time = GPU time between the step's boundary events (with steps back to back this is
    the step's period). Fast: step time within FAST_TOL of the phase's minimum; slow: the rest."""
    wall = [r["wall_ms"] for r in rows]
    gpu = [r["gpu_ms"] for r in rows]
    gmin = min(gpu)
    fast = [r for r in rows if r["gpu_ms"] <= gmin * (1 + FAST_TOL)]
    slow = [r for r in rows if r["gpu_ms"] > gmin * (1 + FAST_TOL)]
    out = {"gpu_ms": _st(gpu), "wall_ms": _st(wall),
           "thread_cpu_ms": _st([r["thread_cpu_ms"] for r in rows]),
           "proc_cpu_ms": _st([r["proc_cpu_ms"] for r in rows]),
           "gc_total": {"n": [sum(r["gc_n"][g] for r in rows) for g in range(3)],
                        "ms": [round(sum(r["gc_ms"][g] for r in rows), 3) for g in range(3)]},
           "gpu_ms_first10_median": round(percentile(gpu[:10], 50), 4),
           "gpu_ms_last10_median": round(percentile(gpu[-10:], 50), 4),
           "fast_rule": "gpu_ms <= %.2f * phase minimum" % (1 + FAST_TOL),
           "fast_n": len(fast), "slow_n": len(slow), "slow_steps": [r["i"] for r in slow],
           "slow_n_by_wall_ms": sum(1 for w in wall if w > min(wall) * (1 + FAST_TOL)),
           "fast_mean": {k: (round(_mean(fast, f), 4) if _mean(fast, f) is not None else None)
                         for k, f in METRICS.items()},
           "slow_mean": {k: (round(_mean(slow, f), 4) if slow and _mean(slow, f) is not None
                             else None) for k, f in METRICS.items()}}
    if times:
        # GPU finish after the host issued the last step: ~0 when the GPU waits for the host
        # (host-bound); a standing lag of many ms means queued work, i.e. the GPU sets the pace.
        out["queue_lag_ms"] = round((times["total_s"] - times["issue_s"]) * 1e3, 3)
        out["paced_by"] = "gpu" if out["queue_lag_ms"] > 2.0 else "host"
    def excess(sub):
        m = {k: _mean(sub, f) for k, f in METRICS.items()}
        return {k: (round(m[k] - out["fast_mean"][k], 4)
                    if m[k] is not None and out["fast_mean"][k] is not None else None)
                for k in METRICS}
    if slow:
        out["slow_excess_over_fast"] = excess(slow)
        out["slow_excess_note"] = ("mean over slow steps minus mean over fast steps; wall = "
                                   "proc_cpu + wall_minus_proc_cpu when one thread runs at a time; "
                                   "GC runs on the main thread inside thread_cpu")
    vslow = [r for r in rows if r["gpu_ms"] > gmin * VERY_SLOW]
    out["very_slow_rule"] = "gpu_ms > %.2f * phase minimum" % VERY_SLOW
    out["very_slow_n"] = len(vslow)
    out["very_slow_steps"] = [r["i"] for r in vslow]
    if vslow:
        out["very_slow_excess_over_fast"] = excess(vslow)
    return out


# ----------------------------------------------------------------------------- cases
def run_case(torch, name, params, step, warmup, n):
    log("%s: warm-up %d steps" % (name, warmup))
    for _ in range(warmup):
        step()
    torch.cuda.synchronize()
    case = {"case": name, "params": params, "warmup": warmup, "steps": n, "phases": []}
    for ph in PHASES:
        env0 = env_snapshot()
        if ph == "gc_off":
            gc.collect()
            gc.disable()
        elif ph == "gc_frozen":
            gc.collect()
            gc.freeze()
        try:
            rows, tt = run_phase(torch, step, n)
        finally:
            if ph == "gc_off":
                gc.enable()
            elif ph == "gc_frozen":
                gc.unfreeze()
        s = summarize(rows, tt)
        case["phases"].append({"phase": ph, "env_start": env0, "env_end": env_snapshot(),
                               "times": tt, "summary": s, "step_rows": rows})
        ex = s.get("slow_excess_over_fast") or {}
        log("%s %-12s step med %.2f min %.2f max %.2f | wall med %.2f | lag %.1f ms | slow %d/%d "
            "excess wall %s ms (gc %s, wall-cpu %s, cpu %s, minflt %s)"
            % (name, ph, s["gpu_ms"]["median"], s["gpu_ms"]["min"], s["gpu_ms"]["max"],
               s["wall_ms"]["median"], s["queue_lag_ms"], s["slow_n"], n, ex.get("wall_ms"),
               ex.get("gc_ms"), ex.get("wall_minus_proc_cpu_ms"), ex.get("proc_cpu_ms"),
               ex.get("minflt")))
    return case


def train_case(torch, nn, F, n):
    cfg = [c for c in train_gpt.CONFIGS if c[0] == "gpt2-medium"][0]
    name, L, d, H, V, T, B = cfg
    model, opt, idx, tgt, step = train_gpt.training_step(torch, nn, F, cfg)

    params = {"model": name, "layers": L, "d_model": d, "heads": H, "vocab": V, "seq": T,
              "micro_batch": B, "optimizer": "adamw_fused", "autocast": "bf16",
              "source": "train_gpt.build_model / train_gpt.run_config step"}
    try:
        return run_case(torch, "train/%s/b%d_s%d" % (name, B, T), params, step, TRAIN_WARMUP, n)
    finally:
        del opt, model
        gc.collect()
        torch.cuda.empty_cache()


def decode_case(torch, nn, F, n):
    cfg = [m for m in decode_llama.MODELS if m["model"] == "llama3.2-1b"][0]
    use_gqa = decode_llama.gqa_supported(torch, F)
    torch.manual_seed(decode_llama.SEED)
    model = decode_llama.build_bf16(torch, nn, F, cfg, use_gqa)
    ctx = decode_llama.CONTEXT
    with torch.inference_mode():
        caches = decode_llama.make_caches(torch, cfg, 1)
        tok = torch.randint(0, cfg["vocab"], (1, 1), device="cuda")
        pos = torch.full((1,), ctx, device="cuda", dtype=torch.long)

        def step():   # decode_llama.run_model's eager decode_step
            logits = model(tok, pos, caches, ctx + 1, False)
            tok.copy_(logits[:, -1, :].argmax(dim=-1, keepdim=True))
            return logits

        params = {"model": cfg["model"], "batch": 1, "context": ctx, "graph": False,
                  "gqa": "sdpa_enable_gqa" if use_gqa else "repeat_interleave",
                  "source": "decode_llama.build / run_model eager decode_step"}
        try:
            return run_case(torch, "decode/%s/b1_ctx%d/eager" % (cfg["model"], ctx), params,
                            step, DECODE_WARMUP, n)
        finally:
            del caches, model
            gc.collect()
            torch.cuda.empty_cache()


def write_atomic(path, doc):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def print_table(doc):
    print("\n%-36s %-12s %6s %6s %6s %6s %6s %4s %6s %6s %6s %6s %6s %4s %6s %6s"
          % ("case", "phase", "med", "min", "max", "p90", "lag", "slow", "excess", "gc",
             "w-pcpu", "cpu", "minflt", "vslo", "excess", "cpu"))
    for c in doc["cases"]:
        for p in c["phases"]:
            s = p["summary"]
            ex = s.get("slow_excess_over_fast") or {}
            vx = s.get("very_slow_excess_over_fast") or {}
            f = lambda d, k: ("%.2f" % d[k]) if d.get(k) is not None else "-"  # noqa: E731
            print("%-36s %-12s %6.2f %6.2f %6.2f %6.2f %6.1f %4d %6s %6s %6s %6s %6s %4d %6s %6s"
                  % (c["case"], p["phase"], s["gpu_ms"]["median"], s["gpu_ms"]["min"],
                     s["gpu_ms"]["max"], s["gpu_ms"]["p90"], s["queue_lag_ms"], s["slow_n"],
                     f(ex, "wall_ms"), f(ex, "gc_ms"), f(ex, "wall_minus_proc_cpu_ms"),
                     f(ex, "proc_cpu_ms"), f(ex, "minflt"), s["very_slow_n"], f(vx, "wall_ms"),
                     f(vx, "proc_cpu_ms")))
    print("(ms; med..p90: step time from CUDA events; lag: GPU finish after the last issue; "
          "excess: slow-step mean minus fast-step mean of wall issue time, gc, wall - process "
          "CPU, process CPU, minor faults; vslo: steps over %.2fx the minimum, their excess wall "
          "and process CPU)" % VERY_SLOW)


def resummarize(path):
    """Recompute every phase summary from the stored step_rows (no GPU needed)."""
    with open(path) as f:
        doc = json.load(f)
    for c in doc["cases"]:
        for p in c["phases"]:
            p["summary"] = summarize(p["step_rows"], p["times"])
    doc["generated_by"]["resummarized"] = {"command": shlex.join(["python3"] + sys.argv),
                                           "date": utc_iso()}
    write_atomic(path, doc)
    print_table(doc)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="host_stall_probe.json")
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--cases", default="train,decode")
    ap.add_argument("--resummarize", metavar="JSON",
                    help="recompute the summaries of an existing output from its step rows")
    args = ap.parse_args()
    if args.resummarize:
        resummarize(args.resummarize)
        return
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    doc = {"schema": SCHEMA,
           "generated_by": {"tool": "validate/e2e/host_stall_probe.py",
                            "command": shlex.join(["python3"] + sys.argv), "date": utc_iso()},
           "status": "running", "cases": [], "errors": []}
    log("host_stall_probe: import torch")
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    dev = device_info()
    doc["device"] = {k: dev.get(k) for k in ("name", "driver", "cuda_runtime", "torch", "python",
                                             "clocks", "power_limit_w")}
    cpu_model = [l.split(":", 1)[1].strip() for l in (_read("/proc/cpuinfo") or "").splitlines()
                 if l.startswith("model name")]
    doc["host"] = {"cpu_model": cpu_model[0] if cpu_model else None, "os_cpu_count": os.cpu_count(),
                   "affinity_cpus": len(os.sched_getaffinity(0)), "kernel": platform.release(),
                   "python_impl": platform.python_implementation(),
                   "gc_threshold": list(gc.get_threshold()), "gc_enabled": gc.isenabled(),
                   "cpufreq_sysfs": os.path.exists("/sys/devices/system/cpu/cpu0/cpufreq"),
                   "psi": os.path.exists("/proc/pressure/cpu"),
                   "rusage_thread": RUSAGE_THREAD is not None}
    log("host_stall_probe: %s driver %s torch %s cuda %s python %s; %s, %d cpus (affinity %d)"
        % (dev.get("name"), dev.get("driver"), torch.__version__, torch.version.cuda,
           sys.version.split()[0], doc["host"]["cpu_model"], os.cpu_count(),
           doc["host"]["affinity_cpus"]))
    write_atomic(args.out, doc)
    gc.callbacks.append(GCM)
    for key, fn in (("train", train_case), ("decode", decode_case)):
        if key not in args.cases.split(","):
            continue
        try:
            doc["cases"].append(fn(torch, nn, F, args.steps))
        except Exception as e:  # noqa: BLE001
            import traceback
            log("ERROR %s: %r" % (key, e))
            traceback.print_exc()
            doc["errors"].append({"case": key, "error": repr(e),
                                  "traceback": traceback.format_exc()[-3000:]})
        write_atomic(args.out, doc)
    gc.callbacks.remove(GCM)
    doc["status"] = "done"
    doc["generated_by"]["finished"] = utc_iso()
    write_atomic(args.out, doc)
    print_table(doc)
    log("host_stall_probe: done, %d cases, %d errors" % (len(doc["cases"]), len(doc["errors"])))


if __name__ == "__main__":
    main()
