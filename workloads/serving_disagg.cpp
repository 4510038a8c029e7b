// Disaggregated serving: a prefill pool and a decode pool of GPUs with the KV cache moving between
// them (DistServe, Zhong et al. OSDI 2024; Splitwise, Patel et al. ISCA 2024).
//
// Captures: each prefill GPU runs the study's scheduler over prefill-only work (every request
// there ends with its first token); the KV cache of the prompt then crosses a link (latency +
// prompt tokens x KV bytes per token / bandwidth, the GPU's NVLink by default, one transfer not
// slowing another); each decode GPU admits arriving caches as running sequences (no prefill, their
// blocks allocated on arrival) and decodes them with the same scheduler. Requests are spread over
// each pool round-robin in arrival order. Latencies count from the request's own arrival: TTFT is
// the prefill GPU's first token, E2E the decode GPU's last.
// Ignores: back-pressure from the decode pool onto the prefill pool (a prefill GPU frees a
// request's blocks at once), link contention, load-aware routing. Holds every request's first-
// token time between the two stages (memory grows with the request count, unlike one pool).
#include <algorithm>

#include "workloads/serving.hpp"

namespace ridge::workloads {

ServeResult simulate_disaggregated(RequestSource& source, const TransformerConfig& m,
                                   const hw::GpuSpec& gpu, const EngineCost& engine,
                                   TimingMode mode, const ServeOptions& o, const DisaggSpec& d) {
  const int P = std::max(1, d.prefill_gpus), D = std::max(1, d.decode_gpus);
  std::vector<Request> all;
  while (auto r = source.next()) all.push_back(*r);
  // Stage 1: prefill pool.
  std::vector<std::vector<Request>> pre(static_cast<std::size_t>(P));
  for (std::size_t i = 0; i < all.size(); ++i) {
    Request r = all[i];
    r.output_tokens = 1;
    pre[i % static_cast<std::size_t>(P)].push_back(r);
  }
  ServeOptions po = o;
  po.record_requests = true;
  std::vector<double> first(all.size(), 0);
  ServeResult out;
  out.first_arrival_s = all.empty() ? 0 : all.front().arrival_s;
  for (auto& list : pre) {
    auto src = list_source(list);
    IterationCostModel cost(m, gpu, engine, mode);
    ServeResult r = simulate_serving(*src, cost, m, gpu, po);
    for (const auto& rec : r.records) first[static_cast<std::size_t>(rec.id)] = rec.first_token_s;
    out.queue.merge(r.queue);
    out.iterations += r.iterations;
    out.preemptions += r.preemptions;
    out.busy_s += r.busy_s;
  }
  // The KV cache's trip to the decode pool.
  const KvBudget kv = kv_budget(m, gpu, o.scheduler);
  const double bytes_per_token = kv.bytes_per_block / double(o.scheduler.block_size);
  const double link =
      d.link_bytes_per_s > 0 ? d.link_bytes_per_s : gpu.interconnect.nvlink_bandwidth;
  if (link <= 0)
    throw std::invalid_argument("disaggregated: no link bandwidth (give link_bandwidth)");
  std::vector<std::vector<Request>> dec(static_cast<std::size_t>(D));
  std::size_t k = 0;
  for (std::size_t i = 0; i < all.size(); ++i) {
    const Request& a = all[i];
    if (a.output_tokens <= 1) {
      // Done on the prefill GPU: its first token is its last.
      const double ttft = first[i] - a.arrival_s;
      out.ttft.add(ttft);
      out.e2e.add(ttft);
      ++out.requests;
      out.output_tokens += 1;
      out.prompt_tokens += a.prompt_tokens;
      if ((o.slo.ttft_s <= 0 || ttft <= o.slo.ttft_s) && (o.slo.e2e_s <= 0 || ttft <= o.slo.e2e_s))
        ++out.slo_met;
      out.makespan_s = std::max(out.makespan_s, first[i]);
      if (o.record_requests)
        out.records.push_back(
            {a.id, a.arrival_s, first[i], first[i], first[i], a.prompt_tokens, 1, 0});
      continue;
    }
    Request r = a;
    r.origin_arrival_s = a.arrival_s;
    r.first_token_s = first[i];
    r.arrival_s = first[i] + d.link_latency_s + double(a.prompt_tokens) * bytes_per_token / link;
    dec[k++ % static_cast<std::size_t>(D)].push_back(r);
  }
  // Stage 2: decode pool.
  for (std::size_t g = 0; g < dec.size(); ++g) {
    auto& list = dec[g];
    std::stable_sort(list.begin(), list.end(),
                     [](const Request& x, const Request& y) { return x.arrival_s < y.arrival_s; });
    auto src = list_source(list);
    IterationCostModel cost(m, gpu, engine, mode);
    ServeResult r = simulate_serving(*src, cost, m, gpu, o);
    out.ttft.merge(r.ttft);
    out.tpot.merge(r.tpot);
    out.e2e.merge(r.e2e);
    out.requests += r.requests;
    out.slo_met += r.slo_met;
    out.preemptions += r.preemptions;
    out.iterations += r.iterations;
    out.prompt_tokens += r.prompt_tokens;
    out.output_tokens += r.output_tokens;
    out.busy_s += r.busy_s;
    out.makespan_s = std::max(out.makespan_s, r.makespan_s);
    out.max_kv_used = std::max(out.max_kv_used, r.max_kv_used);
    out.max_batch = std::max(out.max_batch, r.max_batch);
    if (g == 0) {
      out.series = r.series;  // decode GPU 0's
      out.kv = r.kv;
    }
    for (auto& rec : r.records) out.records.push_back(rec);
  }
  return out;
}

}  // namespace ridge::workloads
