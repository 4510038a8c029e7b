// Running a serving study, its capacity search, and its outputs.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>

#include "hw/config.hpp"
#include "hw/gpu_loader.hpp"
#include "hw/limits.hpp"
#include "hw/system_loader.hpp"
#include "sim/trace.hpp"
#include "workloads/parallel.hpp"
#include "workloads/serving.hpp"

namespace ridge::workloads {

namespace {

ServeOptions options_for(const ServeStudy& s, const TransformerConfig& m) {
  ServeOptions o;
  o.scheduler = s.scheduler;
  o.slo = s.slo;
  o.max_context = m.max_positions;
  return o;
}

const char* policy_name(SchedulerPolicy p) {
  switch (p) {
    case SchedulerPolicy::kStatic:
      return "static";
    case SchedulerPolicy::kPrefillFirst:
      return "prefill_first";
    case SchedulerPolicy::kContinuous:
      return "continuous";
    case SchedulerPolicy::kChunked:
      return "chunked";
  }
  return "?";
}

double duration_s(const ServeResult& r) {
  return std::max(1e-12, r.makespan_s - r.first_arrival_s);
}

}  // namespace

std::vector<Request> study_trace(const ServeStudy& s, const TransformerConfig& m) {
  if (s.arrivals.trace_path.empty()) return {};
  return load_trace(s.arrivals.trace_path, m.max_positions);
}

bool meets_slo(const ServeResult& r, const SloSpec& slo) {
  const double p = slo.percentile;
  if (slo.ttft_s > 0 && r.ttft.percentile(p) > slo.ttft_s) return false;
  if (slo.tpot_s > 0 && r.tpot.count() > 0 && r.tpot.percentile(p) > slo.tpot_s) return false;
  if (slo.e2e_s > 0 && r.e2e.percentile(p) > slo.e2e_s) return false;
  return true;
}

ServeResult serve_at_rate(const ServeStudy& s, const TransformerConfig& m, const hw::GpuSpec& gpu,
                          const std::vector<Request>& lengths, double rate, long long requests,
                          std::uint64_t seed) {
  ArrivalSpec a = s.arrivals;
  if (a.process == ArrivalProcess::kTrace) a.process = ArrivalProcess::kPoisson;
  a.rate_per_s = rate;
  a.requests = requests;
  a.seed = seed;
  auto src = make_source(a, lengths, m.max_positions);
  if (s.disagg.enabled)
    return simulate_disaggregated(*src, m, gpu, s.engine, s.mode, options_for(s, m), s.disagg);
  IterationCostModel cost(m, gpu, s.engine, s.mode);
  return simulate_serving(*src, cost, m, gpu, options_for(s, m));
}

namespace {

// Sets up tensor parallelism: the system's GPU, the model's split checked, and the collectives'
// times on the first `tp` GPUs of the system (memoized by size).
void setup_tp(ServeStudy& s, const TransformerConfig& m, hw::GpuSpec& gpu) {
  if (s.system.empty()) {
    gpu = hw::find_gpu(s.gpu_name);
    return;
  }
  const hw::SystemSpec sys = hw::find_system(s.system);
  gpu = sys.node.gpu;
  s.gpu_name = sys.node.gpu_name;
  if (s.tp == 1) return;
  if (s.tp > sys.total_gpus())
    throw std::invalid_argument(
        fmt::format("serve.tp: {} GPUs, but system {} has {}", s.tp, sys.name, sys.total_gpus()));
  if (m.heads % s.tp != 0)
    throw std::invalid_argument(fmt::format(
        "serve.tp: {} does not divide the model's {} attention heads (vLLM requires it)", s.tp,
        m.heads));
  if (m.kv_heads % s.tp != 0 && s.tp % m.kv_heads != 0)
    throw std::invalid_argument(fmt::format(
        "serve.tp: {} and the model's {} KV heads: one must divide the other", s.tp, m.kv_heads));
  if (m.ffn % s.tp != 0 || m.vocab % s.tp != 0)
    throw std::invalid_argument(fmt::format(
        "serve.tp: {} does not divide the model's ffn ({}) and vocab ({})", s.tp, m.ffn, m.vocab));
  auto coll = std::make_shared<CollectiveTimes>(sys);
  std::vector<int> ranks(static_cast<std::size_t>(s.tp));
  for (int i = 0; i < s.tp; ++i) ranks[static_cast<std::size_t>(i)] = i;
  s.engine.tp = s.tp;
  s.engine.tp_collective_s = [coll, ranks](double bytes, bool gather) {
    return coll->time(gather ? models::CollOp::kAllGather : models::CollOp::kAllReduce, bytes,
                      ranks);
  };
}

}  // namespace

ServeRun run_serve(const ServeStudy& study, bool record_requests) {
  ServeRun r;
  r.model = load_model_config(study.model_path);
  if (!r.model.is_transformer())
    throw std::invalid_argument("serve needs a transformer model file");
  const TransformerConfig& m = r.model.transformer();
  ServeStudy s = study;
  setup_tp(s, m, r.gpu);
  r.study = s;
  const std::vector<Request> trace = study_trace(s, m);
  if (!s.arrivals.trace_path.empty()) {
    std::ifstream in(s.arrivals.trace_path, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    r.study.files.push_back({s.arrivals.trace_path, hw::sha256_hex(bytes)});
  }
  auto src = make_source(s.arrivals, trace, m.max_positions);
  ServeOptions opts = options_for(s, m);
  opts.record_requests = record_requests;
  if (record_requests) {
    const double n = s.arrivals.process == ArrivalProcess::kTrace
                         ? static_cast<double>(trace.size())
                         : static_cast<double>(s.arrivals.requests);
    hw::require_run_memory(n * sizeof(RequestRecord),
                           fmt::format("{}: the records of {:.0f} requests",
                                       s.files.empty() ? "serve" : s.files.front().first, n));
  }
  if (s.disagg.enabled) {
    // The disaggregated run holds every request: as read, in its prefill and decode pools, with
    // its record and first-token time.
    const double n = s.arrivals.process == ArrivalProcess::kTrace
                         ? static_cast<double>(trace.size())
                         : static_cast<double>(s.arrivals.requests);
    hw::require_run_memory(n * (3.0 * sizeof(Request) + sizeof(RequestRecord) + sizeof(double)),
                           fmt::format("{}: disaggregated serving of {:.0f} requests",
                                       s.files.empty() ? "serve" : s.files.front().first, n));
    r.result = simulate_disaggregated(*src, m, r.gpu, s.engine, s.mode, opts, s.disagg);
  } else {
    IterationCostModel cost(m, r.gpu, s.engine, s.mode);
    r.result = simulate_serving(*src, cost, m, r.gpu, opts);
  }
  if (s.capacity.enabled) {
    CapacityResult c;
    const auto ok = [&](double rate) {
      ++c.trials;
      return meets_slo(
          serve_at_rate(s, m, r.gpu, trace, rate, s.capacity.requests, s.arrivals.seed), s.slo);
    };
    // Grow until the SLO fails, then bisect to 1% of the bracket's upper end.
    double lo = 0, hi = std::min(1.0, s.capacity.max_rate_per_s);
    while (ok(hi)) {
      lo = hi;
      if (hi >= s.capacity.max_rate_per_s) break;
      hi = std::min(hi * 2, s.capacity.max_rate_per_s);
    }
    if (lo < hi) {
      while (hi - lo > 0.01 * hi && c.trials < 60) {
        const double mid = 0.5 * (lo + hi);
        (ok(mid) ? lo : hi) = mid;
      }
    }
    c.rate_per_s = lo;
    if (lo == 0) c.note = "the SLO is not met even at the lowest rate tried";
    if (s.capacity.target_rate_per_s > 0 && lo > 0)
      c.replicas = static_cast<long long>(std::ceil(s.capacity.target_rate_per_s / lo - 1e-9));
    r.capacity = c;
  }
  return r;
}

std::string serve_text(const ServeRun& run) {
  const ServeResult& r = run.result;
  const ServeStudy& s = run.study;
  const double T = duration_s(r);
  std::string o;
  if (!s.question.empty()) o += s.question + "\n";
  o += fmt::format("{} on {}: {} scheduler, max_num_seqs {}, max_batched_tokens {}\n",
                   run.model.transformer().name,
                   s.tp > 1 ? fmt::format("{} x {} (tp {}, {})", s.tp, run.gpu.name, s.tp, s.system)
                            : run.gpu.name,
                   policy_name(s.scheduler.policy), s.scheduler.max_num_seqs,
                   s.scheduler.max_batched_tokens);
  // GPUs a replica takes, and engines whose busy times are summed in busy_s.
  const int engines = s.disagg.enabled ? s.disagg.prefill_gpus + s.disagg.decode_gpus : 1;
  const int gpus = s.disagg.enabled ? engines : s.tp;
  if (s.disagg.enabled)
    o += fmt::format(
        "disaggregated: {} prefill + {} decode GPUs, KV over {:.0f} GB/s + {:.0f} us "
        "(per-GPU figures below are decode GPU 0's)\n",
        s.disagg.prefill_gpus, s.disagg.decode_gpus,
        (s.disagg.link_bytes_per_s > 0 ? s.disagg.link_bytes_per_s
                                       : run.gpu.interconnect.nvlink_bandwidth) /
            1e9,
        s.disagg.link_latency_s * 1e6);
  o += fmt::format(
      "KV cache: {} blocks of {} tokens ({:.1f} GB; weights {:.1f} GB, activations {:.1f} GB){}\n",
      r.kv.blocks, s.scheduler.block_size, r.kv.kv_bytes / 1e9, r.kv.weights_bytes / 1e9,
      r.kv.activation_bytes / 1e9, s.tp > 1 ? " per GPU" : "");
  o += fmt::format("requests {}  over {:.2f} s  iterations {}  preemptions {}\n", r.requests, T,
                   r.iterations, r.preemptions);
  o += fmt::format("throughput {:.2f} req/s  {:.0f} output tok/s  {:.0f} total tok/s\n",
                   double(r.requests) / T, double(r.output_tokens) / T,
                   double(r.output_tokens + r.prompt_tokens) / T);
  o += "            p50        p90        p99       mean\n";
  const auto row = [&](const char* name, const LogHistogram& h) {
    o += fmt::format("{:<6} {:>8.1f} ms {:>7.1f} ms {:>7.1f} ms {:>7.1f} ms\n", name,
                     h.percentile(50) * 1e3, h.percentile(90) * 1e3, h.percentile(99) * 1e3,
                     h.mean() * 1e3);
  };
  row("TTFT", r.ttft);
  row("TPOT", r.tpot);
  row("E2E", r.e2e);
  row("queue", r.queue);
  o += fmt::format("peak KV use {:.1f}%  peak batch {}  engine busy {:.1f}% (iterations running)\n",
                   r.max_kv_used * 100, r.max_batch, 100 * r.busy_s / (T * engines));
  if (s.slo.ttft_s > 0 || s.slo.tpot_s > 0 || s.slo.e2e_s > 0)
    o += fmt::format(
        "goodput {:.2f} req/s ({:.1f}% of requests meet TTFT <= {:.0f} ms, TPOT <= "
        "{:.0f} ms{})\n",
        double(r.slo_met) / T, 100.0 * double(r.slo_met) / double(r.requests), s.slo.ttft_s * 1e3,
        s.slo.tpot_s * 1e3,
        s.slo.e2e_s > 0 ? fmt::format(", E2E <= {:.0f} ms", s.slo.e2e_s * 1e3) : "");
  if (run.capacity) {
    const auto& c = *run.capacity;
    o += fmt::format(
        "capacity: {:.2f} req/s meets p{:g} of the SLO on {} ({} trials of {} "
        "{} requests){}\n",
        c.rate_per_s, s.slo.percentile,
        gpus == 1 ? std::string("one GPU") : fmt::format("one {}-GPU unit", gpus), c.trials,
        s.capacity.requests,
        s.arrivals.process == ArrivalProcess::kGamma ? fmt::format("gamma (CV {:g})", s.arrivals.cv)
                                                     : std::string("Poisson"),
        c.note.empty() ? "" : "; " + c.note);
    if (c.replicas > 0)
      o += fmt::format(
          "GPUs for {:.1f} req/s: {} ({} replicas of {}; requests split evenly at "
          "random)\n",
          s.capacity.target_rate_per_s, c.replicas * gpus, c.replicas, gpus);
  }
  return o;
}

nlohmann::json serve_json(const ServeRun& run) {
  const ServeResult& r = run.result;
  const double T = duration_s(r);
  const auto pct = [](const LogHistogram& h) {
    return nlohmann::json{{"p50_s", h.percentile(50)},
                          {"p90_s", h.percentile(90)},
                          {"p99_s", h.percentile(99)},
                          {"mean_s", h.mean()},
                          {"count", h.count()}};
  };
  nlohmann::json j;
  j["model"] = run.model.transformer().name;
  j["gpu"] = run.gpu.name;
  if (run.study.tp > 1) {
    j["tp"] = run.study.tp;
    j["system"] = run.study.system;
  }
  j["scheduler"] = policy_name(run.study.scheduler.policy);
  j["requests"] = r.requests;
  j["duration_s"] = T;
  j["iterations"] = r.iterations;
  j["preemptions"] = r.preemptions;
  j["requests_per_s"] = double(r.requests) / T;
  j["output_tokens_per_s"] = double(r.output_tokens) / T;
  j["total_tokens_per_s"] = double(r.output_tokens + r.prompt_tokens) / T;
  j["goodput_requests_per_s"] = double(r.slo_met) / T;
  j["ttft"] = pct(r.ttft);
  j["tpot"] = pct(r.tpot);
  j["e2e"] = pct(r.e2e);
  j["queue"] = pct(r.queue);
  j["kv_cache"] = {{"blocks", r.kv.blocks},
                   {"block_size", run.study.scheduler.block_size},
                   {"bytes", r.kv.kv_bytes},
                   {"peak_used_fraction", r.max_kv_used}};
  j["peak_batch"] = r.max_batch;
  const auto& dg = run.study.disagg;
  j["gpu_busy_fraction"] = r.busy_s / T / (dg.enabled ? dg.prefill_gpus + dg.decode_gpus : 1);
  j["percentile_relative_error"] = std::exp2(1.0 / (2 * LogHistogram::kPerOctave)) - 1;
  if (run.capacity) {
    const auto& d = run.study.disagg;
    j["capacity"] = {
        {"rate_per_s", run.capacity->rate_per_s},
        {"gpus_per_replica", d.enabled ? d.prefill_gpus + d.decode_gpus : run.study.tp},
        {"trials", run.capacity->trials},
        {"replicas", run.capacity->replicas},
        {"target_rate_per_s", run.study.capacity.target_rate_per_s}};
  }
  return j;
}

std::string serve_requests_csv(const ServeRun& run) {
  std::vector<RequestRecord> recs = run.result.records;
  std::sort(recs.begin(), recs.end(),
            [](const RequestRecord& a, const RequestRecord& b) { return a.id < b.id; });
  std::string o =
      "id,arrival_s,first_token_s,last_token_s,finish_s,prompt_tokens,output_tokens,preemptions\n";
  for (const auto& r : recs)
    o += fmt::format("{},{:.17g},{:.17g},{:.17g},{:.17g},{},{},{}\n", r.id, r.arrival_s,
                     r.first_token_s, r.last_token_s, r.finish_s, r.prompt_tokens, r.output_tokens,
                     r.preemptions);
  return o;
}

std::string serve_iterations_csv(const ServeRun& run) {
  std::string o = "start_s,duration_s,build_s,prefills,decodes,context_max,tokens\n";
  for (const auto& i : run.result.iteration_records)
    o += fmt::format("{:.17g},{:.17g},{:.17g},{},{},{},{}\n", i.start_s, i.duration_s, i.build_s,
                     i.prefills, i.decodes, i.context_max, i.tokens);
  return o;
}

std::string serve_trace_json(const ServeRun& run) {
  sim::Tracer t;
  t.set_metadata("model", run.model.transformer().name);
  t.set_metadata("gpu", run.gpu.name);
  const std::string proc = "server (GPU 0)";
  for (const auto& p : run.result.series.points()) {
    const auto ts = sim::Time::from_seconds(p.t_s);
    t.counter(proc, "KV cache used (%)", ts, 100 * p.kv_used);
    t.counter(proc, "batch (sequences)", ts, p.batch);
    t.counter(proc, "queue (requests)", ts, p.queue);
    t.counter(proc, "tokens per iteration", ts, double(p.tokens));
  }
  return t.to_json();
}

std::string serve_svg(const ServeRun& run) {
  const auto& pts = run.result.series.points();
  const double W = 860, panel = 160, L = 70, R = 20, Tm = 40, gap = 30;
  const double H = Tm + 3 * (panel + gap) + 20;
  const double t0 = pts.empty() ? 0 : pts.front().t_s, t1 = pts.empty() ? 1 : pts.back().t_s;
  const double span = std::max(1e-9, t1 - t0);
  std::string o = fmt::format(
      R"(<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" font-family="sans-serif" font-size="11">)"
      "\n",
      W, H);
  o += fmt::format(R"(<text x="{}" y="20" font-size="14">{} on {}: serving over time</text>)"
                   "\n",
                   L, run.model.transformer().name, run.gpu.name);
  struct Panel {
    const char* title;
    const char* colour;
    double (*get)(const SeriesPoint&);
  };
  const Panel panels[] = {
      {"KV cache used (%)", "#d62728", [](const SeriesPoint& p) { return 100 * p.kv_used; }},
      {"batch (sequences)", "#1f77b4", [](const SeriesPoint& p) { return double(p.batch); }},
      {"queue (requests)", "#2ca02c", [](const SeriesPoint& p) { return double(p.queue); }}};
  for (int k = 0; k < 3; ++k) {
    const Panel& pn = panels[k];
    const double y0 = Tm + k * (panel + gap);
    double vmax = 1;
    for (const auto& p : pts) vmax = std::max(vmax, pn.get(p));
    o += fmt::format(R"(<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="#999"/>)"
                     "\n"
                     R"(<text x="{}" y="{}">{} (max {:.4g})</text>)"
                     "\n",
                     L, y0, W - L - R, panel, L + 4, y0 + 12, pn.title, vmax);
    std::string poly;
    for (const auto& p : pts) {
      const double x = L + (p.t_s - t0) / span * (W - L - R);
      const double y = y0 + panel - pn.get(p) / vmax * (panel - 16);
      poly += fmt::format("{:.1f},{:.1f} ", x, y);
    }
    o += fmt::format(R"(<polyline fill="none" stroke="{}" stroke-width="1" points="{}"/>)"
                     "\n",
                     pn.colour, poly);
  }
  o += fmt::format(R"(<text x="{}" y="{}">time {:.3g} s to {:.3g} s</text>)"
                   "\n</svg>\n",
                   L, H - 6, t0, t1);
  return o;
}

}  // namespace ridge::workloads
