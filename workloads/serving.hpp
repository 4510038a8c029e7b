// `ridge serve`: a serving study run end to end (model, GPU, requests, scheduler), its capacity
// (the highest Poisson rate meeting the SLO, by bisection, and the replicas a target load needs),
// and its outputs: text, JSON, Perfetto counters, an SVG of KV use, batch size and queue length.
// One GPU per replica: tensor-parallel serving waits for multi-GPU systems (not modelled yet).
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "hw/gpu_spec.hpp"
#include "workloads/model_config.hpp"
#include "workloads/serving_config.hpp"
#include "workloads/serving_sim.hpp"

namespace ridge::workloads {

struct CapacityResult {
  double rate_per_s = 0;  ///< highest rate found meeting the SLO (0: none)
  int trials = 0;
  long long replicas = 0;  ///< for the target load (0: not asked or no capacity)
  std::string note;
};

struct ServeRun {
  ServeStudy study;
  ModelConfig model;
  hw::GpuSpec gpu;
  ServeResult result;
  std::optional<CapacityResult> capacity;
};

/// The lengths/requests the study's trace gives (empty without a trace). Errors name the trace.
std::vector<Request> study_trace(const ServeStudy& s, const TransformerConfig& m);

/// Runs the study (and its capacity search when asked). `record_requests`: keep every request's
/// record (ServeResult::records; memory grows with the request count, checked against the limit).
ServeRun run_serve(const ServeStudy& s, bool record_requests = false);

/// Serves `requests` Poisson requests at `rate` (lengths sampled from `lengths`) and returns the
/// result; the capacity search's trial.
ServeResult serve_at_rate(const ServeStudy& s, const TransformerConfig& m, const hw::GpuSpec& gpu,
                          const std::vector<Request>& lengths, double rate, long long requests,
                          std::uint64_t seed);

/// Disaggregated prefill and decode pools (workloads/serving_disagg.cpp). Reads every request.
ServeResult simulate_disaggregated(RequestSource& source, const TransformerConfig& m,
                                   const hw::GpuSpec& gpu, const EngineCost& engine,
                                   TimingMode mode, const ServeOptions& o, const DisaggSpec& d);

/// Whether a result meets the study's SLO at its percentile.
bool meets_slo(const ServeResult& r, const SloSpec& slo);

std::string serve_text(const ServeRun& r);
nlohmann::json serve_json(const ServeRun& r);
/// Perfetto counters: KV cache use, batch size, queue length, tokens per iteration.
std::string serve_trace_json(const ServeRun& r);
/// The same series as an SVG plot (three panels over time).
std::string serve_svg(const ServeRun& r);
/// Every request's record as CSV (run_serve with record_requests), in id order: id, arrival_s,
/// first_token_s, last_token_s, finish_s (seconds from the run's time origin), prompt_tokens,
/// output_tokens, preemptions. Doubles in round-trip form (17 significant digits).
std::string serve_requests_csv(const ServeRun& r);
/// Every iteration as priced (run_serve with record_requests), in order: start_s, duration_s,
/// build_s (new-shape SDPA builds, hf_eager), prefills, decodes, context_max, tokens.
std::string serve_iterations_csv(const ServeRun& r);

}  // namespace ridge::workloads
