// The `plan:` block of a study (see workloads/plan_config.hpp): strict, every key in plan_keys().
#include "workloads/plan_config.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "hw/gpu_loader.hpp"
#include "hw/system_loader.hpp"
#include "workloads/model_config.hpp"
#include "workloads/serving_config.hpp"

namespace ridge::workloads {

const std::vector<PlanKey>& plan_keys() {
  static const std::vector<PlanKey> keys = {
      {"system", "(required)", "configs/systems name, alias or path: the GPUs and fabric"},
      {"gpus", "the whole system (fewest_gpus: every count)",
       "GPU count, or a list of counts (a budget) to search; whole nodes"},
      {"max_gpus", "none", "without gpus: the largest count tried (fewest_gpus) or used (others)"},
      {"global_batch", "(required)", "sequences per optimizer step (held fixed)"},
      {"seq", "2048", "tokens per sequence"},
      {"objective", "step_time", "step_time | tokens_per_s | cost_per_token | fewest_gpus"},
      {"usd_per_gpu_hour", "(cost_per_token: required)", "price of one GPU-hour, US$"},
      {"memory_headroom", "0.1", "fraction of HBM left free (allocator, NCCL buffers, workspace)"},
      {"max_step_time", "none", "a constraint: layouts slower than this are dropped (\"30 s\")"},
      {"top_k", "10", "layouts re-simulated by the full parallel simulator and reported"},
      {"search", "every value below", "a map restricting the searched values (lists):"},
      {"search.tp", "1, 2, 4 ... GPUs per node", "tensor-parallel sizes (inside a node)"},
      {"search.pp", "divisors of the layers", "pipeline stages"},
      {"search.micro_batch", "1, 2, 4, 8", "sequences per micro-batch"},
      {"search.recompute", "none, selective, full", "activation recomputation"},
      {"search.sequence_parallel", "false, true", "Megatron sequence parallelism (tp > 1)"},
      {"search.zero", "0, 1, 2, 3",
       "0 | 1 | 2 | 3: Megatron's distributed optimizer (1), gradients sharded too (2), "
       "parameters too, gathered per layer (3); dp x cp > 1"},
      {"search.fsdp", "false", "false, true: PyTorch FSDP full shard (as zero 3; dp x cp > 1)"},
      {"search.offload", "none, optimizer (none without the system's node.host)",
       "none | optimizer: ZeRO-Offload (optimizer state and Adam on the host; zero >= 1 when "
       "dp x cp > 1; pruned when the node's host memory cannot hold it) | optimizer_and_params "
       "(ZeRO-3 layouts only: the parameters too, fetched per layer; only when listed)"},
      {"search.cp", "1 (seq < 8192), else 1, 2, 4, 8",
       "context-parallel sizes (ring attention); seq divisible by 2 x cp"},
      {"search.ep", "every divisor of dp and the experts (MoE models)",
       "expert-parallel sizes; MoE models only"},
      {"search.schedule", "1f1b, interleaved", "1f1b | gpipe | interleaved"},
      {"search.virtual_stages", "2, 3, 4, 6, 8", "interleaved: model chunks per device"},
      {"serve", "none",
       "serving plan: a kind: serve study (model, GPU, trace, SLO); then only "
       "the keys below apply (and top_k)"},
      {"target_rate_per_s", "(serve: required)",
       "load to serve, requests/s (objective: fewest GPUs)"},
      {"requests", "the serving study's", "serve: Poisson requests per capacity trial"},
      {"search.max_num_seqs", "the serving study's", "serve: sequence caps to try"},
      {"search.max_batched_tokens", "the serving study's", "serve: per-iteration token budgets"},
  };
  return keys;
}

namespace {

// A list of positive integers (a single integer is a list of one when `scalar_ok`).
std::vector<int> int_list(hw::MapReader& r, std::string_view key, bool scalar_ok, long long hi) {
  std::vector<int> out;
  const hw::ConfigNode* c = r.node().find(key);
  if (!c) return out;
  if (scalar_ok && c->kind == hw::ConfigNode::Kind::kScalar) {
    out.push_back(static_cast<int>(r.integer(key, std::nullopt, 1, hi)));
    return out;
  }
  const std::vector<double> v = r.quantity_list(key, hw::Dimension::kCount);
  if (c->kind == hw::ConfigNode::Kind::kSequence && c->items.empty())
    r.sink().add(*c, r.key_path(key), "empty list: nothing to search (leave the key out for all)");
  for (std::size_t i = 0; i < v.size() && i < c->items.size(); ++i) {
    if (v[i] < 1 || v[i] > double(hi) || v[i] != std::floor(v[i]))
      r.sink().add(c->items[i], fmt::format("{}[{}]", r.key_path(key), i),
                   fmt::format("expected an integer in [1, {}]", hi));
    else
      out.push_back(static_cast<int>(v[i]));
  }
  return out;
}

// A list of choices, each checked.
std::vector<std::string> choice_list(hw::MapReader& r, std::string_view key,
                                     const std::vector<std::string_view>& choices) {
  std::vector<std::string> out;
  const hw::ConfigNode* c = r.node().find(key);
  if (!c) return out;
  const std::vector<std::string> v = r.text_list(key);
  if (c->kind == hw::ConfigNode::Kind::kSequence && c->items.empty())
    r.sink().add(*c, r.key_path(key), "empty list: nothing to search (leave the key out for all)");
  for (std::size_t i = 0; i < v.size() && i < c->items.size(); ++i) {
    if (std::find(choices.begin(), choices.end(), v[i]) == choices.end())
      r.sink().add(c->items[i], fmt::format("{}[{}]", r.key_path(key), i),
                   hw::expected_one_of(v[i], choices));
    else
      out.push_back(v[i]);
  }
  return out;
}

void read_search(hw::MapReader& s, PlanSpace& sp) {
  sp.tp = int_list(s, "tp", false, 1 << 16);
  sp.pp = int_list(s, "pp", false, 1 << 16);
  sp.micro_batch = int_list(s, "micro_batch", false, 1 << 20);
  sp.virtual_stages = int_list(s, "virtual_stages", false, 1 << 16);
  for (const auto& z : choice_list(s, "zero", {"0", "1", "2", "3"})) sp.zero.push_back(z[0] - '0');
  sp.cp = int_list(s, "cp", false, 1 << 16);
  sp.ep = int_list(s, "ep", false, 1 << 24);
  for (const auto& b : choice_list(s, "fsdp", {"false", "true"})) sp.fsdp.push_back(b == "true");
  for (const auto& b : choice_list(s, "sequence_parallel", {"false", "true"}))
    sp.sequence_parallel.push_back(b == "true");
  for (const auto& rc : choice_list(s, "recompute", {"none", "selective", "full"}))
    sp.recompute.push_back(rc == "full"        ? Recompute::kFull
                           : rc == "selective" ? Recompute::kSelective
                                               : Recompute::kNone);
  for (const auto& sc : choice_list(s, "schedule", {"1f1b", "gpipe", "interleaved"}))
    sp.schedule.push_back(sc == "gpipe"         ? PipeSchedule::kGpipe
                          : sc == "interleaved" ? PipeSchedule::kInterleaved
                                                : PipeSchedule::kOneFOneB);
  for (const auto& f : choice_list(s, "offload", {"none", "optimizer", "optimizer_and_params"}))
    sp.offload.push_back(f == "optimizer"              ? Offload::kOptimizer
                         : f == "optimizer_and_params" ? Offload::kOptimizerAndParams
                                                       : Offload::kNone);
  s.finish();
}

// plan.serve: a serving study, the load and the caps to search.
void read_serve_plan(const std::string& path, hw::MapReader& p, PlanStudy& s) {
  ServePlanOptions o;
  const std::string name = p.text("serve");
  namespace fs = std::filesystem;
  const fs::path rel = fs::path(path).parent_path() / name;
  std::error_code ec;  // a name the file system refuses is a missing file, reported by the loader
  o.serve_path = fs::exists(rel, ec) ? rel.string() : name;
  const hw::ConfigNode* at = p.node().find("serve");
  try {
    o.study = load_serve_study(o.serve_path);
    if (o.study.slo.ttft_s <= 0 && o.study.slo.tpot_s <= 0 && o.study.slo.e2e_s <= 0)
      p.sink().add(*at, p.key_path("serve"),
                   o.serve_path + " has no slo: a serving plan sizes GPUs against its SLO");
  } catch (const hw::ConfigException& e) {
    for (const auto& err : e.errors()) p.sink().add(err);
  } catch (const std::exception& e) {
    p.sink().add(*at, p.key_path("serve"), e.what());
  }
  o.target_rate_per_s =
      p.quantity("target_rate_per_s", hw::Dimension::kCount, std::nullopt, 1e-6, 1e9);
  o.requests = p.integer("requests", 0, 0, 1LL << 30);
  o.top_k = static_cast<int>(p.integer("top_k", 10, 1, 1000));
  if (auto sr = p.map("search", false)) {
    for (int v : int_list(*sr, "max_num_seqs", false, 1 << 20)) o.max_num_seqs.push_back(v);
    for (int v : int_list(*sr, "max_batched_tokens", false, 1 << 24))
      o.max_batched_tokens.push_back(v);
    sr->finish();
  }
  p.finish();
  s.serve = std::move(o);
}

}  // namespace

PlanStudy load_plan_study(const std::string& path) {
  const hw::LoadedConfig cfg = hw::load_config_file(path);
  hw::ErrorSink sink;
  PlanStudy s;
  s.files = cfg.files;
  hw::MapReader top(cfg.root, "", sink);
  const hw::ConfigNode* plan_node = nullptr;
  const hw::ConfigNode* search_node = nullptr;
  std::optional<hw::SystemSpec> sys;
  if (auto m = top.map("study")) {
    s.question = m->text("question", "");
    const hw::ConfigNode* pn = m->node().find("plan");
    const bool serving = pn && pn->find("serve");
    if (!serving) s.model_path = resolve_study_model(path, m->text("model"));
    const std::string mode = m->choice("mode", "fast", {"fast", "detailed"});
    s.plan.mode = mode == "detailed" ? TimingMode::kDetailed : TimingMode::kFast;
    if (auto p = m->map("plan"); p && p->has("serve")) {
      plan_node = &p->node();
      read_serve_plan(path, *p, s);
    } else if (p) {
      plan_node = &p->node();
      PlanOptions& o = s.plan;
      o.system = p->text("system");
      if (!o.system.empty()) {
        try {
          sys = hw::find_system(o.system);
        } catch (const std::exception& e) {
          const hw::ConfigNode* at = p->node().find("system");
          sink.add(at ? *at : p->node(), p->key_path("system"), e.what());
        }
      }
      o.gpus = int_list(*p, "gpus", true, 1 << 24);
      const long long max_gpus = p->integer("max_gpus", 0, 0, 1 << 24);
      o.global_batch = p->integer("global_batch", std::nullopt, 1, 1LL << 40);
      o.seq = p->integer("seq", 2048, 1, 1 << 24);
      const std::string obj = p->choice(
          "objective", "step_time", {"step_time", "tokens_per_s", "cost_per_token", "fewest_gpus"});
      o.objective = obj == "tokens_per_s"     ? PlanObjective::kTokensPerS
                    : obj == "cost_per_token" ? PlanObjective::kCostPerToken
                    : obj == "fewest_gpus"    ? PlanObjective::kFewestGpus
                                              : PlanObjective::kStepTime;
      o.usd_per_gpu_hour = p->quantity("usd_per_gpu_hour", hw::Dimension::kCount, 0.0, 0, 1e9);
      if (o.objective == PlanObjective::kCostPerToken && !(o.usd_per_gpu_hour > 0)) {
        const hw::ConfigNode* at = p->node().find("objective");
        sink.add(at ? *at : p->node(), p->key_path("objective"),
                 "cost_per_token needs usd_per_gpu_hour (the price of one GPU-hour, > 0)");
      }
      o.memory_headroom = p->quantity("memory_headroom", hw::Dimension::kFraction, 0.1, 0, 0.9);
      o.max_step_s = p->quantity("max_step_time", hw::Dimension::kTime, 0.0, 0, 1e9);
      o.top_k = static_cast<int>(p->integer("top_k", 10, 1, 1000));
      if (p->has("search")) {
        search_node = p->node().find("search");
        if (auto sr = p->map("search")) read_search(*sr, o.space);
      }
      if (sys && !sys->node.host.present() &&
          std::any_of(o.space.offload.begin(), o.space.offload.end(),
                      [](Offload f) { return f != Offload::kNone; })) {
        const hw::ConfigNode* sn = p->node().find("search");
        const hw::ConfigNode* at = sn ? sn->find("offload") : nullptr;
        sink.add(at ? *at : p->node(), p->key_path("search.offload"),
                 fmt::format("offload: optimizer needs the host's memory and bandwidth, but {} "
                             "has no system.node.host.memory / node.host.memory_bandwidth",
                             sys->name));
      }
      if (sys) {
        const hw::ConfigNode* at = p->node().find("gpus");
        for (std::size_t i = 0; i < o.gpus.size(); ++i) {
          const std::string why = hw::check_gpu_count(*sys, o.gpus[i]);
          if (!why.empty())
            sink.add(at && at->kind == hw::ConfigNode::Kind::kSequence && i < at->items.size()
                         ? at->items[i]
                         : (at ? *at : p->node()),
                     p->key_path("gpus"), why);
        }
        if (max_gpus > 0 && o.gpus.empty()) {
          for (int g : plan_gpu_counts(o, *sys))
            if (g <= max_gpus) o.gpus.push_back(g);
          if (o.gpus.empty())
            sink.add(
                *p->node().find("max_gpus"), p->key_path("max_gpus"),
                fmt::format("no whole-node GPU count of {} is at most {}", o.system, max_gpus));
          else if (o.objective != PlanObjective::kFewestGpus)
            o.gpus = {o.gpus.back()};
        }
      }
      p->finish();
    }
    m->finish();
  }
  top.finish();
  if (plan_node) s.at = {plan_node->file, plan_node->line, plan_node->column, "study.plan", ""};
  // The model, then the search space against it: an empty space is an error naming the plan.
  if (!s.model_path.empty() && sink.empty()) {
    try {
      const ModelConfig model = load_model_config(s.model_path);
      if (!model.is_transformer()) {
        sink.add(hw::ConfigError{s.at.file, s.at.line, s.at.column, "study.plan",
                                 "planning needs a transformer model file"});
      } else if (sys) {
        const TransformerConfig& m = model.transformer();
        long long n = 0;
        for (int g : plan_gpu_counts(s.plan, *sys))
          n += static_cast<long long>(enumerate_layouts(m, s.plan, *sys, g).size());
        if (n == 0) {
          const hw::ConfigNode* at = search_node ? search_node : plan_node;
          sink.add(*at, search_node ? "study.plan.search" : "study.plan",
                   fmt::format("the search space is empty: no tp x pp x dp of the GPU count(s) "
                               "with tp dividing the model's {} heads and {} FFN, pp dividing its "
                               "{} layers and micro_batch x dp dividing global_batch {}",
                               m.heads, m.ffn, m.layers, s.plan.global_batch));
        }
      }
    } catch (const hw::ConfigException& e) {
      for (const auto& err : e.errors()) sink.add(err);
    }
  }
  sink.throw_if_any();
  return s;
}

}  // namespace ridge::workloads
