// One GPU serving requests: the scheduler loop of an LLM engine, iteration by iteration.
//
// Captures: static batching (HF generate: a batch of up to max_num_seqs waiting requests, prompts
// padded to the longest, runs until its longest output is done; its KV cache reserved for the
// longest prompt + output); iteration-level scheduling (Orca, Yu et al. OSDI 2022; vLLM, Kwon et
// al. SOSP 2023): running decodes first, then waiting requests admitted in order (arrival, or
// (priority, arrival)) while a sequence slot, the per-iteration token budget
// (max_batched_tokens) and free KV blocks allow, head-of-line blocking as vLLM does; whole prompts
// mixed with decodes (continuous), prefill-only iterations first (prefill_first, vLLM V0), or
// prompts chunked into the budget left after the decodes (chunked; Sarathi-Serve, Agrawal et al.
// OSDI 2024; vLLM V1's default); a paged KV cache of fixed-size blocks allocated as a sequence
// grows and freed when it ends; preemption when a running sequence needs a block and none is free:
// the worst-ordered running sequence (latest arrival, or lowest priority) gives its blocks back
// and is later recomputed (its prompt + tokens so far prefilled again) or swapped (its blocks
// copied to host memory over PCIe and back, the copy time added to the iteration).
// Prefix caching by prefix id (full blocks of a computed prefix kept, least recently used evicted
// first). Ignores: speculative decoding, multiple GPUs, request abort, the block table's
// own memory, the API server's HTTP and tokenizer time (beyond the engine's stated CPU time).
// Time: each iteration's duration comes from IterationCostModel; arrivals during an iteration
// wait for its end (the engine schedules between iterations). Deterministic.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "hw/gpu_spec.hpp"
#include "workloads/serving_config.hpp"
#include "workloads/serving_cost.hpp"
#include "workloads/serving_metrics.hpp"

namespace ridge::workloads {

/// What one request went through (kept only when asked: tests and small runs).
struct RequestRecord {
  std::int64_t id = 0;
  double arrival_s = 0, first_token_s = 0, last_token_s = 0, finish_s = 0;
  long long prompt_tokens = 0, output_tokens = 0;
  int preemptions = 0;
};

/// One iteration as the simulator priced it (kept only with record_requests: tests, diagnostics).
struct IterationRecord {
  double start_s = 0, duration_s = 0;
  double build_s = 0;  ///< of duration_s: SDPA execution-graph builds of new shapes (hf_eager)
  int prefills = 0;
  long long decodes = 0, context_max = 0, tokens = 0;
};

/// KV cache sizing: bytes per block and the blocks that fit.
struct KvBudget {
  double weights_bytes = 0, activation_bytes = 0, kv_bytes = 0, bytes_per_block = 0;
  long long blocks = 0;
};
/// vLLM's sizing: gpu_memory_utilization x HBM, less the weights (bf16) and the activation peak
/// of a max_batched_tokens forward (its largest live tensors) and max_num_seqs rows of fp32 logits.
/// Per GPU; with tensor parallelism (tp > 1) each GPU holds 1/tp of the weights and of the KV
/// heads (one KV head at least: vLLM replicates them when there are fewer than ranks).
KvBudget kv_budget(const TransformerConfig& m, const hw::GpuSpec& gpu, const SchedulerSpec& s,
                   int tp = 1);

struct ServeResult {
  LogHistogram ttft, tpot, e2e, queue;  ///< queue: arrival to first scheduled
  std::int64_t requests = 0, slo_met = 0, preemptions = 0, iterations = 0;
  long long prompt_tokens = 0, output_tokens = 0;
  double first_arrival_s = 0, makespan_s = 0;  ///< last token time
  double in_system_integral = 0;  ///< integral of requests in the system over time (Little)
  double busy_s = 0;              ///< time spent in iterations
  double max_kv_used = 0;         ///< peak fraction of KV blocks
  long long max_batch = 0;
  TimeSeries series;
  std::vector<RequestRecord> records;
  std::vector<IterationRecord> iteration_records;  ///< with ServeOptions::record_requests
  KvBudget kv;
};

struct ServeOptions {
  SchedulerSpec scheduler;
  SloSpec slo;
  long long max_context = 0;  ///< the model's positions (admission check)
  bool record_requests = false;
  std::size_t series_points = 4096;
};

/// Serves every request of `source` to completion. Throws std::invalid_argument when a request
/// can never be served (its prompt + output need more KV blocks than exist).
ServeResult simulate_serving(RequestSource& source, IterationCostModel& cost,
                             const TransformerConfig& m, const hw::GpuSpec& gpu,
                             const ServeOptions& o);

}  // namespace ridge::workloads
