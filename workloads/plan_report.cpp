// `ridge plan` outputs: text, JSON, CSV and the Pareto-front SVG (see workloads/plan.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "workloads/plan.hpp"

namespace ridge::workloads {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

std::string_view schedule_text(const ParallelOptions& o) {
  return schedule_name(o.schedule);
}

std::string_view recompute_text(Recompute r) {
  return r == Recompute::kFull ? "full" : r == Recompute::kSelective ? "selective" : "none";
}

// The step's shares on the simulated critical path, grouped: compute (every kernel class), TP,
// PP and DP communication, optimizer; and the bubble (stage 0's idle time in the pipeline).
struct Shares {
  double compute = 0, tp = 0, pp = 0, dp = 0, idle = 0, optimizer = 0;
  double offload = 0;  // PCIe copies to and from the host on the critical path
};
Shares shares(const PlanEstimate& e) {
  Shares s;
  if (!e.simulated) {
    s.tp = e.tp_comm_s;
    s.pp = e.p2p_exposed_s;
    s.dp = e.dp_exposed_s + e.param_gather_s;
    s.idle = std::max(0.0, e.bubble_s - e.p2p_exposed_s);
    s.optimizer = e.optimizer_s;
    s.offload = e.offload_exposed_s + e.offload_h2d_s;
    s.compute = std::max(0.0, e.step_s - s.tp - s.pp - s.dp - s.idle - s.optimizer - s.offload);
    return s;
  }
  for (const auto& [k, v] : e.sim_critical_s) {
    if (k == "tp_comm")
      s.tp += v;
    else if (k == "pp_comm")
      s.pp += v;
    else if (k == "dp_comm")
      s.dp += v;
    else if (k == "idle")
      continue;  // the bubble is stage 0's idle time below
    else if (k == "optimizer")
      s.optimizer += v;
    else if (k == "offload")
      s.offload += v;
    else
      s.compute += v;
  }
  // The pipeline bubble: stage 0's idle time inside the pipeline phase (the critical path runs
  // through other stages' work while stage 0 waits, so its own "idle" understates the bubble).
  s.idle = e.sim_bubble_s;
  return s;
}

std::string bound_of(const Shares& s) {
  const std::pair<double, const char*> parts[] = {
      {s.compute, "compute"}, {s.tp, "tp_comm"},          {s.pp, "pp_comm"},     {s.dp, "dp_comm"},
      {s.idle, "bubble"},     {s.optimizer, "optimizer"}, {s.offload, "offload"}};
  const auto* best = &parts[0];
  for (const auto& p : parts)
    if (p.first > best->first) best = &p;
  return best->second;
}

double objective_shown(const PlanOptions& p, const PlanEstimate& e) {
  return p.objective == PlanObjective::kTokensPerS ? -e.objective : e.objective;
}

std::string objective_unit(PlanObjective o) {
  switch (o) {
    case PlanObjective::kStepTime:
      return "s";
    case PlanObjective::kTokensPerS:
      return "tokens/s";
    case PlanObjective::kCostPerToken:
      return "$/token";
    case PlanObjective::kFewestGpus:
      return "GPUs";
  }
  return "";
}

std::string why(const PlanEstimate& e) {
  const Shares s = shares(e);
  const double step = e.step();
  auto pct = [&](double v) { return 100.0 * v / step; };
  std::string out = fmt::format(
      "{}-bound; compute {:.1f}%, bubble (stage 0 idle) {:.1f}%, exposed TP {:.1f}% PP {:.1f}% DP "
      "{:.1f}%, "
      "optimizer {:.1f}%; {:.1f} GiB of {:.1f} GiB per GPU ({:.1f} GiB headroom)",
      bound_of(s), pct(s.compute), pct(s.idle), pct(s.tp), pct(s.pp), pct(s.dp), pct(s.optimizer),
      e.memory_bytes / kGiB, e.hbm_bytes / kGiB, (e.hbm_bytes - e.memory_bytes) / kGiB);
  // CP, EP and ZeRO-3/FSDP traffic (the fast evaluator's, device 0, overlapped or not: the
  // simulated critical path counts what of it is exposed under its own kinds above).
  std::string extra;
  auto add = [&](double v, const char* what) {
    if (v > 0) extra += fmt::format("{}{} {:.1f}%", extra.empty() ? "" : ", ", what, pct(v));
  };
  add(e.cp_comm_s, "CP ring");
  add(e.ep_comm_s, "EP all-to-all");
  add(e.fsdp_comm_s, "ZeRO-3 gather/reduce-scatter");
  if (!extra.empty()) out += "; streams busy (of the step, overlapped or not): " + extra;
  if (e.layout.offloads())
    out += fmt::format(
        "; optimizer{} offloaded to the host: CPU Adam {:.1f}%, PCIe copies "
        "{:.1f}% exposed, {:.0f} GB of {:.0f} GB host memory per node",
        e.layout.offloads_params() ? " and parameters (fetched per layer)" : "", pct(s.optimizer),
        pct(s.offload), e.host_bytes / 1e9, e.host_usable_bytes / 1e9);
  return out;
}

nlohmann::json layout_json(const ParallelOptions& o) {
  return {{"tp", o.tp},
          {"pp", o.pp},
          {"dp", o.dp},
          {"micro_batch", o.micro_batch},
          {"sequence_parallel", o.sequence_parallel},
          {"recompute", recompute_text(o.recompute)},
          {"zero", o.zero},
          {"cp", o.cp},
          {"ep", o.ep},
          {"fsdp", o.fsdp},
          {"offload", offload_name(o.offload)},
          {"schedule", schedule_text(o)},
          {"virtual_stages", o.virtual_stages}};
}

}  // namespace

std::string plan_report_text(const PlanResult& r) {
  const PlanOptions& p = r.options;
  std::string out = fmt::format("plan: {} on {} ({}), global batch {} x {} tokens, objective {}\n",
                                r.model_name, r.system.name, r.system.node.gpu.name, p.global_batch,
                                p.seq, objective_name(p.objective));
  out += fmt::format(
      "searched {} layouts; {} fit in {:.1f} GiB per GPU ({:.0f}% of HBM kept free); top {} "
      "re-simulated\n",
      r.enumerated, r.fitting, r.system.node.gpu.memory.hbm_size * (1 - p.memory_headroom) / kGiB,
      100 * p.memory_headroom, r.top.size());
  if (r.top.empty()) return out;
  const bool priced = p.usd_per_gpu_hour > 0;
  std::size_t w = 34;  // the layout column: wider for long names (offload layouts)
  for (const auto& e : r.top) w = std::max(w, layout_name(e.layout).size());
  out += fmt::format("\n{:>3}  {:<{}} {:>5} {:>10} {:>10} {:>7} {:>10} {:>6} {:>9}{}  {}\n", "#",
                     "layout", w, "GPUs", "step (s)", "fast (s)", "fast err", "tokens/s", "MFU",
                     "GiB/GPU", priced ? "   $/M tokens" : "", "bound");
  int i = 0;
  for (const auto& e : r.top) {
    const double tokens = double(p.global_batch) * p.seq;
    out += fmt::format(
        "{:>3}  {:<{}} {:>5} {:>10.3f} {:>10.3f} {:>+6.1f}% {:>10.0f} {:>5.1f}% "
        "{:>9.1f}{}  {}\n",
        ++i, layout_name(e.layout), w, e.gpus, e.sim_step_s, e.step_s,
        100 * (e.step_s / e.sim_step_s - 1), tokens / e.sim_step_s, 100 * e.mfu,
        e.memory_bytes / kGiB,
        priced ? fmt::format(" {:>12.3f}",
                             p.usd_per_gpu_hour * e.gpus * e.sim_step_s / 3600 / tokens * 1e6)
               : std::string(),
        bound_of(shares(e)));
  }
  out += "\nwhy (shares of the simulated step: critical path by kind; bubble = stage 0 idle):\n";
  i = 0;
  for (const auto& e : r.top) out += fmt::format("{:>3}. {}\n", ++i, why(e));
  double worst = 0, sum = 0;
  for (const auto& e : r.top) {
    const double err = std::abs(e.step_s / e.sim_step_s - 1);
    worst = std::max(worst, err), sum += err;
  }
  out += fmt::format(
      "\nfast evaluator against the full simulation on these {}: mean |error| {:.1f}%, worst "
      "{:.1f}%\n",
      r.top.size(), 100 * sum / r.top.size(), 100 * worst);
  out += fmt::format("ranked by {} ({}), ties by step time, GPUs, memory per GPU, layout name\n",
                     objective_name(p.objective), objective_unit(p.objective));
  return out;
}

nlohmann::json plan_report_json(const PlanResult& r) {
  const PlanOptions& p = r.options;
  nlohmann::json j;
  j["model"] = r.model_name;
  j["system"] = r.system.name;
  j["objective"] = objective_name(p.objective);
  j["global_batch"] = p.global_batch;
  j["seq"] = p.seq;
  j["memory_headroom"] = p.memory_headroom;
  j["usable_memory_bytes_per_gpu"] = r.system.node.gpu.memory.hbm_size * (1 - p.memory_headroom);
  j["enumerated"] = r.enumerated;
  j["fitting"] = r.fitting;
  nlohmann::json top = nlohmann::json::array();
  for (const auto& e : r.top) {
    const Shares s = shares(e);
    top.push_back({{"layout", layout_json(e.layout)},
                   {"name", layout_name(e.layout)},
                   {"gpus", e.gpus},
                   {"step_s", e.sim_step_s},
                   {"fast_step_s", e.step_s},
                   {"fast_error", e.step_s / e.sim_step_s - 1},
                   {"objective", objective_shown(p, e)},
                   {"tokens_per_s", double(p.global_batch) * p.seq / e.sim_step_s},
                   {"mfu", e.mfu},
                   {"memory_bytes_per_gpu", e.memory_bytes},
                   {"bound", bound_of(s)},
                   {"critical_s",
                    {{"compute", s.compute},
                     {"bubble", s.idle},
                     {"tp_comm", s.tp},
                     {"pp_comm", s.pp},
                     {"dp_comm", s.dp},
                     {"optimizer", s.optimizer},
                     {"offload", s.offload}}},
                   {"host_bytes_per_node", e.host_bytes}});
  }
  j["top"] = top;
  nlohmann::json front = nlohmann::json::array();
  for (const auto& e : r.frontier)
    front.push_back({{"name", layout_name(e.layout)},
                     {"gpus", e.gpus},
                     {"fast_step_s", e.step_s},
                     {"memory_bytes_per_gpu", e.memory_bytes}});
  j["pareto_front"] = front;
  return j;
}

std::string plan_report_csv(const PlanResult& r) {
  const PlanOptions& p = r.options;
  std::string out =
      "rank,tp,pp,dp,micro_batch,sequence_parallel,recompute,zero,schedule,virtual_stages,gpus,"
      "step_s,fast_step_s,fast_error,tokens_per_s,mfu,memory_gib_per_gpu,bound,cp,ep,fsdp,"
      "offload\n";
  int i = 0;
  for (const auto& e : r.top) {
    const ParallelOptions& o = e.layout;
    out += fmt::format(
        "{},{},{},{},{},{},{},{},{},{},{},{:.6g},{:.6g},{:.4f},{:.6g},{:.4f},{:.3f},{},{},{},{},{}"
        "\n",
        ++i, o.tp, o.pp, o.dp, o.micro_batch, o.sequence_parallel ? 1 : 0,
        recompute_text(o.recompute), o.zero, schedule_text(o), o.virtual_stages, e.gpus,
        e.sim_step_s, e.step_s, e.step_s / e.sim_step_s - 1,
        double(p.global_batch) * p.seq / e.sim_step_s, e.mfu, e.memory_bytes / kGiB,
        bound_of(shares(e)), o.cp, o.ep, o.fsdp ? 1 : 0, offload_name(o.offload));
  }
  return out;
}

std::string plan_svg(const PlanResult& r) {
  // x: GPUs when several counts were searched, else memory per GPU (GiB); y: step time (s).
  const bool by_gpus =
      r.options.gpus.size() > 1 ||
      (r.options.gpus.empty() && r.options.objective == PlanObjective::kFewestGpus);
  auto xval = [&](const PlanEstimate& e) {
    return by_gpus ? double(e.gpus) : e.memory_bytes / kGiB;
  };
  const double W = 760, H = 480, L = 80, R = 30, T = 50, B = 60;
  const double pw = W - L - R, ph = H - T - B;
  double x0 = 1e300, x1 = -1e300, y0 = 1e300, y1 = -1e300;
  auto grow = [&](double x, double y) {
    x0 = std::min(x0, x), x1 = std::max(x1, x), y0 = std::min(y0, y), y1 = std::max(y1, y);
  };
  for (const auto& e : r.frontier) grow(xval(e), e.step_s);
  for (const auto& e : r.top) grow(xval(e), e.sim_step_s), grow(xval(e), e.step_s);
  std::string s = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" "
      "font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" "
      "fill=\"white\"/>\n",
      W, H);
  s += fmt::format(
      "<text x=\"{}\" y=\"24\" font-size=\"15\">ridge plan: {} on {} (Pareto front, "
      "fast evaluator; top {} re-simulated)</text>\n",
      L, r.model_name, r.system.name, r.top.size());
  if (r.frontier.empty()) return s + "</svg>\n";
  if (x1 <= x0) x0 *= 0.9, x1 *= 1.1;
  if (y1 <= y0) y0 *= 0.9, y1 *= 1.1;
  const double xm = (x1 - x0) * 0.05, ym = (y1 - y0) * 0.08;
  x0 -= xm, x1 += xm, y0 = std::max(0.0, y0 - ym), y1 += ym;
  auto X = [&](double x) { return L + (x - x0) / (x1 - x0) * pw; };
  auto Y = [&](double y) { return T + ph - (y - y0) / (y1 - y0) * ph; };
  s += fmt::format(
      "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" "
      "stroke=\"#444\"/>\n",
      L, T, pw, ph);
  for (int k = 0; k <= 5; ++k) {
    const double xv = x0 + (x1 - x0) * k / 5, yv = y0 + (y1 - y0) * k / 5;
    s += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{:.4g}</text>\n", X(xv),
                     T + ph + 18, xv);
    s += fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{:.4g}</text>\n", L - 6,
                     Y(yv) + 4, yv);
  }
  s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", L + pw / 2, H - 16,
                   by_gpus ? "GPUs" : "memory per GPU (GiB)");
  s += fmt::format(
      "<text x=\"20\" y=\"{}\" transform=\"rotate(-90 20 {})\" "
      "text-anchor=\"middle\">step time (s)</text>\n",
      T + ph / 2, T + ph / 2);
  std::string pts;
  for (const auto& e : r.frontier) pts += fmt::format("{:.1f},{:.1f} ", X(xval(e)), Y(e.step_s));
  s += fmt::format(
      "<polyline points=\"{}\" fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"2\"/>\n", pts);
  for (const auto& e : r.frontier)
    s += fmt::format(
        "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"#1f77b4\"><title>{}: "
        "{:.3f} s (fast)</title></circle>\n",
        X(xval(e)), Y(e.step_s), layout_name(e.layout), e.step_s);
  int i = 0;
  for (const auto& e : r.top) {
    ++i;
    s += fmt::format(
        "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"5\" fill=\"none\" stroke=\"#d62728\" "
        "stroke-width=\"2\"><title>#{} {}: {:.3f} s simulated</title></circle>\n",
        X(xval(e)), Y(e.sim_step_s), i, layout_name(e.layout), e.sim_step_s);
    if (i == 1)  // the best only: the top k often share a point
      s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" fill=\"#d62728\">#{} {}</text>\n",
                       X(xval(e)) + 8, Y(e.sim_step_s) - 6, i, layout_name(e.layout));
  }
  s += fmt::format(
      "<text x=\"{}\" y=\"{}\" fill=\"#1f77b4\">blue: Pareto front (fast "
      "evaluator)</text>\n<text x=\"{}\" y=\"{}\" fill=\"#d62728\">red: top {} "
      "(full simulation)</text>\n",
      L + pw - 250, T + 16, L + pw - 250, T + 32, r.top.size());
  return s + "</svg>\n";
}

}  // namespace ridge::workloads
