// Serving plans: the serving study's capacity search over batch caps (see
// workloads/plan_serve.hpp).
#include "workloads/plan_serve.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "workloads/serving.hpp"

namespace ridge::workloads {

ServePlanResult run_serve_plan(const ServePlanOptions& o) {
  ServePlanResult r;
  r.options = o;
  const std::vector<long long> seqs = o.max_num_seqs.empty()
                                          ? std::vector<long long>{o.study.scheduler.max_num_seqs}
                                          : o.max_num_seqs;
  const std::vector<long long> toks =
      o.max_batched_tokens.empty() ? std::vector<long long>{o.study.scheduler.max_batched_tokens}
                                   : o.max_batched_tokens;
  for (long long s : seqs)
    for (long long t : toks) {
      ServeStudy st = o.study;
      st.scheduler.max_num_seqs = s;
      st.scheduler.max_batched_tokens = t;
      st.capacity.enabled = true;
      st.capacity.target_rate_per_s = o.target_rate_per_s;
      if (o.requests > 0) st.capacity.requests = o.requests;
      const ServeRun run = run_serve(st);
      r.model_name = run.model.transformer().name;
      r.gpu_name = run.gpu.name;
      ServePlanRow row;
      row.max_num_seqs = s;
      row.max_batched_tokens = t;
      row.capacity_per_s = run.capacity->rate_per_s;
      row.replicas = run.capacity->replicas;
      row.trials = run.capacity->trials;
      row.gpus_per_replica = st.disagg.enabled ? st.disagg.prefill_gpus + st.disagg.decode_gpus : 1;
      r.rows.push_back(row);
    }
  std::sort(r.rows.begin(), r.rows.end(), [](const ServePlanRow& a, const ServePlanRow& b) {
    const bool ca = a.replicas > 0, cb = b.replicas > 0;
    if (ca != cb) return ca;
    if (a.gpus() != b.gpus()) return a.gpus() < b.gpus();
    const double pa = a.capacity_per_s / a.gpus_per_replica,
                 pb = b.capacity_per_s / b.gpus_per_replica;
    if (pa != pb) return pa > pb;
    if (a.max_num_seqs != b.max_num_seqs) return a.max_num_seqs < b.max_num_seqs;
    return a.max_batched_tokens < b.max_batched_tokens;
  });
  if (static_cast<int>(r.rows.size()) > o.top_k) r.rows.resize(o.top_k);
  return r;
}

std::string serve_plan_text(const ServePlanResult& r) {
  const ServePlanOptions& o = r.options;
  const SloSpec& slo = o.study.slo;
  std::string out = fmt::format(
      "serving plan: {} on {} ({}), {:.1f} requests/s within p{:.0f} of TTFT <= {:.0f} ms, "
      "TPOT <= {:.0f} ms; objective fewest_gpus\n",
      r.model_name, r.gpu_name, o.serve_path, o.target_rate_per_s, slo.percentile, slo.ttft_s * 1e3,
      slo.tpot_s * 1e3);
  out += "one GPU per replica: tensor-parallel serving is not modelled\n\n";
  out += fmt::format("{:>3}  {:>12} {:>18} {:>14} {:>8} {:>5}\n", "#", "max_num_seqs",
                     "max_batched_tokens", "capacity (r/s)", "replicas", "GPUs");
  int i = 0;
  for (const auto& row : r.rows) {
    if (row.replicas == 0)
      out += fmt::format("{:>3}  {:>12} {:>18} {:>14} {:>8} {:>5}\n", ++i, row.max_num_seqs,
                         row.max_batched_tokens, "SLO not met", "-", "-");
    else  // ">=": the capacity search stopped at its ceiling (capacity.max_rate_per_s)
      out += fmt::format(
          "{:>3}  {:>12} {:>18} {:>14} {:>8} {:>5}\n", ++i, row.max_num_seqs,
          row.max_batched_tokens,
          fmt::format("{}{:.2f}",
                      row.capacity_per_s >= o.study.capacity.max_rate_per_s ? ">= " : "",
                      row.capacity_per_s),
          row.replicas, row.gpus());
  }
  out += "ranked by GPUs, then capacity per GPU, then the caps (smaller first)\n";
  return out;
}

nlohmann::json serve_plan_json(const ServePlanResult& r) {
  nlohmann::json j;
  j["model"] = r.model_name;
  j["gpu"] = r.gpu_name;
  j["objective"] = "fewest_gpus";
  j["target_rate_per_s"] = r.options.target_rate_per_s;
  j["serve_study"] = r.options.serve_path;
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& row : r.rows)
    rows.push_back({{"max_num_seqs", row.max_num_seqs},
                    {"max_batched_tokens", row.max_batched_tokens},
                    {"capacity_per_s", row.capacity_per_s},
                    {"replicas", row.replicas},
                    {"gpus", row.gpus()},
                    {"trials", row.trials}});
  j["top"] = rows;
  return j;
}

std::string serve_plan_csv(const ServePlanResult& r) {
  std::string out = "rank,max_num_seqs,max_batched_tokens,capacity_per_s,replicas,gpus\n";
  int i = 0;
  for (const auto& row : r.rows)
    out += fmt::format("{},{},{},{:.6g},{},{}\n", ++i, row.max_num_seqs, row.max_batched_tokens,
                       row.capacity_per_s, row.replicas, row.gpus());
  return out;
}

}  // namespace ridge::workloads
