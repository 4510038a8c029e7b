#include "workloads/graph_yaml.hpp"

#include <fmt/format.h>

#include <map>
#include <sstream>

#include "hw/units.hpp"

namespace ridge::workloads {
namespace {

std::vector<std::string> split_words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

Category default_category(const std::string& kind) {
  if (kind == "gemm" || kind == "conv2d") return Category::kGemm;
  if (kind == "attention") return Category::kAttention;
  if (kind == "copy") return Category::kMemoryCopy;
  if (kind == "adamw") return Category::kOptimizer;
  return Category::kElementwise;
}

std::string nearest(const std::string& name, const std::map<std::string, int>& known) {
  std::string best;
  int bd = 3;
  for (const auto& [k, v] : known) {
    const int d = hw::edit_distance(name, k);
    if (d < bd) bd = d, best = k;
  }
  return best.empty() ? "" : fmt::format(" (did you mean '{}'?)", best);
}

}  // namespace

GraphFile read_graph_yaml(const hw::ConfigNode& root) {
  hw::ErrorSink sink;
  GraphFile f;
  hw::MapReader top(root, "", sink);
  // A missing kind is reported by text() (it dereferenced a null node: found by fuzz_graph on an
  // empty file; `ridge export chakra empty.yaml` crashed).
  if (top.text("kind") != "graph" && top.has("kind"))
    sink.add(*top.child("kind", false), "kind", "expected 'graph'");
  f.question = top.text("question", "");
  f.gpu = top.text("gpu", "h200");
  const std::string mode = top.text("mode", "fast");
  if (mode == "detailed")
    f.mode = TimingMode::kDetailed;
  else if (mode != "fast")
    sink.add(*top.child("mode", false), "mode", "expected fast or detailed");
  if (top.has("kernel_gap")) f.kernel_gap_s = top.quantity("kernel_gap", hw::Dimension::kTime);
  f.what_ifs = top.text_list("what_if");
  for (const auto& w : f.what_ifs) {
    try {
      parse_what_if(w);
    } catch (const std::invalid_argument& e) {
      sink.add(*top.child("what_if", false), "what_if", e.what());
    }
  }
  std::map<std::string, int> last_id;  // op name -> graph id of its last repeat
  std::map<std::string, int> streams = {{"default", 0}};
  f.stream_names = {"default"};
  const hw::ConfigNode* ops = top.child("ops", true);
  if (ops && ops->kind != hw::ConfigNode::Kind::kSequence) {
    sink.add(*ops, "ops", "expected a list of ops");
  } else if (ops) {
    for (std::size_t i = 0; i < ops->items.size(); ++i) {
      const std::string path = fmt::format("ops[{}]", i);
      if (ops->items[i].kind != hw::ConfigNode::Kind::kMap) {
        sink.add(ops->items[i], path, "expected a map (name, op/time/host, ...)");
        continue;
      }
      hw::MapReader m(ops->items[i], path, sink);
      const std::string name = m.text("name");
      // A missing name is reported by text(); two missing ones are not a duplicate (that
      // dereferenced the absent key's node: found by fuzz_graph).
      if (!name.empty() && last_id.count(name))
        sink.add(*m.child("name", false), m.key_path("name"), "duplicate op name '" + name + "'");
      OpNode n;
      n.name = name;
      n.host_dispatches = 0;
      const int kinds = m.has("op") + m.has("time") + m.has("host");
      if (kinds != 1) {
        sink.add(ops->items[i], path, "expected exactly one of op, time, host");
        m.ignore("op"), m.ignore("time"), m.ignore("host");
      } else if (m.has("host")) {
        n.kind = NodeKind::kHost;
        n.category = Category::kHost;
        n.kernels = 0;
        n.fixed_time_s = m.quantity("host", hw::Dimension::kTime, std::nullopt, 0, 1e6);
      } else if (m.has("time")) {
        n.fixed_time_s = m.quantity("time", hw::Dimension::kTime, std::nullopt, 1e-12, 1e6);
        n.op = models::OpSpec::parse("launch", {});
      } else {
        const std::string text = m.text("op");
        const auto words = split_words(text);
        try {
          if (words.empty()) throw std::invalid_argument("empty op");
          n.op = models::OpSpec::parse(words[0],
                                       std::vector<std::string>(words.begin() + 1, words.end()));
          if (n.op.kind() == "copy") n.kind = NodeKind::kCopy;
          n.category = default_category(n.op.kind());
        } catch (const std::invalid_argument& e) {
          sink.add(*m.child("op", false), m.key_path("op"),
                   fmt::format("{} (`ridge describe ops` lists the vocabulary)", e.what()));
        }
      }
      if (m.has("category")) {
        Category c;
        if (parse_category(m.text("category"), c) && n.kind != NodeKind::kHost)
          n.category = c;
        else
          sink.add(*m.child("category", false), m.key_path("category"),
                   "expected gemm, attention, elementwise, memory_copy, optimizer or "
                   "communication (host work is always host)");
      }
      const std::string stream = m.text("stream", "default");
      auto [sit, added] = streams.emplace(stream, static_cast<int>(streams.size()));
      if (added) f.stream_names.push_back(stream);
      n.stream = n.kind == NodeKind::kHost ? 0 : sit->second;
      std::vector<int> deps;
      for (const auto& a : m.text_list("after")) {
        auto it = last_id.find(a);
        if (it == last_id.end())
          sink.add(*m.child("after", false), m.key_path("after"),
                   fmt::format("unknown op '{}'{}: `after` names ops listed earlier", a,
                               nearest(a, last_id)));
        else
          deps.push_back(it->second);
      }
      const long long repeat = m.integer("repeat", 1, 1, 1'000'000);
      const double gap = m.quantity("gap", hw::Dimension::kTime, 0.0, 0, 1e6);
      m.finish();
      int id = -1;
      for (long long r = 0; r < repeat; ++r) {
        if (gap > 0) {
          OpNode h;
          h.name = name + ".gap";
          h.kind = NodeKind::kHost;
          h.category = Category::kHost;
          h.host_dispatches = 0;
          h.kernels = 0;
          h.fixed_time_s = gap;
          f.graph.add(std::move(h));
        }
        OpNode copy = n;
        if (repeat > 1) copy.name = fmt::format("{}#{}", name, r);
        id = f.graph.add(std::move(copy), r == 0 ? deps : std::vector<int>{id});
      }
      last_id[name] = id;
    }
  }
  top.finish();
  sink.throw_if_any();
  return f;
}

GraphFile load_graph_yaml(const std::string& path) {
  const hw::LoadedConfig cfg = hw::load_config_file(path);
  GraphFile f = read_graph_yaml(cfg.root);
  f.files = cfg.files;
  return f;
}

ExecOptions graph_exec_options(const GraphFile& f) {
  ExecOptions o;
  o.mode = f.mode;
  o.host_from_graph = true;
  o.kernel_gap_s = f.kernel_gap_s;
  return o;
}

GraphRun run_graph(const GraphFile& f, const hw::GpuSpec& gpu) {
  GraphRun r;
  const ExecOptions o = graph_exec_options(f);
  r.exec = execute(f.graph, gpu, o);
  r.step_s = r.exec.step_time_s;
  for (const auto& w : f.what_ifs) {
    const WhatIf wi = parse_what_if(w);
    if (!wi.gpu_figure) require_what_if_target(wi, f.graph, "graph");
    r.what_ifs.push_back(run_what_if(f.graph, gpu, o, r.exec, wi));
  }
  return r;
}

std::string graph_run_text(const GraphFile& f, const GraphRun& r, const std::string& gpu_name) {
  std::string s;
  if (!f.question.empty()) s += f.question + "\n\n";
  s += fmt::format("Graph of {} op(s) on {}: {:.4f} ms end to end\n\n", f.graph.size(), gpu_name,
                   r.step_s * 1e3);
  s += "| op | stream | start | end | duration |\n|---|---|---:|---:|---:|\n";
  for (std::size_t i = 0; i < f.graph.size(); ++i) {
    const OpNode& n = f.graph.op(static_cast<int>(i));
    const OpRecord& rec = r.exec.ops[i];
    const std::string stream =
        n.kind == NodeKind::kHost ? "host" : f.stream_names[static_cast<std::size_t>(n.stream)];
    s += fmt::format("| {} | {} | {:.4f} ms | {:.4f} ms | {:.4f} ms |\n", n.name, stream,
                     rec.start_s * 1e3, rec.end_s * 1e3, rec.duration_s * 1e3);
  }
  if (!r.what_ifs.empty()) {
    s += "\n| what-if | step | saved | simulated speed-up | Amdahl (f, s) |\n"
         "|---|---:|---:|---:|---:|\n";
    for (const auto& w : r.what_ifs)
      s += fmt::format("| {} | {:.4f} ms | {:.4f} ms | {:.4f}x | {:.4f}x (f {:.4f}) |\n",
                       w.what_if.text, w.step_s * 1e3, (w.baseline_s - w.step_s) * 1e3,
                       w.simulated_speedup, w.amdahl_speedup, w.fraction);
  }
  return s;
}

nlohmann::json graph_run_json(const GraphFile& f, const GraphRun& r) {
  nlohmann::json ops = nlohmann::json::array();
  for (std::size_t i = 0; i < f.graph.size(); ++i) {
    const OpNode& n = f.graph.op(static_cast<int>(i));
    const OpRecord& rec = r.exec.ops[i];
    ops.push_back({{"name", n.name},
                   {"start_s", rec.start_s},
                   {"end_s", rec.end_s},
                   {"duration_s", rec.duration_s}});
  }
  nlohmann::json w = nlohmann::json::array();
  for (const auto& x : r.what_ifs)
    w.push_back({{"what_if", x.what_if.text},
                 {"step_s", x.step_s},
                 {"simulated_speedup", x.simulated_speedup},
                 {"amdahl_speedup", x.amdahl_speedup},
                 {"fraction", x.fraction}});
  return {{"question", f.question}, {"step_s", r.step_s}, {"ops", ops}, {"what_ifs", w}};
}

}  // namespace ridge::workloads
