// Serving plans (`ridge plan` on a study whose plan: names a `kind: serve` study): the fewest GPUs
// that serve a target load within the serving study's TTFT/TPOT SLOs, over the scheduler's batch
// caps (max_num_seqs x max_batched_tokens).
//
// Captures: for each pair of caps, the serving study's own capacity search (workloads/serving.hpp:
// the highest Poisson rate whose percentile of TTFT/TPOT/E2E meets the SLO, by bisection on the
// same serving simulator), then replicas = ceil(target load / capacity), GPUs = replicas x GPUs per
// replica (1, or prefill + decode GPUs when disaggregated). Ranked by GPUs, then capacity per GPU
// (higher first), then the caps (smaller first).
// Ignores: tensor-parallel serving (a replica is one GPU: not modelled yet); load imbalance
// between replicas beyond an even random split; the caps' effect beyond the simulator's.
// Validated: not yet (each capacity is the serving simulator's; see docs/serving.md).
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "workloads/serving_config.hpp"

namespace ridge::workloads {

struct ServePlanOptions {
  std::string serve_path;  ///< the `kind: serve` study
  ServeStudy study;
  double target_rate_per_s = 0;
  long long requests = 0;  ///< per capacity trial (0: the serving study's)
  std::vector<long long> max_num_seqs, max_batched_tokens;  ///< empty: the study's value
  int top_k = 10;
};

struct ServePlanRow {
  long long max_num_seqs = 0, max_batched_tokens = 0;
  double capacity_per_s = 0;  ///< per replica (0: the SLO is never met)
  long long replicas = 0;     ///< 0: no capacity
  int gpus_per_replica = 1;
  int trials = 0;
  long long gpus() const { return replicas * gpus_per_replica; }
};

struct ServePlanResult {
  ServePlanOptions options;
  std::string model_name, gpu_name;
  std::vector<ServePlanRow> rows;  ///< ranked; caps with no capacity last
};

ServePlanResult run_serve_plan(const ServePlanOptions& o);
std::string serve_plan_text(const ServePlanResult& r);
nlohmann::json serve_plan_json(const ServePlanResult& r);
std::string serve_plan_csv(const ServePlanResult& r);

}  // namespace ridge::workloads
