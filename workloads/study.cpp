#include "workloads/study.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <set>

#include "hw/config.hpp"
#include "hw/gpu_loader.hpp"
#include "hw/limits.hpp"
#include "models/op_cost.hpp"
#include "workloads/file_keys.hpp"
#include "workloads/op_timer.hpp"
#include "workloads/parallel_config.hpp"

namespace ridge::workloads {

namespace {

// An integer workload key, its range from study_keys() (the table `ridge describe study` prints).
long long wint(hw::MapReader& w, std::string_view key, long long fallback) {
  const FileKey& k = file_key(study_keys(), fmt::format("study.workloads[].{}", key));
  return w.integer(key, fallback, k.lo, k.hi);
}

WorkloadSpec read_workload(hw::MapReader& w) {
  WorkloadSpec s;
  const std::string kind =
      w.choice("kind", std::nullopt, {"train", "prefill", "decode", "diffusion"});
  s.label = w.text("label", kind);
  if (kind.empty()) {
    // Missing or unknown kind (reported): the other keys depend on it, so they are not checked
    // against some other kind's keys.
    for (const auto& e : w.node().entries) w.ignore(e.first);
    s.kind = WorkloadKind::kDecode;
    return s;
  }
  if (kind == "train")
    s.kind = WorkloadKind::kTrain;
  else if (kind == "prefill")
    s.kind = WorkloadKind::kPrefill;
  else if (kind == "decode")
    s.kind = WorkloadKind::kDecode;
  else
    s.kind = WorkloadKind::kDiffusion;
  switch (s.kind) {
    case WorkloadKind::kTrain: {
      s.train.micro_batch = wint(w, "micro_batch", 1);
      s.train.seq = wint(w, "seq", 1024);
      s.train.grad_accum = static_cast<int>(wint(w, "grad_accum", 1));
      const std::string rc = w.choice("recompute", "none", {"none", "selective", "full"});
      if (rc == "selective")
        s.train.recompute = Recompute::kSelective;
      else if (rc == "full")
        s.train.recompute = Recompute::kFull;
      else
        s.train.recompute = Recompute::kNone;
      const std::string p = w.choice("precision", "autocast", {"autocast", "mixed"});
      s.precision = p == "mixed" ? PrecisionScheme::kMixed : PrecisionScheme::kAutocast;
      s.train.bf16_weights = s.precision == PrecisionScheme::kMixed;
      break;
    }
    case WorkloadKind::kPrefill:
    case WorkloadKind::kDecode:
      s.infer.batch = wint(w, "batch", 1);
      s.infer.prompt = wint(w, "prompt", 1024);
      s.infer.context = wint(w, "context", 1024);
      s.infer.max_len = wint(w, "max_len", 2048);
      s.infer.cuda_graph = w.boolean("graph", false);
      break;
    case WorkloadKind::kDiffusion:
      s.diffusion.steps = static_cast<int>(wint(w, "steps", 20));
      break;
  }
  w.finish();
  const hw::ConfigNode& node = w.node();
  s.at[""] = {node.file, node.line, node.column, w.path(), ""};
  for (const auto& [k, c] : node.entries)
    s.at[k] = {c.file, c.line, c.column, w.key_path(k), c.scalar};
  return s;
}

// The workload's sizes against the model: a decode step's context and the token it adds must fit
// the model's positions and the KV cache (a 4096 context on a 2048-position model reported a
// cache that fits); prompts and training sequences must fit the positions.
void check_against_model(const WorkloadSpec& w, const ModelConfig& model, hw::ErrorSink& sink) {
  auto error = [&](const std::string& key, std::string message) {
    auto it = w.at.find(key);
    const bool present = it != w.at.end();
    if (!present) it = w.at.find("");  // a default: at the workload
    if (it == w.at.end()) return;
    const KeyPosition& p = it->second;
    sink.add(hw::ConfigError{p.file, p.line, p.column, present ? p.path : p.path + "." + key,
                             std::move(message)});
  };
  const std::string model_file = model.files.empty() ? "the model" : model.files.back().first;
  if (w.kind == WorkloadKind::kDiffusion) {
    if (model.is_transformer())
      error("kind", fmt::format("a diffusion workload needs a diffusion model; {} is a transformer",
                                model_file));
    return;
  }
  if (!model.is_transformer()) {
    error("kind", fmt::format("train, prefill and decode need a transformer model; {} is a "
                              "diffusion pipeline",
                              model_file));
    return;
  }
  const long long positions = model.transformer().max_positions;
  switch (w.kind) {
    case WorkloadKind::kTrain:
      if (w.train.seq > positions)
        error("seq", fmt::format("{} is over the model's max_positions {} ({})", w.train.seq,
                                 positions, model_file));
      break;
    case WorkloadKind::kPrefill:
      if (w.infer.prompt > positions)
        error("prompt", fmt::format("{} is over the model's max_positions {} ({})", w.infer.prompt,
                                    positions, model_file));
      break;
    case WorkloadKind::kDecode:
      if (w.infer.context + 1 > positions)
        error("context",
              fmt::format("{} cached tokens + the one decoded is over the model's max_positions "
                          "{} ({})",
                          w.infer.context, positions, model_file));
      if (w.infer.context + 1 > w.infer.max_len)
        error("context", fmt::format("{} cached tokens + the one decoded do not fit the KV cache's "
                                     "max_len {} (raise max_len)",
                                     w.infer.context, w.infer.max_len));
      break;
    case WorkloadKind::kDiffusion:
      break;
  }
}

}  // namespace

Study load_study(const std::string& path) {
  return read_study(hw::load_config_file(path), path);
}

Study read_study(const hw::LoadedConfig& cfg, const std::string& path,
                 const StudyFilesLoaded* loaded) {
  hw::ErrorSink sink;
  Study s;
  s.files = cfg.files;
  hw::MapReader top(cfg.root, "", sink);
  const hw::ConfigNode* gpu_node = nullptr;
  if (auto m = top.map("study")) {
    s.question = m->text("question", "");
    s.model_path = resolve_study_model(path, m->text("model"));
    s.gpu_name = m->text("gpu", "h200");
    if (const hw::ConfigNode* g = m->node().find("gpu")) gpu_node = g;
    const std::string mode = m->choice("mode", "fast", {"fast", "detailed"});
    s.mode = mode == "detailed" ? TimingMode::kDetailed : TimingMode::kFast;
    s.what_ifs = m->text_list("what_if");
    if (const hw::ConfigNode* list = m->node().find("what_if");
        list && list->kind == hw::ConfigNode::Kind::kSequence) {
      for (std::size_t i = 0; i < list->items.size(); ++i) {
        if (list->items[i].kind != hw::ConfigNode::Kind::kScalar) continue;  // reported above
        try {
          if (m->has("parallel"))
            parse_parallel_what_if(list->items[i].scalar);
          else
            parse_what_if(list->items[i].scalar);
        } catch (const std::invalid_argument& e) {
          sink.add(list->items[i], fmt::format("{}[{}]", m->key_path("what_if"), i), e.what());
        }
      }
    }
    if (m->has("parallel")) {
      if (auto p = m->map("parallel")) s.parallel = read_parallel(*p, s.model_path);
      // A parallel study runs one training step on the system's GPUs: a GPU or workloads of its
      // own would be silently unused.
      for (const char* k : {"gpu", "workload", "workloads"})
        if (m->has(k))
          sink.add(*m->child(k, false), m->key_path(k),
                   "not used with parallel: (the GPU comes from parallel.system; the step is the "
                   "parallel block's)");
    }
    if (m->has("plan"))  // workloads/plan_config.hpp
      sink.add(*m->child("plan", false), m->key_path("plan"),
               "a plan study: run it with `ridge plan` (docs/planning.md)");
    if (m->has("workload")) {
      if (auto w = m->map("workload")) s.workloads.push_back(read_workload(*w));
    }
    if (const hw::ConfigNode* list =
            m->child("workloads", !m->has("workload") && !m->has("parallel") && !m->has("plan"))) {
      if (list->kind != hw::ConfigNode::Kind::kSequence) {
        sink.add(*list, m->key_path("workloads"), "expected a list of workloads");
      } else {
        if (list->items.empty())
          sink.add(*list, m->key_path("workloads"), "expected at least one workload");
        for (std::size_t i = 0; i < list->items.size(); ++i) {
          hw::MapReader w(list->items[i], fmt::format("{}[{}]", m->key_path("workloads"), i), sink);
          s.workloads.push_back(read_workload(w));
        }
      }
    }
    m->finish();
  }
  top.finish();
  // The files the study names, checked now so that every file's errors come out together.
  if (!s.model_path.empty()) {
    try {
      if (loaded && loaded->model && loaded->model_path == s.model_path) {
        for (const auto& w : s.workloads) check_against_model(w, *loaded->model, sink);
      } else {
        const ModelConfig model = load_model_config(s.model_path);
        for (const auto& w : s.workloads) check_against_model(w, model, sink);
      }
    } catch (const hw::ConfigException& e) {
      for (const auto& err : e.errors()) sink.add(err);
    }
  }
  if (!s.gpu_name.empty() && !(loaded && loaded->gpu_name == s.gpu_name)) {
    try {
      (void)hw::find_gpu(s.gpu_name);
    } catch (const hw::ConfigException& e) {
      const hw::ConfigNode* at = gpu_node;
      for (auto err : e.errors()) {
        if (at && err.file == s.gpu_name) {  // a name, not a file: at the study's gpu key
          err = {at->file, at->line, at->column, "study.gpu", err.message};
        }
        sink.add(err);
      }
    }
  }
  sink.throw_if_any();
  return s;
}

Graph build_workload(const ModelConfig& m, const WorkloadSpec& w) {
  if (w.kind == WorkloadKind::kDiffusion) {
    if (m.is_transformer())
      throw std::invalid_argument("a diffusion workload needs a diffusion model file");
    return build_diffusion_pipeline(m.diffusion(), w.diffusion);
  }
  if (!m.is_transformer())
    throw std::invalid_argument("train, prefill and decode need a transformer model file");
  switch (w.kind) {
    case WorkloadKind::kTrain:
      return build_train_step(m.transformer(), w.train);
    case WorkloadKind::kPrefill:
      return build_prefill(m.transformer(), w.infer);
    default:
      return build_decode_step(m.transformer(), w.infer);
  }
}

WorkloadResult run_workload(const ModelConfig& m, const hw::GpuSpec& gpu, const WorkloadSpec& w,
                            const std::vector<std::string>& what_ifs, TimingMode mode) {
  WorkloadResult r;
  r.spec = w;
  r.graph = build_workload(m, w);
  ExecOptions o;
  o.mode = mode;
  r.exec = execute(r.graph, gpu, o);
  r.path = critical_path(r.graph, r.exec);
  for (const auto& t : what_ifs) {
    const WhatIf wi = parse_what_if(t);
    if (!wi.gpu_figure) require_what_if_target(wi, r.graph, w.label);
    r.what_ifs.push_back(run_what_if(r.graph, gpu, o, r.exec, wi));
  }
  const double hbm = gpu.memory.hbm_size;
  switch (w.kind) {
    case WorkloadKind::kTrain:
      r.memory = train_memory(m.transformer(), w.train, w.precision, hbm);
      break;
    case WorkloadKind::kPrefill: {
      InferenceOptions io = w.infer;
      io.max_len = std::max(io.max_len, io.prompt);
      r.memory = inference_memory(m.transformer(), io, hbm);
      break;
    }
    case WorkloadKind::kDecode: {
      InferenceOptions io = w.infer;
      io.prompt = 1;
      r.memory = inference_memory(m.transformer(), io, hbm);
      break;
    }
    case WorkloadKind::kDiffusion:
      r.memory = diffusion_memory(m.diffusion(), hbm);
      break;
  }
  r.roofline = roofline_points(r.graph, gpu, r.exec);
  for (const auto& p : r.roofline) {
    const OpNode& n = r.graph.op(p.op);
    if ((n.category == Category::kGemm || n.category == Category::kAttention) &&
        n.name.find(".recompute.") == std::string::npos)
      r.model_flops += p.flops;
  }
  return r;
}

namespace {

bool whole_number(const std::string& s, long long& v) {
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && p == s.data() + s.size();
}

// The keys of `node` (a model file's tree) whose whole-number value is one of `values`.
void keys_with_values(const hw::ConfigNode& node, const std::string& path,
                      const std::set<long long>& values, std::vector<KeyPosition>& out) {
  if (node.kind == hw::ConfigNode::Kind::kMap) {
    for (const auto& [k, v] : node.entries)
      keys_with_values(v, path.empty() ? k : path + "." + k, values, out);
  } else if (long long v = 0; node.kind == hw::ConfigNode::Kind::kScalar &&
                              whole_number(node.scalar, v) && values.count(v)) {
    out.push_back({node.file, node.line, node.column, path, node.scalar});
  }
}

// An op the kernel model refuses, reported at the file keys that sized it: the model's and the
// workload's keys whose values are among the op's parameters (a kernel that cannot launch because
// of model.head_dim is reported at head_dim's line); at the workload when none matches.
std::vector<hw::ConfigError> op_error_positions(const OpError& e, const Study& s,
                                                const WorkloadSpec& w) {
  std::set<long long> values;
  if (e.params.is_object())
    for (const auto& [k, v] : e.params.items())
      if (v.is_number_integer()) values.insert(v.get<long long>());
  std::vector<KeyPosition> keys;
  try {
    keys_with_values(hw::load_config_file(s.model_path).root, "", values, keys);
  } catch (const std::exception&) {
  }
  // Layer counts repeat ops and never size one (layers: 32 is not heads: 32); a key named as the
  // parameter it sets (head_dim, heads, vocab) comes before one that only has its value.
  std::erase_if(
      keys, [](const KeyPosition& k) { return k.path.ends_with(".layers") || k.path == "layers"; });
  std::stable_partition(keys.begin(), keys.end(), [&](const KeyPosition& k) {
    const std::string leaf = k.path.substr(k.path.rfind('.') + 1);
    return e.params.is_object() && e.params.contains(leaf);
  });
  // Before those, the keys of the model file the study names itself (an overlay's own keys are
  // what its author changed from the base).
  std::stable_partition(keys.begin(), keys.end(),
                        [&](const KeyPosition& k) { return k.file == s.model_path; });
  // The workload's keys: by value, or in pairs whose product is a parameter (tokens = batch x seq).
  std::vector<std::pair<KeyPosition, long long>> wk;
  for (const auto& [k, p] : w.at) {
    long long v = 0;
    if (!k.empty() && whole_number(p.value, v)) wk.emplace_back(p, v);
  }
  for (std::size_t i = 0; i < wk.size(); ++i) {
    if (values.count(wk[i].second)) keys.push_back(wk[i].first);
    for (std::size_t j = i + 1; j < wk.size(); ++j)
      if (wk[i].second > 1 && wk[j].second > 1 &&
          values.count(wk[i].second * wk[j].second))  // both <= 2^24: no overflow
        keys.push_back(wk[i].first), keys.push_back(wk[j].first);
  }
  const std::string op =
      fmt::format("{}{} {}", e.op_name.empty() ? "" : e.op_name + ": ", e.kind, e.params.dump());
  std::vector<hw::ConfigError> out;
  std::set<std::string> seen;
  for (const auto& k : keys)
    if (seen.insert(k.file + ":" + k.path).second)
      out.push_back({k.file, k.line, k.column, k.path,
                     out.empty()
                         ? fmt::format("{} sizes an op of workload '{}' that cannot run ({}): {}",
                                       k.value, w.label, op, e.why)
                         : fmt::format("{} sizes that op too", k.value)});
  if (out.empty()) {
    const auto it = w.at.find("");
    const KeyPosition p = it != w.at.end() ? it->second : KeyPosition{};
    out.push_back({p.file, p.line, p.column, p.path,
                   fmt::format("an op of this workload with model {} cannot run ({}): {}",
                               s.model_path, op, e.why)});
  }
  return out;
}

}  // namespace

StudyResult run_study(const Study& s) {
  StudyResult r;
  r.study = s;
  r.model = load_model_config(s.model_path);
  r.gpu = hw::find_gpu(s.gpu_name);
  for (const auto& w : s.workloads) {
    try {
      r.results.push_back(run_workload(r.model, r.gpu, w, s.what_ifs, s.mode));
    } catch (const OpError& e) {
      throw hw::ConfigException(op_error_positions(e, s, w));
    }
  }
  return r;
}

}  // namespace ridge::workloads
