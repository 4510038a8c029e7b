// The GPU kernel model: how long an op takes on a GPU, and why.
//
// Captures: the op's kernels from the op library (models/op_library), each timed by one model at
// two granularities: fast, the closed form of models/kernel (waves x per-wave time, with the
// Little's-law cap, L2 reuse and bandwidth shares, fitted efficiencies), memoized per (GPU,
// parameters, op); detailed, a warp-level interval model from hardware figures only
// (models/interval) run block by block on the sim/ engine (models/kernel_sim). Launch overhead
// and the host (models/launch) turn kernel times into the `kernel` or `per_call` timing. The bound
// is the limit that set the time: compute, hbm, l2, latency (too few bytes in flight), launch
// (start-up, gaps and host issue outweigh the work), pcie, or power (the board's power cap lowers
// the SM clock: models/clock_model; detail.sm_clock_hz and detail.power_w say what it ran at).
// Ignores: what models/kernel, models/op_library and models/launch say they ignore.
// Validation: validate/README.md (fast: 4.6% median, 14.2% p90 on the held-out H200 cases;
// detailed: 18.7% / 32.7% on all cases, too fast on GEMMs and streams; the two may disagree).
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "hw/gpu_spec.hpp"
#include "models/occupancy.hpp"
#include "models/op.hpp"

namespace ridge::models {

enum class Mode { kFast, kDetailed };
enum class Timing { kKernel, kPerCall };
/// Whether a prediction carries its `detail` JSON (tile, per-kernel times, ...). Building it is
/// about 40% of an uncached fast prediction; the executor and the planner read only the times and
/// the bound, and ask for kSkip. Every other field is the same either way.
enum class Detail { kBuild, kSkip };

struct KernelPrediction {
  double time_s = 0;           ///< as asked: kernel duration or per-call wall time
  double kernel_time_s = 0;    ///< GPU duration of all the op's kernels (plus gaps between them)
  double per_call_time_s = 0;  ///< wall time of one call timed with events (launch + kernel)
  int kernels = 1;             ///< kernel launches the op makes
  std::string bound;           ///< "compute", "hbm", "l2", "latency", "launch", "pcie", "power"
  double flops = 0, hbm_bytes = 0, l2_bytes = 0;
  double achieved_flops_per_s = 0, achieved_bytes_per_s = 0;
  double roof_fraction = 0;  ///< achieved / the applicable roof (compute or memory)
  /// The roof roof_fraction is measured against: "compute", "HBM", "L2" or "PCIe" (a
  /// latency-bound kernel: the nearest of compute, HBM and L2, whichever it reaches most of).
  std::string roof;
  long long grid = 0;
  int block = 0;
  int waves = 0;
  Occupancy occupancy;      ///< of the op's main kernel (the longest)
  std::string kernel_name;  ///< e.g. "gemm 128x256x64 splitk=1", "elementwise vec16"
  nlohmann::json detail;    ///< tile, split-K, L2 hit rate, per-kernel times... (null: kSkip)
};

/// Predicts one op on one GPU (Detail::kSkip: without `detail`, the rest identical).
KernelPrediction predict_kernel(const hw::GpuSpec& gpu, const OpSpec& op, Mode mode = Mode::kFast,
                                Timing timing = Timing::kKernel, Detail detail = Detail::kBuild);

/// Turns the fast-mode memo on or off (on by default); benchmarks of uncached cost turn it off.
void set_kernel_memo(bool enabled);
/// Empties the memo.
void clear_kernel_memo();

std::string_view mode_name(Mode m);
std::string_view timing_name(Timing t);

}  // namespace ridge::models
