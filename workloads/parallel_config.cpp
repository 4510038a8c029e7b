// The `parallel:` block of a study (see workloads/parallel.hpp): strict, defaults as Megatron-LM's
// (tp = pp = dp = 1, no sequence parallelism, micro-batch 1, 1F1B, no recompute, no distributed
// optimizer, 25 MB DDP buckets).
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <algorithm>

#include "hw/config.hpp"
#include "hw/system_loader.hpp"
#include "workloads/parallel_config.hpp"

namespace ridge::workloads {

const std::vector<ParallelKey>& parallel_keys() {
  static const std::vector<ParallelKey> keys = {
      {"system", "(required)", "configs/systems name, alias or path"},
      {"gpus", "the system's", "GPUs used (whole nodes); tp x cp x pp x dp must equal it"},
      {"tp", "1", "tensor-parallel size (inside a node); divides heads and FFN"},
      {"pp", "1", "pipeline stages (across nodes); divides the layers"},
      {"dp", "1", "data-parallel replicas"},
      {"cp", "1",
       "context-parallel size: each sequence split over cp ranks (2 balanced chunks each), K/V "
       "blocks passed around a ring beside attention; seq divisible by 2 x cp"},
      {"ep", "1",
       "expert-parallel size (MoE models): each MoE layer's experts sharded over ep ranks of the "
       "DP group; divides dp and the experts; expert gradients reduced over dp / ep"},
      {"capacity_factor", "0 (dropless)",
       "MoE: tokens per expert padded to this x the balanced share (all-to-all and expert GEMMs)"},
      {"placement", "[tp, cp, pp, ep, dp]",
       "rank placement, innermost first: an order of tp, cp, pp, ep, dp (dp: the DP ranks outside "
       "an EP group; cp, if left out, right after tp), e.g. [tp, cp, ep, dp, pp] as Megatron-Core "
       "orders them"},
      {"sequence_parallel", "false", "Megatron sequence parallelism (all-gather/reduce-scatter)"},
      {"micro_batch", "1", "sequences per micro-batch"},
      {"global_batch", "micro_batch x dp", "sequences per step; divisible by micro_batch x dp"},
      {"seq", "2048", "tokens per sequence"},
      {"schedule", "1f1b", "1f1b | gpipe | interleaved (Megatron's interleaved 1F1B)"},
      {"virtual_stages", "1", "interleaved: model chunks per device; pp x it divides the layers"},
      {"recompute", "none", "none | selective (core attention) | full (each layer)"},
      {"zero", "0",
       "0 | 1 (distributed optimizer: reduce-scatter, sharded Adam, all-gather) | 2 (gradients "
       "sharded too) | 3 (parameters too: all-gathered per layer before its forward and backward, "
       "one layer prefetched; gradients reduce-scattered per layer)"},
      {"fsdp", "false", "PyTorch FSDP full shard (as zero: 3); sharded over DP x CP"},
      {"bucket_mb", "25", "DDP gradient bucket, MB (1e6 B)"},
      {"offload", "none",
       "none | optimizer (ZeRO-Offload: optimizer state, fp32 gradients and the Adam step on the "
       "host; gradients copied to the host over PCIe as they are reduced, updated 16-bit "
       "parameters copied back; needs the system's node.host; zero >= 1 when dp x cp > 1) | "
       "optimizer_and_params (ZeRO-3 only: the 16-bit parameters on the host too, each layer's "
       "partition copied to the GPU before its all-gather)"},
  };
  return keys;
}

// Divisors (tp, pp, dp, micro_batch, virtual_stages, seq) are kept >= 1 even when out of range:
// the range error is reported, and the checks below never divide by zero (fuzz_study found one).
ParallelOptions read_parallel(hw::MapReader& p, const std::string& model_path) {
  hw::ErrorSink& sink = p.sink();
  ParallelOptions o;
  o.system = p.text("system");
  o.gpus = static_cast<int>(p.integer("gpus", 0, 0, 1 << 24));
  o.tp = static_cast<int>(std::max(1LL, p.integer("tp", 1, 1, 1 << 16)));
  o.pp = static_cast<int>(std::max(1LL, p.integer("pp", 1, 1, 1 << 16)));
  o.dp = static_cast<int>(std::max(1LL, p.integer("dp", 1, 1, 1 << 24)));
  o.ep = static_cast<int>(std::max(1LL, p.integer("ep", 1, 1, 1 << 24)));
  o.cp = static_cast<int>(std::max(1LL, p.integer("cp", 1, 1, 1 << 16)));
  o.capacity_factor = p.quantity("capacity_factor", hw::Dimension::kCount, 0.0, 0.0, 1024.0);
  if (p.has("placement")) {
    o.placement = p.text_list("placement");
    std::vector<std::string> seen = o.placement;
    std::sort(seen.begin(), seen.end());
    std::vector<std::string> want = {"dp", "ep", "pp", "tp"};
    if (std::find(seen.begin(), seen.end(), "cp") != seen.end()) want.insert(want.begin(), "cp");
    if (seen != want)
      sink.add(*p.child("placement", false), p.key_path("placement"),
               fmt::format("expected an order of tp, pp, ep and dp (and cp), each once (got [{}])",
                           fmt::join(o.placement, ", ")));
    if (seen != want) o.placement.clear();
  }
  o.sequence_parallel = p.boolean("sequence_parallel", false);
  o.micro_batch = std::max(1LL, p.integer("micro_batch", 1, 1, 1 << 20));
  o.global_batch = p.integer("global_batch", 0, 0, 1LL << 40);
  o.seq = std::max(1LL, p.integer("seq", 2048, 1, 1 << 24));
  const std::string sched = p.text("schedule", "1f1b");
  if (sched == "1f1b")
    o.schedule = PipeSchedule::kOneFOneB;
  else if (sched == "gpipe")
    o.schedule = PipeSchedule::kGpipe;
  else if (sched == "interleaved")
    o.schedule = PipeSchedule::kInterleaved;
  else
    sink.add(*p.child("schedule", false), p.key_path("schedule"),
             "expected 1f1b, gpipe or interleaved");
  o.virtual_stages = static_cast<int>(std::max(1LL, p.integer("virtual_stages", 1, 1, 1 << 16)));
  const std::string rc = p.text("recompute", "none");
  if (rc == "none")
    o.recompute = Recompute::kNone;
  else if (rc == "selective")
    o.recompute = Recompute::kSelective;
  else if (rc == "full")
    o.recompute = Recompute::kFull;
  else
    sink.add(*p.child("recompute", false), p.key_path("recompute"),
             "expected none, selective or full");
  o.zero = static_cast<int>(p.integer("zero", 0, 0, 3));
  o.fsdp = p.boolean("fsdp", false);
  if (o.fsdp && p.has("zero") && o.zero != 3)
    sink.add(*p.child("fsdp", false), p.key_path("fsdp"),
             fmt::format("fsdp: true shards like zero: 3, but zero: {} is given", o.zero));
  o.bucket_mb = static_cast<double>(p.integer("bucket_mb", 25, 1, 1 << 20));
  const std::string off = p.text("offload", "none");
  if (off == "optimizer")
    o.offload = Offload::kOptimizer;
  else if (off == "optimizer_and_params")
    o.offload = Offload::kOptimizerAndParams;
  else if (off != "none")
    sink.add(
        *p.child("offload", false), p.key_path("offload"),
        fmt::format("unknown offload '{}'; expected none, optimizer or optimizer_and_params", off));
  if (o.global_batch == 0) o.global_batch = o.micro_batch * o.dp;

  // Checks against the system and the model, each naming the key it is about.
  const hw::ConfigNode& at = p.node();
  auto node = [&](std::string_view key) -> const hw::ConfigNode& {
    const hw::ConfigNode* n = p.has(key) ? p.child(key, false) : nullptr;
    return n ? *n : at;
  };
  if (!o.system.empty()) {
    try {
      const hw::SystemSpec sys = hw::find_system(o.system);
      if (o.gpus == 0) o.gpus = sys.total_gpus();
      const std::string why = hw::check_gpu_count(sys, o.gpus);
      if (!why.empty()) sink.add(node("gpus"), p.key_path("gpus"), why);
      if (o.offloads() && !sys.node.host.present())
        sink.add(node("offload"), p.key_path("offload"),
                 fmt::format("offload: optimizer needs the host's memory and bandwidth, but {} "
                             "has no system.node.host.memory / node.host.memory_bandwidth",
                             sys.name));
    } catch (const std::exception& e) {
      sink.add(node("system"), p.key_path("system"), e.what());
    }
  }
  const long long used = static_cast<long long>(o.tp) * o.pp * o.dp * o.cp;
  if (o.gpus > 0 && used != o.gpus)
    sink.add(
        node(p.has("dp") ? "dp" : "tp"), p.key_path(p.has("dp") ? "dp" : "tp"),
        fmt::format(
            "{} = {} GPUs, but {} GPUs are used{}",
            o.cp > 1 ? fmt::format("tp x cp x pp x dp = {} x {} x {} x {}", o.tp, o.cp, o.pp, o.dp)
                     : fmt::format("tp x pp x dp = {} x {} x {}", o.tp, o.pp, o.dp),
            used, o.gpus, p.has("gpus") ? "" : " (the whole system; set gpus: to use fewer)"));
  if (o.schedule == PipeSchedule::kInterleaved) {
    if (o.virtual_stages < 2)
      sink.add(node("virtual_stages"), p.key_path("virtual_stages"),
               "the interleaved schedule needs virtual_stages >= 2");
    if (o.pp < 2)
      sink.add(node("pp"), p.key_path("pp"), "the interleaved schedule needs pp >= 2");
    else if (o.global_batch % (o.micro_batch * o.dp) == 0 && o.micro_batches() % o.pp != 0)
      sink.add(node("global_batch"), p.key_path("global_batch"),
               fmt::format("the interleaved schedule needs micro-batches per pipeline ({}) to be "
                           "a multiple of pp ({})",
                           o.micro_batches(), o.pp));
  } else if (o.virtual_stages != 1) {
    sink.add(node("virtual_stages"), p.key_path("virtual_stages"),
             "virtual_stages is for schedule: interleaved");
  }
  if (o.offloads_params() && o.zero_stage() != 3)
    sink.add(node("offload"), p.key_path("offload"),
             "offload: optimizer_and_params (ZeRO-Infinity's parameter offload) needs zero: 3 or "
             "fsdp: true");
  else if (o.offloads() && o.zero_stage() == 0 && o.dp * o.cp > 1)
    sink.add(node("offload"), p.key_path("offload"),
             fmt::format("offload: optimizer moves ZeRO's optimizer partition to the host: with "
                         "dp x cp = {} it needs zero >= 1 (as DeepSpeed does)",
                         o.dp * o.cp));
  if (o.dp % o.ep != 0)
    sink.add(node("ep"), p.key_path("ep"),
             fmt::format("ep {} does not divide dp {} (expert parallelism splits the DP group)",
                         o.ep, o.dp));
  if (o.global_batch % (o.micro_batch * o.dp) != 0)
    sink.add(node("global_batch"), p.key_path("global_batch"),
             fmt::format("global_batch {} is not divisible by micro_batch x dp = {} x {}",
                         o.global_batch, o.micro_batch, o.dp));
  try {
    const ModelConfig mc = load_model_config(model_path);
    if (!mc.is_transformer()) {
      sink.add(at, p.path(), "parallel training needs a transformer model file");
    } else {
      const TransformerConfig& m = mc.transformer();
      if (m.heads % o.tp != 0)
        sink.add(node("tp"), p.key_path("tp"),
                 fmt::format("tp {} does not divide the model's {} heads", o.tp, m.heads));
      if (m.kv_heads % o.tp != 0 && m.heads % o.tp == 0)
        sink.add(node("tp"), p.key_path("tp"),
                 fmt::format("tp {} does not divide the model's {} KV heads", o.tp, m.kv_heads));
      if (m.ffn % o.tp != 0)
        sink.add(node("tp"), p.key_path("tp"),
                 fmt::format("tp {} does not divide the model's FFN width {}", o.tp, m.ffn));
      const bool inter = o.schedule == PipeSchedule::kInterleaved;
      if (inter && m.layers % (o.pp * o.virtual_stages) != 0)
        sink.add(node("virtual_stages"), p.key_path("virtual_stages"),
                 fmt::format("pp x virtual_stages = {} x {} does not divide the model's {} layers",
                             o.pp, o.virtual_stages, m.layers));
      if (m.layers % o.pp != 0)
        sink.add(node("pp"), p.key_path("pp"),
                 fmt::format("pp {} does not divide the model's {} layers", o.pp, m.layers));
      if (!m.is_moe() && o.ep > 1)
        sink.add(node("ep"), p.key_path("ep"),
                 fmt::format("ep {} needs a mixture-of-experts model (experts: in the model file)",
                             o.ep));
      if (m.is_moe() && m.experts % o.ep != 0)
        sink.add(node("ep"), p.key_path("ep"),
                 fmt::format("ep {} does not divide the model's {} experts", o.ep, m.experts));
      if (m.is_moe() && m.expert_ffn % o.tp != 0)
        sink.add(node("tp"), p.key_path("tp"),
                 fmt::format("tp {} does not divide the model's expert FFN width {}", o.tp,
                             m.expert_ffn));
      // Megatron-LM asserts it (arguments.py: MoE with tensor parallelism needs sequence
      // parallelism); the MoE layer here takes its s/tp tokens per rank from it.
      if (m.is_moe() && o.tp > 1 && !o.sequence_parallel)
        sink.add(node("sequence_parallel"), p.key_path("sequence_parallel"),
                 "a mixture-of-experts model with tp > 1 needs sequence_parallel: true (as "
                 "Megatron-LM requires)");
      if (o.cp > 1 && o.seq % (2 * o.cp) != 0)
        sink.add(node("seq"), p.key_path("seq"),
                 fmt::format("seq {} is not divisible by 2 x cp = {} (context parallelism splits "
                             "each sequence into 2 x cp chunks)",
                             o.seq, 2 * o.cp));
      else if (o.sequence_parallel && (o.seq / o.cp) % o.tp != 0)
        sink.add(node("seq"), p.key_path("seq"),
                 fmt::format("seq / cp = {} is not divisible by tp {} (sequence parallelism)",
                             o.seq / o.cp, o.tp));
      if (o.cp == 1 && o.sequence_parallel && o.seq % o.tp != 0)
        sink.add(
            node("seq"), p.key_path("seq"),
            fmt::format("seq {} is not divisible by tp {} (sequence parallelism)", o.seq, o.tp));
    }
  } catch (const std::exception&) {
    // The model file's own errors are reported when it is loaded for the run.
  }
  p.finish();
  return o;
}

}  // namespace ridge::workloads
