// Parallel training steps at cluster scale (Megatron-LM): tensor (TP), pipeline (PP) and data (DP)
// parallelism on a system of many GPUs (configs/systems), one optimizer step simulated.
//
// Captures:
// - TP as Megatron-LM runs it (Shoeybi et al. 2019, sec. 3): QKV and FC1 column-parallel, attention
//   projection and FC2 row-parallel (GEMM sizes divided by tp, heads split over ranks), one
//   all-reduce after each row-parallel GEMM in forward and one in backward for each
//   column-parallel input (f/g operators: 2 forward + 2 backward per layer); with sequence
//   parallelism (Korthikanti et al. 2022, sec. 4.2.2) an all-gather before and a reduce-scatter
//   after each TP region, and the norms and dropouts on s/tp tokens. Forward collectives run on
//   the compute stream (synchronous in Megatron-LM). Backward follows Megatron-LM's
//   LinearWithGradAccumulationAndAsyncCommunication: with SP the column-parallel GEMM's input is
//   all-gathered again, asynchronously beside dX; dX's reduce-scatter (all-reduce without SP) runs
//   beside dW. Overlapped collectives run on a communication stream (a copy engine to the
//   executor) and the GEMM beside one runs on the GPU less the SMs NCCL's kernel holds
//   (`sm_blocks`, part 1) while they overlap. Collective times come from models/collective.hpp on
//   the TP group's GPUs of the system, memoized by (op, bytes, group shape).
// - Attention as Megatron-LM 2022 computed it (Table 5's software): QK^T and AV batched GEMMs,
//   fused scale-mask-softmax, dropout on the s x s scores; selective recompute re-runs the
//   core attention (QK^T, softmax, dropout, AV) before its backward; full recompute re-runs each
//   layer's forward (with its TP communication) before its backward.
// - PP: GPipe, 1F1B and interleaved 1F1B with virtual stages (Narayanan et al. 2021, sec. 2.2;
//   Megatron-LM's orders) simulated as list schedules over the
//   stages, every micro-batch's forward and backward an activity whose inputs arrive by a
//   point-to-point transfer (models/collective.hpp send/recv between the adjacent stages' GPUs),
//   so the bubble comes out of the simulation. Ranks doing identical work (the TP and DP peers of
//   a stage) are simulated once: one rank per stage.
// - DP: gradients reduced in buckets (bucket_mb, PyTorch DDP / Megatron default 25 MB) in reverse
//   layer order as the last micro-batch's backward produces them, one bucket at a time on a
//   communication stream, the stage's tp DP groups (one per TP rank) at once on one fabric; only
//   what runs past the backward is exposed. ZeRO-1 (Megatron's
//   distributed optimizer): reduce-scatter gradients, the optimizer on 1/dp of the parameters,
//   then an all-gather of the updated bf16 parameters (not overlapped).
// - Optimizer: Megatron-LM's step over the rank's (sharded) fp32 main gradients and master
//   weights, memory-bound passes: unscale with inf check (8 B per parameter), gradient norm
//   (4 B), fused Adam (30 B: grad, master, m, v read; master, m, v, 16-bit weight written).
// - Memory per GPU per stage: weights, gradients, optimizer state (ZeRO-1/2/3 sharded), activations
//   by Korthikanti et al. 2022 (Table 2 and sec. 4.3/5), in-flight micro-batches of the schedule.
// - MoE and EP (Megatron-Core's MoELayer, all-to-all dispatcher): router, top-k softmax,
//   permutation, dispatch all-to-all over the EP groups (EP inside DP), TP all-gather (expert TP =
//   TP), grouped expert GEMMs (E/ep experts, ep T k / E tokens each, x capacity_factor), reduce-
//   scatter, combine all-to-all, un-permutation, shared experts; expert gradients over dp / ep.
// - CP (Transformer Engine's ring attention): s/cp tokens per rank, cp attention blocks with the
//   next K/V block sent around the ring beside the current one; causal balance by 2 chunks a rank.
// - ZeRO-2 (gradients sharded), ZeRO-3 / FSDP (per-layer parameter all-gathers before forward and
//   backward, one layer prefetched, per-layer gradient reduce-scatters).
// - Rank placement: any order of tp, cp, pp, ep, dp (innermost first).
// - Optimizer offload (`offload: optimizer`, ZeRO-Offload as DeepSpeed runs it, Ren et al. 2021,
//   arXiv:2101.06840): the rank's optimizer partition (fp32 master weights, Adam m and v, fp32
//   gradients: 16 B per parameter) lives in host memory; each gradient bucket's partition is
//   copied device-to-host over the GPU's PCIe link as soon as it is reduced (overlapped with the
//   backward, one copy at a time), the Adam step runs on the host CPU over the partition after the
//   last copy (memory-bound: 30 B per parameter read and written, at the host DRAM bandwidth
//   shared by the node's GPUs), then the updated 16-bit partition is copied host-to-device (not
//   overlapped) before ZeRO-1/2's all-gather. The non-delayed default: DeepSpeed's one-step
//   delayed update (DPU), which hides the CPU step behind the next step's compute, is not
//   modelled. PCIe copies run at min(the link's rate, the host DRAM bandwidth / the node's GPUs),
//   plus the link's latency per copy. Ignores: pinned-memory limits, NUMA (each GPU's copies and
//   its Adam share reach the whole node's DRAM bandwidth), CPU Adam's SIMD compute rate (no FLOP
//   bound), the copy engine's contention with NIC traffic on a shared PCIe switch, gradient
//   accumulation on the host across micro-batches (only the last micro-batch's gradients are
//   copied, as the DP reduction here runs once per step).
// Ignores: imbalanced MoE routing and token dropping without padding, all-to-all overlap with
// compute, causal block skipping in attention, flash attention (attention is Megatron-2022's
// unfused kernels), FSDP's embedding gathers and NCCL SMs; HBM bandwidth an overlapped
// collective takes from the GEMM beside it; Megatron's scatter-gather optimisation of p2p; the
// stage's p2p occupying its SMs or stream (transfers only delay the consumer); contention between
// different stages' DP reductions and p2p transfers (a stage's tp DP groups, and the tp transfers
// between two stages, do run together on one fabric, sharing its links); the
// tied-embedding gradient all-reduce between first and last stage; data loading; the vocab-parallel
// cross-entropy's small all-reduces. Validated: Korthikanti et al. 2022 Table 5
// (tests/workloads/test_parallel.cpp, docs/parallel.md).
#pragma once

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "hw/system_spec.hpp"
#include "models/nccl_tuner.hpp"
#include "workloads/analysis.hpp"
#include "workloads/executor.hpp"
#include "workloads/model_config.hpp"
#include "workloads/transformer.hpp"

namespace ridge::workloads {

enum class PipeSchedule { kOneFOneB, kGpipe, kInterleaved };
/// Where the optimizer runs (ZeRO-Offload): on the GPU, or its state and step on the host CPU.
/// optimizer_and_params adds ZeRO-Infinity's parameter offload (ZeRO-3 only): the 16-bit
/// parameter partition on the host too, each layer's partition copied to the GPU before its
/// all-gather (forward and backward, prefetched with it).
enum class Offload { kNone, kOptimizer, kOptimizerAndParams };
std::string_view offload_name(Offload o);
std::string_view schedule_name(PipeSchedule s);

/// The `parallel:` block of a study, defaults as Megatron-LM's.
struct ParallelOptions {
  std::string system;  ///< configs/systems name or path
  int gpus = 0;        ///< GPUs used (0: the whole system)
  int tp = 1, pp = 1, dp = 1;
  /// Expert parallelism (Megatron-Core): the experts of each MoE layer sharded over ep ranks of
  /// the data-parallel group (ep divides dp); expert gradients reduced over dp / ep.
  int ep = 1;
  /// Context parallelism (Megatron-Core / Transformer Engine ring attention): the sequence split
  /// over cp ranks, 2 chunks each for causal load balance; KV blocks passed around the ring.
  int cp = 1;
  /// MoE tokens per expert padded to capacity_factor x the balanced share (Megatron's
  /// --moe-expert-capacity-factor with --moe-pad-expert-input-to-capacity); 0: dropless with
  /// balanced routing (every expert gets the balanced share).
  double capacity_factor = 0;
  /// Rank placement, innermost dimension first, of tp, cp, ep, dp (the data-parallel ranks
  /// outside an EP group) and pp (cp, if left out, right after tp). Empty: {tp, cp, pp, ep, dp}
  /// (TP inside a node, then CP, then PP, then DP).
  std::vector<std::string> placement;
  bool sequence_parallel = false;
  long long micro_batch = 1;
  long long global_batch = 0;  ///< 0: micro_batch x dp (one micro-batch per pipeline)
  long long seq = 2048;
  PipeSchedule schedule = PipeSchedule::kOneFOneB;
  int virtual_stages = 1;  ///< interleaved 1F1B: model chunks per device
  Recompute recompute = Recompute::kNone;
  /// 0; 1 (Megatron's distributed optimizer: optimizer state sharded); 2 (gradients too); 3
  /// (parameters too: all-gathered per layer before its forward and its backward)
  int zero = 0;
  bool fsdp = false;  ///< PyTorch FSDP full shard: as zero 3
  int zero_stage() const { return fsdp ? 3 : zero; }
  bool shards_params() const { return zero_stage() >= 3; }
  /// The vocabulary as Megatron-LM lays it out: padded with dummy tokens to a multiple of
  /// make_vocab_size_divisible_by (default 128) x TP (megatron/training/tokenizer,
  /// `_vocab_size_with_padding`), so that each rank's slice of the output layer is a whole
  /// multiple of 128 columns (GPT-3's 50257 becomes 51200 at TP 8 and 50304 at TP 1).
  long long padded_vocab(long long vocab) const {
    const long long multiple = 128LL * std::max(1, tp);
    return (vocab + multiple - 1) / multiple * multiple;
  }
  /// Optimizer offload (ZeRO-Offload): optimizer state and step on the host.
  Offload offload = Offload::kNone;
  bool offloads() const { return offload != Offload::kNone; }
  bool offloads_params() const { return offload == Offload::kOptimizerAndParams; }
  double bucket_mb = 25;  ///< DDP bucket, MB (1e6 B)
  int grad_bytes = 4;     ///< bytes per gradient element reduced (fp32 main grads)
  /// What-ifs: each kind of communication's simulated time multiplied (1: as simulated).
  double tp_comm_scale = 1, pp_comm_scale = 1, dp_comm_scale = 1, ep_comm_scale = 1,
         cp_comm_scale = 1;
  long long micro_batches() const { return global_batch / (micro_batch * dp); }
  int gpus_used() const { return tp * cp * pp * dp; }
};

/// Time of collectives on a system, memoized by (op, bytes, group shape relative to its node).
class CollectiveTimes {
 public:
  explicit CollectiveTimes(const hw::SystemSpec& system);
  /// Seconds for `op` of `bytes` (nccl-tests' size) over the fabric GPUs `ranks`.
  double time(models::CollOp op, double bytes, const std::vector<int>& ranks);
  /// Seconds until the last of `groups` (the same op and size each, started together on one
  /// fabric, sharing its links) is done.
  double concurrent_time(models::CollOp op, double bytes,
                         const std::vector<std::vector<int>>& groups);
  /// SMs (CUDA blocks) the collective's kernel occupies per GPU while it runs.
  int sm_blocks(models::CollOp op, double bytes, const std::vector<int>& ranks);
  const hw::SystemSpec& system() const { return system_; }
  long long simulated() const { return simulated_; }

 private:
  std::pair<double, int> lookup(models::CollOp op, double bytes,
                                const std::vector<std::vector<int>>& groups);
  hw::SystemSpec system_;
  struct Impl;
  std::shared_ptr<Impl> impl_;
  long long simulated_ = 0;
};

/// Fabric GPU of (tp rank, pipeline stage, dp rank, cp rank) by `o.placement` (default: TP inside
/// a node, then CP, then PP, then DP). The dp rank d is (EP rank d % ep, outer DP rank d / ep).
int place_rank(const ParallelOptions& o, int t, int stage, int d, int c = 0);
/// The placement dimensions, innermost first ({tp, cp, pp, ep, dp} by default).
std::vector<std::string> placement_order(const ParallelOptions& o);

/// One rank's work of one micro-batch on one stage.
struct StageGraphs {
  int first_layer = 0, layers = 0;
  Graph forward, backward;
  Execution fwd_exec, bwd_exec;
  std::map<std::string, double> fwd_by_class, bwd_by_class;  ///< critical path of each (sums)
  double tp_fwd_s = 0, tp_bwd_s = 0;                         ///< TP communication in each
  int tp_collectives_fwd = 0, tp_collectives_bwd = 0;
  double ep_fwd_s = 0, ep_bwd_s = 0;  ///< EP all-to-alls in each
  int ep_collectives_fwd = 0, ep_collectives_bwd = 0;
  double a2a_bytes = 0;  ///< one all-to-all's size per rank (nccl-tests' size: the send buffer)
  double cp_fwd_s = 0, cp_bwd_s = 0;  ///< CP ring transfers in each (overlapped or not)
  int cp_transfers_fwd = 0, cp_transfers_bwd = 0;
  double cp_block_bytes = 0;              ///< one forward ring step's K and V block per rank
  double fsdp_fwd_s = 0, fsdp_bwd_s = 0;  ///< ZeRO-3/FSDP all-gathers and reduce-scatters
  int fsdp_calls_fwd = 0, fsdp_calls_bwd = 0;
  double max_layer_params = 0;   ///< the largest layer's parameters on this rank (unsharded)
  double tokens_per_expert = 0;  ///< tokens each local expert's GEMMs take per micro-batch
  double params = 0;             ///< parameters this rank holds (expert_params included)
  double expert_params = 0;      ///< of which routed experts' (reduced over dp / ep)
};

/// Builds and simulates stage `stage`'s micro-batch forward and backward on one rank. With
/// interleaving, `o.pp` is the number of virtual stages (it splits the layers) and `device_pp` the
/// pipeline's devices: the stage's TP, CP, EP and ZeRO-3 groups are those of device
/// `stage % device_pp` (0: o.pp, no interleaving).
StageGraphs build_stage(const TransformerConfig& m, const ParallelOptions& o, int stage,
                        const hw::GpuSpec& gpu, CollectiveTimes& coll, TimingMode mode,
                        int device_pp = 0);

/// One activity of the pipeline schedule.
struct PipeOp {
  int stage = 0, micro = 0;  ///< device (pipeline rank) and micro-batch
  int vstage = 0;            ///< virtual stage (chunk x stages + device; = stage without chunks)
  bool backward = false;
  double start_s = 0, end_s = 0;
  double ready_s = 0;  ///< its input arrived (p2p included)
  int binder = -1;     ///< index of the op that held it back (-1: none)
  bool binder_p2p = false;
};

/// The per-device order of a schedule: (micro, backward, chunk).
struct PipeStep {
  int micro = 0;
  bool backward = false;
  int chunk = 0;
};
std::vector<PipeStep> stage_order(PipeSchedule s, int stages, int stage, int micro, int chunks = 1);

/// Simulates the schedule with per-virtual-stage forward/backward times (stages x chunks of them,
/// virtual stage = chunk x stages + device) and a p2p time between consecutive virtual stages.
std::vector<PipeOp> simulate_pipeline(PipeSchedule s, int micro, const std::vector<double>& fwd_s,
                                      const std::vector<double>& bwd_s, double p2p_s,
                                      int chunks = 1);

struct StageMemory {
  double weights = 0, grads = 0, optimizer = 0, activations = 0;
  /// Host bytes one rank keeps with optimizer offload (not in total(): the GPU's figure).
  double host = 0;
  int in_flight = 0;
  double total() const { return weights + grads + optimizer + activations; }
};

/// Activation bytes one layer keeps for backward on one TP rank (Korthikanti et al. 2022).
double parallel_layer_activation_bytes(const TransformerConfig& m, long long micro_batch,
                                       long long seq, int tp, bool sequence_parallel, Recompute r);
/// Activation bytes one MoE layer keeps for backward on one rank (see parallel_memory.cpp).
double moe_layer_activation_bytes(const TransformerConfig& m, const ParallelOptions& o);
/// `stage_params` this rank's parameters, `expert_params` of them routed experts' (their
/// optimizer state sharded over dp / ep with ZeRO-1).
/// `max_layer_params`: the largest layer on this rank, unsharded (ZeRO-3/FSDP gathers it).
StageMemory stage_memory(const TransformerConfig& m, const ParallelOptions& o, int stage,
                         double stage_params, double expert_params = 0,
                         double max_layer_params = 0);

/// Optimizer offload's rates for one rank on a system (see the header comment).
struct OffloadRates {
  double pcie_bw = 0;    ///< B/s of one GPU's copies, each direction
  double latency_s = 0;  ///< per copy
  double host_bw = 0;    ///< B/s of host DRAM bandwidth one rank's CPU Adam gets
  int gpus_on_node = 1;  ///< the job's GPUs on one node (they share the host)
};
OffloadRates offload_rates(const hw::SystemSpec& sys, const ParallelOptions& o);
/// One copy of `bytes` over the GPU's PCIe link to or from the host.
double offload_copy_time(const OffloadRates& r, double bytes);
/// CPU Adam over n parameters: 30 B each (read fp32 gradient, master, m, v: 16 B; write master,
/// m, v and the 16-bit copy for the GPU: 14 B) at the rank's share of host DRAM bandwidth.
double cpu_adam_time(const OffloadRates& r, double n);
/// Host bytes per parameter of the offloaded partition: fp32 master, m, v, fp32 gradient (and
/// the 16-bit parameters with parameter offload: 18).
constexpr double kOffloadHostBytesPerParam = 16;
/// Host bytes one node holds: the fullest rank's `host` x the job's GPUs on a node.
double offload_host_bytes_per_node(const hw::SystemSpec& sys, const ParallelOptions& o,
                                   double host_per_rank);

/// A what-if on a parallel step: a system figure (nvlink_bandwidth, nic_bandwidth), a GPU figure
/// (tensor, hbm_bandwidth, clock, sm_count: the figure x factor), a kind of communication
/// (tp_comm, pp_comm, dp_comm, ep_comm: its time x factor, 0 removes it) or the bubble
/// (bubble*0).
struct ParallelWhatIf {
  std::string text, target;
  double factor = 1;
};
/// Parses "target*factor". Throws std::invalid_argument naming the valid targets.
ParallelWhatIf parse_parallel_what_if(const std::string& text);

struct ParallelWhatIfResult {
  ParallelWhatIf what_if;
  double baseline_s = 0, step_s = 0;
  bool simulated = true;  ///< false: closed form only (bubble)
  double fraction = 0;    ///< the step's share the target touches (critical path)
  double amdahl_s = 0;    ///< step by Amdahl: (1 - f) + f x time factor
};

struct ParallelResult {
  ParallelOptions options;
  hw::SystemSpec system;
  std::vector<StageGraphs> stages;  ///< per virtual stage (= per device without chunks)
  std::vector<PipeOp> pipeline;
  double p2p_s = 0;
  double pipeline_s = 0;  ///< end of the last backward
  double dp_time_s = 0, dp_exposed_s = 0, optimizer_s = 0, param_gather_s = 0;
  /// Optimizer offload (critical stage): device-to-host gradient copies in all and their part
  /// past the backward and the DP reduction, and the host-to-device parameter copy.
  double offload_d2h_s = 0, offload_exposed_s = 0, offload_h2d_s = 0;
  double host_bytes_per_node = 0;  ///< offloaded state on one node's host
  int dp_buckets = 0;
  int expert_buckets = 0;  ///< of dp_buckets, expert gradients reduced over dp / ep
  double step_s = 0;
  double tokens_per_s = 0, model_flops = 0, hardware_flops = 0, mfu = 0, hfu = 0;
  double bubble_s = 0;                       ///< stage 0's idle time inside the pipeline phase
  double ideal_pipeline_s = 0;               ///< m x (F + B) of the slowest stage
  std::map<std::string, double> critical_s;  ///< the step by category; sums to step_s
  std::vector<StageMemory> memory;           ///< per device
  long long collectives_simulated = 0;
  std::vector<ParallelWhatIfResult> what_ifs;
  /// Per stage, activities beside the pipeline ops (DP buckets, optimizer), for the trace.
  struct Event {
    std::string name;
    int track = 0;  ///< 0: compute stream, 1: communication stream
    double start_s = 0, end_s = 0;
  };
  std::vector<std::vector<Event>> stage_events;
};

ParallelResult run_parallel(const TransformerConfig& m, const ParallelOptions& o,
                            const hw::SystemSpec& sys, TimingMode mode);

/// Re-simulates the step under a what-if, beside Amdahl's closed form.
ParallelWhatIfResult run_parallel_what_if(const TransformerConfig& m, const ParallelOptions& o,
                                          const hw::SystemSpec& sys, TimingMode mode,
                                          const ParallelResult& base, const ParallelWhatIf& w);

std::string parallel_report_text(const ParallelResult& r, const std::string& model_name);
nlohmann::json parallel_report_json(const ParallelResult& r);
/// Perfetto (Chrome trace event JSON): one process per simulated rank (one per stage), a compute
/// track (each micro-batch's forward and backward, the optimizer), a communication track (p2p
/// arrivals, DP buckets, ZeRO-1's parameter all-gather) and a track per stream with micro-batch
/// 0's forward and the last micro-batch's backward op by op.
std::string parallel_trace_json(const ParallelResult& r);

}  // namespace ridge::workloads
