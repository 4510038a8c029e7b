#include "workloads/imported_run.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "workloads/kernel_classify.hpp"
#include "workloads/op_timer.hpp"

namespace ridge::workloads {
namespace {

Category category_of(const std::string& cls) {
  if (cls == "gemm" || cls == "conv") return Category::kGemm;
  if (cls == "attention") return Category::kAttention;
  if (cls == "copy" || cls == "memset") return Category::kMemoryCopy;
  if (cls == "communication") return Category::kCommunication;
  if (cls == "optimizer") return Category::kOptimizer;
  return Category::kElementwise;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Each op's time on `gpu` by the prediction's rule: mapped ops by the model, others measured.
std::vector<double> op_times(const ImportedRun& r, const hw::GpuSpec& gpu, TimingMode mode) {
  OpTimer timer(gpu, mode);
  std::vector<double> t;
  t.reserve(r.ops.size());
  for (const auto& o : r.ops)
    t.push_back(o.mapped ? timer.time(o.op) : static_cast<double>(o.dur_ns) * 1e-9);
  return t;
}

}  // namespace

Graph imported_graph(const ImportedRun& r, bool measured) {
  Graph g;
  std::vector<int> node_of(r.ops.size(), -1);
  for (std::size_t i = 0; i < r.ops.size(); ++i) {
    const ImportedOp& o = r.ops[i];
    if (o.host_gap_ns > 0) {
      OpNode h;
      h.name = "host";
      h.kind = NodeKind::kHost;
      h.category = Category::kHost;
      h.host_dispatches = 0;
      h.kernels = 0;
      h.fixed_time_s = static_cast<double>(o.host_gap_ns) * 1e-9;
      g.add(std::move(h));
    }
    OpNode n;
    n.name = o.name.substr(0, 120);
    n.kind = o.kind;
    n.category = category_of(o.cls);
    n.op = o.op;
    const auto s = std::find(r.streams.begin(), r.streams.end(), o.stream) - r.streams.begin();
    n.stream = static_cast<int>(s);
    n.host_dispatches = 0;
    n.kernels = o.kind == NodeKind::kKernel ? 1 : 0;
    // At least 1 ns: a zero fixed time would hand a custom op to the model.
    const double measured_s = std::max<double>(1, static_cast<double>(o.dur_ns)) * 1e-9;
    n.fixed_time_s = measured || !o.mapped ? measured_s : 0.0;
    std::vector<int> deps;
    for (int d : o.deps) deps.push_back(node_of[static_cast<std::size_t>(d)]);
    node_of[i] = g.add(std::move(n), deps);
  }
  return g;
}

double measured_kernel_gap_s(const ImportedRun& r) {
  std::map<int64_t, const ImportedOp*> last;
  std::vector<double> gaps;
  std::vector<const ImportedOp*> by_start;
  for (const auto& o : r.ops) by_start.push_back(&o);
  std::stable_sort(by_start.begin(), by_start.end(), [](const ImportedOp* a, const ImportedOp* b) {
    return a->start_ns < b->start_ns;
  });
  for (const ImportedOp* o : by_start) {
    if (o->kind != NodeKind::kKernel) {
      last.erase(o->stream);
      continue;
    }
    auto it = last.find(o->stream);
    if (it != last.end()) {
      const ImportedOp* p = it->second;
      const int64_t end = p->start_ns + p->dur_ns;
      if (o->issue_ns >= 0 && o->issue_ns < end)
        gaps.push_back(static_cast<double>(std::max<int64_t>(0, o->start_ns - end)) * 1e-9);
    }
    last[o->stream] = o;
  }
  return median(gaps);
}

double measured_launch_latency_s(const ImportedRun& r) {
  std::map<int64_t, int64_t> stream_end;  // trace stream -> end of its last op so far
  std::vector<double> lat;
  std::vector<const ImportedOp*> by_start;
  for (const auto& o : r.ops) by_start.push_back(&o);
  std::stable_sort(by_start.begin(), by_start.end(), [](const ImportedOp* a, const ImportedOp* b) {
    return a->start_ns < b->start_ns;
  });
  for (const ImportedOp* o : by_start) {
    auto it = stream_end.find(o->stream);
    const bool idle = it == stream_end.end() || it->second <= o->issue_ns;
    if (o->issue_ns >= 0 && idle && o->start_ns >= o->issue_ns)
      lat.push_back(static_cast<double>(o->start_ns - o->issue_ns) * 1e-9);
    stream_end[o->stream] = o->start_ns + o->dur_ns;
  }
  return median(lat);
}

std::vector<double> node_launch_latency_s(const ImportedRun& r, double median_s) {
  std::map<int64_t, int64_t> stream_end;
  std::vector<double> per_op(r.ops.size(), median_s);
  std::vector<std::size_t> by_start(r.ops.size());
  for (std::size_t i = 0; i < r.ops.size(); ++i) by_start[i] = i;
  std::stable_sort(by_start.begin(), by_start.end(), [&](std::size_t a, std::size_t b) {
    return r.ops[a].start_ns < r.ops[b].start_ns;
  });
  for (std::size_t i : by_start) {
    const ImportedOp& o = r.ops[i];
    auto it = stream_end.find(o.stream);
    const bool idle = it == stream_end.end() || it->second <= o.issue_ns;
    if (o.issue_ns >= 0 && idle && o.start_ns >= o.issue_ns)
      per_op[i] = static_cast<double>(o.start_ns - o.issue_ns) * 1e-9;
    stream_end[o.stream] = o.start_ns + o.dur_ns;
  }
  std::vector<double> nodes;  // same order as imported_graph: host node, then the op
  for (std::size_t i = 0; i < r.ops.size(); ++i) {
    if (r.ops[i].host_gap_ns > 0) nodes.push_back(0);
    nodes.push_back(per_op[i]);
  }
  return nodes;
}

double device_span_s(const Graph& g, const Execution& e) {
  double lo = std::numeric_limits<double>::infinity(), hi = 0;
  for (std::size_t i = 0; i < e.ops.size(); ++i) {
    const NodeKind k = g.op(static_cast<int>(i)).kind;
    if (k != NodeKind::kKernel && k != NodeKind::kCopy) continue;
    lo = std::min(lo, e.ops[i].start_s);
    hi = std::max(hi, e.ops[i].end_s);
  }
  return hi > lo ? hi - lo : 0;
}

ImportedReport run_imported(const ImportedRun& r, const hw::GpuSpec& gpu, const hw::GpuSpec* target,
                            TimingMode mode, const std::vector<std::string>& what_ifs) {
  ImportedReport rep;
  rep.source = r.source;
  rep.device = r.device;
  rep.gpu = gpu.name;
  rep.trace_span_s = static_cast<double>(r.span_ns) * 1e-9;
  rep.kernel_gap_s = measured_kernel_gap_s(r);
  rep.launch_latency_s = measured_launch_latency_s(r);

  ExecOptions replay_opt;
  replay_opt.mode = mode;
  replay_opt.host_from_graph = true;
  replay_opt.kernel_gap_s = rep.kernel_gap_s;
  replay_opt.launch_latency_s = node_launch_latency_s(r, rep.launch_latency_s);
  const Graph measured = imported_graph(r, true);
  rep.replay = execute(measured, gpu, replay_opt);
  rep.replay_span_s = device_span_s(measured, rep.replay);

  ExecOptions pred_opt;
  pred_opt.mode = mode;
  pred_opt.host_from_graph = true;
  pred_opt.launch_latency_s = replay_opt.launch_latency_s;
  const Graph predicted = imported_graph(r, false);
  rep.predicted = execute(predicted, gpu, pred_opt);
  rep.predicted_span_s = device_span_s(predicted, rep.predicted);
  for (const auto& w : what_ifs) {
    const WhatIf wi = parse_what_if(w);
    if (!wi.gpu_figure) require_what_if_target(wi, predicted, "imported");
    rep.what_ifs.push_back(run_what_if(predicted, gpu, pred_opt, rep.predicted, wi));
  }

  const std::vector<double> base = op_times(r, gpu, mode);
  std::vector<double> tgt;
  if (target) {
    rep.target_gpu = target->name;
    tgt = op_times(r, *target, mode);
    const Execution te = execute(predicted, *target, pred_opt);
    rep.target_span_s = device_span_s(predicted, te);
  }
  std::map<std::string, ClassRow> rows;
  std::map<std::string, std::vector<double>> errs;
  for (std::size_t i = 0; i < r.ops.size(); ++i) {
    const ImportedOp& o = r.ops[i];
    ClassRow& c = rows[o.cls];
    c.cls = o.cls;
    ++c.ops;
    const double m = static_cast<double>(o.dur_ns) * 1e-9;
    c.measured_s += m;
    c.base_s += base[i];
    if (target) c.target_s += tgt[i];
    if (!o.mapped) continue;
    ++c.mapped;
    c.mapped_measured_s += m;
    c.mapped_predicted_s += base[i];
    if (m > 0) errs[o.cls].push_back(std::abs(base[i] / m - 1));
  }
  for (std::string_view k : kKernelClasses) {
    auto it = rows.find(std::string(k));
    if (it == rows.end()) continue;
    it->second.median_abs_error = median(errs[it->first]);
    rep.classes.push_back(it->second);
  }
  return rep;
}

std::string imported_report_text(const ImportedReport& rep) {
  auto ms = [](double s) { return fmt::format("{:.3f} ms", s * 1e3); };
  auto pct = [](double a, double b) {
    return b > 0 ? fmt::format("{:+.1f}%", (a / b - 1) * 100) : std::string("-");
  };
  std::string s = fmt::format("Imported run {} ({})\n\n", rep.source,
                              rep.device.empty() ? "device unknown" : rep.device);
  s += fmt::format("GPU span measured in the trace: {}\n", ms(rep.trace_span_s));
  s += fmt::format(
      "measured replay (each op at its measured time, host gaps as measured, "
      "kernel gap {:.2f} us and launch latencies (median {:.2f} us) as measured): {} ({} against "
      "the "
      "trace)\n",
      rep.kernel_gap_s * 1e6, rep.launch_latency_s * 1e6, ms(rep.replay_span_s),
      pct(rep.replay_span_s, rep.trace_span_s));
  s += fmt::format(
      "predicted on {} (mapped ops by the model, unmapped at measured time): {} ({} "
      "against the trace)\n\n",
      rep.gpu, ms(rep.predicted_span_s), pct(rep.predicted_span_s, rep.trace_span_s));
  s += "Predicted vs measured per kernel class (mapped ops only; error of the class's total time, "
       "and median of the per-op absolute errors):\n\n";
  s += "| class | ops | mapped | measured (mapped) | predicted | error | median abs error | "
       "unmapped time |\n|---|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const auto& c : rep.classes) {
    s += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} |\n", c.cls, c.ops, c.mapped,
                     c.mapped ? ms(c.mapped_measured_s) : "-",
                     c.mapped ? ms(c.mapped_predicted_s) : "-",
                     c.mapped ? pct(c.mapped_predicted_s, c.mapped_measured_s) : "-",
                     c.mapped ? fmt::format("{:.1f}%", c.median_abs_error * 100) : "-",
                     ms(c.measured_s - c.mapped_measured_s));
  }
  if (!rep.target_gpu.empty()) {
    s += fmt::format(
        "\nRetargeted to {} (predicted on both; unmapped ops at their measured time "
        "on both):\n\n| class | {} | {} | speed-up |\n|---|---:|---:|---:|\n",
        rep.target_gpu, rep.gpu, rep.target_gpu);
    for (const auto& c : rep.classes)
      s += fmt::format("| {} | {} | {} | {:.2f}x |\n", c.cls, ms(c.base_s), ms(c.target_s),
                       c.target_s > 0 ? c.base_s / c.target_s : 0.0);
    s += fmt::format("| end to end (GPU span) | {} | {} | {:.2f}x |\n", ms(rep.predicted_span_s),
                     ms(rep.target_span_s),
                     rep.target_span_s > 0 ? rep.predicted_span_s / rep.target_span_s : 0.0);
  }
  if (!rep.what_ifs.empty()) {
    s += fmt::format(
        "\nWhat-ifs on the predicted run on {} (re-simulated beside Amdahl's law):\n\n"
        "| what-if | step | saved | simulated speed-up | Amdahl (f) |\n|---|---:|---:|---:|---:|\n",
        rep.gpu);
    for (const auto& w : rep.what_ifs)
      s += fmt::format("| {} | {} | {} | {:.3f}x | {:.3f}x (f {:.3f}) |\n", w.what_if.text,
                       ms(w.step_s), ms(w.baseline_s - w.step_s), w.simulated_speedup,
                       w.amdahl_speedup, w.fraction);
  }
  return s;
}

nlohmann::json imported_report_json(const ImportedReport& rep) {
  nlohmann::json classes = nlohmann::json::array();
  for (const auto& c : rep.classes) {
    nlohmann::json j = {{"class", c.cls},
                        {"ops", c.ops},
                        {"mapped", c.mapped},
                        {"measured_s", c.measured_s},
                        {"mapped_measured_s", c.mapped_measured_s},
                        {"mapped_predicted_s", c.mapped_predicted_s},
                        {"median_abs_error", c.median_abs_error}};
    if (!rep.target_gpu.empty()) j["base_s"] = c.base_s, j["target_s"] = c.target_s;
    classes.push_back(std::move(j));
  }
  nlohmann::json j = {{"source", rep.source},
                      {"device", rep.device},
                      {"gpu", rep.gpu},
                      {"trace_span_s", rep.trace_span_s},
                      {"replay_span_s", rep.replay_span_s},
                      {"replay_kernel_gap_s", rep.kernel_gap_s},
                      {"launch_latency_s", rep.launch_latency_s},
                      {"predicted_span_s", rep.predicted_span_s},
                      {"classes", classes}};
  if (!rep.target_gpu.empty())
    j["target_gpu"] = rep.target_gpu, j["target_span_s"] = rep.target_span_s;
  nlohmann::json w = nlohmann::json::array();
  for (const auto& x : rep.what_ifs)
    w.push_back({{"what_if", x.what_if.text},
                 {"step_s", x.step_s},
                 {"simulated_speedup", x.simulated_speedup},
                 {"amdahl_speedup", x.amdahl_speedup},
                 {"fraction", x.fraction}});
  j["what_ifs"] = w;
  return j;
}

}  // namespace ridge::workloads
