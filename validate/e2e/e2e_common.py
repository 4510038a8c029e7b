"""Shared helpers for the Ridge end-to-end PyTorch measurements (validate/e2e).

Pure-Python parts (stats, trace summary, record file) import no torch so they can be
checked on a machine without PyTorch. torch is imported lazily inside the functions
that need it.

Record schema: "ridge.records/1" (see validate/e2e/README.md).
"""

import datetime
import json
import math
import os
import shlex
import subprocess
import sys
import tempfile
import time
import traceback

SCHEMA = "ridge.records/1"
_T0 = time.perf_counter()


# ----------------------------------------------------------------------------- logging
def log(msg):
    """Print a progress line with UTC time and seconds since this process started."""
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%H:%M:%S")
    print("[%s +%6.1fs] %s" % (now, time.perf_counter() - _T0, msg), flush=True)


def utc_iso():
    return datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat().replace(
        "+00:00", "Z")


# ----------------------------------------------------------------------------- budget
class Budget:
    """Wall-clock budget for one script, counted from process start."""

    def __init__(self, seconds):
        self.seconds = float(seconds)

    def elapsed(self):
        return time.perf_counter() - _T0

    def left(self):
        return self.seconds - self.elapsed()

    def ok(self, need_s):
        return self.left() >= need_s


# ----------------------------------------------------------------------------- stats
def percentile(xs, p):
    """Linear-interpolated percentile, p in [0, 100]. xs need not be sorted."""
    if not xs:
        return None
    s = sorted(xs)
    k = (len(s) - 1) * (p / 100.0)
    f = int(math.floor(k))
    c = min(f + 1, len(s) - 1)
    return s[f] + (s[c] - s[f]) * (k - f)


def stats_us(xs_us, method="per_call", warmup=0):
    """Timing block of a record from a list of per-call times in microseconds.

    spread = (p90 - p10) / median (a relative, dimensionless width).
    """
    xs = [float(x) for x in xs_us if x is not None and math.isfinite(float(x))]
    if not xs:
        return {"method": method, "warmup": warmup, "reps": 0}
    med = percentile(xs, 50)
    p10 = percentile(xs, 10)
    p90 = percentile(xs, 90)
    return {
        "method": method,
        "warmup": warmup,
        "reps": len(xs),
        "median_us": round(med, 3),
        "min_us": round(min(xs), 3),
        "max_us": round(max(xs), 3),
        "mean_us": round(sum(xs) / len(xs), 3),
        "p10_us": round(p10, 3),
        "p90_us": round(p90, 3),
        "spread": round((p90 - p10) / med, 5) if med > 0 else None,
        "samples_us": [round(x, 3) for x in xs],
    }


# ----------------------------------------------------------------------------- trace summary
_GPU_CATS = ("kernel", "gpu_memcpy", "gpu_memset")


def union_span(intervals):
    """(length of the union, first start to last end) of (start, end, ...) tuples, sorted by start."""
    if not intervals:
        return 0.0, 0.0
    busy = 0.0
    cs, ce = intervals[0][0], intervals[0][1]
    for iv in intervals[1:]:
        s, t = iv[0], iv[1]
        if s > ce:
            busy += ce - cs
            cs, ce = s, t
        else:
            ce = max(ce, t)
    busy += ce - cs
    return busy, max(iv[1] for iv in intervals) - intervals[0][0]


def summarize_trace_events(events, top=40, name_max=400):
    """Summarise Kineto chrome-trace events (list of dicts) into the record's profile block.

    kernel_launches: number of 'kernel' events (GPU side).
    gpu_busy_us: length of the union of all kernel/memcpy/memset intervals.
    gpu_span_us: first GPU start to last GPU end.
    launch_api_calls: cuda_runtime/cuda_driver events whose name contains 'Launch'.
    """
    kern = {}
    n_kernels = 0
    kernel_us = 0.0
    memcpy = {"count": 0, "total_us": 0.0, "bytes": 0}
    memset = {"count": 0, "total_us": 0.0}
    intervals = []
    launch_api = {}
    sync_api_us = 0.0
    for e in events:
        if not isinstance(e, dict) or e.get("ph") != "X":
            continue
        cat = str(e.get("cat", "")).lower()
        name = str(e.get("name", ""))
        try:
            ts = float(e.get("ts", 0.0))
            dur = float(e.get("dur", 0.0))
        except (TypeError, ValueError):
            continue
        if cat in _GPU_CATS:
            intervals.append((ts, ts + dur))
        if cat == "kernel":
            n_kernels += 1
            kernel_us += dur
            k = kern.get(name)
            if k is None:
                args = e.get("args", {}) or {}
                k = {"name": name[:name_max], "count": 0, "total_us": 0.0,
                     "grid": args.get("grid"), "block": args.get("block"),
                     "registers_per_thread": args.get("registers per thread"),
                     "shared_memory": args.get("shared memory")}
                kern[name] = k
            k["count"] += 1
            k["total_us"] += dur
        elif cat == "gpu_memcpy":
            memcpy["count"] += 1
            memcpy["total_us"] += dur
            try:
                memcpy["bytes"] += int((e.get("args", {}) or {}).get("bytes", 0))
            except (TypeError, ValueError):
                pass
        elif cat == "gpu_memset":
            memset["count"] += 1
            memset["total_us"] += dur
        elif cat in ("cuda_runtime", "cuda_driver"):
            if "Launch" in name or "GraphLaunch" in name:
                launch_api[name] = launch_api.get(name, 0) + 1
            if "Synchronize" in name:
                sync_api_us += dur
    intervals.sort()
    busy, span = union_span(intervals)
    klist = sorted(kern.values(), key=lambda k: -k["total_us"])
    for k in klist:
        k["total_us"] = round(k["total_us"], 3)
        k["mean_us"] = round(k["total_us"] / k["count"], 3) if k["count"] else None
    memcpy["total_us"] = round(memcpy["total_us"], 3)
    memset["total_us"] = round(memset["total_us"], 3)
    return {
        "kernel_launches": n_kernels,
        "distinct_kernels": len(klist),
        "kernel_time_us": round(kernel_us, 3),
        "gpu_busy_us": round(busy, 3),
        "gpu_span_us": round(span, 3),
        "memcpy": memcpy,
        "memset": memset,
        "launch_api_calls": sum(launch_api.values()),
        "launch_api_by_name": launch_api,
        "sync_api_us": round(sync_api_us, 3),
        "kernels_top": top,
        "kernels": klist[:top],
        "kernels_other_us": round(sum(k["total_us"] for k in klist[top:]), 3),
    }


def cuda_kernel_names(fn, name_max=160):
    """Names of the GPU activities (kernels, memcpy, memset) of one call of fn, in order, from a
    CUDA-only profile (no CPU op tracing)."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    return [e.name[:name_max] for e in prof.events()
            if str(getattr(e, "device_type", "")).endswith("CUDA")]


def _trace_events(prof):
    """The profiler's Kineto events as a list of chrome-trace dicts."""
    fd, path = tempfile.mkstemp(prefix="ridge_e2e_trace_", suffix=".json")
    os.close(fd)
    try:
        prof.export_chrome_trace(path)
        with open(path, "r") as f:
            trace = json.load(f)
    finally:
        try:
            os.remove(path)
        except OSError:
            pass
    return trace.get("traceEvents", []) if isinstance(trace, dict) else trace


def timeline_of(events):
    """Compact per-kernel timeline of one profiled call (schema ridge.e2e_timeline/1).

    kernels: one row per GPU kernel/memcpy/memset in GPU start order,
      [name_id, gpu_ts_us, gpu_dur_us, launch_ts_us, launch_dur_us, op_id, grid, block]
      where launch_* is the correlated runtime/driver API call (-1 when absent) and op_id
      indexes `ops` (the top-level CPU op on the launching thread enclosing the launch, -1 if none).
    ops: every top-level CPU op (not nested in another CPU op of its thread), start order,
      [name_id, ts_us, dur_us, thread_index, kernel_count].
    Times are relative to the first top-level op or kernel, in microseconds.
    """
    names, name_ix = [], {}

    def nid(n):
        n = str(n)[:300]
        if n not in name_ix:
            name_ix[n] = len(names)
            names.append(n)
        return name_ix[n]

    gpu, api, cpu = [], {}, []
    for e in events:
        if not isinstance(e, dict) or e.get("ph") != "X":
            continue
        cat = str(e.get("cat", "")).lower()
        a = e.get("args", {}) or {}
        try:
            ts, dur = float(e.get("ts", 0.0)), float(e.get("dur", 0.0))
        except (TypeError, ValueError):
            continue
        if cat in _GPU_CATS:
            gpu.append((ts, dur, e.get("name", ""), a.get("correlation"), a.get("grid"),
                        a.get("block")))
        elif cat in ("cuda_runtime", "cuda_driver"):
            c = a.get("correlation")
            if c is not None:
                api[c] = (ts, dur, e.get("tid"))
        elif cat == "cpu_op":
            cpu.append((ts, dur, e.get("name", ""), e.get("tid")))
    # top-level CPU ops per thread
    cpu.sort(key=lambda x: (str(x[3]), x[0], -x[1]))
    top = []
    last_end = {}
    for ts, dur, n, tid in cpu:
        if ts >= last_end.get(tid, -1e300):
            top.append([ts, dur, n, tid, 0])
            last_end[tid] = ts + dur
    top.sort(key=lambda x: x[0])
    tids = sorted({str(t[3]) for t in top})
    tix = {t: i for i, t in enumerate(tids)}
    by_tid = {}
    for i, t in enumerate(top):
        by_tid.setdefault(str(t[3]), []).append(i)
    import bisect
    starts = {k: [top[i][0] for i in v] for k, v in by_tid.items()}
    gpu.sort(key=lambda x: x[0])
    t0 = min([g[0] for g in gpu] + [t[0] for t in top]) if (gpu or top) else 0.0
    rows = []
    for ts, dur, n, corr, grid, block in gpu:
        lts, ldur, op = -1.0, -1.0, -1
        if corr in api:
            lts, ldur, ltid = api[corr]
            k = str(ltid)
            if k in starts:
                j = bisect.bisect_right(starts[k], lts) - 1
                if j >= 0:
                    i = by_tid[k][j]
                    if top[i][0] + top[i][1] >= lts:
                        op = i
                        top[i][4] += 1
            lts = round(lts - t0, 3)
        rows.append([nid(n), round(ts - t0, 3), round(dur, 3), lts, round(ldur, 3), op,
                     grid, block])
    ops = [[nid(t[2]), round(t[0] - t0, 3), round(t[1], 3), tix[str(t[3])], t[4]] for t in top]
    return {"schema": "ridge.e2e_timeline/1", "names": names, "threads": tids,
            "kernel_columns": ["name", "gpu_ts_us", "gpu_dur_us", "launch_ts_us",
                               "launch_dur_us", "op", "grid", "block"],
            "op_columns": ["name", "ts_us", "dur_us", "thread", "kernels"],
            "kernels": rows, "ops": ops}


def _write_timeline(name, doc):
    import gzip

    d = os.environ.get("RIDGE_E2E_TIMELINE_DIR")
    if not d or not name:
        return
    os.makedirs(d, exist_ok=True)
    fn = os.path.join(d, name.replace("/", "_").strip("_") + ".json.gz")
    with gzip.open(fn, "wt") as f:
        json.dump(doc, f, separators=(",", ":"))
    log("timeline written: %s (%d kernels)" % (fn, len(doc.get("light", doc)["kernels"])))


def profile_fn(fn, top=40, name=None):
    """Run fn() once under torch.profiler (CPU+CUDA activities) and summarise its kernels.

    Also returns wall_us of the profiled call (synchronised, inflated by the profiler).
    With RIDGE_E2E_TIMELINE_DIR set and a case `name`, also writes that call's compact timeline
    (timeline_of) and, from a second call profiled with CUDA activity only (runtime API and
    kernels, no CPU op tracing: less host inflation), a `light` timeline, to
    DIR/<name>.json.gz.
    """
    import torch
    from torch.profiler import ProfilerActivity, profile

    light = None
    if os.environ.get("RIDGE_E2E_TIMELINE_DIR") and name:
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as lprof:
            torch.cuda.synchronize()
            l0 = time.perf_counter()
            fn()
            torch.cuda.synchronize()
            l1 = time.perf_counter()
        light = timeline_of(_trace_events(lprof))
        light["wall_us_profiled"] = round((l1 - l0) * 1e6, 3)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        t1 = time.perf_counter()
    events = _trace_events(prof)
    if light is not None:
        full = timeline_of(events)
        full["wall_us_profiled"] = round((t1 - t0) * 1e6, 3)
        _write_timeline(name, {"schema": "ridge.e2e_timeline/1", "case": name, "full": full,
                               "light": light})
    summ = summarize_trace_events(events, top=top)
    summ["wall_us_profiled"] = round((t1 - t0) * 1e6, 3)
    summ["activities"] = ["CPU", "CUDA"]
    return summ


# ----------------------------------------------------------------------------- timing
# A torch.profiler session (CPU + CUDA activities) leaves every later eager call of the process
# slower on the host: ~28% on the e2e models (host_interleave.py --profile-between,
# validate/data/h200/host/interleave_profile.json). Records made since then say so in
# environment.profiles; the earlier runs timed some cases after a profile (validate/e2e/README.md).
PROFILES_AFTER_TIMING = "after all timing"

# A fixed piece of pure-Python work, timed around every timed call: the host's Python speed at
# that moment. host_stall_probe.py found host-bound steps taking 2x the main thread's CPU time in
# bursts of 0.1-0.4 s with no GC, page faults or descheduling; a step whose probe ran far above the
# run's fastest probe was issued by a slowed host CPU.
CPU_PROBE_N = 4000
CPU_PROBE_WORK = "s += i * i for i in range(%d), pure Python, timed with perf_counter" % CPU_PROBE_N


def cpu_probe_us():
    t0 = time.perf_counter()
    s = 0
    for i in range(CPU_PROBE_N):
        s += i * i
    return (time.perf_counter() - t0) * 1e6


# The host-speed retry (RIDGE_E2E_RETRY_SLOW_HOST=N, off by default; validate/prereg/e2e4): a case
# whose timed calls have fewer than NOMINAL_MIN_STEPS at nominal host speed (CPU probe <= 1.25 x
# the fastest probe this process has seen, the rule `ridge run --e2e-table` compares by) is timed
# again, up to N more times, after a pause; the attempt with the most nominal calls is kept (the
# latest of equals) and every attempt is listed in the record's cpu_probe.attempts.
NOMINAL_FACTOR = 1.25
NOMINAL_MIN_STEPS = 3
RETRY_PAUSE_S = 2.0
_fastest_probe = [float("inf")]
# The scripts of one run_all.sh run share the fastest probe through this file (the run's fastest is
# what `ridge run --e2e-table` compares against), so a script that starts on a slow host still
# knows what nominal is.
_PROBE_FILE_ENV = "RIDGE_E2E_FASTEST_PROBE_FILE"


def _load_fastest():
    path = os.environ.get(_PROBE_FILE_ENV)
    if path and os.path.exists(path):
        try:
            with open(path) as f:
                _fastest_probe[0] = min(_fastest_probe[0], float(f.read().strip()))
        except (OSError, ValueError):
            pass
    if _fastest_probe[0] == float("inf"):
        _fastest_probe[0] = min(cpu_probe_us() for _ in range(200))


def _save_fastest():
    path = os.environ.get(_PROBE_FILE_ENV)
    if path:
        with open(path, "w") as f:
            f.write("%.3f\n" % _fastest_probe[0])


def _nominal_count(probes):
    return sum(1 for p in probes if p <= NOMINAL_FACTOR * _fastest_probe[0])


def time_calls(fn, warmup, reps, budget=None, min_left_s=3.0):
    """Time fn() per call: CUDA events around each call plus synchronised perf_counter wall.

    Returns (event_us list, wall_us list). Stops early (keeping what it has) when the
    budget runs low. Also leaves in time_calls.last_issue_us the host issue time of each call
    (perf_counter from before the call to its return, before any synchronisation): a host-bound
    call's issue time is close to its event time, a GPU-bound call's is shorter. And in
    time_calls.last_probe_us, per call, the larger of cpu_probe_us() just before and just after it.
    With RIDGE_E2E_RETRY_SLOW_HOST set, the host-speed retry above.
    """
    retries = int(os.environ.get("RIDGE_E2E_RETRY_SLOW_HOST", "0") or 0)
    attempts = []
    kept = None
    if retries > 0:
        _load_fastest()
    for attempt in range(retries + 1):
        t0 = time.perf_counter()
        got = _time_calls_once(fn, warmup if attempt == 0 else 1, reps, budget, min_left_s)
        probes = got[3]
        _fastest_probe[0] = min([_fastest_probe[0]] + probes)
        nominal = _nominal_count(probes)
        attempts.append({"calls": len(probes), "nominal": nominal,
                         "probe_median_us": round(sorted(probes)[len(probes) // 2], 3)
                         if probes else None})
        if kept is None or nominal >= _nominal_count(kept[3]):
            kept = got
        took = time.perf_counter() - t0
        if _nominal_count(kept[3]) >= NOMINAL_MIN_STEPS or attempt == retries:
            break
        if budget is not None and not budget.ok(min_left_s + RETRY_PAUSE_S + took):
            break
        log("  host slow (%d of %d calls at nominal speed, probe median %.0f us, fastest %.0f):"
            " timing again" % (nominal, len(probes), attempts[-1]["probe_median_us"] or 0,
                               _fastest_probe[0]))
        time.sleep(RETRY_PAUSE_S)
    if retries > 0:
        _save_fastest()
    ev_us, wall_us, issue_us, probe_us = kept
    time_calls.last_issue_us = issue_us
    time_calls.last_probe_us = probe_us
    time_calls.last_attempts = attempts if retries > 0 else None
    return ev_us, wall_us


def _time_calls_once(fn, warmup, reps, budget, min_left_s):
    import torch

    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    ev_us, wall_us, issue_us, probe_us = [], [], [], []
    for _ in range(reps):
        if budget is not None and not budget.ok(min_left_s) and len(ev_us) >= 3:
            log("  budget low: stopping after %d reps" % len(ev_us))
            break
        ev, wall, issue, probe = time_one_call(fn)
        ev_us.append(ev)
        wall_us.append(wall)
        issue_us.append(issue)
        probe_us.append(probe)
    return ev_us, wall_us, issue_us, probe_us


def time_one_call(fn):
    """One timed call, as time_calls times each: synchronize, CPU probe, CUDA events around fn(),
    synchronize, probe. Returns (event us, synchronised wall us, host issue us, the larger probe)."""
    import torch

    e0 = torch.cuda.Event(enable_timing=True)
    e1 = torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    before = cpu_probe_us()
    t0 = time.perf_counter()
    e0.record()
    fn()
    ti = time.perf_counter()
    e1.record()
    torch.cuda.synchronize()
    t1 = time.perf_counter()
    after = cpu_probe_us()
    return (e0.elapsed_time(e1) * 1e3, (t1 - t0) * 1e6, (ti - t0) * 1e6, max(before, after))


time_calls.last_issue_us = []
time_calls.last_probe_us = []
time_calls.last_attempts = None


def issue_stats(warmup):
    """Timing block of the host issue times of the last time_calls()."""
    return stats_us(time_calls.last_issue_us, "host_issue", warmup)


def probe_stats():
    """The CPU probe of each call of the last time_calls(), in call order (as timing.samples_us)."""
    out = {"method": "cpu_probe", "work": CPU_PROBE_WORK,
           "samples_us": [round(x, 3) for x in time_calls.last_probe_us]}
    if time_calls.last_attempts is not None:
        out["attempts"] = time_calls.last_attempts
        out["nominal_rule"] = "probe <= %.2f x the fastest probe seen so far; retry below %d" % (
            NOMINAL_FACTOR, NOMINAL_MIN_STEPS)
    return out


def time_back_to_back(fn, n):
    """Wall time per call of n calls issued back to back with one sync at the end (us)."""
    import torch

    torch.cuda.synchronize()
    e0 = torch.cuda.Event(enable_timing=True)
    e1 = torch.cuda.Event(enable_timing=True)
    t0 = time.perf_counter()
    e0.record()
    for _ in range(n):
        fn()
    e1.record()
    torch.cuda.synchronize()
    t1 = time.perf_counter()
    return {"calls": n, "wall_us_per_call": round((t1 - t0) * 1e6 / n, 3),
            "event_us_per_call": round(e0.elapsed_time(e1) * 1e3 / n, 3)}


# ----------------------------------------------------------------------------- device facts
def _nvidia_smi():
    q = "name,driver_version,clocks.sm,clocks.mem,clocks.max.sm,clocks.max.mem,power.limit"
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=" + q, "--format=csv,noheader,nounits"],
            capture_output=True, text=True, timeout=15)
        line = out.stdout.strip().splitlines()[0] if out.stdout.strip() else ""
        vals = [v.strip() for v in line.split(",")]
        keys = q.split(",")
        d = dict(zip(keys, vals))
        d["_raw"] = line
        return d
    except Exception as e:  # noqa: BLE001
        return {"_error": repr(e)}


def _num(s):
    try:
        return float(s)
    except (TypeError, ValueError):
        return None


def device_info():
    import torch

    info = {}
    try:
        p = torch.cuda.get_device_properties(0)
        info.update({
            "name": p.name,
            "sm_count": p.multi_processor_count,
            "cc": "%d.%d" % (p.major, p.minor),
            "total_memory_bytes": int(p.total_memory),
            "l2_cache_bytes": int(getattr(p, "L2_cache_size", 0) or 0) or None,
        })
    except Exception as e:  # noqa: BLE001
        info["props_error"] = repr(e)
    smi = _nvidia_smi()
    info["driver"] = smi.get("driver_version")
    info["cuda_runtime"] = torch.version.cuda
    info["torch"] = torch.__version__
    try:
        info["cudnn"] = str(torch.backends.cudnn.version())
    except Exception:  # noqa: BLE001
        info["cudnn"] = None
    info["clocks"] = {"sm_mhz": _num(smi.get("clocks.sm")), "mem_mhz": _num(smi.get("clocks.mem")),
                      "max_sm_mhz": _num(smi.get("clocks.max.sm")),
                      "max_mem_mhz": _num(smi.get("clocks.max.mem"))}
    info["power_limit_w"] = _num(smi.get("power.limit"))
    info["nvidia_smi"] = smi
    info["python"] = sys.version.split()[0]
    return info


def torch_env():
    import torch

    env = {}
    for k, f in [
        ("matmul_allow_tf32", lambda: torch.backends.cuda.matmul.allow_tf32),
        ("cudnn_allow_tf32", lambda: torch.backends.cudnn.allow_tf32),
        ("cudnn_benchmark", lambda: torch.backends.cudnn.benchmark),
        ("bf16_reduced_precision_reduction",
         lambda: torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction),
        ("sdp_flash_enabled", lambda: torch.backends.cuda.flash_sdp_enabled()),
        ("sdp_mem_efficient_enabled", lambda: torch.backends.cuda.mem_efficient_sdp_enabled()),
        ("sdp_math_enabled", lambda: torch.backends.cuda.math_sdp_enabled()),
        ("sdp_cudnn_enabled", lambda: torch.backends.cuda.cudnn_sdp_enabled()),
    ]:
        try:
            env[k] = f()
        except Exception as e:  # noqa: BLE001
            env[k] = "unavailable: %r" % (e,)
    env["PYTORCH_CUDA_ALLOC_CONF"] = os.environ.get("PYTORCH_CUDA_ALLOC_CONF")
    env["CUDA_LAUNCH_BLOCKING"] = os.environ.get("CUDA_LAUNCH_BLOCKING")
    return env


# ----------------------------------------------------------------------------- output file
class RecordFile:
    """One ridge.records/1 JSON document, rewritten atomically after every change."""

    def __init__(self, path, tool):
        self.path = path
        self.doc = {
            "schema": SCHEMA,
            "generated_by": {"tool": tool, "command": shlex.join(["python3"] + sys.argv),
                             "date": utc_iso()},
            "device": {},
            "environment": {},
            "status": "running",
            "records": [],
            "errors": [],
            "skipped": [],
        }
        d = os.path.dirname(os.path.abspath(path))
        os.makedirs(d, exist_ok=True)
        self.write()

    def add(self, rec):
        self.doc["records"].append(rec)
        self.write()

    def error(self, case, exc):
        tb = traceback.format_exc()
        log("ERROR in %s: %r" % (case, exc))
        sys.stdout.write(tb[-3000:])
        sys.stdout.flush()
        self.doc["errors"].append({"case": case, "error": repr(exc)[:2000], "traceback": tb[-4000:]})
        self.write()

    def skip(self, case, why):
        log("SKIP %s: %s" % (case, why))
        self.doc["skipped"].append({"case": case, "why": why})
        self.write()

    def finish(self, status="done"):
        self.doc["status"] = status
        self.doc["generated_by"]["finished"] = utc_iso()
        self.write()

    def write(self):
        tmp = self.path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(self.doc, f, indent=1, default=_json_default)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.path)


def _json_default(o):
    try:
        return float(o)
    except Exception:  # noqa: BLE001
        return repr(o)


def start_run(out, script, e2e=True):
    """Imports torch, logs its version and writes the device facts and the environment into the
    record file `out` (with e2e=True also environment.profiles: see PROFILES_AFTER_TIMING).
    Returns (torch, torch.nn, torch.nn.functional)."""
    log("%s: import torch" % script)
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    log("%s: torch %s cuda %s" % (script, torch.__version__, torch.version.cuda))
    try:
        out.doc["device"] = device_info()
        out.doc["environment"] = torch_env()
        if e2e:
            # Every case is timed before the first torch.profiler session of the process, which
            # leaves later host work ~28% slower (host_interleave.py --profile-between).
            out.doc["environment"]["profiles"] = PROFILES_AFTER_TIMING
        out.write()
    except Exception as e:  # noqa: BLE001
        out.error("device_info", e)
    return torch, nn, F


def parse_common_args(argv, default_out, default_budget):
    import argparse

    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=default_out, help="output JSON path")
    ap.add_argument("--budget", type=float, default=default_budget,
                    help="seconds this script may use; remaining cases are skipped after it")
    ap.add_argument("--top", type=int, default=40, help="kernels kept per profile")
    ap.add_argument("--no-profile", action="store_true")
    return ap.parse_args(argv)
