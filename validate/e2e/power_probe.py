"""Ridge: SM clock and board power under sustained kernels of known activity (one GPU).

Question (issue 18, clocks and power): at what SM clock does each kind of kernel run once the
board's power cap binds, and what power does it draw at that clock? The answers fit Ridge's clock
model (models/clock_model.hpp): power = static + dynamic(activity) x (f / f_boost)^gamma,
clock = min(boost, the clock at which power meets the cap).

Each phase runs one kernel back to back for PHASE_S seconds, after COOL_S seconds of idle sleep,
with clock_probe.py's background sampler reading NVML (SM clock, memory clock, power, temperature,
clock-event reasons) every 10 ms. The phase is cut into windows of about WINDOW_S seconds, each
timed with CUDA events around its repetitions, so throughput and clock line up in time. Phases:
torch.matmul in bf16, fp16, tf32 and fp32 (TF32 off) at 8192^3 and bf16 at 4096^3, 16384^3 and a
skinny 64x8192x8192, torch._scaled_mm in fp8_e4m3 at 8192^3 (bf16 out), and a 2 GiB
device-to-device copy. Writes one JSON (schema ridge.power_probe/1).

Usage: python3 validate/e2e/power_probe.py --out OUT/power_probe.json
"""

import argparse
import json
import os
import shlex
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from clock_probe import Sampler, sample_stats  # noqa: E402
from e2e_common import log, percentile, utc_iso  # noqa: E402

SCHEMA = "ridge.power_probe/1"
PHASE_S = 2.5
COOL_S = 1.5
WINDOW_S = 0.05


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--phase-s", type=float, default=PHASE_S)
    args = ap.parse_args()
    import torch

    dev = torch.device("cuda")
    sampler = Sampler(0.010)
    sampler.start()
    T0 = time.perf_counter()
    doc = {"schema": SCHEMA,
           "generated_by": {"tool": "validate/e2e/power_probe.py",
                            "command": "python3 " + " ".join(shlex.quote(a) for a in sys.argv),
                            "date": utc_iso()},
           "device": {"torch": torch.__version__, "cuda": torch.version.cuda,
                      "cublas": str(torch.backends.cuda.preferred_blas_library()),
                      "name": torch.cuda.get_device_name(0),
                      "sampler": sampler.source, **sampler.info},
           "phases": []}
    log("power_probe: %s torch %s cuda %s sampler %s %s" % (
        doc["device"]["name"], torch.__version__, torch.version.cuda, sampler.source,
        json.dumps(sampler.info)))

    def gemm_case(m, n, k, dtype):
        g = torch.Generator(device=dev).manual_seed(1)
        if dtype == "fp8_e4m3":
            a = torch.randn(m, k, device=dev, generator=g).to(torch.float8_e4m3fn)
            b = torch.randn(n, k, device=dev, generator=g).to(torch.float8_e4m3fn).t()
            one = torch.tensor(1.0, device=dev)

            def f():
                return torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
        else:
            dt = {"bf16": torch.bfloat16, "fp16": torch.float16, "tf32": torch.float32,
                  "fp32": torch.float32}[dtype]
            a = torch.randn(m, k, device=dev, dtype=dt, generator=g)
            b = torch.randn(n, k, device=dev, dtype=dt, generator=g).t()
            out = torch.empty(m, n, device=dev, dtype=dt)

            def f():
                torch.backends.cuda.matmul.allow_tf32 = dtype == "tf32"
                return torch.matmul(a, b, out=out)
        return f, 2.0 * m * n * k, 0.0

    def copy_case(nbytes):
        src = torch.empty(nbytes, dtype=torch.uint8, device=dev).random_(0, 255)
        dst = torch.empty_like(src)

        def f():
            dst.copy_(src)
        return f, 0.0, 2.0 * nbytes

    cases = [
        ("idle", None),
        ("gemm bf16 8192", lambda: gemm_case(8192, 8192, 8192, "bf16")),
        ("gemm bf16 4096", lambda: gemm_case(4096, 4096, 4096, "bf16")),
        ("gemm bf16 16384", lambda: gemm_case(16384, 16384, 16384, "bf16")),
        ("gemm bf16 64x8192x8192", lambda: gemm_case(64, 8192, 8192, "bf16")),
        ("gemm fp16 8192", lambda: gemm_case(8192, 8192, 8192, "fp16")),
        ("gemm fp8_e4m3 8192", lambda: gemm_case(8192, 8192, 8192, "fp8_e4m3")),
        ("gemm tf32 8192", lambda: gemm_case(8192, 8192, 8192, "tf32")),
        ("gemm fp32 8192", lambda: gemm_case(8192, 8192, 8192, "fp32")),
        ("copy d2d 2GiB", lambda: copy_case(2 << 30)),
    ]
    for name, make in cases:
        torch.cuda.synchronize()
        time.sleep(COOL_S)
        if make is None:
            t0 = time.perf_counter()
            time.sleep(1.0)
            t1 = time.perf_counter()
            st = sample_stats(sampler.samples, t0, t1)
            st["t0_s"] = round(t0 - T0, 4)
            doc["phases"].append({"name": name, "samples": st})
            log("%-24s SM %s MHz %s W" % (name, st["sm_mhz"]["median"], st["power_w"]["median"]))
            continue
        f, flops, nbytes = make()
        f()
        torch.cuda.synchronize()
        # Repetitions per window from one timed call.
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        f()
        e1.record()
        torch.cuda.synchronize()
        one_s = e0.elapsed_time(e1) / 1e3
        reps = max(1, int(WINDOW_S / max(one_s, 1e-6)))
        windows = []
        t_start = time.perf_counter()
        while time.perf_counter() - t_start < args.phase_s:
            h0 = time.perf_counter()
            e0.record()
            for _ in range(reps):
                f()
            e1.record()
            e1.synchronize()
            h1 = time.perf_counter()
            per_rep = e0.elapsed_time(e1) / 1e3 / reps
            ss = [s for s in sampler.samples if h0 <= s[0] <= h1]
            windows.append({
                "t_s": round(h0 - t_start, 4), "per_rep_us": round(per_rep * 1e6, 3),
                "tflops": round(flops / per_rep / 1e12, 2) if flops else None,
                "gbps": round(nbytes / per_rep / 1e9, 1) if nbytes else None,
                "sm_mhz": percentile([s[1] for s in ss], 50) if ss else None,
                "power_w": percentile([s[3] for s in ss], 50) if ss else None,
                "samples": len(ss)})
        t_end = time.perf_counter()
        # Steady state: the last 60% of the phase (the power reading is a running average).
        cut = t_start + 0.4 * (t_end - t_start)
        st = sample_stats(sampler.samples, cut, t_end)
        st["t0_s"] = round(cut - T0, 4)
        first = sample_stats(sampler.samples, t_start, t_start + 0.1)
        steady_w = [w for w in windows if w["t_s"] >= 0.4 * (t_end - t_start)]
        per = percentile([w["per_rep_us"] for w in steady_w], 50)
        first_per = windows[0]["per_rep_us"]
        doc["phases"].append({
            "name": name, "flops": flops, "bytes": nbytes, "reps_per_window": reps,
            "steady": {"per_rep_us": per,
                       "tflops": round(flops / per / 1e6, 2) if flops else None,
                       "gbps": round(nbytes / per / 1e3, 1) if nbytes else None},
            "first_window": {"per_rep_us": first_per,
                             "tflops": round(flops / first_per / 1e6, 2) if flops else None,
                             "sm_mhz": windows[0]["sm_mhz"]},
            "samples": st, "first_100ms": first, "windows": windows})
        log("%-24s SM %s MHz (first window %s) %s W  %s us/rep  %s TFLOP/s %s GB/s  pcap %d" % (
            name, st["sm_mhz"]["median"], windows[0]["sm_mhz"], st["power_w"]["median"], per,
            doc["phases"][-1]["steady"]["tflops"], doc["phases"][-1]["steady"]["gbps"],
            st["n_power_cap"]))
        del f
        torch.cuda.empty_cache()
    sampler.stop()
    doc["generated_by"]["finished"] = utc_iso()
    tmp = args.out + ".tmp"
    with open(tmp, "w") as fh:
        json.dump(doc, fh, indent=1)
    os.replace(tmp, args.out)


if __name__ == "__main__":
    main()
