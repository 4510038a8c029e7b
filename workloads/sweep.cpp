#include "workloads/sweep.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include "hw/gpu_loader.hpp"
#include "hw/limits.hpp"
#include "hw/system_loader.hpp"
#include "hw/units.hpp"
#include "workloads/analysis.hpp"
#include "workloads/parallel.hpp"
#include "workloads/parallel_config.hpp"

namespace ridge::workloads {

namespace {

// What a key sets and how its values read.
enum class Target { kGpu, kSystem, kWorkload, kParallel };
struct KeyInfo {
  Target target = Target::kGpu;
  bool factor = false;  ///< NAME*: a factor on the base figure
  hw::Dimension dim = hw::Dimension::kCount;
  std::string figure;  ///< name without the '*'
};

// The workload keys each workload kind takes (workloads/study.cpp reads them).
const std::map<std::string, std::vector<std::string>>& workload_kind_keys() {
  static const std::map<std::string, std::vector<std::string>> m = {
      {"train", {"micro_batch", "seq", "grad_accum", "recompute", "precision"}},
      {"prefill", {"batch", "prompt", "context", "max_len", "graph"}},
      {"decode", {"batch", "prompt", "context", "max_len", "graph"}},
      {"diffusion", {"steps"}},
  };
  return m;
}

std::vector<std::string> tensor_keys() {
  std::vector<std::string> v;
  for (hw::Precision p : hw::kAllPrecisions)
    v.push_back("tensor." + std::string(hw::precision_name(p)));
  return v;
}

}  // namespace

const std::vector<SweepKeySpec>& sweep_keys() {
  static const std::vector<SweepKeySpec> keys = [] {
    std::vector<SweepKeySpec> k = {
        {"hbm_bandwidth", "B/s", "gpu", "HBM bandwidth (what-if hbm_bandwidth)"},
        {"l2_bandwidth", "B/s", "gpu", "L2 bandwidth, all SMs (what-if l2_bandwidth)"},
        {"l2_size", "B", "gpu", "L2 capacity"},
        {"clock", "Hz", "gpu",
         "boost clock; scales tensor, vector, SFU and L2 rates with it (what-if clock)"},
        {"sm_count", "count", "gpu", "SMs; scales the chip-wide rates with it (what-if sm_count)"},
        {"tensor.<precision>", "FLOP/s", "gpu",
         "dense tensor rate of one precision (fp64 fp32 tf32 fp16 bf16 fp8 fp4 int8); sparse "
         "scales with it"},
        {"tensor*", "factor", "gpu", "every tensor rate x factor (what-if tensor)"},
        {"host_launch*", "factor", "gpu", "every host cost / factor (what-if host_launch)"},
        {"nvlink_bandwidth", "B/s", "system",
         "NVLink per GPU per direction (parallel studies; what-if nvlink_bandwidth)"},
        {"nic_bandwidth", "B/s", "system",
         "per NIC per direction (parallel studies; what-if nic_bandwidth)"},
        {"NAME*", "factor", "gpu/system",
         "any figure above as a factor on the study's own value, e.g. hbm_bandwidth*"},
        {"batch prompt context max_len graph", "as in the study", "workload",
         "prefill and decode workloads (every workload that takes the key)"},
        {"micro_batch seq grad_accum recompute precision", "as in the study", "workload",
         "train workloads"},
        {"steps", "as in the study", "workload", "diffusion workloads"},
        {"tp pp dp gpus micro_batch global_batch seq ...", "as in the study", "parallel",
         "any key of study.parallel but system (ridge describe parallel)"},
    };
    return k;
  }();
  return keys;
}

namespace {

// Every key valid for this study, with how it reads.
std::map<std::string, KeyInfo> valid_keys(const Study& s) {
  std::map<std::string, KeyInfo> m;
  auto figure = [&](const std::string& name, Target t, hw::Dimension d, bool absolute) {
    if (absolute) m[name] = {t, false, d, name};
    m[name + "*"] = {t, true, hw::Dimension::kFraction, name};
  };
  using D = hw::Dimension;
  figure("hbm_bandwidth", Target::kGpu, D::kBandwidth, true);
  figure("l2_bandwidth", Target::kGpu, D::kBandwidth, true);
  figure("l2_size", Target::kGpu, D::kBytes, true);
  figure("clock", Target::kGpu, D::kFrequency, true);
  figure("sm_count", Target::kGpu, D::kCount, true);
  figure("tensor", Target::kGpu, D::kFlopRate, false);
  figure("host_launch", Target::kGpu, D::kFraction, false);
  for (const auto& k : tensor_keys()) figure(k, Target::kGpu, D::kFlopRate, true);
  if (s.parallel) {
    figure("nvlink_bandwidth", Target::kSystem, D::kBandwidth, true);
    figure("nic_bandwidth", Target::kSystem, D::kBandwidth, true);
    for (const auto& k : parallel_keys())
      if (std::string(k.key) != "system") m[k.key] = {Target::kParallel, false, D::kCount, k.key};
  } else {
    std::set<std::string> kinds;
    for (const auto& w : s.workloads) {
      switch (w.kind) {
        case WorkloadKind::kTrain:
          kinds.insert("train");
          break;
        case WorkloadKind::kPrefill:
          kinds.insert("prefill");
          break;
        case WorkloadKind::kDecode:
          kinds.insert("decode");
          break;
        case WorkloadKind::kDiffusion:
          kinds.insert("diffusion");
          break;
      }
    }
    for (const auto& k : kinds)
      for (const auto& key : workload_kind_keys().at(k))
        m[key] = {Target::kWorkload, false, D::kCount, key};
  }
  return m;
}

std::string canonical(const hw::ConfigNode& n) {
  switch (n.kind) {
    case hw::ConfigNode::Kind::kNull:
      return "~";
    case hw::ConfigNode::Kind::kScalar:
      return fmt::format("s{}:{}", n.scalar.size(), n.scalar);
    case hw::ConfigNode::Kind::kMap: {
      std::string s = "{";
      for (const auto& e : n.entries)
        s += fmt::format("k{}:{}={};", e.first.size(), e.first, canonical(e.second));
      return s + "}";
    }
    case hw::ConfigNode::Kind::kSequence: {
      std::string s = "[";
      for (const auto& i : n.items) s += canonical(i) + ",";
      return s + "]";
    }
  }
  return "";
}

std::string number_text(double v) {
  return fmt::format("{}", v);
}

// Parses one value of `key` at `n`; figures to a number, parameters kept as the scalar.
std::optional<SweepValue> read_value(const hw::ConfigNode& n, const std::string& path,
                                     const KeyInfo& k, hw::ErrorSink& sink) {
  if (n.kind != hw::ConfigNode::Kind::kScalar) {
    sink.add(n, path, "expected a single value");
    return std::nullopt;
  }
  SweepValue v;
  v.node = n;
  if (k.target == Target::kWorkload || k.target == Target::kParallel) {
    v.text = n.scalar;
    return v;
  }
  const hw::ParsedQuantity q = hw::parse_quantity(n.scalar, k.dim);
  if (!q.error.empty()) {
    sink.add(n, path, q.error);
    return std::nullopt;
  }
  if (k.factor) {
    if (!(q.value >= hw::kMinWhatIfFactor && q.value <= hw::kMaxWhatIfFactor)) {
      sink.add(n, path,
               fmt::format("a factor must be in [{}, {}]; got {}", hw::kMinWhatIfFactor,
                           hw::kMaxWhatIfFactor, n.scalar));
      return std::nullopt;
    }
  } else if (!(q.value > 0) || !std::isfinite(q.value)) {
    sink.add(n, path,
             fmt::format("expected a positive {} in {}; got {}", k.figure, hw::base_unit(k.dim),
                         n.scalar));
    return std::nullopt;
  } else if (k.dim == hw::Dimension::kCount && q.value != std::floor(q.value)) {
    sink.add(n, path, fmt::format("expected a whole number; got {}", n.scalar));
    return std::nullopt;
  }
  v.number = q.value;
  v.text = number_text(q.value);
  return v;
}

// {from, to, steps, scale} or {values: [...]}, a list, or one scalar: the values of one grid key.
std::vector<SweepValue> read_axis(const hw::ConfigNode& n, const std::string& path,
                                  const KeyInfo& k, hw::ErrorSink& sink) {
  std::vector<SweepValue> out;
  auto list = [&](const hw::ConfigNode& seq, const std::string& p) {
    if (seq.items.empty()) sink.add(seq, p, "expected at least one value");
    for (std::size_t i = 0; i < seq.items.size(); ++i)
      if (auto v = read_value(seq.items[i], fmt::format("{}[{}]", p, i), k, sink))
        out.push_back(std::move(*v));
  };
  if (n.kind == hw::ConfigNode::Kind::kSequence) {
    list(n, path);
    return out;
  }
  if (n.kind != hw::ConfigNode::Kind::kMap) {
    if (auto v = read_value(n, path, k, sink)) out.push_back(std::move(*v));
    return out;
  }
  hw::MapReader r(n, path, sink);
  if (r.has("values")) {
    const hw::ConfigNode* vals = r.child("values", true);
    for (const char* other : {"from", "to", "steps", "scale"})
      if (r.has(other))
        sink.add(*r.child(other, false), r.key_path(other),
                 "a key takes either values: or a range (from, to, steps), not both");
    if (vals->kind != hw::ConfigNode::Kind::kSequence)
      sink.add(*vals, r.key_path("values"), "expected a list of values");
    else
      list(*vals, r.key_path("values"));
    r.finish();
    return out;
  }
  const hw::ConfigNode* from = r.child("from", true);
  const hw::ConfigNode* to = r.child("to", true);
  const long long steps =
      r.integer("steps", std::nullopt, 0, static_cast<long long>(kMaxSweepPoints));
  const std::string scale = r.choice("scale", "linear", {"linear", "log"});
  r.finish();
  if (!from || !to) return out;
  if (steps < 1) {
    if (const hw::ConfigNode* s = n.find("steps");
        s && s->kind == hw::ConfigNode::Kind::kScalar && s->scalar == "0")
      sink.add(*s, r.key_path("steps"), "a range of zero steps has no values (steps >= 1)");
    return out;
  }
  // Parameters in a range are whole numbers (batch, seq, tp, ...); figures are quantities.
  const bool param = k.target == Target::kWorkload || k.target == Target::kParallel;
  KeyInfo numeric = k;
  if (param) numeric = {k.target, true, hw::Dimension::kCount, k.figure};
  auto endpoint = [&](const hw::ConfigNode& e, const char* name) -> std::optional<double> {
    if (param) {
      const hw::ParsedQuantity q = hw::parse_quantity(e.scalar, hw::Dimension::kCount);
      if (e.kind != hw::ConfigNode::Kind::kScalar || !q.error.empty()) {
        sink.add(e, r.key_path(name), "expected a number");
        return std::nullopt;
      }
      return q.value;
    }
    auto v = read_value(e, r.key_path(name), k, sink);
    return v ? std::optional<double>(v->number) : std::nullopt;
  };
  const auto a = endpoint(*from, "from");
  const auto b = endpoint(*to, "to");
  if (!a || !b || scale.empty()) return out;
  if (scale == "log" && !(*a > 0 && *b > 0)) {
    sink.add(*from, r.key_path("from"), "a log range needs from and to above zero");
    return out;
  }
  std::set<std::string> seen;
  for (long long i = 0; i < steps; ++i) {
    const double t = steps == 1 ? 0.0 : static_cast<double>(i) / static_cast<double>(steps - 1);
    double x = scale == "log" ? *a * std::pow(*b / *a, t) : *a + (*b - *a) * t;
    if (i == steps - 1) x = *b;  // exactly the endpoint, whatever the rounding
    SweepValue v;
    v.node = *from;
    if (param) {
      const long long whole = std::llround(x);
      v.text = std::to_string(whole);
      v.node.scalar = v.text;
      v.number = static_cast<double>(whole);
    } else {
      v.number = x;
      v.text = number_text(x);
    }
    if (!seen.insert(v.text).second) {
      sink.add(n, path,
               fmt::format("the range gives {} twice (whole numbers): fewer steps or a wider "
                           "range",
                           v.text));
      return {};
    }
    out.push_back(std::move(v));
  }
  return out;
}

// Sets `key` to `value` in the workload maps of the study tree that take it (or the parallel
// block); returns how many it set.
int set_parameter(hw::ConfigNode& root, const std::string& key, const hw::ConfigNode& value,
                  bool parallel) {
  hw::ConfigNode* study = root.find("study");
  if (!study || study->kind != hw::ConfigNode::Kind::kMap) return 0;
  auto set = [&](hw::ConfigNode& m) {
    if (hw::ConfigNode* e = m.find(key)) {
      *e = value;
    } else {
      m.entries.push_back({key, value});
    }
  };
  if (parallel) {
    hw::ConfigNode* p = study->find("parallel");
    if (!p || p->kind != hw::ConfigNode::Kind::kMap) return 0;
    set(*p);
    return 1;
  }
  int n = 0;
  auto workload = [&](hw::ConfigNode& w) {
    if (w.kind != hw::ConfigNode::Kind::kMap) return;
    const hw::ConfigNode* kind = w.find("kind");
    if (!kind) return;
    auto it = workload_kind_keys().find(kind->scalar);
    if (it == workload_kind_keys().end()) return;
    if (std::find(it->second.begin(), it->second.end(), key) == it->second.end()) return;
    set(w);
    ++n;
  };
  if (hw::ConfigNode* w = study->find("workload")) workload(*w);
  if (hw::ConfigNode* list = study->find("workloads"))
    for (auto& w : list->items) workload(w);
  return n;
}

void apply_gpu_figure(hw::GpuSpec& g, const KeyInfo& k, double v) {
  auto what_if = [&](const std::string& target, double factor) {
    WhatIf w;
    w.target = target;
    w.factor = factor;
    w.gpu_figure = true;
    w.text = fmt::format("{}*{}", target, factor);
    g = scaled_gpu(g, w);
  };
  const std::string& f = k.figure;
  if (f == "hbm_bandwidth") return what_if(f, k.factor ? v : v / g.memory.hbm_bandwidth);
  if (f == "l2_bandwidth") return what_if(f, k.factor ? v : v / g.memory.l2_bandwidth);
  if (f == "clock") return what_if(f, k.factor ? v : v / g.clocks.boost_hz);
  if (f == "sm_count") return what_if(f, k.factor ? v : v / g.sm.count);
  if (f == "tensor" || f == "host_launch") return what_if(f, v);
  if (f == "l2_size") {
    g.memory.l2_size = k.factor ? g.memory.l2_size * v : v;
    return;
  }
  for (hw::Precision p : hw::kAllPrecisions) {
    if (f != "tensor." + std::string(hw::precision_name(p))) continue;
    const double old = g.compute.tensor_dense[p];
    const double now = k.factor ? old * v : v;
    if (old > 0 && g.compute.tensor_sparse.count(p)) g.compute.tensor_sparse[p] *= now / old;
    g.compute.tensor_dense[p] = now;
  }
}

}  // namespace

Sweep load_sweep(const std::string& path, const std::string& salt) {
  hw::LoadedConfig cfg = hw::load_config_file(path);
  hw::ErrorSink sink;
  Sweep s;
  s.path = path;
  s.files = cfg.files;
  // The study without its sweep block: read as `ridge run` reads it.
  hw::ConfigNode block;
  bool has_block = false;
  {
    auto& e = cfg.root.entries;
    for (auto it = e.begin(); it != e.end(); ++it)
      if (it->first == "sweep") {
        block = it->second;
        has_block = true;
        e.erase(it);
        break;
      }
  }
  if (!has_block) {
    sink.add(cfg.root, "sweep",
             "the study has no sweep: block (grid: or points:; see ridge describe sweep)");
    sink.throw_if_any();
  }
  s.study = read_study(cfg, path);  // throws with the study's own problems
  s.model = load_model_config(s.study.model_path);
  if (s.study.parallel) {
    s.system = hw::find_system(s.study.parallel->system);
    s.gpu = s.system.node.gpu;
  } else {
    s.gpu = hw::find_gpu(s.study.gpu_name);
  }
  const std::map<std::string, KeyInfo> valid = valid_keys(s.study);
  std::vector<std::string_view> names;
  for (const auto& [k, _] : valid) names.push_back(k);
  auto key_info = [&](const std::string& key, const hw::ConfigNode& at,
                      const std::string& p) -> const KeyInfo* {
    auto it = valid.find(key);
    if (it != valid.end()) return &it->second;
    std::string msg = fmt::format("unknown sweep key '{}'", key);
    if ((key == "nvlink_bandwidth" || key == "nic_bandwidth" || key == "nvlink_bandwidth*" ||
         key == "nic_bandwidth*") &&
        !s.study.parallel)
      msg += " (a system figure: only parallel studies, with study.parallel, run on a system)";
    else if (const std::string near = hw::nearest_word(key, names); !near.empty())
      msg += fmt::format(" (did you mean '{}'?)", near);
    else
      msg += "; ridge describe sweep lists the keys";
    sink.add(at, p, msg);
    return nullptr;
  };

  std::vector<std::vector<SweepValue>> rows;  // per point, per key
  std::vector<const KeyInfo*> infos;
  if (block.kind != hw::ConfigNode::Kind::kMap || block.entries.empty()) {
    sink.add(block, "sweep", "an empty sweep: expected grid: {KEY: VALUES, ...} or points: [...]");
  } else {
    hw::MapReader r(block, "sweep", sink);
    const bool grid = r.has("grid"), list = r.has("points");
    if (grid == list)
      sink.add(block, "sweep",
               grid ? "expected grid: or points:, not both"
                    : "expected grid: {KEY: VALUES, ...} or points: [...]");
    if (grid && list) {
      r.ignore("grid");
      r.ignore("points");
    } else if (grid) {
      const hw::ConfigNode* g = r.child("grid", true);
      if (g->kind != hw::ConfigNode::Kind::kMap || g->entries.empty()) {
        sink.add(*g, "sweep.grid", "an empty sweep: expected at least one KEY: VALUES");
      } else {
        std::vector<std::vector<SweepValue>> axes;
        for (const auto& e : g->entries) {
          const std::string p = "sweep.grid." + e.first;
          const KeyInfo* k = key_info(e.first, e.second, p);
          if (!k) continue;
          s.keys.push_back(e.first);
          infos.push_back(k);
          axes.push_back(read_axis(e.second, p, *k, sink));
        }
        double total = 1;
        for (const auto& a : axes) total *= static_cast<double>(a.size());
        if (total > static_cast<double>(kMaxSweepPoints))
          sink.add(*g, "sweep.grid",
                   fmt::format("{:.0f} points; at most {} in one sweep", total, kMaxSweepPoints));
        else if (total > 0 && sink.empty()) {
          for (const auto& a : axes) s.grid_shape.push_back(a.size());
          const std::size_t n = static_cast<std::size_t>(total);
          for (std::size_t i = 0; i < n; ++i) {
            std::vector<SweepValue> row(axes.size());
            std::size_t rest = i;
            for (std::size_t a = axes.size(); a-- > 0;) {
              row[a] = axes[a][rest % axes[a].size()];
              rest /= axes[a].size();
            }
            rows.push_back(std::move(row));
          }
        }
      }
    }
    if (list && !grid) {
      const hw::ConfigNode* pts = r.child("points", true);
      if (pts->kind != hw::ConfigNode::Kind::kSequence || pts->items.empty()) {
        sink.add(*pts, "sweep.points", "an empty sweep: expected a list of points ({KEY: VALUE})");
      } else if (pts->items.size() > kMaxSweepPoints) {
        sink.add(*pts, "sweep.points", fmt::format("at most {} points", kMaxSweepPoints));
      } else {
        for (std::size_t i = 0; i < pts->items.size(); ++i) {
          const hw::ConfigNode& pt = pts->items[i];
          const std::string pp = fmt::format("sweep.points[{}]", i);
          if (pt.kind != hw::ConfigNode::Kind::kMap || pt.entries.empty()) {
            sink.add(pt, pp, "expected a map of KEY: VALUE");
            continue;
          }
          std::vector<std::string> keys;
          for (const auto& e : pt.entries) keys.push_back(e.first);
          if (i == 0) {
            for (const auto& e : pt.entries) {
              const KeyInfo* k = key_info(e.first, e.second, pp + "." + e.first);
              s.keys.push_back(e.first);
              infos.push_back(k);
            }
          } else if (keys != s.keys) {
            sink.add(pt, pp,
                     fmt::format("every point sets the same keys in the same order ({})",
                                 fmt::join(s.keys, ", ")));
            continue;
          }
          std::vector<SweepValue> row;
          for (std::size_t j = 0; j < pt.entries.size(); ++j) {
            if (!infos[j]) continue;
            if (auto v = read_value(pt.entries[j].second, pp + "." + pt.entries[j].first, *infos[j],
                                    sink))
              row.push_back(std::move(*v));
          }
          rows.push_back(std::move(row));
        }
      }
    }
    r.finish();
  }
  sink.throw_if_any();

  // The study hash: the study tree without the sweep, the files it reads, the tool's version.
  std::string h = salt + "\n" + canonical(cfg.root) + "\n";
  for (const auto& f : s.model.files) h += f.second + "\n";
  for (const auto& f : s.study.parallel ? s.system.files : s.gpu.files) h += f.second + "\n";
  s.study_hash = hw::sha256_hex(h);
  for (const auto& f : s.model.files) s.files.push_back(f);
  for (const auto& f : s.study.parallel ? s.system.files : s.gpu.files) s.files.push_back(f);

  // Each point's study, read once per distinct set of parameter values (s.studies[0]: the base).
  std::map<std::string, std::size_t> read;
  std::set<std::string> reported;
  // The parsed tree is copied and the point's parameters set on it; the model and GPU files the
  // base study named were loaded and checked above, and are not read again per point.
  const StudyFilesLoaded base_files{s.study.model_path, &s.model, s.study.gpu_name};
  hw::ErrorSink point_sink;
  s.studies.push_back(s.study);
  for (auto& row : rows) {
    SweepPoint pt;
    std::string key_text = s.study_hash + "\n";
    std::string params;
    for (std::size_t j = 0; j < row.size(); ++j) {
      key_text += s.keys[j] + "=" + row[j].text + "\n";
      if (infos[j]->target == Target::kWorkload || infos[j]->target == Target::kParallel)
        params += s.keys[j] + "=" + row[j].text + "\n";
    }
    pt.key = hw::sha256_hex(key_text);
    if (params.empty()) {
      pt.study = 0;
    } else if (auto it = read.find(params); it != read.end()) {
      pt.study = it->second;
    } else {
      hw::LoadedConfig tree = cfg;
      for (std::size_t j = 0; j < row.size(); ++j)
        if (infos[j]->target == Target::kWorkload || infos[j]->target == Target::kParallel)
          set_parameter(tree.root, s.keys[j], row[j].node, infos[j]->target == Target::kParallel);
      try {
        s.studies.push_back(read_study(tree, path, &base_files));
        pt.study = read[params] = s.studies.size() - 1;
      } catch (const hw::ConfigException& e) {
        // Once per problem (the first point that has it), at most 20.
        for (auto err : e.errors()) {
          if (!reported.insert(err.str()).second || reported.size() > 20) continue;
          std::string at = params.substr(0, params.size() - 1);
          std::replace(at.begin(), at.end(), '\n', ' ');
          err.message += fmt::format(" (at the sweep point {})", at);
          point_sink.add(err);
        }
      }
    }
    pt.values = std::move(row);
    s.points.push_back(std::move(pt));
  }
  point_sink.throw_if_any();

  // Result columns.
  if (s.study.parallel) {
    s.columns = {"step_s", "tokens_per_s", "mfu", "bubble_s", "peak_memory_bytes", "fits"};
  } else {
    std::map<std::string, int> count;
    for (const auto& w : s.study.workloads) ++count[w.label];
    for (std::size_t i = 0; i < s.study.workloads.size(); ++i) {
      std::string l = s.study.workloads[i].label;
      if (count[l] > 1) l += fmt::format("#{}", i);
      for (const char* c : {".step_s", ".peak_memory_bytes", ".fits"}) s.columns.push_back(l + c);
    }
  }
  return s;
}

std::vector<double> evaluate_point(const Sweep& s, std::size_t index) {
  const SweepPoint& pt = s.points.at(index);
  const Study& study = s.studies.at(pt.study);
  const std::map<std::string, KeyInfo> valid = valid_keys(s.study);
  hw::GpuSpec gpu = s.gpu;
  hw::SystemSpec sys = s.system;
  for (std::size_t j = 0; j < s.keys.size(); ++j) {
    const KeyInfo& k = valid.at(s.keys[j]);
    const double v = pt.values[j].number;
    if (k.target == Target::kGpu) {
      apply_gpu_figure(gpu, k, v);
    } else if (k.target == Target::kSystem) {
      double& bw =
          k.figure == "nvlink_bandwidth" ? sys.node.nvlink.bandwidth : sys.node.nics.bandwidth;
      bw = k.factor ? bw * v : v;
    }
  }
  std::vector<double> out;
  if (study.parallel) {
    sys.node.gpu = gpu;
    const ParallelResult r = run_parallel(s.model.transformer(), *study.parallel, sys, study.mode);
    double worst = 0;
    for (const auto& m : r.memory) worst = std::max(worst, m.total());
    out = {r.step_s,   r.tokens_per_s, r.mfu,
           r.bubble_s, worst,          worst > gpu.memory.hbm_size ? 0.0 : 1.0};
    return out;
  }
  for (const auto& w : study.workloads) {
    const WorkloadResult r = run_workload(s.model, gpu, w, {}, study.mode);
    out.push_back(r.exec.step_time_s);
    out.push_back(r.memory.peak_bytes);
    out.push_back(r.memory.fits ? 1.0 : 0.0);
  }
  return out;
}

}  // namespace ridge::workloads
