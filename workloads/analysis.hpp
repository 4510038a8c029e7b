// Analysis of an executed workload graph: critical path with per-class shares, Amdahl what-ifs
// re-simulated beside the closed form, memory footprint against HBM capacity, roofline placement.
//
// Critical path: walk back from the op that ends last through whichever predecessor held it back
// (data dependency, stream order, engine, host issue, host synchronisation), attributing every
// picosecond to an op's class, to host launch time, or to idle (kernel gaps): the shares sum to the
// step time by construction.
// Amdahl (seed 003, sec. 5): S = 1 / ((1 - f) + f / s), f = the class's summed op durations over
// the baseline step time (capped at 1); the re-simulated speed-up is shown beside it, so overlap
// (and work off the critical path) shows where the closed form is wrong.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "hw/gpu_spec.hpp"
#include "workloads/executor.hpp"
#include "workloads/graph.hpp"
#include "workloads/model_config.hpp"
#include "workloads/transformer.hpp"

namespace ridge::workloads {

struct CriticalSegment {
  int op = -1;        ///< -1 for an idle gap
  bool host = false;  ///< the op's host activity (its launch, or host work)
  double t0_s = 0, t1_s = 0;
  std::string cls;  ///< category name, "host_launch" or "idle"
};

struct CriticalPath {
  std::vector<CriticalSegment> segments;     ///< in time order
  std::map<std::string, double> by_class_s;  ///< seconds per class; sums to the step time
  std::vector<char> on_path;                 ///< per op: its device or host activity is on it
  double total_s = 0;
};

CriticalPath critical_path(const Graph& g, const Execution& ex);

/// Summed op durations per category (not a budget of elapsed time when ops overlap).
std::map<std::string, double> summed_by_category(const Graph& g, const Execution& ex);

/// A what-if: "attention*2" (a category or op kind sped up) or "hbm_bandwidth*1.5" (a GPU figure:
/// hbm_bandwidth, l2_bandwidth, tensor, clock, sm_count, host_launch).
struct WhatIf {
  std::string target;
  double factor = 1;
  bool gpu_figure = false;
  std::string text;  ///< as given
};
/// Parses "name*factor". Throws std::invalid_argument naming the valid targets.
WhatIf parse_what_if(const std::string& text);
/// The GPU with the figure scaled (for gpu_figure what-ifs).
hw::GpuSpec scaled_gpu(const hw::GpuSpec& gpu, const WhatIf& w);
/// ExecOptions with the class sped up (for category/kind what-ifs).
ExecOptions what_if_options(const ExecOptions& base, const WhatIf& w);

struct WhatIfResult {
  WhatIf what_if;
  double baseline_s = 0, step_s = 0;
  double simulated_speedup = 0;
  double fraction = 0;        ///< f
  double amdahl_speedup = 0;  ///< 1 / ((1 - f) + f / s)
  /// Set when the step moved against the what-if (a faster figure, a slower step, or the
  /// reverse): what changed between the two runs (kernels launched, host and GPU busy time).
  std::string note;
};
/// Throws std::invalid_argument when a what-if on a category or op kind names nothing in `g`
/// (a 1.00x answer that means nothing), naming what `g` does have; `label` names the workload.
void require_what_if_target(const WhatIf& w, const Graph& g, const std::string& label);

WhatIfResult run_what_if(const Graph& g, const hw::GpuSpec& gpu, const ExecOptions& o,
                         const Execution& base, const WhatIf& w);

/// How training keeps its weights and gradients.
enum class PrecisionScheme {
  kAutocast,  ///< torch.autocast over fp32 params: fp32 weights (the master) + bf16 casts, fp32
              ///< grads
  kMixed,     ///< Megatron-style: bf16 weights and grads, fp32 master copy (2+2+4+8 = 16 B/param)
};

struct MemoryItem {
  std::string name;
  double bytes = 0;
  std::string note;
};
struct MemoryReport {
  std::vector<MemoryItem> items;
  double peak_bytes = 0;
  double capacity_bytes = 0;
  bool fits = true;
  double over_bytes = 0;
  std::vector<std::string> suggestions;  ///< what would make it fit
};

/// Per-layer activation bytes kept for backward (Korthikanti et al. 2022, Table 2, no parallelism:
/// sbh(34 + 5as/h) for 16-bit activations; FlashAttention stores no s x s scores, so the 5as/h term
/// goes; generalised to GQA and any (gated) FFN width in analysis.cpp).
double layer_activation_bytes(const TransformerConfig& m, long long micro_batch, long long seq,
                              Recompute r);
MemoryReport train_memory(const TransformerConfig& m, const TrainOptions& o, PrecisionScheme p,
                          double hbm_bytes);
MemoryReport inference_memory(const TransformerConfig& m, const InferenceOptions& o,
                              double hbm_bytes);
MemoryReport diffusion_memory(const DiffusionConfig& m, double hbm_bytes);

/// Roofline placement of one op.
struct RooflinePoint {
  int op = -1;
  double flops = 0, bytes = 0, intensity = 0, attainable = 0, time_s = 0;
  std::string bound;
};
std::vector<RooflinePoint> roofline_points(const Graph& g, const hw::GpuSpec& gpu,
                                           const Execution& ex);

}  // namespace ridge::workloads
