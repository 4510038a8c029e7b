// Serving studies (`kind: serve`, run by `ridge serve STUDY`): a transformer on one GPU, an
// arrival process, a scheduler with its paged KV cache, the engine's per-iteration costs, SLOs and
// a capacity question. Also the request sources: Poisson and gamma arrivals (deterministic on a
// seed, with the generator's own samplers so that output is byte-identical on every platform)
// and trace files (CSV or JSONL: arrival time, prompt tokens, output tokens, optional priority).
//
// Strict like the other loaders: every key consumed, every error at once as
// `file:line:col: key.path: message`; a trace's errors name the trace file and line.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "workloads/op_timer.hpp"
#include "workloads/serving_cost.hpp"

namespace ridge::workloads {

/// One request as it arrives.
struct Request {
  std::int64_t id = 0;
  double arrival_s = 0;
  long long prompt_tokens = 0;
  long long output_tokens = 1;
  int priority = 0;             ///< lower is served first under the priority policy
  long long prefix_id = -1;     ///< a shared prompt prefix (system prompt, document), -1: none
  long long prefix_tokens = 0;  ///< its length: the prompt's first tokens
  /// Disaggregated serving: prefilled on another GPU; its first token came at first_token_s and
  /// its KV cache arrives with it (arrival_s is then the KV's arrival; origin_arrival_s the
  /// request's own, which latencies count from).
  double first_token_s = -1;
  double origin_arrival_s = -1;
};

enum class ArrivalProcess { kPoisson, kGamma, kTrace };
enum class SchedulerPolicy {
  kStatic,        ///< fixed batches run to their longest request (HF generate)
  kPrefillFirst,  ///< iteration-level, prefill iterations apart from decode ones (vLLM V0)
  kContinuous,    ///< iteration-level, whole prompts mixed with decodes (Orca)
  kChunked,       ///< iteration-level, prompts chunked into the token budget (Sarathi, vLLM V1)
};
enum class Preemption { kRecompute, kSwap };

struct ArrivalSpec {
  ArrivalProcess process = ArrivalProcess::kPoisson;
  double rate_per_s = 1;
  double cv = 1;  ///< gamma: coefficient of variation of the inter-arrival times
  std::uint64_t seed = 1;
  long long requests = 1000;
  std::string trace_path;       ///< process: trace, or the lengths to sample for poisson/gamma
  long long prompt_tokens = 0;  ///< fixed lengths when no trace gives them
  long long output_tokens = 0;
};

struct SchedulerSpec {
  SchedulerPolicy policy = SchedulerPolicy::kChunked;
  long long max_num_seqs = 256;         ///< vLLM's default
  long long max_batched_tokens = 8192;  ///< per-iteration token budget
  bool priority = false;                ///< serve by (priority, arrival) instead of arrival
  Preemption preemption = Preemption::kRecompute;
  long long block_size = 16;            ///< tokens per KV block (vLLM's default)
  double gpu_memory_utilization = 0.9;  ///< vLLM's default
  long long num_blocks = 0;             ///< 0: from memory; else fixed (tests)
  bool prefix_caching = false;          ///< keep shared prefixes' full KV blocks for reuse
};

struct SloSpec {
  double ttft_s = 0;  ///< 0: no bound
  double tpot_s = 0;
  double e2e_s = 0;
  double percentile = 90;  ///< capacity: this percentile of each bounded metric must meet it
};

/// Disaggregated prefill and decode pools (DistServe, Zhong et al. OSDI 2024; Splitwise, Patel et
/// al. ISCA 2024): requests prefill on one pool and decode on the other, the KV cache moving over
/// a link between them.
struct DisaggSpec {
  bool enabled = false;
  int prefill_gpus = 1;
  int decode_gpus = 1;
  double link_bytes_per_s = 0;  ///< 0: the GPU's NVLink bandwidth (per direction)
  double link_latency_s = 10e-6;
};

struct CapacitySpec {
  bool enabled = false;
  long long requests = 2000;     ///< per trial rate
  double target_rate_per_s = 0;  ///< GPUs (replicas) needed for this load; 0: not asked
  double max_rate_per_s = 1000;
};

struct ServeStudy {
  std::string question;
  std::string model_path;
  std::string gpu_name;
  /// Tensor parallelism (vLLM/Megatron): each replica's model split over `tp` GPUs of `system`
  /// (configs/systems; its GPU replaces `gpu`), with an all-reduce after the attention output
  /// projection and after the MLP of every layer.
  int tp = 1;
  std::string system;
  TimingMode mode = TimingMode::kFast;
  ArrivalSpec arrivals;
  SchedulerSpec scheduler;
  EngineCost engine;
  SloSpec slo;
  CapacitySpec capacity;
  DisaggSpec disagg;
  std::vector<std::pair<std::string, std::string>> files;  ///< (path, sha256)
};

/// Loads a `kind: serve` study. Throws hw::ConfigException with every problem. (The trace is read
/// by run_serve, once the model's context length is known.)
ServeStudy load_serve_study(const std::string& path);

/// Reads a trace file (CSV with a header naming arrival_s, prompt_tokens, output_tokens and
/// optionally priority, prefix_id and prefix_tokens; or JSONL with those keys). Errors name the
/// file and line; all at once (at most 50). `max_context` > 0: a prompt longer than it is an error.
std::vector<Request> load_trace(const std::string& path, long long max_context = 0);
/// The same from the trace's text (`path` names it in messages; its ending picks CSV or JSONL).
std::vector<Request> parse_trace(const std::string& text, const std::string& path,
                                 long long max_context = 0);

/// Supplies requests in arrival order, one at a time (a generator: 10^6 requests take no memory).
class RequestSource {
 public:
  virtual ~RequestSource() = default;
  /// The next request, or nullopt when there are no more.
  virtual std::optional<Request> next() = 0;
};

/// The source an ArrivalSpec describes. `lengths` (from the trace) are sampled for poisson and
/// gamma; for a trace process they are the requests themselves. `max_context` caps output tokens
/// so prompt + output fits the model.
std::unique_ptr<RequestSource> make_source(const ArrivalSpec& a, std::vector<Request> lengths,
                                           long long max_context);

/// A fixed list of requests (tests, traces).
std::unique_ptr<RequestSource> list_source(std::vector<Request> requests);

/// splitmix64-seeded xoshiro256** with its own uniform/exponential/gamma samplers (no
/// std::*_distribution, whose output differs between standard libraries).
class Rng {
 public:
  explicit Rng(std::uint64_t seed);
  std::uint64_t next();
  double uniform();  ///< [0, 1)
  double exponential(double rate);
  double normal();
  double gamma(double shape, double scale);

 private:
  std::uint64_t s_[4];
  bool has_spare_ = false;
  double spare_ = 0;
};

}  // namespace ridge::workloads
