// `ridge serve STUDY.yaml`: serve requests on one GPU (a `kind: serve` study) and report TTFT,
// TPOT and end-to-end latency percentiles, throughput, goodput, KV-cache use and capacity.
#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/output.hpp"
#include "workloads/serving.hpp"

namespace ridge::cli {

namespace {
struct ServeKey {
  const char* key;
  const char* fallback;
  const char* meaning;
};
// The keys workloads/serving_config.cpp reads (keep in step with load_serve_study).
constexpr ServeKey kServeKeys[] = {
    {"serve.question", "\"\"", "printed above the report"},
    {"serve.model", "(required)", "configs/models name or path (a transformer)"},
    {"serve.gpu", "h200", "GPU name or path"},
    {"serve.system", "", "configs/systems name or path: its GPU and links (instead of gpu)"},
    {"serve.tp", "1", "tensor-parallel GPUs per replica (needs system)"},
    {"serve.mode", "fast", "kernel model mode: fast | detailed"},
    {"serve.arrivals.process", "poisson", "poisson | gamma | trace"},
    {"serve.arrivals.rate_per_s", "(poisson, gamma)", "mean arrival rate, requests/s"},
    {"serve.arrivals.cv", "1", "gamma: CV of inter-arrival times"},
    {"serve.arrivals.seed", "1", "generator seed"},
    {"serve.arrivals.requests", "1000 (trace: all)", "number of requests"},
    {"serve.arrivals.trace", "", "CSV/JSONL: the requests (trace) or lengths to draw from"},
    {"serve.arrivals.prompt_tokens", "", "fixed prompt length without a trace"},
    {"serve.arrivals.output_tokens", "", "fixed output length without a trace"},
    {"serve.scheduler.policy", "chunked", "static | prefill_first | continuous | chunked"},
    {"serve.scheduler.max_num_seqs", "256", "sequences per iteration"},
    {"serve.scheduler.max_batched_tokens", "8192", "tokens per iteration"},
    {"serve.scheduler.order", "fcfs", "fcfs | priority (trace column, lower first)"},
    {"serve.scheduler.preemption", "recompute", "recompute | swap (over PCIe)"},
    {"serve.scheduler.block_size", "16", "tokens per KV block"},
    {"serve.scheduler.gpu_memory_utilization", "0.9", "fraction of HBM the engine may use"},
    {"serve.scheduler.num_blocks", "0", "fixed KV blocks (0: from memory)"},
    {"serve.scheduler.prefix_caching", "false",
     "reuse shared prefixes' KV blocks (trace prefix_id)"},
    {"serve.engine.cpu_overhead", "2 ms", "engine CPU time per iteration (assumed)"},
    {"serve.engine.cuda_graph", "true", "decode-only batches replay captured graphs"},
    {"serve.engine.capture_sizes", "vLLM's", "captured decode batch sizes"},
    {"serve.engine.bucketing", "true", "memoize attention shapes by 1/64-octave buckets"},
    {"serve.engine.model", "vllm",
     "vllm | hf_eager (eager HF graphs via the executor) | hf_graph (hf_eager with equal-prompt "
     "prefills and decode-only batches replayed from CUDA graphs captured beforehand; decode "
     "graphs per capture size and KV window)"},
    {"serve.engine.graph_kv_window", "64",
     "hf_graph: a decode graph's attention reads kv_len rounded up to a multiple of this"},
    {"serve.engine.row_move", "0 s",
     "hf_eager/hf_graph: host time of the loop moving its last cache row into a freed one "
     "(0: not modelled)"},
    {"serve.engine.row_shift", "0 s",
     "hf_eager/hf_graph: host time of the loop shifting its rows left when the oldest sequence "
     "finishes (0: not modelled)"},
    {"serve.engine.sdpa_new_shape_decode", "38.4 ms",
     "hf_eager: host time of the first decode step at a new attention shape (cuDNN SDPA; "
     "measured, validate/data/h200/sdpa_shapes)"},
    {"serve.engine.sdpa_new_shape_prefill", "446 ms",
     "hf_eager: the same for a new causal prefill shape (median of 3 measured calls)"},
    {"serve.engine.sdpa_seen_shapes", "[]",
     "hf_eager: (batch, q_len, kv_len) triples a warm-up already ran, as a flat list"},
    {"serve.engine.host_probe", "0 (host_probe_us)",
     "the serving host's CPU probe (validate/e2e cpu_probe_us), r = probe / host_probe_us: "
     "host times x (1 - share + share x r), cpu_overhead x r"},
    {"serve.engine.host_probe_trace", "[]",
     "the host's probe over time instead of host_probe: a flat list of (time, probe) pairs, time "
     "ascending from the arrivals' 0; an iteration takes the last pair at or before its start"},
    {"serve.engine.host_probe_share", "0.85",
     "share of the GPU spec's host costs that follows the probe (fit, H200 serving runs 2-8)"},
    {"serve.engine.sdpa_build_probe_share", "0.65",
     "hf_eager: share of an SDPA build's host time that follows the probe (same fit)"},
    {"serve.slo.ttft", "none", "time to first token bound"},
    {"serve.slo.tpot", "none", "time per output token bound"},
    {"serve.slo.e2e", "none", "end-to-end latency bound"},
    {"serve.slo.percentile", "90", "capacity: percentile that must meet the bounds"},
    {"serve.disaggregated.prefill_gpus", "1", "GPUs of the prefill pool"},
    {"serve.disaggregated.decode_gpus", "1", "GPUs of the decode pool"},
    {"serve.disaggregated.link_bandwidth", "the GPU's NVLink", "KV transfer bandwidth"},
    {"serve.disaggregated.link_latency", "10 us", "KV transfer latency"},
    {"serve.capacity.requests", "2000", "Poisson requests per trial rate"},
    {"serve.capacity.target_rate_per_s", "0", "load to size replicas (GPUs) for"},
    {"serve.capacity.max_rate_per_s", "1000", "upper end of the search"},
};
}  // namespace

/// `ridge describe serve`: the keys of a serving study.
void describe_serve(std::string& text, nlohmann::json& j) {
  Table t({"key", "default", "meaning"});
  for (const auto& k : kServeKeys) {
    t.row({k.key, k.fallback, k.meaning});
    j.push_back({{"key", k.key}, {"default", k.fallback}, {"meaning", k.meaning}});
  }
  text = "kind: serve studies (docs/serving.md)\n" + t.str();
}

void register_serve(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand(
      "serve", "serve requests on one GPU (kind: serve study): latency percentiles, capacity");
  auto path = std::make_shared<std::string>();
  auto trace = std::make_shared<std::string>();
  auto svg = std::make_shared<std::string>();
  cmd->add_option("study", *path, "serving study, e.g. configs/studies/serve-llama3-8b-chat.yaml")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--trace", *trace,
                  "write Perfetto counters (KV use, batch size, queue length) as trace JSON");
  cmd->add_option("--svg", *svg, "write KV use, batch size and queue length over time (SVG)");
  auto requests = std::make_shared<std::string>();
  cmd->add_option("--requests", *requests,
                  "write every request's arrival, first/last token and finish times (CSV)");
  auto iterations = std::make_shared<std::string>();
  cmd->add_option("--iterations", *iterations,
                  "write every iteration's start, duration, new-shape build time and batch (CSV)");
  auto* as_json = add_json_flag(cmd);
  cmd->callback([&action, path, trace, svg, requests, iterations, as_json] {
    action = [=] {
      const workloads::ServeStudy study = workloads::load_serve_study(*path);
      const workloads::ServeRun run =
          workloads::run_serve(study, !requests->empty() || !iterations->empty());
      std::vector<std::pair<std::string, std::string>> files = run.study.files;
      for (const auto& f : run.model.files) files.push_back(f);
      for (const auto& f : run.gpu.files) files.push_back(f);
      // Render everything first, then write: a failure leaves nothing half-written.
      std::string t, s, q;
      if (!trace->empty()) t = workloads::serve_trace_json(run);
      if (!svg->empty()) s = workloads::serve_svg(run);
      if (!requests->empty()) q = workloads::serve_requests_csv(run);
      std::string it;
      if (!iterations->empty()) it = workloads::serve_iterations_csv(run);
      if (!trace->empty()) write_file_atomically(*trace, t);
      if (!svg->empty()) write_file_atomically(*svg, s);
      if (!requests->empty()) write_file_atomically(*requests, q);
      if (!iterations->empty()) write_file_atomically(*iterations, it);
      nlohmann::json j = workloads::serve_json(run);
      j["study"] = *path;
      j["provenance"] = provenance(files);
      emit(as_json->count() > 0, workloads::serve_text(run) + "\n" + provenance_text(files), j);
      return 0;
    };
  });
}

}  // namespace ridge::cli
