// Text and JSON reports of a parallel training step (see workloads/parallel.hpp).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>

#include "workloads/parallel.hpp"

namespace ridge::workloads {

namespace {
std::string ftime(double s) {
  if (s >= 1) return fmt::format("{:.3f} s", s);
  if (s >= 1e-3) return fmt::format("{:.2f} ms", s * 1e3);
  return fmt::format("{:.1f} us", s * 1e6);
}
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
}  // namespace

std::string parallel_report_text(const ParallelResult& r, const std::string& model_name) {
  const ParallelOptions& o = r.options;
  const int gpus = o.gpus_used();
  std::string s;
  s += fmt::format(
      "{} on {} ({} GPUs of {}): TP {}{} x PP {} x DP {}{}{}, micro-batch {}, global batch {} "
      "({} micro-batches per pipeline), seq {}, {}{}, recompute {}{}\n",
      model_name, r.system.name, gpus, r.system.total_gpus(), o.tp,
      o.cp > 1 ? fmt::format(" x CP {}", o.cp) : "", o.pp, o.dp,
      o.ep > 1 ? fmt::format(" (EP {} inside DP)", o.ep) : "", o.sequence_parallel ? " + SP" : "",
      o.micro_batch, o.global_batch, o.micro_batches(), o.seq, schedule_name(o.schedule),
      o.schedule == PipeSchedule::kInterleaved ? fmt::format(" x {} chunks", o.virtual_stages) : "",
      recompute_name(o.recompute),
      (o.fsdp   ? std::string(", FSDP")
       : o.zero ? fmt::format(", ZeRO-{}", o.zero)
                : std::string()) +
          (o.offloads_params() ? std::string(", optimizer and parameters offloaded to the host")
           : o.offloads()      ? std::string(", optimizer offloaded to the host")
                               : std::string()));
  s += fmt::format("step {}   {:.0f} tokens/s   MFU {:.1f}%   HFU {:.1f}% (bf16 dense peak)\n",
                   ftime(r.step_s), r.tokens_per_s, 100 * r.mfu, 100 * r.hfu);
  if (!o.placement.empty())
    s += fmt::format("placement (innermost first): {}\n", fmt::join(o.placement, ", "));
  if (o.cp > 1) {
    const StageGraphs& g = r.stages.back();
    s += fmt::format(
        "CP: ring attention over {} ranks, K/V block {} per step; ring transfers on the last "
        "stage {} / {} (fwd/bwd, {} / {}), overlapped with the attention blocks\n",
        o.cp, fmt::format("{:.2f} MB", g.cp_block_bytes / 1e6), ftime(g.cp_fwd_s),
        ftime(g.cp_bwd_s), g.cp_transfers_fwd, g.cp_transfers_bwd);
  }
  bool moe = false;
  for (const StageGraphs& g : r.stages)
    moe = moe || g.ep_collectives_fwd > 0 || g.expert_params > 0;
  if (moe) {
    const StageGraphs& g = r.stages.back();
    s += fmt::format(
        "MoE: {:.0f} tokens per local expert per micro-batch; all-to-all {} per rank ({} of it "
        "leaving the GPU); EP comm on the last stage {} / {} (fwd/bwd, {} / {} calls)\n",
        g.tokens_per_expert, fmt::format("{:.2f} MB", g.a2a_bytes / 1e6),
        fmt::format("{:.2f} MB", g.a2a_bytes * (o.ep - 1) / o.ep / 1e6), ftime(g.ep_fwd_s),
        ftime(g.ep_bwd_s), g.ep_collectives_fwd, g.ep_collectives_bwd);
  }
  s += "\nper stage, one micro-batch on one rank:\n";
  s += "  stage  layers   forward   backward   TP comm (fwd/bwd, calls)\n";
  for (std::size_t st = 0; st < r.stages.size(); ++st) {
    const StageGraphs& g = r.stages[st];
    if (st >= 2 && st + 1 < r.stages.size()) {
      if (st == 2) s += "  ...    (middle stages as stage 1)\n";
      continue;
    }
    s +=
        fmt::format("  {:5}  {:>6}  {:>9}  {:>9}   {} / {} ({} / {})\n", st,
                    fmt::format("{}-{}", g.first_layer, g.first_layer + g.layers - 1),
                    ftime(g.fwd_exec.step_time_s), ftime(g.bwd_exec.step_time_s), ftime(g.tp_fwd_s),
                    ftime(g.tp_bwd_s), g.tp_collectives_fwd, g.tp_collectives_bwd);
  }
  s += fmt::format(
      "\npipeline {} (ideal m x (F + B) {}), bubble on stage 0 {} ({:.1f}% of the "
      "step); p2p per transfer {}\n",
      ftime(r.pipeline_s), ftime(r.ideal_pipeline_s), ftime(r.bubble_s),
      100 * r.bubble_s / r.step_s, ftime(r.p2p_s));
  if (o.shards_params() && o.dp * o.cp > 1) {
    const StageGraphs& g = r.stages.back();
    s += fmt::format(
        "{}: per layer a parameter all-gather before its forward and its backward (one layer "
        "prefetched) and a gradient reduce-scatter after its backward; on the last stage {} / {} "
        "per micro-batch (fwd/bwd, {} / {} calls)\n",
        o.fsdp ? "FSDP" : "ZeRO-3", ftime(g.fsdp_fwd_s), ftime(g.fsdp_bwd_s), g.fsdp_calls_fwd,
        g.fsdp_calls_bwd);
  } else if (o.dp * o.cp > 1)
    s += fmt::format(
        "DP: {} buckets{} of {} MB, {} of {} in all, {} exposed after the backward{}\n",
        r.dp_buckets,
        r.expert_buckets > 0 ? fmt::format(" ({} of expert gradients over dp / ep = {})",
                                           r.expert_buckets, o.dp / o.ep)
                             : "",
        o.bucket_mb, o.zero_stage() ? "reduce-scatter" : "all-reduce", ftime(r.dp_time_s),
        ftime(r.dp_exposed_s),
        r.param_gather_s > 0 ? fmt::format("; parameter all-gather {}", ftime(r.param_gather_s))
                             : "");
  if (o.offloads()) {
    const OffloadRates rates = offload_rates(r.system, o);
    s += fmt::format(
        "offload: gradients to the host {} in all ({} exposed past the backward and the DP "
        "reduction), CPU Adam {}, {}; PCIe {} per GPU per "
        "direction, host DRAM {} per GPU ({} GPUs on a node); host memory {:.1f} GB of {:.0f} GB "
        "per node\n",
        ftime(r.offload_d2h_s), ftime(r.offload_exposed_s), ftime(r.optimizer_s),
        o.offloads_params()
            ? std::string("parameters fetched to the GPU per layer before each all-gather (in "
                          "the stage times: the ZeRO-3 stream)")
            : "updated parameters to the GPU " + ftime(r.offload_h2d_s),
        fmt::format("{:.1f} GB/s", rates.pcie_bw / 1e9),
        fmt::format("{:.1f} GB/s", rates.host_bw / 1e9), rates.gpus_on_node,
        r.host_bytes_per_node / 1e9, r.system.node.host.memory / 1e9);
  } else {
    s += fmt::format("optimizer step {}\n", ftime(r.optimizer_s));
  }
  s += "\ncritical path by category (sums to the step):\n";
  for (const auto& [k, v] : r.critical_s)
    s += fmt::format("  {:<14} {:>10}  {:5.1f}%\n", k, ftime(v), 100 * v / r.step_s);
  if (!r.what_ifs.empty()) {
    s += "\nwhat-ifs (re-simulated beside Amdahl's closed form):\n";
    for (const auto& w : r.what_ifs)
      s += fmt::format("  {:<22} step {:>10}  x{:.3f}{}   Amdahl (f {:4.1f}%) {:>10}\n",
                       w.what_if.text, ftime(w.step_s), w.baseline_s / w.step_s,
                       w.simulated ? "" : " (closed form)", 100 * w.fraction, ftime(w.amdahl_s));
  }
  s += "\nmemory per GPU (GiB):\n  stage  weights   grads  optimizer  activations (in flight)    "
       "total\n";
  const double hbm = r.system.node.gpu.memory.hbm_size;
  for (std::size_t st = 0; st < r.memory.size(); ++st) {
    const StageMemory& m = r.memory[st];
    s += fmt::format("  {:5}  {:7.2f} {:7.2f} {:10.2f} {:12.2f} ({:3}) {:14.2f}{}\n", st,
                     m.weights / kGiB, m.grads / kGiB, m.optimizer / kGiB, m.activations / kGiB,
                     m.in_flight, m.total() / kGiB, m.total() > hbm ? "  DOES NOT FIT" : "");
    if (r.memory.size() > 4 && st == 1) {
      s += "  ...\n";
      st = r.memory.size() - 2;
    }
  }
  double worst = 0;
  for (const auto& m : r.memory) worst = std::max(worst, m.total());
  if (worst > hbm) {
    s += fmt::format("  over the {:.0f} GiB HBM by {:.1f} GiB: try", hbm / kGiB,
                     (worst - hbm) / kGiB);
    if (o.recompute != Recompute::kFull) s += " recompute: full or selective,";
    if (!o.sequence_parallel && o.tp > 1) s += " sequence_parallel: true,";
    if (o.zero == 0 && o.dp > 1) s += " zero: 1,";
    if (!o.offloads() && r.system.node.host.present() && (o.zero_stage() >= 1 || o.dp * o.cp == 1))
      s += " offload: optimizer,";
    if (moe && o.ep < o.dp) s += " a larger ep,";
    s += " a larger pp\n";
  }
  s += fmt::format("\n{} collectives simulated on the fabric (memoized by op, size and group)\n",
                   r.collectives_simulated);
  return s;
}

nlohmann::json parallel_report_json(const ParallelResult& r) {
  const ParallelOptions& o = r.options;
  nlohmann::json j;
  j["system"] = r.system.name;
  j["parallel"] = {{"tp", o.tp},
                   {"pp", o.pp},
                   {"dp", o.dp},
                   {"ep", o.ep},
                   {"cp", o.cp},
                   {"capacity_factor", o.capacity_factor},
                   {"placement", placement_order(o)},
                   {"sequence_parallel", o.sequence_parallel},
                   {"micro_batch", o.micro_batch},
                   {"global_batch", o.global_batch},
                   {"micro_batches", o.micro_batches()},
                   {"seq", o.seq},
                   {"schedule", schedule_name(o.schedule)},
                   {"virtual_stages", o.virtual_stages},
                   {"recompute", recompute_name(o.recompute)},
                   {"zero", o.zero},
                   {"fsdp", o.fsdp},
                   {"offload", offload_name(o.offload)},
                   {"bucket_mb", o.bucket_mb}};
  j["step_s"] = r.step_s;
  j["tokens_per_s"] = r.tokens_per_s;
  j["mfu"] = r.mfu;
  j["hfu"] = r.hfu;
  j["model_flops"] = r.model_flops;
  j["pipeline_s"] = r.pipeline_s;
  j["ideal_pipeline_s"] = r.ideal_pipeline_s;
  j["bubble_s"] = r.bubble_s;
  j["p2p_s"] = r.p2p_s;
  j["dp"] = {{"buckets", r.dp_buckets},
             {"time_s", r.dp_time_s},
             {"exposed_s", r.dp_exposed_s},
             {"expert_buckets", r.expert_buckets},
             {"param_all_gather_s", r.param_gather_s}};
  j["optimizer_s"] = r.optimizer_s;
  if (o.offloads())
    j["offload"] = {{"d2h_s", r.offload_d2h_s},
                    {"d2h_exposed_s", r.offload_exposed_s},
                    {"cpu_adam_s", r.optimizer_s},
                    {"h2d_s", r.offload_h2d_s},
                    {"host_bytes_per_node", r.host_bytes_per_node}};
  j["critical_path_s"] = r.critical_s;
  nlohmann::json st = nlohmann::json::array();
  for (std::size_t i = 0; i < r.stages.size(); ++i) {
    const StageGraphs& g = r.stages[i];
    st.push_back({{"stage", i},
                  {"first_layer", g.first_layer},
                  {"layers", g.layers},
                  {"forward_s", g.fwd_exec.step_time_s},
                  {"backward_s", g.bwd_exec.step_time_s},
                  {"tp_comm_forward_s", g.tp_fwd_s},
                  {"tp_comm_backward_s", g.tp_bwd_s},
                  {"ep_comm_forward_s", g.ep_fwd_s},
                  {"ep_comm_backward_s", g.ep_bwd_s},
                  {"all_to_all_bytes", g.a2a_bytes},
                  {"cp_comm_forward_s", g.cp_fwd_s},
                  {"fsdp_comm_forward_s", g.fsdp_fwd_s},
                  {"fsdp_comm_backward_s", g.fsdp_bwd_s},
                  {"cp_comm_backward_s", g.cp_bwd_s},
                  {"tokens_per_expert", g.tokens_per_expert},
                  {"params", g.params},
                  {"expert_params", g.expert_params}});
  }
  nlohmann::json mem = nlohmann::json::array();
  for (std::size_t i = 0; i < r.memory.size(); ++i) {
    const StageMemory& m = r.memory[i];
    mem.push_back({{"device", i},
                   {"weights", m.weights},
                   {"grads", m.grads},
                   {"optimizer", m.optimizer},
                   {"activations", m.activations},
                   {"in_flight", m.in_flight},
                   {"host", m.host},
                   {"total", m.total()}});
  }
  j["memory_bytes_per_gpu"] = mem;
  j["stages"] = st;
  nlohmann::json wi = nlohmann::json::array();
  for (const auto& w : r.what_ifs)
    wi.push_back({{"what_if", w.what_if.text},
                  {"step_s", w.step_s},
                  {"speedup", w.baseline_s / w.step_s},
                  {"simulated", w.simulated},
                  {"fraction", w.fraction},
                  {"amdahl_step_s", w.amdahl_s}});
  j["what_ifs"] = wi;
  return j;
}

}  // namespace ridge::workloads

namespace ridge::workloads {

std::string parallel_trace_json(const ParallelResult& r) {
  nlohmann::json ev = nlohmann::json::array();
  const int p = static_cast<int>(r.memory.size());
  auto us = [](double s) { return s * 1e6; };
  for (int st = 0; st < p; ++st) {
    const int rank = place_rank(r.options, 0, st, 0);
    ev.push_back({{"name", "process_name"},
                  {"ph", "M"},
                  {"pid", st},
                  {"args", {{"name", fmt::format("stage {} (rank {})", st, rank)}}}});
    ev.push_back(
        {{"name", "process_sort_index"}, {"ph", "M"}, {"pid", st}, {"args", {{"sort_index", st}}}});
    ev.push_back({{"name", "thread_name"},
                  {"ph", "M"},
                  {"pid", st},
                  {"tid", 0},
                  {"args", {{"name", "compute stream"}}}});
    ev.push_back({{"name", "thread_name"},
                  {"ph", "M"},
                  {"pid", st},
                  {"tid", 1},
                  {"args", {{"name", "communication"}}}});
  }
  for (const PipeOp& op : r.pipeline) {
    ev.push_back({{"name", r.stages.size() > r.memory.size()
                               ? fmt::format("{} {}.{}", op.backward ? "B" : "F", op.micro,
                                             op.vstage / std::max<std::size_t>(1, r.memory.size()))
                               : fmt::format("{} {}", op.backward ? "B" : "F", op.micro)},
                  {"cat", op.backward ? "backward" : "forward"},
                  {"ph", "X"},
                  {"pid", op.stage},
                  {"tid", 0},
                  {"ts", us(op.start_s)},
                  {"dur", us(op.end_s - op.start_s)},
                  {"args", {{"micro_batch", op.micro}, {"ready_us", us(op.ready_s)}}}});
    const int nvs = static_cast<int>(r.stages.size());
    const bool recv = op.backward ? op.vstage < nvs - 1 : op.vstage > 0;
    if (recv && r.p2p_s > 0)
      ev.push_back({{"name", op.backward ? "recv grad" : "recv act"},
                    {"cat", "pp_comm"},
                    {"ph", "X"},
                    {"pid", op.stage},
                    {"tid", 1},
                    {"ts", us(op.ready_s - r.p2p_s)},
                    {"dur", us(r.p2p_s)}});
  }
  // Op-level detail, one track per stream of the rank: every kernel, collective and transfer of
  // micro-batch 0's forward and of the last micro-batch's backward, at their simulated times
  // (the stage graph's execution placed at the pipeline op's start). Stream 0 runs the kernels
  // and the synchronous collectives (TP forward, EP all-to-alls), 1 the asynchronous TP
  // collectives and the CP ring, 2 and 3 ZeRO-3/FSDP's all-gathers and reduce-scatters.
  static const char* const kStreams[] = {
      "stream 0: kernels (detail: micro-batch 0 F, last B)", "stream 1: async TP, CP ring",
      "stream 2: ZeRO-3/FSDP all-gather", "stream 3: ZeRO-3/FSDP reduce-scatter"};
  std::map<std::pair<int, int>, bool> named;
  int last_micro = 0;
  for (const PipeOp& op : r.pipeline) last_micro = std::max(last_micro, op.micro);
  for (const PipeOp& op : r.pipeline) {
    if (op.backward ? op.micro != last_micro : op.micro != 0) continue;
    const StageGraphs& sg = r.stages[static_cast<std::size_t>(op.vstage)];
    const Graph& g = op.backward ? sg.backward : sg.forward;
    const Execution& ex = op.backward ? sg.bwd_exec : sg.fwd_exec;
    for (std::size_t i = 0; i < g.size() && i < ex.ops.size(); ++i) {
      const OpNode& n = g.op(static_cast<int>(i));
      const OpRecord& rec = ex.ops[i];
      if (n.kind == NodeKind::kWait || n.kind == NodeKind::kHost || n.kind == NodeKind::kSync ||
          rec.end_s <= rec.start_s)
        continue;
      const int stream = std::clamp(rec.stream, 0, 3);
      const int tid = 10 + stream;
      if (!named[{op.stage, tid}]) {
        named[{op.stage, tid}] = true;
        ev.push_back({{"name", "thread_name"},
                      {"ph", "M"},
                      {"pid", op.stage},
                      {"tid", tid},
                      {"args", {{"name", kStreams[stream]}}}});
      }
      ev.push_back({{"name", n.name},
                    {"cat", std::string(category_name(n.category))},
                    {"ph", "X"},
                    {"pid", op.stage},
                    {"tid", tid},
                    {"ts", us(op.start_s + rec.start_s)},
                    {"dur", us(rec.end_s - rec.start_s)}});
    }
  }
  for (int st = 0; st < static_cast<int>(r.stage_events.size()); ++st)
    for (const auto& e : r.stage_events[st])
      ev.push_back({{"name", e.name},
                    {"cat", e.track == 2 ? "offload"
                            : e.track    ? "dp_comm"
                                         : "optimizer"},
                    {"ph", "X"},
                    {"pid", st},
                    {"tid", e.track},
                    {"ts", us(e.start_s)},
                    {"dur", us(e.end_s - e.start_s)}});
  nlohmann::json j;
  j["traceEvents"] = ev;
  j["displayTimeUnit"] = "ms";
  return j.dump();
}

}  // namespace ridge::workloads
