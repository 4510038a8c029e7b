#include "workloads/study.hpp"

#include <fmt/format.h>

#include <filesystem>

#include "hw/config.hpp"
#include "hw/gpu_loader.hpp"
#include "models/op_cost.hpp"
#include "workloads/parallel_config.hpp"

namespace ridge::workloads {

namespace {

WorkloadSpec read_workload(hw::MapReader& w) {
  WorkloadSpec s;
  const std::string kind = w.text("kind");
  s.label = w.text("label", kind);
  if (kind == "train")
    s.kind = WorkloadKind::kTrain;
  else if (kind == "prefill")
    s.kind = WorkloadKind::kPrefill;
  else if (kind == "decode")
    s.kind = WorkloadKind::kDecode;
  else if (kind == "diffusion")
    s.kind = WorkloadKind::kDiffusion;
  else
    w.sink().add(*w.child("kind", false), w.key_path("kind"),
                 "expected train, prefill, decode or diffusion");
  switch (s.kind) {
    case WorkloadKind::kTrain: {
      s.train.micro_batch = w.integer("micro_batch", 1, 1, 1 << 20);
      s.train.seq = w.integer("seq", 1024, 1, 1 << 24);
      s.train.grad_accum = static_cast<int>(w.integer("grad_accum", 1, 1, 4096));
      const std::string rc = w.text("recompute", "none");
      if (rc == "none")
        s.train.recompute = Recompute::kNone;
      else if (rc == "selective")
        s.train.recompute = Recompute::kSelective;
      else if (rc == "full")
        s.train.recompute = Recompute::kFull;
      else
        w.sink().add(*w.child("recompute", false), w.key_path("recompute"),
                     "expected none, selective or full");
      const std::string p = w.text("precision", "autocast");
      if (p == "autocast")
        s.precision = PrecisionScheme::kAutocast;
      else if (p == "mixed")
        s.precision = PrecisionScheme::kMixed;
      else
        w.sink().add(*w.child("precision", false), w.key_path("precision"),
                     "expected autocast or mixed");
      break;
    }
    case WorkloadKind::kPrefill:
    case WorkloadKind::kDecode:
      s.infer.batch = w.integer("batch", 1, 1, 1 << 20);
      s.infer.prompt = w.integer("prompt", 1024, 1, 1 << 24);
      s.infer.context = w.integer("context", 1024, 0, 1 << 24);
      s.infer.max_len = w.integer("max_len", 2048, 1, 1 << 24);
      s.infer.cuda_graph = w.boolean("graph", false);
      break;
    case WorkloadKind::kDiffusion:
      s.diffusion.steps = static_cast<int>(w.integer("steps", 20, 1, 100000));
      break;
  }
  w.finish();
  return s;
}

std::string resolve_model(const std::string& study_path, const std::string& name) {
  namespace fs = std::filesystem;
  const fs::path rel = fs::path(study_path).parent_path() / name;
  if (fs::exists(rel) && fs::is_regular_file(rel)) return rel.string();
  if (fs::exists(name) && fs::is_regular_file(name)) return name;
  const fs::path shipped = fs::path(hw::config_dir()) / "models" / (name + ".yaml");
  if (fs::exists(shipped)) return shipped.string();
  return name;
}

}  // namespace

Study load_study(const std::string& path) {
  const hw::LoadedConfig cfg = hw::load_config_file(path);
  hw::ErrorSink sink;
  Study s;
  s.files = cfg.files;
  hw::MapReader top(cfg.root, "", sink);
  if (auto m = top.map("study")) {
    s.question = m->text("question", "");
    s.model_path = resolve_model(path, m->text("model"));
    s.gpu_name = m->text("gpu", "h200");
    const std::string mode = m->text("mode", "fast");
    if (mode == "fast")
      s.mode = TimingMode::kFast;
    else if (mode == "detailed")
      s.mode = TimingMode::kDetailed;
    else
      sink.add(*m->child("mode", false), m->key_path("mode"), "expected fast or detailed");
    s.what_ifs = m->text_list("what_if");
    for (const auto& w : s.what_ifs) {
      try {
        if (m->has("parallel"))
          parse_parallel_what_if(w);
        else
          parse_what_if(w);
      } catch (const std::invalid_argument& e) {
        sink.add(*m->child("what_if", false), m->key_path("what_if"), e.what());
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
    if (m->has("workload")) {
      if (auto w = m->map("workload")) s.workloads.push_back(read_workload(*w));
    }
    if (const hw::ConfigNode* list =
            m->child("workloads", !m->has("workload") && !m->has("parallel"))) {
      if (list->kind != hw::ConfigNode::Kind::kSequence) {
        sink.add(*list, m->key_path("workloads"), "expected a list of workloads");
      } else {
        for (std::size_t i = 0; i < list->items.size(); ++i) {
          hw::MapReader w(list->items[i], fmt::format("{}[{}]", m->key_path("workloads"), i), sink);
          s.workloads.push_back(read_workload(w));
        }
      }
    }
    m->finish();
  }
  top.finish();
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
  for (const auto& t : what_ifs)
    r.what_ifs.push_back(run_what_if(r.graph, gpu, o, r.exec, parse_what_if(t)));
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

StudyResult run_study(const Study& s) {
  StudyResult r;
  r.study = s;
  r.model = load_model_config(s.model_path);
  r.gpu = hw::find_gpu(s.gpu_name);
  for (const auto& w : s.workloads)
    r.results.push_back(run_workload(r.model, r.gpu, w, s.what_ifs, s.mode));
  return r;
}

}  // namespace ridge::workloads
