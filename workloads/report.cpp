// Text and JSON reports of a study, and its Perfetto trace.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "sim/trace.hpp"
#include "workloads/study.hpp"

namespace ridge::workloads {
namespace {

std::string ftime(double s) {
  if (s >= 1) return fmt::format("{:.3f} s", s);
  if (s >= 1e-3) return fmt::format("{:.3f} ms", s * 1e3);
  return fmt::format("{:.2f} us", s * 1e6);
}
std::string fbytes(double b) {
  return b >= 1e9 ? fmt::format("{:.1f} GB", b / 1e9) : fmt::format("{:.1f} MB", b / 1e6);
}

std::string describe(const WorkloadSpec& w) {
  switch (w.kind) {
    case WorkloadKind::kTrain:
      return fmt::format(
          "training step: micro-batch {} x seq {}, grad_accum {}, recompute {}, {}{}",
          w.train.micro_batch, w.train.seq, w.train.grad_accum, recompute_name(w.train.recompute),
          w.precision == PrecisionScheme::kMixed ? "bf16 weights with an fp32 master copy (mixed)"
                                                 : "bf16 autocast over fp32 weights",
          // Selective recomputation recomputes the attention core, which FlashAttention's
          // backward recomputes anyway: the step's kernels are those of recompute none.
          w.train.recompute == Recompute::kSelective
              ? "\n  note: recompute selective adds no kernels here (FlashAttention's backward "
                "already recomputes the attention scores); it changes the activation memory only"
              : "");
    case WorkloadKind::kPrefill:
      return fmt::format("prefill: batch {} x {} prompt tokens", w.infer.batch, w.infer.prompt);
    case WorkloadKind::kDecode:
      return fmt::format("decode step: batch {}, context {}, {}", w.infer.batch, w.infer.context,
                         w.infer.cuda_graph ? "CUDA graph replay" : "eager");
    case WorkloadKind::kDiffusion:
      return fmt::format("diffusion pipeline: K = {} denoiser steps", w.diffusion.steps);
  }
  return "";
}

double memory_bound_fraction(const WorkloadResult& r) {
  double mem = 0, all = 0;
  for (const auto& p : r.roofline) {
    all += p.time_s;
    if (p.bound == "memory") mem += p.time_s;
  }
  return all > 0 ? mem / all : 0;
}

std::string verdict(const WorkloadResult& r) {
  const double T = r.exec.step_time_s;
  auto share = [&](const char* k) {
    auto it = r.path.by_class_s.find(k);
    return it == r.path.by_class_s.end() ? 0.0 : it->second / T;
  };
  const double host = share("host_launch") + share("host");
  const double mem = memory_bound_fraction(r);
  if (host > 0.5)
    return fmt::format(
        "host-bound: {:.0f}% of the step is the host issuing launches; the GPU is busy {:.0f}% of "
        "it. "
        "Fewer launches (CUDA graphs, fusion, torch.compile) help; faster kernels do not.",
        100 * host, 100 * r.exec.gpu_busy_s / T);
  std::string top;
  double best = 0;
  for (const auto& [k, v] : r.path.by_class_s)
    if (k != "idle" && v > best) best = v, top = k;
  return fmt::format(
      "GPU-bound: {} is {:.0f}% of the critical path; {:.0f}% of kernel time is memory-bound "
      "(HBM bandwidth helps that part), {:.0f}% compute-bound.",
      top, 100 * best / T, 100 * mem, 100 * (1 - mem));
}

}  // namespace

std::string report_text(const StudyResult& s) {
  std::string o;
  if (!s.study.question.empty()) o += fmt::format("Question: {}\n", s.study.question);
  const std::string mname =
      s.model.is_transformer() ? s.model.transformer().name : s.model.diffusion().name;
  o += fmt::format("Model: {} ({} parameters{}) on {} [{} mode]\n", mname,
                   s.model.is_transformer()
                       ? fmt::format("{:.2f}B", s.model.transformer().parameter_count() / 1e9)
                       : "see memory",
                   "", s.gpu.name, s.study.mode == TimingMode::kFast ? "fast" : "detailed");
  o += fmt::format("Model source: {}\n", s.model.source);
  for (const auto& r : s.results) {
    const double T = r.exec.step_time_s;
    o += fmt::format("\n== {} ==\n{}\n", r.spec.label, describe(r.spec));
    o += fmt::format(
        "step time {}; {} kernels from {}; host busy {} ({:.0f}%), GPU busy {} "
        "({:.0f}%)\n",
        ftime(T), r.exec.kernels,
        r.graph.captured_end > r.graph.captured_begin
            ? std::string("one CUDA graph launch")
            : fmt::format("{} eager host dispatches", r.graph.dispatch_count()),
        ftime(r.exec.host_busy_s), 100 * r.exec.host_busy_s / T, ftime(r.exec.gpu_busy_s),
        100 * r.exec.gpu_busy_s / T);
    if (r.spec.kind == WorkloadKind::kTrain) {
      const double peak = s.gpu.matmul_peak(hw::Precision::kBf16);
      o += fmt::format(
          "GEMM+attention FLOPs {:.3g}: {:.1f} TFLOP/s achieved, MFU {:.1f}% of bf16 dense peak\n",
          r.model_flops, r.model_flops / T / 1e12, 100 * r.model_flops / T / peak);
    }
    o += "verdict: " + verdict(r) + "\n";
    o += "critical path (sums to the step time)      summed op durations (overlap: not a budget)\n";
    const auto summed = summed_by_category(r.graph, r.exec);
    std::vector<std::string> classes = {"gemm",      "attention", "elementwise", "memory_copy",
                                        "optimizer", "host",      "host_launch", "idle"};
    double sum = 0;
    for (const auto& c : classes) {
      const double v = r.path.by_class_s.count(c) ? r.path.by_class_s.at(c) : 0.0;
      const double w = summed.count(c) ? summed.at(c) : 0.0;
      sum += v;
      if (v == 0 && w == 0) continue;
      o += fmt::format("  {:<12} {:>11} {:>5.1f}%            {:>11}\n", c, ftime(v), 100 * v / T,
                       w > 0 ? ftime(w) : "");
    }
    o += fmt::format("  {:<12} {:>11} {:>5.1f}%\n", "total", ftime(sum), 100 * sum / T);
    // Top ops on the critical path (device activity), by summed time per op name without layer
    // index.
    std::map<std::string, std::pair<double, int>> agg;
    for (const auto& seg : r.path.segments) {
      if (seg.op < 0 || seg.host) continue;
      std::string n = r.graph.op(seg.op).name;
      const auto dot = n.find('.');
      if (n.rfind("layer", 0) == 0 || n.rfind("step", 0) == 0) n = "*" + n.substr(dot);
      if (n.rfind("*.dit.block", 0) == 0) n = "*.dit.*" + n.substr(n.find('.', 11));
      agg[n].first += seg.t1_s - seg.t0_s;
      agg[n].second += 1;
    }
    std::vector<std::pair<std::string, std::pair<double, int>>> top(agg.begin(), agg.end());
    std::sort(top.begin(), top.end(),
              [](auto& a, auto& b) { return a.second.first > b.second.first; });
    o += "largest ops on the critical path (* = every layer/step):\n";
    for (std::size_t i = 0; i < std::min<std::size_t>(6, top.size()); ++i)
      o += fmt::format("  {:<32} {:>11} {:>5.1f}%  x{}\n", top[i].first, ftime(top[i].second.first),
                       100 * top[i].second.first / T, top[i].second.second);
    if (!r.what_ifs.empty()) {
      o += "what-if                   step time   simulated  Amdahl S=1/((1-f)+f/s)  f\n";
      for (const auto& w : r.what_ifs)
        o += fmt::format("  {:<22} {:>11}   {:>6.3f}x   {:>6.3f}x                {:>5.1f}%{}\n",
                         w.what_if.text, ftime(w.step_s), w.simulated_speedup, w.amdahl_speedup,
                         100 * w.fraction,
                         std::fabs(w.simulated_speedup - w.amdahl_speedup) > 0.05 * w.amdahl_speedup
                             ? "  <- overlap/critical path: Amdahl is off"
                             : "");
      for (const auto& w : r.what_ifs)
        if (!w.note.empty()) o += fmt::format("  note: {}: {}\n", w.what_if.text, w.note);
    }
    o += fmt::format(
        "memory: peak {} of {} HBM: {}\n", fbytes(r.memory.peak_bytes),
        fbytes(r.memory.capacity_bytes),
        r.memory.fits ? "fits" : fmt::format("DOES NOT FIT, {} over", fbytes(r.memory.over_bytes)));
    for (const auto& i : r.memory.items)
      o += fmt::format("  {:<18} {:>10}  {}\n", i.name, fbytes(i.bytes), i.note);
    for (const auto& sgg : r.memory.suggestions) o += "  to fit: " + sgg + "\n";
    int mem = 0, comp = 0;
    for (const auto& p : r.roofline) (p.bound == "memory" ? mem : comp)++;
    o += fmt::format(
        "roofline: {} kernels memory-bound, {} compute-bound ({:.0f}% of kernel time "
        "memory-bound)\n",
        mem, comp, 100 * memory_bound_fraction(r));
  }
  if (s.results.size() > 1) {
    o += "\nsummary\n";
    const double t0 = s.results.front().exec.step_time_s;
    for (const auto& r : s.results)
      o +=
          fmt::format("  {:<28} {:>11}  {:>6.2f}x vs {}\n", r.spec.label, ftime(r.exec.step_time_s),
                      t0 / r.exec.step_time_s, s.results.front().spec.label);
  }
  return o;
}

nlohmann::json report_json(const StudyResult& s) {
  nlohmann::json j;
  j["question"] = s.study.question;
  j["gpu"] = s.gpu.name;
  j["model"] = {{"path", s.study.model_path}, {"source", s.model.source}};
  j["mode"] = s.study.mode == TimingMode::kFast ? "fast" : "detailed";
  j["workloads"] = nlohmann::json::array();
  for (const auto& r : s.results) {
    nlohmann::json w;
    w["label"] = r.spec.label;
    w["description"] = describe(r.spec);
    w["step_time_s"] = r.exec.step_time_s;
    w["kernels"] = r.exec.kernels;
    w["host_dispatches"] = r.graph.dispatch_count();
    w["host_busy_s"] = r.exec.host_busy_s;
    w["gpu_busy_s"] = r.exec.gpu_busy_s;
    w["model_flops"] = r.model_flops;
    w["verdict"] = verdict(r);
    w["critical_path_s"] = r.path.by_class_s;
    w["summed_durations_s"] = summed_by_category(r.graph, r.exec);
    w["what_if"] = nlohmann::json::array();
    for (const auto& x : r.what_ifs) {
      nlohmann::json e = {{"what_if", x.what_if.text},
                          {"step_time_s", x.step_s},
                          {"simulated_speedup", x.simulated_speedup},
                          {"fraction", x.fraction},
                          {"amdahl_speedup", x.amdahl_speedup}};
      if (!x.note.empty()) e["note"] = x.note;
      w["what_if"].push_back(std::move(e));
    }
    nlohmann::json mem = {{"peak_bytes", r.memory.peak_bytes},
                          {"capacity_bytes", r.memory.capacity_bytes},
                          {"fits", r.memory.fits},
                          {"over_bytes", r.memory.over_bytes},
                          {"suggestions", r.memory.suggestions}};
    for (const auto& i : r.memory.items)
      mem["items"].push_back({{"name", i.name}, {"bytes", i.bytes}, {"note", i.note}});
    w["memory"] = mem;
    nlohmann::json ops = nlohmann::json::array();
    std::map<int, const RooflinePoint*> rp;
    for (const auto& p : r.roofline) rp[p.op] = &p;
    for (std::size_t i = 0; i < r.graph.size(); ++i) {
      const OpNode& n = r.graph.op(static_cast<int>(i));
      const OpRecord& e = r.exec.ops[i];
      nlohmann::json op = {{"name", n.name},
                           {"category", category_name(n.category)},
                           {"stream", n.stream},
                           {"issue_s", e.issue_s},
                           {"start_s", e.start_s},
                           {"end_s", e.end_s},
                           {"on_critical_path", r.path.on_path[i] != 0}};
      if (n.kind == NodeKind::kKernel || n.kind == NodeKind::kCopy) op["op"] = n.op.str();
      if (auto it = rp.find(static_cast<int>(i)); it != rp.end())
        op["roofline"] = {{"intensity", it->second->intensity},
                          {"attainable_flops_per_s", it->second->attainable},
                          {"bound", it->second->bound}};
      ops.push_back(std::move(op));
    }
    w["ops"] = std::move(ops);
    j["workloads"].push_back(std::move(w));
  }
  return j;
}

std::string trace_json(const StudyResult& s) {
  sim::Tracer t;
  t.set_metadata("study", s.study.question);
  t.set_metadata("gpu", s.gpu.name);
  for (const auto& r : s.results) {
    const std::string proc = fmt::format("GPU ({})", r.spec.label);
    // Memory counter: the resident state, plus activations growing through forward and shrinking
    // through backward (training), one layer at a time.
    double base = 0, act_layer = 0;
    for (const auto& i : r.memory.items) {
      if (i.name == "activations" && r.spec.kind == WorkloadKind::kTrain)
        act_layer = i.bytes;
      else
        base += i.bytes;
    }
    int layers = 0;
    for (std::size_t i = 0; i < r.graph.size(); ++i)
      layers = std::max(layers, r.graph.op(static_cast<int>(i)).layer + 1);
    if (layers > 0) act_layer /= layers;
    std::vector<int> first(static_cast<std::size_t>(layers), -1),
        last(static_cast<std::size_t>(layers), -1);
    for (std::size_t i = 0; i < r.graph.size(); ++i) {
      const int l = r.graph.op(static_cast<int>(i)).layer;
      if (l < 0) continue;
      if (first[static_cast<std::size_t>(l)] < 0)
        first[static_cast<std::size_t>(l)] = static_cast<int>(i);
      last[static_cast<std::size_t>(l)] = static_cast<int>(i);
    }
    std::vector<std::pair<double, double>> deltas = {{0.0, base}};
    if (act_layer > 0)
      for (int l = 0; l < layers; ++l) {
        deltas.push_back(
            {r.exec.ops[static_cast<std::size_t>(first[static_cast<std::size_t>(l)])].start_s,
             act_layer});
        deltas.push_back(
            {r.exec.ops[static_cast<std::size_t>(last[static_cast<std::size_t>(l)])].end_s,
             -act_layer});
      }
    std::stable_sort(deltas.begin(), deltas.end(),
                     [](auto& a, auto& b) { return a.first < b.first; });
    double level = 0;
    for (const auto& [ts, d] : deltas) {
      level += d;
      t.counter(proc, "memory (GB)", sim::Time::from_seconds(ts), level / 1e9);
    }
    for (std::size_t i = 0; i < r.graph.size(); ++i) {
      const OpNode& n = r.graph.op(static_cast<int>(i));
      const OpRecord& e = r.exec.ops[i];
      const bool cp = r.path.on_path[i] != 0;
      const std::string args =
          fmt::format(R"({{"category":"{}","on_critical_path":{}{}}})", category_name(n.category),
                      cp ? "true" : "false",
                      n.kind == NodeKind::kKernel || n.kind == NodeKind::kCopy
                          ? ",\"op\":\"" + sim::Tracer::json_escape(n.op.str()) + "\""
                          : std::string());
      if (e.issue_s > e.host_begin_s)
        t.slice(proc, "host thread", n.kind == NodeKind::kHost ? n.name : "launch " + n.name,
                sim::Time::from_seconds(e.host_begin_s), sim::Time::from_seconds(e.issue_s), args);
      if ((n.kind == NodeKind::kKernel || n.kind == NodeKind::kCopy) && e.end_s > e.start_s)
        t.slice(proc, fmt::format("stream {}", n.stream), n.name,
                sim::Time::from_seconds(e.start_s), sim::Time::from_seconds(e.end_s), args);
    }
  }
  return t.to_json();
}

}  // namespace ridge::workloads
