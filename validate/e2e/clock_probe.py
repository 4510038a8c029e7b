"""Ridge e2e: SM clock and power during GPT-2 training steps, by timing method (one GPU).

Question: does the GPU run the training step's kernels at a lower SM clock when steps are
issued back to back (as in real training) than when each step is synchronised or profiled?

For each GPT-2 case of train_gpt.py (same model, optimizer, inputs), after warm-up, with a
background thread sampling NVML (or `nvidia-smi -lms 10`) every ~10 ms:
  idle           1 s of idle sleep (baseline)
  steady         30 steps back to back, one synchronize at the end; CUDA event per step boundary
  per_call       10 steps, each synchronised (train_gpt.py's `timing` method)
  profiled       2 steps under torch.profiler (CUDA activity only), each synchronised; kernel sum
  profiled_hot   20 unprofiled steps back to back, then 3 more profiled without synchronising
                 (kernel sum per step at the clock of a sustained loop)
  gemm_sustained 8192^3 bf16 matmul loop for ~3 s
  gemm_cool      the same matmul timed once after 2 s of idle sleep
Per phase: step/kernel times and the clock/power samples inside the phase window.
Writes one JSON (schema ridge.clock_probe/1), rewritten atomically after each model.

Usage: python3 validate/e2e/clock_probe.py --out OUT/clock_probe.json
"""

import argparse
import datetime
import gc
import json
import os
import shlex
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_common import _trace_events, log, percentile, union_span, utc_iso  # noqa: E402
from train_gpt import CONFIGS, training_step  # noqa: E402

SCHEMA = "ridge.clock_probe/1"
WARMUP = 5
STEADY = 30
PER_CALL = 10
PROFILED = 2
HOT_PRE = 20
HOT_PROF = 3
GEMM_N = 8192
GEMM_S = 3.0
COOL_SLEEP_S = 2.0
SAMPLE_S = 0.010

# NVML clock event (throttle) reason bits
R_IDLE = 0x1
R_SW_POWER = 0x4
R_HW_SLOW = 0x8
R_SW_THERMAL = 0x20
R_HW_THERMAL = 0x40
R_HW_POWER_BRAKE = 0x80
POWER_BITS = R_SW_POWER | R_HW_POWER_BRAKE
THERMAL_BITS = R_SW_THERMAL | R_HW_THERMAL


# ----------------------------------------------------------------------------- sampler
class Sampler:
    """Background sampler of SM clock, memory clock, power, temperature and reason bits.

    samples: list of (t, sm_mhz, mem_mhz, power_w, temp_c, reasons) with t = perf_counter().
    """

    def __init__(self, period=SAMPLE_S):
        self.period = period
        self.samples = []
        self.source = None
        self.info = {}
        self._stop = threading.Event()
        self._thread = None
        self._proc = None
        self._nv = None
        self._h = None

    # --- NVML
    def _try_nvml(self):
        try:
            import pynvml as nv
            nv.nvmlInit()
            h = nv.nvmlDeviceGetHandleByIndex(0)
            self._nv, self._h = nv, h
            self._reasons = getattr(nv, "nvmlDeviceGetCurrentClocksEventReasons", None) or \
                nv.nvmlDeviceGetCurrentClocksThrottleReasons
            self._read_nvml()  # must work once
            info = {}
            for k, f in [
                ("name", lambda: nv.nvmlDeviceGetName(h)),
                ("driver", lambda: nv.nvmlSystemGetDriverVersion()),
                ("power_limit_w", lambda: nv.nvmlDeviceGetEnforcedPowerLimit(h) / 1000.0),
                ("power_limit_default_w", lambda: nv.nvmlDeviceGetPowerManagementDefaultLimit(h) / 1000.0),
                ("max_sm_mhz", lambda: nv.nvmlDeviceGetMaxClockInfo(h, nv.NVML_CLOCK_SM)),
                ("max_mem_mhz", lambda: nv.nvmlDeviceGetMaxClockInfo(h, nv.NVML_CLOCK_MEM)),
                ("app_sm_mhz", lambda: nv.nvmlDeviceGetApplicationsClock(h, nv.NVML_CLOCK_SM)),
                ("temp_slowdown_c", lambda: nv.nvmlDeviceGetTemperatureThreshold(
                    h, nv.NVML_TEMPERATURE_THRESHOLD_SLOWDOWN)),
                ("temp_shutdown_c", lambda: nv.nvmlDeviceGetTemperatureThreshold(
                    h, nv.NVML_TEMPERATURE_THRESHOLD_SHUTDOWN)),
                ("persistence_mode", lambda: nv.nvmlDeviceGetPersistenceMode(h)),
            ]:
                try:
                    v = f()
                    info[k] = v.decode() if isinstance(v, bytes) else v
                except Exception as e:  # noqa: BLE001
                    info[k] = "unavailable: %r" % (e,)
            self.info = info
            self.source = "pynvml"
            return True
        except Exception as e:  # noqa: BLE001
            self.info["nvml_error"] = repr(e)
            self._nv = None
            return False

    def _read_nvml(self):
        nv, h = self._nv, self._h
        sm = nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_SM)
        mem = nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_MEM)
        pw = nv.nvmlDeviceGetPowerUsage(h) / 1000.0
        tc = nv.nvmlDeviceGetTemperature(h, nv.NVML_TEMPERATURE_GPU)
        rs = int(self._reasons(h))
        return sm, mem, pw, tc, rs

    def _run_nvml(self):
        nxt = time.perf_counter()
        while not self._stop.is_set():
            try:
                sm, mem, pw, tc, rs = self._read_nvml()
                self.samples.append((time.perf_counter(), sm, mem, pw, tc, rs))
            except Exception:  # noqa: BLE001
                pass
            nxt += self.period
            d = nxt - time.perf_counter()
            if d > 0:
                time.sleep(d)
            else:
                nxt = time.perf_counter()

    # --- nvidia-smi fallback
    def _run_smi(self):
        q = "timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active"
        cmd = ["nvidia-smi", "--query-gpu=" + q, "--format=csv,noheader,nounits",
               "-lms", str(int(self.period * 1000))]
        self._proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                      text=True, bufsize=1)
        off = time.time() - time.perf_counter()
        for line in self._proc.stdout:
            if self._stop.is_set():
                break
            v = [x.strip() for x in line.split(",")]
            if len(v) < 6:
                continue
            try:
                ts = datetime.datetime.strptime(v[0], "%Y/%m/%d %H:%M:%S.%f").timestamp()
                t = ts - off
                self.samples.append((t, float(v[1]), float(v[2]), float(v[3]), float(v[4]),
                                     int(v[5], 16)))
            except (ValueError, IndexError):
                continue

    def start(self):
        if self._try_nvml():
            target = self._run_nvml
        else:
            self.source = "nvidia-smi -lms"
            target = self._run_smi
        self._thread = threading.Thread(target=target, daemon=True)
        self._thread.start()

    def stop(self):
        self._stop.set()
        if self._proc is not None:
            try:
                self._proc.terminate()
            except Exception:  # noqa: BLE001
                pass
        if self._thread is not None:
            self._thread.join(timeout=3)

    def window(self, t0, t1):
        return [s for s in self.samples if t0 <= s[0] <= t1]


def sample_stats(samples, t0, t1):
    s = [x for x in samples if t0 <= x[0] <= t1]
    out = {"t0_s": None, "duration_s": round(t1 - t0, 4), "samples": len(s)}
    if not s:
        return out

    def q(i, digits=1):
        xs = [x[i] for x in s]
        return {"median": round(percentile(xs, 50), digits), "p10": round(percentile(xs, 10), digits),
                "p90": round(percentile(xs, 90), digits), "min": round(min(xs), digits),
                "max": round(max(xs), digits)}

    out.update({
        "sm_mhz": q(1), "mem_mhz": q(2), "power_w": q(3), "temp_c": q(4),
        "n_power_cap": sum(1 for x in s if x[5] & POWER_BITS),
        "n_thermal": sum(1 for x in s if x[5] & THERMAL_BITS),
        "n_hw_slowdown": sum(1 for x in s if x[5] & R_HW_SLOW),
        "n_idle": sum(1 for x in s if x[5] & R_IDLE),
        "reasons_seen": sorted({"0x%x" % x[5] for x in s}),
    })
    return out


def time_stats_ms(xs):
    xs = [float(x) for x in xs]
    if not xs:
        return {"n": 0}
    return {"n": len(xs), "median_ms": round(percentile(xs, 50), 4), "min_ms": round(min(xs), 4),
            "max_ms": round(max(xs), 4), "mean_ms": round(sum(xs) / len(xs), 4),
            "samples_ms": [round(x, 4) for x in xs]}


# ----------------------------------------------------------------------------- profiling
def kernel_summary(prof, nsteps, last_n=None):
    """Kernel sum, busy (union) and span per step from a CUDA-activity profile.

    GPU activities (kernel, memcpy, memset) from the Kineto trace; with last_n, only the last
    last_n activities by start time (drops any of earlier steps caught at profiler start)."""
    ks = []
    n_all = 0
    for e in _trace_events(prof):
        if not isinstance(e, dict) or e.get("ph") != "X":
            continue
        cat = str(e.get("cat", "")).lower()
        if cat not in ("kernel", "gpu_memcpy", "gpu_memset"):
            continue
        try:
            ks.append((float(e.get("ts", 0.0)), float(e.get("ts", 0.0)) + float(e.get("dur", 0.0)),
                       cat == "kernel"))
        except (TypeError, ValueError):
            continue
    n_all = len(ks)
    if not ks:
        return {"activities": 0}
    ks.sort()
    if last_n is not None and 0 < last_n < len(ks):
        ks = ks[-last_n:]
    ksum = sum(b - a for a, b, k in ks if k)
    asum = sum(b - a for a, b, _ in ks)
    busy, span = union_span(ks)
    return {"steps": nsteps, "activities_in_trace": n_all, "activities_used": len(ks),
            "kernels": sum(1 for x in ks if x[2]),
            "kernel_sum_ms_per_step": round(ksum / 1e3 / nsteps, 4),
            "activity_sum_ms_per_step": round(asum / 1e3 / nsteps, 4),
            "gpu_busy_ms_per_step": round(busy / 1e3 / nsteps, 4),
            "gpu_span_ms_per_step": round(span / 1e3 / nsteps, 4)}


# ----------------------------------------------------------------------------- one model
def run_model(torch, nn, F, cfg, sampler, T0):
    name, L, d, H, V, T, B = cfg
    log("%s: build" % name)
    model, opt, idx, tgt, step = training_step(torch, nn, F, cfg)

    for _ in range(WARMUP):
        step()
    torch.cuda.synchronize()
    phases = {}

    def rel(t):
        return round(t - T0, 4)

    def phase(pname, t0, t1, extra):
        st = sample_stats(sampler.samples, t0, t1)
        st["t0_s"] = rel(t0)
        st.update(extra)
        phases[pname] = st
        sm = st.get("sm_mhz", {}).get("median")
        pw = st.get("power_w", {}).get("median")
        tm = extra.get("step_ms", extra.get("gemm_ms", {})).get("median_ms")
        log("%s %-14s SM %s MHz  %s W  time %s ms  samples %d  powercap %s thermal %s"
            % (name, pname, sm, pw, tm, st["samples"], st.get("n_power_cap"),
               st.get("n_thermal")))

    # idle
    t0 = time.perf_counter()
    time.sleep(1.0)
    phase("idle", t0, time.perf_counter(), {})

    # A steady
    ev = [torch.cuda.Event(enable_timing=True) for _ in range(STEADY + 1)]
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    ev[0].record()
    for i in range(STEADY):
        step()
        ev[i + 1].record()
    ti = time.perf_counter()
    torch.cuda.synchronize()
    t1 = time.perf_counter()
    st = [ev[i].elapsed_time(ev[i + 1]) for i in range(STEADY)]
    phase("steady", t0, t1, {"step_ms": time_stats_ms(st),
                             "total_ms_per_step": round(ev[0].elapsed_time(ev[-1]) / STEADY, 4),
                             "wall_ms_per_step": round((t1 - t0) * 1e3 / STEADY, 4),
                             "host_issue_ms_per_step": round((ti - t0) * 1e3 / STEADY, 4)})

    # B per_call
    st, wall = [], []
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(PER_CALL):
        e0 = torch.cuda.Event(enable_timing=True)
        e1 = torch.cuda.Event(enable_timing=True)
        torch.cuda.synchronize()
        w0 = time.perf_counter()
        e0.record()
        step()
        e1.record()
        torch.cuda.synchronize()
        wall.append((time.perf_counter() - w0) * 1e3)
        st.append(e0.elapsed_time(e1))
    t1 = time.perf_counter()
    phase("per_call", t0, t1, {"step_ms": time_stats_ms(st), "wall_ms": time_stats_ms(wall)})

    # C profiled (each step synchronised)
    from torch.profiler import ProfilerActivity, profile
    torch.cuda.synchronize()
    st = []
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(PROFILED):
            e0 = torch.cuda.Event(enable_timing=True)
            e1 = torch.cuda.Event(enable_timing=True)
            torch.cuda.synchronize()
            e0.record()
            step()
            e1.record()
            torch.cuda.synchronize()
            st.append(e0.elapsed_time(e1))
        t1 = time.perf_counter()
    kp = kernel_summary(prof, PROFILED)
    phase("profiled", t0, t1, {"step_ms": time_stats_ms(st), "kernels": kp})
    per_step = kp.get("activities_in_trace", 0) // PROFILED

    # C' profiled_hot: profile the tail of a back-to-back loop
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(HOT_PRE):
        step()
    ta = time.perf_counter()
    ev = [torch.cuda.Event(enable_timing=True) for _ in range(HOT_PROF + 1)]
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        ev[0].record()
        for i in range(HOT_PROF):
            step()
            ev[i + 1].record()
        torch.cuda.synchronize()
    t1 = time.perf_counter()
    st = [ev[i].elapsed_time(ev[i + 1]) for i in range(HOT_PROF)]
    phase("profiled_hot", t0, t1, {"step_ms": time_stats_ms(st),
                                   "kernels": kernel_summary(prof, HOT_PROF, last_n=per_step * HOT_PROF),
                                   "profiled_window_t0_s": rel(ta),
                                   "profiled_window": sample_stats(sampler.samples, ta, t1)})

    loss_val = float(step().item())
    del opt, model, idx, tgt
    gc.collect()
    torch.cuda.empty_cache()

    # D gemm_sustained
    n = GEMM_N
    a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    c = torch.empty(n, n, device="cuda", dtype=torch.bfloat16)
    for _ in range(3):
        torch.matmul(a, b, out=c)
    torch.cuda.synchronize()
    G = 10
    per = []
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < GEMM_S:
        e0 = torch.cuda.Event(enable_timing=True)
        e1 = torch.cuda.Event(enable_timing=True)
        e0.record()
        for _ in range(G):
            torch.matmul(a, b, out=c)
        e1.record()
        e1.synchronize()
        per.append(e0.elapsed_time(e1) / G)
    t1 = time.perf_counter()
    fl = 2.0 * n ** 3
    gs = time_stats_ms(per)
    gs.pop("samples_ms", None)
    first_s = per[: max(1, len(per) // 10)]
    last_s = per[-max(1, len(per) // 10):]
    phase("gemm_sustained", t0, t1, {
        "gemm_ms": gs, "gemms": len(per) * G,
        "tflops_median": round(fl / (gs["median_ms"] * 1e-3) / 1e12, 1),
        "first_tenth_ms": round(percentile(first_s, 50), 4),
        "last_tenth_ms": round(percentile(last_s, 50), 4)})

    # D' gemm_cool
    time.sleep(COOL_SLEEP_S)
    e0 = torch.cuda.Event(enable_timing=True)
    e1 = torch.cuda.Event(enable_timing=True)
    t0 = time.perf_counter()
    e0.record()
    torch.matmul(a, b, out=c)
    e1.record()
    e1.synchronize()
    t1 = time.perf_counter()
    ms = e0.elapsed_time(e1)
    phase("gemm_cool", t0 - 0.005, t1 + 0.02, {
        "gemm_ms": time_stats_ms([ms]), "tflops": round(fl / (ms * 1e-3) / 1e12, 1),
        "idle_before": sample_stats(sampler.samples, t0 - COOL_SLEEP_S, t0)})
    del a, b, c
    gc.collect()
    torch.cuda.empty_cache()

    # derived
    g = {}
    try:
        sA = phases["steady"]["sm_mhz"]["median"]
        for k in ("per_call", "profiled", "profiled_hot"):
            sk = phases[k]["sm_mhz"]["median"]
            g["sm_mhz_ratio_%s_over_steady" % k] = round(sk / sA, 4)
        ksum = phases["profiled"]["kernels"]["kernel_sum_ms_per_step"]
        khot = phases["profiled_hot"]["kernels"]["kernel_sum_ms_per_step"]
        g["kernel_sum_profiled_ms"] = ksum
        g["kernel_sum_profiled_hot_ms"] = khot
        g["kernel_sum_hot_over_cool"] = round(khot / ksum, 4)
        g["steady_step_minus_kernel_sum_ms"] = round(phases["steady"]["step_ms"]["median_ms"] - ksum, 3)
        g["per_call_step_minus_kernel_sum_ms"] = round(
            phases["per_call"]["step_ms"]["median_ms"] - ksum, 3)
        g["per_call_step_minus_hot_kernel_sum_ms"] = round(
            phases["per_call"]["step_ms"]["median_ms"] - khot, 3)
    except Exception as e:  # noqa: BLE001
        g["error"] = repr(e)
    return {"model": name, "layers": L, "d_model": d, "heads": H, "vocab": V, "seq": T,
            "micro_batch": B, "loss_after": loss_val, "phases": phases, "derived": g}


def write_atomic(path, doc):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1, default=lambda o: repr(o))
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="clock_probe.json")
    ap.add_argument("--models", default=",".join(c[0] for c in CONFIGS))
    args = ap.parse_args()
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    want = args.models.split(",")
    T0 = time.perf_counter()
    doc = {"schema": SCHEMA,
           "generated_by": {"tool": "validate/e2e/clock_probe.py",
                            "command": shlex.join(["python3"] + sys.argv), "date": utc_iso()},
           "status": "running", "models": [], "errors": []}
    log("clock_probe: import torch")
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    sampler = Sampler()
    sampler.start()
    time.sleep(0.3)
    doc["sampler"] = {"source": sampler.source, "period_s": SAMPLE_S,
                      "reason_bits": {"power_cap": "0x%x" % POWER_BITS,
                                      "thermal": "0x%x" % THERMAL_BITS,
                                      "hw_slowdown": "0x%x" % R_HW_SLOW, "idle": "0x%x" % R_IDLE}}
    p = torch.cuda.get_device_properties(0)
    doc["device"] = {"name": p.name, "sm_count": p.multi_processor_count,
                     "cc": "%d.%d" % (p.major, p.minor), "torch": torch.__version__,
                     "cuda_runtime": torch.version.cuda, "python": sys.version.split()[0],
                     "nvml": sampler.info}
    try:
        q = "driver_version,power.limit,power.max_limit,clocks.max.sm,clocks.max.mem,clocks.applications.graphics"
        r = subprocess.run(["nvidia-smi", "--query-gpu=" + q, "--format=csv,noheader,nounits"],
                           capture_output=True, text=True, timeout=15)
        doc["device"]["nvidia_smi"] = dict(zip(q.split(","), [v.strip() for v in r.stdout.strip().split(",")]))
    except Exception as e:  # noqa: BLE001
        doc["device"]["nvidia_smi"] = {"error": repr(e)}
    log("clock_probe: %s torch %s cuda %s sampler %s (%d samples in 0.3 s) %s"
        % (p.name, torch.__version__, torch.version.cuda, sampler.source, len(sampler.samples),
           json.dumps(sampler.info)))
    write_atomic(args.out, doc)
    for cfg in CONFIGS:
        if cfg[0] not in want:
            continue
        try:
            doc["models"].append(run_model(torch, nn, F, cfg, sampler, T0))
        except Exception as e:  # noqa: BLE001
            import traceback
            log("ERROR %s: %r" % (cfg[0], e))
            traceback.print_exc()
            doc["errors"].append({"model": cfg[0], "error": repr(e),
                                  "traceback": traceback.format_exc()[-3000:]})
        doc["samples_columns"] = ["t_s", "sm_mhz", "mem_mhz", "power_w", "temp_c", "reasons"]
        doc["samples"] = [[round(s[0] - T0, 4), s[1], s[2], round(s[3], 1), s[4], s[5]]
                          for s in list(sampler.samples)]
        write_atomic(args.out, doc)
    sampler.stop()
    doc["samples"] = [[round(s[0] - T0, 4), s[1], s[2], round(s[3], 1), s[4], s[5]]
                      for s in list(sampler.samples)]
    doc["status"] = "done"
    doc["generated_by"]["finished"] = utc_iso()
    write_atomic(args.out, doc)
    # summary table
    print("\nmodel         phase           SM_MHz(p10-p90)     W(med)  temp  pcap thrm  time_ms")
    for m in doc["models"]:
        for k, ph in m["phases"].items():
            sm = ph.get("sm_mhz", {})
            tm = ph.get("step_ms", ph.get("gemm_ms", {})).get("median_ms")
            print("%-13s %-15s %5s (%5s-%5s)  %6s  %4s  %4s %4s  %s"
                  % (m["model"], k, sm.get("median"), sm.get("p10"), sm.get("p90"),
                     ph.get("power_w", {}).get("median"), ph.get("temp_c", {}).get("median"),
                     ph.get("n_power_cap"), ph.get("n_thermal"), tm))
        print("%-13s derived %s" % (m["model"], json.dumps(m["derived"])))
    log("clock_probe: done (%d errors)" % len(doc["errors"]))


if __name__ == "__main__":
    main()
