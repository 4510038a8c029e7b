// Pipeline schedules, the DP gradient reduction, the optimizer step and the whole parallel step
// (see workloads/parallel.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "models/op_cost.hpp"
#include "workloads/builder_util.hpp"
#include "workloads/op_timer.hpp"
#include "workloads/parallel.hpp"
#include "workloads/plan.hpp"

namespace ridge::workloads {

std::string_view schedule_name(PipeSchedule s) {
  switch (s) {
    case PipeSchedule::kGpipe:
      return "gpipe";
    case PipeSchedule::kInterleaved:
      return "interleaved";
    default:
      return "1f1b";
  }
}

std::vector<PipeStep> stage_order(PipeSchedule s, int stages, int stage, int micro, int chunks) {
  std::vector<PipeStep> o;
  if (s == PipeSchedule::kGpipe) {
    for (int i = 0; i < micro; ++i) o.push_back({i, false, 0});
    for (int i = 0; i < micro; ++i) o.push_back({i, true, 0});
    return o;
  }
  if (s == PipeSchedule::kInterleaved && chunks > 1) {
    // Megatron-LM forward_backward_pipelining_with_interleaving: the k-th forward of a device is
    // chunk (k mod pv) / p of micro-batch (k / pv) p + k mod p (groups of p micro-batches pass
    // through each chunk in turn); backwards walk the chunks in reverse. Warm-up: (p - s - 1) x 2
    // + (v - 1) x p forwards, then one forward and one backward in turn, then the backwards.
    const int p = stages, v = chunks, total = micro * chunks;
    auto step = [&](int k, bool bwd) {
      int chunk = (k % (p * v)) / p;
      if (bwd) chunk = v - 1 - chunk;
      return PipeStep{(k / (p * v)) * p + k % p, bwd, chunk};
    };
    const int warm = std::min((p - stage - 1) * 2 + (v - 1) * p, total);
    for (int k = 0; k < warm; ++k) o.push_back(step(k, false));
    for (int k = 0; k < total - warm; ++k) {
      o.push_back(step(warm + k, false));
      o.push_back(step(k, true));
    }
    for (int k = total - warm; k < total; ++k) o.push_back(step(k, true));
    return o;
  }
  // 1F1B (Narayanan et al. 2021, fig. 4; Megatron-LM forward_backward_pipelining_without_
  // interleaving): p - s - 1 warm-up forwards, then one forward and one backward in turn, then the
  // remaining backwards.
  const int warm = std::min(stages - stage - 1, micro);
  for (int i = 0; i < warm; ++i) o.push_back({i, false, 0});
  for (int i = 0; i < micro - warm; ++i) {
    o.push_back({warm + i, false, 0});
    o.push_back({i, true, 0});
  }
  for (int i = micro - warm; i < micro; ++i) o.push_back({i, true, 0});
  return o;
}

std::vector<PipeOp> simulate_pipeline(PipeSchedule s, int micro, const std::vector<double>& fwd_s,
                                      const std::vector<double>& bwd_s, double p2p_s, int chunks) {
  const int nvs = static_cast<int>(fwd_s.size());
  const int p = nvs / chunks;
  std::vector<PipeOp> ops;
  std::vector<std::vector<int>> order(p);  // per device: op indices in issue order
  // index of (virtual stage, micro, backward)
  std::vector<int> idx(static_cast<std::size_t>(nvs) * micro * 2, -1);
  auto at = [&](int vs, int i, bool b) -> int& {
    return idx[(static_cast<std::size_t>(vs) * micro + i) * 2 + (b ? 1 : 0)];
  };
  for (int st = 0; st < p; ++st)
    for (const PipeStep& x : stage_order(s, p, st, micro, chunks)) {
      const int vs = x.chunk * p + st;
      at(vs, x.micro, x.backward) = static_cast<int>(ops.size());
      order[st].push_back(static_cast<int>(ops.size()));
      PipeOp op;
      op.stage = st, op.micro = x.micro, op.vstage = vs, op.backward = x.backward;
      ops.push_back(op);
    }
  std::vector<char> done(ops.size(), 0);
  std::vector<std::size_t> next(p, 0);
  std::size_t left = ops.size();
  // List scheduling: each device runs its ops in order; an op starts when its device is free and
  // its input has arrived (the previous virtual stage's forward, or the next one's backward, plus
  // a p2p transfer; the last virtual stage's backward follows its own forward).
  while (left > 0) {
    bool progress = false;
    for (int st = 0; st < p; ++st) {
      while (next[st] < order[st].size()) {
        const int k = order[st][next[st]];
        PipeOp& op = ops[k];
        const int vs = op.vstage;
        int dep = -1;
        bool p2p = false;
        if (!op.backward && vs > 0) dep = at(vs - 1, op.micro, false), p2p = true;
        if (op.backward && vs < nvs - 1) dep = at(vs + 1, op.micro, true), p2p = true;
        if (op.backward && vs == nvs - 1) dep = at(vs, op.micro, false);
        if (dep >= 0 && !done[dep]) break;
        const int prev = next[st] > 0 ? order[st][next[st] - 1] : -1;
        op.ready_s = dep >= 0 ? ops[dep].end_s + (p2p ? p2p_s : 0) : 0;
        const double free_s = prev >= 0 ? ops[prev].end_s : 0;
        if (dep >= 0 && op.ready_s > free_s) {
          op.binder = dep;
          op.binder_p2p = p2p;
        } else {
          op.binder = prev;
        }
        op.start_s = std::max(free_s, op.ready_s);
        op.end_s = op.start_s + (op.backward ? bwd_s[vs] : fwd_s[vs]);
        done[k] = 1;
        ++next[st];
        --left;
        progress = true;
      }
    }
    if (!progress) throw std::logic_error("pipeline schedule deadlocked");
  }
  return ops;
}

namespace {

// Adds an executed graph's critical-path classes, scaled, into `out` (TP communication named).
void add_classes(std::map<std::string, double>& out, const std::map<std::string, double>& by,
                 double scale) {
  for (const auto& [k, v] : by) {
    const std::string name = k == "communication" ? "tp_comm" : k;
    out[name] += v * scale;
  }
}

// Megatron-LM's optimizer step over n parameters (its fp32 main gradients and master weights),
// each a memory-bound multi-tensor pass: unscale and check for inf/nan (the fp16 loss scaler:
// read and write 4 B), the gradient norm for clipping (read 4 B; the scaling itself runs only when
// the norm is over the limit, not counted), fused Adam (read grad, master, m, v: 16 B; write
// master, m, v and the 16-bit weight: 14 B; ~10 FLOPs).
double optimizer_time(const hw::GpuSpec& gpu, double n, TimingMode mode) {
  if (n <= 0) return 0;
  Graph g;
  Emitter e(g);
  double t = 0;
  t += op_time(gpu, g.op(e.pass("unscale", Category::kOptimizer, 4.0 * n, 4.0 * n, n)).op, mode);
  t += op_time(gpu, g.op(e.pass("grad_norm", Category::kOptimizer, 4.0 * n, 0, 2.0 * n)).op, mode);
  t += op_time(gpu, g.op(e.pass("adam", Category::kOptimizer, 16.0 * n, 14.0 * n, 10.0 * n)).op,
               mode);
  return t;
}

// Useful FLOPs of one token's forward (Narayanan et al. 2021 eq. 3 counts the same terms): the
// layers' GEMMs (2 per weight), attention's QK^T and AV (2 s x q width each), the LM head.
double forward_flops_per_token(const TransformerConfig& m, long long seq) {
  const double q = double(m.heads) * m.head_dim, kv = double(m.kv_heads) * m.head_dim;
  const double h = double(m.d_model);
  const double mats = m.gated_mlp ? 3.0 : 2.0;
  const double attn = h * (q + 2 * kv) + q * h;
  const double gemm = attn + mats * h * m.ffn;
  // A MoE layer: the router, top_k routed experts and the shared experts per token (the active
  // weights; capacity padding is not useful work).
  const double moe = attn + h * m.experts + mats * h * m.expert_ffn * m.top_k +
                     mats * h * m.shared_expert_ffn * m.shared_experts;
  const int moe_layers = m.moe_layer_count();
  return (m.layers - moe_layers) * 2 * gemm + moe_layers * 2 * moe + m.layers * 4.0 * seq * q +
         2.0 * h * m.vocab;
}

}  // namespace

ParallelResult run_parallel(const TransformerConfig& m, const ParallelOptions& o,
                            const hw::SystemSpec& sys, TimingMode mode) {
  ParallelResult r;
  r.options = o;
  r.system = sys;
  const hw::GpuSpec& gpu = sys.node.gpu;
  CollectiveTimes coll(sys);
  const int p = o.pp;
  const int micro = static_cast<int>(o.micro_batches());
  // Virtual stages: chunks x devices of them (one per device without interleaving), each built
  // as a stage of a pipeline that many deep. Middle ones do identical work: build one, reuse it.
  const int v = o.schedule == PipeSchedule::kInterleaved ? std::max(1, o.virtual_stages) : 1;
  const int nvs = p * v;
  ParallelOptions ov = o;
  ov.pp = nvs;
  r.stages.resize(nvs);
  for (int vs = 0; vs < nvs; ++vs) {
    // (With MoE, a stage holding some of the leading dense layers is built on its own.)
    const int per = m.layers / nvs;
    const bool like_1 = !m.is_moe() || (per >= m.dense_layers && vs * per >= m.dense_layers);
    if (vs >= 2 && vs < nvs - 1 && like_1) {
      r.stages[vs] = r.stages[1];
      r.stages[vs].first_layer = vs * r.stages[1].layers;
      continue;
    }
    r.stages[vs] = build_stage(m, ov, vs, gpu, coll, mode, p);
  }
  std::vector<double> f(nvs), b(nvs), dev_params(p, 0), dev_expert(p, 0), dev_fb(p, 0),
      dev_max_layer(p, 0);
  for (int vs = 0; vs < nvs; ++vs) {
    f[vs] = r.stages[vs].fwd_exec.step_time_s;
    b[vs] = r.stages[vs].bwd_exec.step_time_s;
    dev_params[vs % p] += r.stages[vs].params;
    dev_expert[vs % p] += r.stages[vs].expert_params;
    dev_max_layer[vs % p] = std::max(dev_max_layer[vs % p], r.stages[vs].max_layer_params);
    dev_fb[vs % p] += f[vs] + b[vs];
  }
  // Activations (and their gradients) cross stages as one b x s x h bf16 tensor (s/tp of it per
  // rank with sequence parallelism), between the same TP rank of adjacent stages.
  if (nvs > 1) {
    const double bytes = 2.0 * o.micro_batch * o.seq * m.d_model /
                         (o.sequence_parallel && o.tp > 1 ? o.tp : 1) / o.cp;
    // Every TP (and CP) rank of a stage sends its share at once: one transfer each, together.
    std::vector<std::vector<int>> pairs;
    for (int c = 0; c < o.cp; ++c)
      for (int t = 0; t < o.tp; ++t)
        pairs.push_back({place_rank(o, t, 0, 0, c), place_rank(o, t, 1, 0, c)});
    r.p2p_s = o.pp_comm_scale * coll.concurrent_time(models::CollOp::kSendRecv, bytes, pairs);
  }
  r.pipeline = simulate_pipeline(o.schedule, micro, f, b, r.p2p_s, v);
  std::vector<int> last_op(p, -1), last_bwd(p, -1);
  for (int k = 0; k < static_cast<int>(r.pipeline.size()); ++k) {
    const PipeOp& op = r.pipeline[k];
    if (last_op[op.stage] < 0 || op.end_s >= r.pipeline[last_op[op.stage]].end_s)
      last_op[op.stage] = k;
    if (op.backward && (last_bwd[op.stage] < 0 || op.end_s >= r.pipeline[last_bwd[op.stage]].end_s))
      last_bwd[op.stage] = k;
  }
  for (int st = 0; st < p; ++st)
    r.pipeline_s = std::max(r.pipeline_s, r.pipeline[last_op[st]].end_s);
  // DP: buckets of the stage's gradients, reduced one after another on a communication stream as
  // the last micro-batch's backward produces them (uniformly over its duration).
  std::vector<double> finish(p), dp_tail(p), opt(p), gather(p), d2h_end(p, 0), d2h_tail(p, 0),
      h2d(p, 0);
  double d2h_busy0 = 0;
  r.stage_events.assign(p, {});
  for (int st = 0; st < p; ++st) {
    const PipeOp& lb = r.pipeline[last_bwd[st]];
    double t = lb.end_s;
    double comm_end = lb.end_s;
    const double params = dev_params[st];
    const double expert = dev_expert[st], dense = params - expert;
    // Gradients are reduced over the DP and CP ranks together (Megatron's data-parallel group
    // with context parallelism); a routed expert's over those holding the same experts.
    const int ddp = o.dp * o.cp;
    const int edp = ddp / std::max(1, o.ep);  // expert data-parallel size
    // ZeRO-3 / FSDP reduce-scatter each layer's gradients inside every backward (the stage
    // graphs): nothing is left for the end of the step, and the next forward gathers the
    // parameters the optimizer updated.
    const bool reduce = ddp > 1 && !o.shards_params();
    // The rank's optimizer partition: its gradients' share after a reduce-scatter (ZeRO >= 1).
    const double dense_share = o.zero_stage() >= 1 ? 1.0 / ddp : 1.0;
    const double expert_share = o.zero_stage() >= 1 ? 1.0 / std::max(1, edp) : 1.0;
    if (reduce || o.offloads()) {
      // The stage's tp DP groups (one per TP rank) reduce the same buckets at the same time, on
      // one fabric. Expert gradients (MoE) go to their own buckets, reduced over the dp / ep
      // ranks holding the same experts (every such group of the stage at once).
      std::vector<std::vector<int>> groups(o.tp), egroups;
      for (int t = 0; t < o.tp; ++t)
        for (int d = 0; d < o.dp; ++d)
          for (int c = 0; c < o.cp; ++c) groups[t].push_back(place_rank(o, t, st, d, c));
      for (int t = 0; t < o.tp; ++t)
        for (int e = 0; e < o.ep && edp > 1; ++e) {
          egroups.emplace_back();
          for (int j = 0; j < o.dp / o.ep; ++j)
            for (int c = 0; c < o.cp; ++c)
              egroups.back().push_back(place_rank(o, t, st, e + o.ep * j, c));
        }
      const double bucket = o.bucket_mb * 1e6;
      struct Bucket {
        double ready, bytes;
        bool expert;
      };
      std::vector<Bucket> buckets;
      // Buckets fill in reverse layer order as the last backward runs (uniformly over it).
      auto fill = [&](double total, bool is_expert) {
        const int n = static_cast<int>(std::ceil(total / bucket));
        for (int k = 0; k < n; ++k)
          buckets.push_back({lb.start_s + (k + 1.0) / n * (lb.end_s - lb.start_s),
                             std::min(bucket, total - k * bucket), is_expert});
        return n;
      };
      // Expert buckets are reduced over dp / ep ranks (none when ep = dp x cp); with offload
      // they are copied to the host all the same. Without a reduction (one DP rank, or ZeRO-3's
      // per-layer reduce-scatters inside the backward) the buckets only pace the copies.
      fill(dense * o.grad_bytes, false);
      const int nx = edp > 1 || o.offloads() ? fill(expert * o.grad_bytes, true) : 0;
      int reduced_buckets = 0, reduced_expert = 0;
      std::stable_sort(buckets.begin(), buckets.end(),
                       [](const Bucket& a, const Bucket& b) { return a.ready < b.ready; });
      const auto op =
          o.zero_stage() >= 1 ? models::CollOp::kReduceScatter : models::CollOp::kAllReduce;
      const OffloadRates rates = o.offloads() ? offload_rates(sys, o) : OffloadRates{};
      double busy = 0, end = lb.start_s, copy_end = lb.start_s, copy_busy = 0;
      for (std::size_t k = 0; k < buckets.size(); ++k) {
        const Bucket& bk = buckets[k];
        double reduced = bk.ready;
        if (reduce && (!bk.expert || edp > 1)) {
          ++reduced_buckets;
          reduced_expert += bk.expert;
          const double dt =
              o.dp_comm_scale * coll.concurrent_time(op, bk.bytes, bk.expert ? egroups : groups);
          const double begin = std::max(end, bk.ready);
          end = begin + dt;
          reduced = end;
          r.stage_events[st].push_back(
              {(bk.expert ? "expert dp bucket " : "dp bucket ") + std::to_string(k), 1, begin,
               end});
          busy += dt;
        }
        if (o.offloads()) {
          // ZeRO-Offload: the bucket's partition goes to the host as soon as it is reduced.
          const double c =
              offload_copy_time(rates, bk.bytes * (bk.expert ? expert_share : dense_share));
          const double begin = std::max(copy_end, reduced);
          copy_end = begin + c;
          copy_busy += c;
          r.stage_events[st].push_back({"grad to host " + std::to_string(k), 2, begin, copy_end});
        }
      }
      (void)nx;
      if (reduce) comm_end = end;
      d2h_end[st] = copy_end;
      if (st == 0) {
        if (reduce)
          r.dp_buckets = reduced_buckets, r.expert_buckets = reduced_expert, r.dp_time_s = busy;
        d2h_busy0 = copy_busy;
      }
      if (reduce && o.zero_stage() >= 1) {
        gather[st] =
            o.dp_comm_scale * coll.concurrent_time(models::CollOp::kAllGather, 2.0 * dense, groups);
        if (edp > 1)
          gather[st] += o.dp_comm_scale *
                        coll.concurrent_time(models::CollOp::kAllGather, 2.0 * expert, egroups);
      }
    }
    dp_tail[st] = std::max(0.0, comm_end - std::max(t, r.pipeline[last_op[st]].end_s));
    t = std::max(comm_end, r.pipeline[last_op[st]].end_s);
    // Offload: the copies' part past the backward and the reduction; then the step on the host.
    d2h_tail[st] = o.offloads() ? std::max(0.0, d2h_end[st] - t) : 0.0;
    t += d2h_tail[st];
    const double n_opt = dense * dense_share + expert * expert_share;
    if (o.offloads()) {
      const OffloadRates rates = offload_rates(sys, o);
      opt[st] = cpu_adam_time(rates, n_opt);
      // With parameter offload the updated partition stays on the host: the next step's
      // per-layer fetches (in the stage graphs) carry it to the GPU.
      h2d[st] = o.offloads_params() ? 0.0 : offload_copy_time(rates, 2.0 * n_opt);
    } else {
      opt[st] = optimizer_time(gpu, n_opt, mode);
    }
    finish[st] = t + opt[st] + h2d[st] + gather[st];
    r.stage_events[st].push_back({o.offloads() ? "cpu adam" : "optimizer", 0, t, t + opt[st]});
    if (h2d[st] > 0)
      r.stage_events[st].push_back({"params to device", 2, t + opt[st], t + opt[st] + h2d[st]});
    if (gather[st] > 0)
      r.stage_events[st].push_back({"param all-gather", 1, t + opt[st] + h2d[st], finish[st]});
  }
  const int crit =
      static_cast<int>(std::max_element(finish.begin(), finish.end()) - finish.begin());
  r.step_s = finish[crit];
  r.dp_exposed_s = dp_tail[crit];
  r.optimizer_s = opt[crit];
  r.param_gather_s = gather[crit];
  r.offload_exposed_s = d2h_tail[crit];
  r.offload_h2d_s = h2d[crit];
  r.offload_d2h_s = d2h_busy0;
  // The critical path: back from the critical stage's last pipeline op through whichever input
  // held each op back; ops contribute their own critical-path classes.
  double walked = 0;
  for (int k = last_op[crit]; k >= 0;) {
    const PipeOp& op = r.pipeline[k];
    const StageGraphs& sg = r.stages[op.vstage];
    add_classes(r.critical_s, op.backward ? sg.bwd_by_class : sg.fwd_by_class, 1.0);
    walked += op.end_s - op.start_s;
    if (op.binder >= 0) {
      const PipeOp& by = r.pipeline[op.binder];
      const double gap = op.start_s - by.end_s;
      if (op.binder_p2p)
        r.critical_s["pp_comm"] += gap;
      else if (gap > 0)
        r.critical_s["idle"] += gap;
    }
    k = op.binder;
  }
  const double pipe_end = r.pipeline[last_op[crit]].end_s;
  if (r.dp_exposed_s > 0) r.critical_s["dp_comm"] += r.dp_exposed_s;
  r.critical_s["optimizer"] += r.optimizer_s;
  if (r.param_gather_s > 0) r.critical_s["dp_comm"] += r.param_gather_s;
  if (o.offloads()) r.critical_s["offload"] += r.offload_exposed_s + r.offload_h2d_s;
  // Anything not accounted (the critical stage's pipeline ending before its DP tail began) is idle.
  double sum = 0;
  for (const auto& [k, v] : r.critical_s) sum += v;
  if (r.step_s - sum > 1e-12) r.critical_s["idle"] += r.step_s - sum;
  (void)pipe_end;
  (void)walked;
  // Bubble: stage 0's idle time inside the pipeline phase, against m x (F + B) of the slowest.
  for (int st = 0; st < p; ++st)
    r.ideal_pipeline_s = std::max(r.ideal_pipeline_s, micro * dev_fb[st]);
  r.bubble_s = r.pipeline_s - micro * dev_fb[0];
  // Throughput and utilisation.
  const double tokens = double(o.global_batch) * o.seq;
  r.tokens_per_s = tokens / r.step_s;
  const double fwd = forward_flops_per_token(m, o.seq) * tokens;
  r.model_flops = 3 * fwd;
  double extra = 0;
  if (o.recompute == Recompute::kFull) extra = fwd;
  if (o.recompute == Recompute::kSelective)  // QK^T and AV re-run: 4 s x q width per token, layer
    extra = tokens * m.layers * 4.0 * o.seq * m.heads * m.head_dim;
  r.hardware_flops = r.model_flops + extra;
  const int gpus = o.gpus_used();
  const double peak = gpu.matmul_peak(hw::Precision::kBf16) * gpus;
  r.mfu = r.model_flops / r.step_s / peak;
  r.hfu = r.hardware_flops / r.step_s / peak;
  for (int st = 0; st < p; ++st)
    r.memory.push_back(stage_memory(m, o, st, dev_params[st], dev_expert[st], dev_max_layer[st]));
  if (o.offloads()) {
    double host = 0;
    for (const auto& mem : r.memory) host = std::max(host, mem.host);
    r.host_bytes_per_node = offload_host_bytes_per_node(sys, o, host);
  }
  r.collectives_simulated = coll.simulated();
  return r;
}

std::string_view offload_name(Offload o) {
  return o == Offload::kOptimizer            ? "optimizer"
         : o == Offload::kOptimizerAndParams ? "optimizer_and_params"
                                             : "none";
}

OffloadRates offload_rates(const hw::SystemSpec& sys, const ParallelOptions& o) {
  OffloadRates r;
  const hw::NodeSpec& n = sys.node;
  r.gpus_on_node = std::max(1, std::min(o.gpus_used(), n.gpus));
  r.host_bw = n.host.memory_bandwidth / r.gpus_on_node;
  r.pcie_bw = std::min(n.pcie.bandwidth, r.host_bw);
  r.latency_s = n.pcie.latency_s;
  return r;
}

double offload_copy_time(const OffloadRates& r, double bytes) {
  if (bytes <= 0) return 0;
  return r.latency_s + bytes / r.pcie_bw;
}

double cpu_adam_time(const OffloadRates& r, double n) {
  return n > 0 ? 30.0 * n / r.host_bw : 0.0;
}

double offload_host_bytes_per_node(const hw::SystemSpec& sys, const ParallelOptions& o,
                                   double host_per_rank) {
  return host_per_rank * std::max(1, std::min(o.gpus_used(), sys.node.gpus));
}

// For the planner's fast evaluator (workloads/plan.hpp): the same optimizer and FLOP counts.
double parallel_optimizer_time(const hw::GpuSpec& gpu, double n, TimingMode mode) {
  return optimizer_time(gpu, n, mode);
}
double parallel_forward_flops_per_token(const TransformerConfig& m, long long seq) {
  return forward_flops_per_token(m, seq);
}

}  // namespace ridge::workloads
