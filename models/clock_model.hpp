// The SM clock a kernel runs at under the board's power cap, and the time that costs.
//
// Captures: board power = static + dynamic, the dynamic part the kernel's energy per unit of work
// (tensor FLOPs by precision, FP32/FP64/SFU operations, HBM bytes) times its rate. When that
// power would exceed the cap at the boost clock the GPU lowers the SM clock until it meets the
// cap: the kernel then takes t = E / (cap - static), its energy over the headroom (a "power
// roof" beside the compute and memory roofs), and runs at boost x t_boost / t. Energy per
// operation is held constant over the clock (no voltage-frequency curve: see Ignores).
// Sources: the parameters are direct measurements on the lent H200
// (validate/data/h200/power/power_probe.json, made by validate/e2e/power_probe.py: each kernel
// back to back for 2.5 s, NVML sampled every 10 ms, steady state = the last 60%): static 120.8 W
// (idle at 1980 MHz), HBM 128 pJ/B (2 GiB d2d copy, 4.27 TB/s at 667 W, unthrottled), tensor
// 0.80 pJ/FLOP bf16 (8192^3 at 672 TFLOP/s, 691 W, capped), 0.43 fp8, 1.55 tf32, FP32 SIMT 11.3
// (SGEMM 50.6 TFLOP/s at 698 W), each less the HBM power of its minimum traffic. Cap 700 W
// (nvidia-smi -q: Current Power Limit).
// Ignores: the voltage-frequency curve (energy per operation falls at lower clocks as V^2; the
// measurement cannot show it: NVML's 10 ms clock samples do not track throughput, e.g. 1980 MHz
// read while an 8192^3 bf16 GEMM ran at 788 TFLOP/s, 1470 MHz at 672), temperature (leakage), the
// power controller's time constant (the first ~0.1 s after idle run at boost), memory-clock
// changes, and kernels running side by side (each kernel is judged alone).
// Validation: validate/README.md ("Clocks and power"): the probe's sustained GEMMs and the
// extrapolation splits before and after.
#pragma once

#include "hw/gpu_spec.hpp"

namespace ridge::models {

/// The work of one kernel launch that draws dynamic power.
struct PowerDemand {
  double tensor_flops = 0;
  hw::Precision tensor_precision = hw::Precision::kBf16;
  double simt_ops = 0;   ///< FP32/FP64 FLOPs and SFU operations
  double hbm_bytes = 0;  ///< DRAM traffic
};

struct ClockLimit {
  double time_s = 0;       ///< max(time at boost, power-limited time)
  double sm_clock_hz = 0;  ///< the clock it runs at (boost unless power-bound)
  double power_w = 0;      ///< board power while it runs (0 when the GPU has no power model)
  bool power_bound = false;
};

/// Applies the power cap to a kernel that takes `boost_time_s` at the boost clock. A GPU whose
/// config sets no power_cap_w (0) has no power model: the time is returned unchanged.
ClockLimit power_limit(const hw::GpuSpec& gpu, const PowerDemand& d, double boost_time_s);

}  // namespace ridge::models
