// The time of one serving-engine iteration (one forward over a batch that mixes prefill chunks
// and decode tokens) on one GPU, from Ridge's kernel model (workloads/op_timer.hpp).
//
// Captures: the kernels a vLLM-style engine launches per iteration for a Llama/GPT-shaped model,
// fused as vLLM fuses them (per layer: fused add+RMSNorm, one QKV GEMM, in-place RoPE, attention,
// O GEMM, fused add+RMSNorm, one gate_up GEMM, SiLU-and-mul, down GEMM; GPT style: LayerNorm, QKV
// with bias, GELU); every GEMM at m = the iteration's total tokens (the batch is packed, no
// padding between sequences); attention per prefill chunk (seq_q = chunk, seq_kv = cached +
// chunk, causal) and one paged decode attention over all decodes (seq_q = 1, seq_kv = their mean
// context: a memory-bound kernel whose bytes are linear in the summed context); the LM head and
// sampling over the sequences that emit a token. Host: a decode-only batch of at most the largest
// captured size replays a CUDA graph padded up to the next captured size (vLLM pads the batch to
// its capture sizes, vllm/config/compilation.py set_cudagraph_sizes: [1, 2, 4] + multiples of 8
// below 256 + multiples of 16 up to min(2 x max_num_seqs, 512)); other batches launch eagerly
// (host_launch_cuda per kernel from hw/model_params.cpp, since a compiled engine has no Python per
// op). Iteration time = engine CPU time (scheduling, input preparation, sampling bookkeeping,
// detokenization; a stated figure, `cpu_overhead` in the study) + max(host launch time, GPU
// time), because the engine waits for the sampled tokens every iteration.
// Tensor parallelism (tp > 1, Megatron's split as vLLM runs it): QKV and gate_up column-parallel
// (heads and FFN columns / tp; KV heads replicated where kv_heads < tp), O and down row-parallel,
// each followed by an all-reduce of the T x d bf16 activations; the vocabulary-parallel embedding
// also ends in one; the LM head's logits (vocab / tp per rank) are gathered to the first rank,
// which samples. Norms run on every rank at full width. The collectives' times come from Ridge's
// NCCL model on the system's links (models/collective): vLLM's own custom all-reduce, used for
// small messages on NVLink, is faster than NCCL there (docs/serving.md gives the published
// figures), so decode iterations at tp > 1 lean slow. Ignores: kernels overlapping each other,
// prefix-cache lookups, the time to build attention metadata beyond `cpu_overhead`. Memoization:
// shapes are rounded to buckets (token counts to 1/64-octave steps above 64, exact below) and each
// component (dense layers by total tokens, LM head by rows, a prefill chunk's attention by (chunk,
// context), decode attention by (count, mean context)) is timed once per bucket. The error this
// introduces is measured by tests/serving (bucketed vs exact on random mixes) and stated in
// docs/serving.md. hf_eager: the eager loop's executor step plus, the first time an attention shape
// (batch, q_len, kv_len) runs in the process, a host build of the SDPA execution graph
// (EngineCost:: sdpa_new_shape_*; measured in isolation, validate/data/h200/sdpa_shapes).
// Validation: see validate/README.md (serving); the kernel model's own validation applies to
// every kernel.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <unordered_map>
#include <utility>
#include <vector>

#include "hw/gpu_spec.hpp"
#include "models/op.hpp"
#include "workloads/model_config.hpp"
#include "workloads/op_timer.hpp"

namespace ridge::workloads {

/// Engine settings that change an iteration's time.
struct EngineCost {
  double cpu_overhead_s = 2e-3;  ///< per iteration (see docs/serving.md for the figure's basis)
  bool cuda_graph = true;        ///< decode-only batches replay captured graphs
  std::vector<long long> capture_sizes;  ///< ascending; empty: vLLM's default for max_num_seqs
  bool bucketing = true;                 ///< round shapes to buckets and memoize
  /// Time iterations as a plain eager PyTorch loop (validate/e2e/serve_llama.py) instead: each
  /// iteration is Ridge's HF-style prefill (one batched forward over equal-length prompts, else
  /// one per prompt) and/or decode step (all decodes against the longest context) run through
  /// the executor with its eager host model, plus cpu_overhead.
  bool hf_eager = false;
  /// hf_eager only: the host time of the first SDPA call at an attention shape new to the
  /// process. PyTorch 2.11 runs SDPA through cuDNN on Hopper and builds a cuDNN execution graph
  /// per problem shape (the likely cause); that first call spends the time on the host and also
  /// waits for the GPU queue to drain (measured behind a GPU sleep); its kernels are unchanged. The
  /// cache key is the whole shape: a new kv_len at a seen batch, a new batch at a seen kv_len, and
  /// a new pair of a seen batch and a seen kv_len all pay; the other layers' calls of the same
  /// shape and revisits do not. Figures from validate/data/h200/sdpa_shapes (H200,
  /// torch 2.11.0+cu130, cuDNN 9.19.0, host at nominal speed): decode (q_len 1), 38.4 ms = the
  /// median of 40 new shapes at batch 8, kv_len 300-339 (p10 35.9 ms; repeat 36 us); causal
  /// prefill, 446 ms = the median of 3 new shapes (1x256: 497 ms, 8x256 after 1x256: 48 ms, 1x257:
  /// 446 ms). With cuDNN SDP disabled there is no such cost (flash split-KV: first 54 us, repeat 51
  /// us): set both to 0.
  double sdpa_new_shape_decode_s = 38.4e-3;
  /// hf_eager only (study `model: hf_graph`): the loop replays CUDA graphs of its eager steps,
  /// all captured before the first iteration (their SDPA builds paid then: a replay pays none;
  /// validate/e2e/serve_llama.py --graphs). A decode-only batch of at most the largest capture
  /// size replays the graph of (batch padded up to the next capture size, KV window): the loop
  /// slices its static cache at kv_len rounded up to a multiple of graph_kv_window, so the
  /// graph's shapes are fixed. A prefill of equal prompts without cached context replays the
  /// graph of its (batch, prompt), the greedy first token in it. Each is Ridge's HF step with
  /// cuda_graph (the executor's graph launch). Other iterations run eagerly as hf_eager.
  bool hf_graph = false;
  /// hf_eager/hf_graph: the validation loop's housekeeping (validate/e2e/serve_llama.py
  /// move_row / shift_rows): host time of moving a finished row's successor (the last row) into
  /// it, and of shifting every row left when the oldest sequence finishes, at the GPU spec's host
  /// speed (scaled by host_probe_share with the probe). 0: not modelled (runs 1-15's studies).
  double row_move_s = 0;
  double row_shift_s = 0;
  long long graph_kv_window = 64;
  double sdpa_new_shape_prefill_s = 0.446;
  /// Attention shapes (batch, q_len, kv_len) already run in the process before the first
  /// iteration (a warm-up, an earlier run): they pay no build.
  std::vector<std::array<long long, 3>> sdpa_seen_shapes;
  /// The engine host's speed, as the CPU probe of validate/e2e (e2e_common.cpu_probe_us, a fixed
  /// pure-Python loop) reads it on that host; 0: the GPU spec's host_probe_us, the speed its host
  /// costs hold at. With r = host_probe_s / host_probe_us, a host time T becomes
  /// T x (1 - share + share x r): the share of it that runs at the interpreter's speed follows
  /// the probe, the rest (CUDA driver calls, PyTorch's C++ dispatch, waits on the GPU: work the
  /// probe's bytecode loop does not exercise) keeps its time. Shares: host_probe_share for the
  /// GPU spec's host_* costs and graph_launch_per_kernel, sdpa_build_probe_share for the SDPA
  /// builds; cpu_overhead (the loop's CPU probe and Python bookkeeping) scales by r itself.
  double host_probe_s = 0;
  /// The host's speed over time instead of one figure: (time, probe) pairs in seconds, time
  /// ascending on the study's clock (arrivals' time 0). An iteration that starts at t is priced
  /// at the probe of the last pair at or before t (the first pair's before the trace begins),
  /// rounded to 1 us, by the same rule as host_probe_s. Empty: host_probe_s for every iteration.
  std::vector<std::pair<double, double>> host_probe_trace;
  /// Fitted on the H200 serving runs 2-8 (validate/e2e/serve_host_fit.py; run 6's mechanism, run
  /// 9's fit, validate/data/h200/serve8/host_fit.json): log-least-squares of the repeated-shape
  /// eager decode steps' times (16074 steps, in-loop probes 150-500 us) against
  /// T0 x (1 - share + share x probe / 197 us), T0 free: 0.85 (runs 2-5 alone gave 0.79).
  double host_probe_share = 0.85;
  /// The same fit of the new-shape decode steps' excess over the repeated-step fit (14957
  /// builds): 0.65 (runs 2-5: 0.57; the cuDNN graph build is more C++ than Python).
  double sdpa_build_probe_share = 0.65;
  /// Tensor parallelism: the replica's GPUs. With tp > 1, `tp_collective_s` gives the seconds of
  /// an all-reduce (gather = false) or of a gather of the logits (gather = true) of `bytes`
  /// (nccl-tests' size) over them.
  int tp = 1;
  std::function<double(double bytes, bool gather)> tp_collective_s;
};

/// Attention heads of one tensor-parallel rank: query heads / tp, and KV heads / tp or 1 where
/// there are fewer KV heads than ranks (vLLM replicates them then).
struct RankHeads {
  long long q = 0, kv = 0;
};
RankHeads rank_heads(const TransformerConfig& m, int tp);

/// vLLM's default CUDA graph capture sizes for `max_num_seqs`.
std::vector<long long> vllm_capture_sizes(long long max_num_seqs);

/// A prefill chunk in an iteration: `tokens` new prompt tokens after `context` cached ones.
struct PrefillChunk {
  long long tokens = 0;
  long long context = 0;
  bool samples = false;  ///< the chunk ends the prompt: the iteration samples its first token
};

/// One iteration's batch.
struct BatchShape {
  std::vector<PrefillChunk> prefills;
  long long decodes = 0;
  long long decode_context_sum = 0;  ///< tokens cached over all decodes (before this step)
  long long decode_context_max = 0;  ///< the longest decode's cached tokens (hf_eager)
};

/// How an iteration's time splits.
struct IterationParts {
  double gpu_s = 0;
  double host_s = 0;
  double cpu_s = 0;
  double total_s = 0;
  long long padded_decodes = 0;  ///< decode rows after CUDA-graph padding
  bool graph = false;
};

class IterationCostModel {
 public:
  IterationCostModel(const TransformerConfig& m, const hw::GpuSpec& gpu, EngineCost e,
                     TimingMode mode = TimingMode::kFast);
  /// The iteration's time (bucketed and memoized unless EngineCost::bucketing is false).
  IterationParts time(const BatchShape& b);
  /// The same without buckets (every component timed at its exact shape).
  /// With hf_eager, both record the iteration's attention shapes as seen (call them in the
  /// iterations' order: the first call at a new shape pays EngineCost::sdpa_new_shape_*).
  IterationParts exact(const BatchShape& b);
  /// Prices the iterations that follow at the host speed EngineCost::host_probe_trace gives at
  /// time t (call it with each iteration's start); nothing without a trace.
  void at_time(double t);
  /// The loop's housekeeping after an iteration: `moves` row moves and a shift or none, at the
  /// host speed now.
  double housekeeping_s(int moves, bool shift) const {
    return (moves * e_.row_move_s + (shift ? e_.row_shift_s : 0.0)) * host_speed_;
  }
  /// Attention shapes seen so far (hf_eager), the study's sdpa_seen_shapes included.
  std::size_t sdpa_shapes_seen() const { return seen_.size(); }
  const EngineCost& engine() const { return e_; }
  /// The probe ratio r = EngineCost::host_probe_s / the GPU spec's host_probe_us (1 when unset).
  double probe_ratio() const { return probe_ratio_; }
  /// The factor on the GPU spec's host costs: 1 - host_probe_share + host_probe_share x r.
  double host_speed() const { return host_speed_; }
  /// Kernels per iteration (the same for every shape of this model).
  long long kernels_per_iteration() const { return kernels_; }
  /// Shapes timed so far (the memo's size: bounded by the bucket grid, not by the requests).
  std::size_t shapes_timed() const { return memo_.size(); }

 private:
  TransformerConfig m_;
  hw::GpuSpec gpu_;  // a copy: its host costs scaled by host_speed_
  double host_speed_ = 1;
  double probe_ratio_ = 1;
  EngineCost e_;
  TimingMode mode_;
  long long kernels_ = 0;
  double host_launch_s_ = 0, graph_host_s_ = 0, gap_s_ = 0, graph_gap_s_ = 0;
  std::unordered_map<std::uint64_t, double> memo_;
  std::set<std::array<long long, 3>> seen_;  // (batch, q_len, kv_len) run so far (hf_eager)
  // The host speed now: the unscaled spec and engine figures it is applied to, the trace's level
  // in whole microseconds, and the memos of the other levels visited.
  hw::GpuSpec base_gpu_;
  double base_cpu_overhead_s_ = 0, base_build_decode_s_ = 0, base_build_prefill_s_ = 0;
  long long level_us_ = -1;
  std::map<long long, std::unordered_map<std::uint64_t, double>> parked_;
  void apply_probe(double probe_s);

  IterationParts compute(const BatchShape& b, bool bucketed);
  double optime(const models::OpSpec& op);
  double dense_s(long long tokens);                   // all layers' token-proportional kernels
  double head_s(long long rows);                      // final norm, LM head, sampling
  double prefill_attn_s(long long q, long long ctx);  // one chunk, all layers
  double decode_attn_s(long long n, long long mean_ctx);
  double memo(std::uint64_t key, double (IterationCostModel::*f)(long long, long long), long long a,
              long long b);
  double hf_prefill_s(long long batch, long long prompt);
  double hf_step_s(long long batch, long long prompt, long long context, bool graph);
  double hf_decode_s(long long batch, long long context);
  double hf_decode_graph_s(long long batch, long long kv_len);
  double hf_prefill_graph_s(long long batch, long long prompt);
  IterationParts compute_hf(const BatchShape& b, bool bucketed);
  double new_shape_s(long long batch, long long q_len, long long kv_len);
  double dense2(long long t, long long) { return dense_s(t); }
  double head2(long long r, long long) { return head_s(r); }
};

/// Rounds a positive count to its bucket representative: exact up to 64, then the upper edge of
/// a 1/64-octave step (relative step 2^(1/64) - 1 = 1.09%).
long long bucket_count(long long n);

}  // namespace ridge::workloads
