// Capacity planning (`ridge plan`): which parallel layout trains a model fastest (or cheapest, or
// on the fewest GPUs) on a system, and does it fit.
//
// Captures: an enumeration of Megatron-LM layouts (TP x CP x PP x DP x EP x micro-batch x
// recompute x sequence parallelism x ZeRO 0-3 / FSDP x schedule and virtual stages x optimizer
// offload) over one or more GPU counts,
// pruned by memory first (workloads/parallel_memory.cpp's Korthikanti et al. 2022 model), ranked
// by a fast evaluator, and the best k re-simulated by the full parallel simulator
// (workloads/parallel*.cpp) and re-ranked by it; both figures are reported, with the fast
// evaluator's error on them (a measured check: it is never tuned against these).
//
// The fast evaluator is derived from the same models as the full simulation:
// - per-layer forward and backward times, and the embedding's and the LM head's, come from the
//   parallel simulator's own stage graphs (build_stage, executed by the same executor and kernel
//   model) of 1 and 2 layers per stage, memoized by (tp, sequence parallel, micro-batch, seq,
//   recompute): a layer's time is the difference, so launch latencies at the start of a graph
//   are not counted per layer;
// - collective times (pipeline p2p, DP buckets, ZeRO-1's parameter all-gather) from the same
//   CollectiveTimes (models/collective.hpp), memoized by (op, bytes, group shape);
// - composed analytically: 1F1B (and GPipe) pipeline = sum of the stages' F + B for the first
//   micro-batch's fill and drain plus (m - 1) x the slowest device's F + B, plus 2 (p - 1) p2p
//   transfers; interleaved with v chunks: m x the slowest device's F + B plus (p - 1) x one
//   chunk's F + B (the bubble shrinks by v, Narayanan et al. 2021 sec. 2.2) plus 2 (p - 1) p2p;
//   DP buckets released uniformly over the last backward of device 0 and reduced one at a time,
//   the part past that backward exposed (closed form of the simulator's bucket loop; with MoE the
//   simulator's loop itself over the dense and the expert buckets); the optimizer and ZeRO-1/2's
//   all-gather after it, as the simulator does them.
// - CP, EP and ZeRO-3/FSDP: the layer probe is built on the layout's own placement (its pp, dp,
//   cp and ep; 1 and 2 layers per stage), so a layer's time carries the ring attention's K/V
//   transfers beside attention, the MoE all-to-alls and the per-layer parameter all-gathers and
//   gradient reduce-scatters as the simulator schedules them; p2p carries s/cp tokens per CP rank;
//   DP reduces over dp x cp ranks (experts over dp x cp / ep); ZeRO-3/FSDP leave no DP tail nor
//   gather at the end; memory is stage_memory's with the device's expert parameters and largest
//   layer (ZeRO-3/FSDP: 18 B / (dp x cp) per parameter plus 2 gathered layers).
// Ignores (fast evaluator only; the re-simulated top-k has the simulator's own list): the
// critical stage may be another than device 0 (the DP tail is device 0's); p2p transfers beyond
// the fill and drain (interleaved sends more of them); uneven stages' stalls beyond the
// slowest-device term; ZeRO-3/FSDP's exposed first-layer gather on middle stages (counted on the
// first and last); a MoE model's leading dense layers in the probe (its layers are taken as the
// model's layer 0 and 1).
// - Optimizer offload (ZeRO-Offload, workloads/parallel.hpp): the simulator's bucket loop with each
//   bucket's copy to the host after its reduction, the part past the backward and the reduction
//   exposed, then CPU Adam and the parameters' copy back (the same functions as run_parallel);
//   memory: the GPU loses the partition's 12 B, the node's host must hold 16 B per parameter of
//   its GPUs' partitions within `host memory x (1 - memory_headroom)`, else the layout is pruned.
// Serving plans: see workloads/plan_serve (not built; serving replicas are one GPU each).
// Validated: plan's rankings on Korthikanti et al. 2022 Table 5's set-ups
// (tests/workloads/test_plan.cpp); the fast evaluator's error against the full simulation is
// printed with every plan (docs/planning.md).
#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "hw/system_spec.hpp"
#include "workloads/parallel.hpp"

namespace ridge::workloads {

enum class PlanObjective { kStepTime, kTokensPerS, kCostPerToken, kFewestGpus };
std::string_view objective_name(PlanObjective o);

/// What the enumerator searches; an empty list means the default range (docs/planning.md).
struct PlanSpace {
  std::vector<int> tp, pp, micro_batch, virtual_stages, zero;
  std::vector<int> cp;    ///< context-parallel sizes (empty: 1, and 2, 4, 8 from 8192 tokens)
  std::vector<int> ep;    ///< expert-parallel sizes (empty: every one that fits, MoE models)
  std::vector<int> fsdp;  ///< 0 and/or 1 (empty: 0; ZeRO-3 is searched through `zero`)
  std::vector<int> sequence_parallel;  ///< 0 and/or 1
  std::vector<Recompute> recompute;
  std::vector<PipeSchedule> schedule;
  /// Optimizer offload (empty: none and optimizer where the system gives its host, else none)
  std::vector<Offload> offload;
};

struct PlanOptions {
  std::string system;          ///< configs/systems name or path
  std::vector<int> gpus;       ///< GPU counts to search (empty: see plan_gpu_counts)
  long long global_batch = 0;  ///< sequences per step
  long long seq = 2048;        ///< tokens per sequence
  PlanObjective objective = PlanObjective::kStepTime;
  double usd_per_gpu_hour = 0;   ///< cost_per_token's price
  double memory_headroom = 0.1;  ///< fraction of HBM left free (allocator, NCCL, workspace)
  double max_step_s = 0;         ///< 0: no limit
  int top_k = 10;                ///< layouts re-simulated and reported
  TimingMode mode = TimingMode::kFast;
  PlanSpace space;
};

/// One layout, as the fast evaluator sees it (and, for the top k, the full simulation).
struct PlanEstimate {
  ParallelOptions layout;
  int gpus = 0;
  double step_s = 0;  ///< fast evaluator
  double pipeline_s = 0, bubble_s = 0, p2p_exposed_s = 0, tp_comm_s = 0, dp_exposed_s = 0;
  double optimizer_s = 0, param_gather_s = 0;
  /// Per step on device 0, on or off its critical path (fast evaluator): EP all-to-alls, CP ring
  /// transfers, ZeRO-3/FSDP per-layer gathers and reduce-scatters.
  double ep_comm_s = 0, cp_comm_s = 0, fsdp_comm_s = 0;
  double memory_bytes = 0;  ///< the fullest GPU's (stage 0 or the last stage)
  double hbm_bytes = 0;     ///< usable HBM per GPU (after the headroom)
  /// Offload: the offloaded state on one node's host, the host memory it may take, the copies'
  /// exposed part (device-to-host past the backward and DP, host-to-device after CPU Adam; CPU
  /// Adam itself is optimizer_s).
  double host_bytes = 0, host_usable_bytes = 0, offload_exposed_s = 0, offload_h2d_s = 0;
  bool fits = false;
  /// Filled for the re-simulated top k.
  bool simulated = false;
  double sim_step_s = 0, sim_bubble_s = 0, sim_dp_exposed_s = 0;
  std::map<std::string, double> sim_critical_s;
  double mfu = 0;
  /// The ranking figure's value (lower is better; tokens/s negated).
  double objective = 0;
  double step() const { return simulated ? sim_step_s : step_s; }
};

/// A short layout key: "tp8 pp16 dp8 mb1 sp sel z1 1f1b" (cp, ep and fsdp named when used:
/// "tp8 cp2 pp4 dp4 ep4 mb1 sp sel fsdp 1f1b").
std::string layout_name(const ParallelOptions& o);

/// The fast evaluator. Memoizes per-layer times and collective times across evaluations: build
/// one per (model, system, seq, mode) and evaluate many layouts with it.
class PlanEvaluator {
 public:
  PlanEvaluator(const TransformerConfig& m, const hw::SystemSpec& sys, TimingMode mode,
                double memory_headroom);
  ~PlanEvaluator();
  /// Memory first: fills memory_bytes and fits; the rest only when it fits (or `always`).
  PlanEstimate evaluate(const ParallelOptions& o, bool always = false);
  /// Memory per GPU only (the fullest stage), bytes.
  double memory_bytes(const ParallelOptions& o) const;
  long long layer_shapes_built() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Every valid layout of the space for `gpus` GPUs (deterministic order).
std::vector<ParallelOptions> enumerate_layouts(const TransformerConfig& m, const PlanOptions& p,
                                               const hw::SystemSpec& sys, int gpus);
/// GPU counts searched: p.gpus, else the whole system (fewest_gpus: every valid count).
std::vector<int> plan_gpu_counts(const PlanOptions& p, const hw::SystemSpec& sys);

/// A layout that did not fit, the nearest ones, and what would help.
struct PlanMiss {
  ParallelOptions layout;
  double memory_bytes = 0, hbm_bytes = 0;
  std::string help;  ///< "recompute: full fits (61.2 GiB)" or "more GPUs"
};

struct PlanResult {
  PlanOptions options;
  std::string model_name;
  hw::SystemSpec system;
  long long enumerated = 0, fitting = 0, evaluated = 0;
  double search_s = 0;  ///< wall time of enumeration + fast evaluation (not deterministic: not
                        ///< printed in the deterministic outputs)
  std::vector<PlanEstimate> top;       ///< ranked by the full simulation
  std::vector<PlanEstimate> frontier;  ///< Pareto front (GPUs, step time) by the fast evaluator
  std::vector<PlanMiss> misses;        ///< when nothing fits: the closest layouts
};

/// What the plan keeps of one layout's full simulation (run_parallel).
struct PlanSim {
  double step_s = 0, bubble_s = 0, dp_exposed_s = 0, mfu = 0;
  std::map<std::string, double> critical_s;
};
PlanSim plan_simulate(const TransformerConfig& m, const ParallelOptions& o,
                      const hw::SystemSpec& sys, TimingMode mode);
/// A PlanSim as text and back, every double exactly (shortest round-trip form): the top-k
/// simulations may run on other threads or MPI ranks.
std::string plan_sim_encode(const PlanSim& s);
PlanSim plan_sim_decode(const std::string& text);
/// Runs the top-k simulations (layouts in rank order) and returns their results in that order.
using PlanSimulateMany = std::function<std::vector<PlanSim>(const std::vector<ParallelOptions>&)>;

/// Searches, ranks and re-simulates (one after another, or through `many`). Throws
/// std::invalid_argument for an empty space.
PlanResult run_plan(const TransformerConfig& m, const PlanOptions& p, const hw::SystemSpec& sys,
                    const PlanSimulateMany& many = {});

std::string plan_report_text(const PlanResult& r);
nlohmann::json plan_report_json(const PlanResult& r);
std::string plan_report_csv(const PlanResult& r);
/// Pareto front: GPUs against step time (log-log), the top k marked.
std::string plan_svg(const PlanResult& r);

/// Megatron-LM's optimizer step over n parameters (workloads/parallel_schedule.cpp).
double parallel_optimizer_time(const hw::GpuSpec& gpu, double n, TimingMode mode);
/// Useful forward FLOPs per token (workloads/parallel_schedule.cpp).
double parallel_forward_flops_per_token(const TransformerConfig& m, long long seq);

}  // namespace ridge::workloads
