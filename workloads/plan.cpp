// Capacity planning: enumeration, the fast evaluator and the re-simulated top k (see
// workloads/plan.hpp).
#include "workloads/plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <map>
#include <numeric>
#include <unordered_map>

#include "hw/system_loader.hpp"

namespace ridge::workloads {

std::string_view objective_name(PlanObjective o) {
  switch (o) {
    case PlanObjective::kStepTime:
      return "step_time";
    case PlanObjective::kTokensPerS:
      return "tokens_per_s";
    case PlanObjective::kCostPerToken:
      return "cost_per_token";
    case PlanObjective::kFewestGpus:
      return "fewest_gpus";
  }
  return "?";
}

std::string layout_name(const ParallelOptions& o) {
  std::string s = o.cp > 1 ? fmt::format("tp{} cp{} pp{} dp{}", o.tp, o.cp, o.pp, o.dp)
                           : fmt::format("tp{} pp{} dp{}", o.tp, o.pp, o.dp);
  if (o.ep > 1) s += fmt::format(" ep{}", o.ep);
  s += fmt::format(" mb{}", o.micro_batch);
  if (o.sequence_parallel) s += " sp";
  s += o.recompute == Recompute::kFull        ? " full"
       : o.recompute == Recompute::kSelective ? " sel"
                                              : " norc";
  s += o.fsdp ? std::string(" fsdp") : fmt::format(" z{}", o.zero);
  if (o.schedule == PipeSchedule::kInterleaved)
    s += fmt::format(" int{}", o.virtual_stages);
  else if (o.schedule == PipeSchedule::kGpipe)
    s += " gpipe";
  else
    s += " 1f1b";
  if (o.offloads()) s += o.offloads_params() ? " offload+params" : " offload";
  return s;
}

namespace {

// A layer shape's times: one layer's forward and backward, the embedding's and the LM head's
// extras, and the TP communication on each's critical path.
struct LayerTimes {
  double lf = 0, lb = 0, ef = 0, eb = 0, hf = 0, hb = 0;
  double tp_f = 0, tp_b = 0;        // per layer, on the critical path
  double ep = 0, cp = 0, fsdp = 0;  // per layer, forward + backward, on or off the critical path
  // ZeRO-3/FSDP: a chunk's exposed first-layer gather (forward, backward) on a virtual stage
  // without the embedding or the head (those carry theirs in ef/eb and hf/hb).
  double gf = 0, gb = 0;
};

// Layouts whose layer times need the probe on the layout's own placement (CP rings, EP groups,
// ZeRO-3/FSDP groups depend on it); the others keep the 2-stage probe.
bool placed_probe(const ParallelOptions& o) {
  return o.cp > 1 || o.ep > 1 || o.shards_params();
}

std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  return h;
}
std::uint64_t bits(double d) {
  std::uint64_t u;
  std::memcpy(&u, &d, sizeof u);
  return u;
}

double comm_class(const std::map<std::string, double>& by) {
  auto it = by.find("communication");
  return it == by.end() ? 0 : it->second;
}

}  // namespace

struct PlanEvaluator::Impl {
  TransformerConfig m;
  hw::SystemSpec sys;
  TimingMode mode;
  double hbm;  // usable bytes per GPU
  CollectiveTimes coll;
  std::unordered_map<std::uint64_t, LayerTimes> layers;
  std::unordered_map<std::uint64_t, double> comm;  // (op, bytes, placement) -> s
  std::unordered_map<std::uint64_t, double> opt;   // parameters -> s
  double flops_per_token_seq = -1;
  long long flops_seq = -1;

  double host_usable;  // host bytes per node the offloaded state may take (after the headroom)

  Impl(const TransformerConfig& model, const hw::SystemSpec& s, TimingMode md, double headroom)
      : m(model),
        sys(s),
        mode(md),
        hbm(s.node.gpu.memory.hbm_size * (1 - headroom)),
        coll(s),
        host_usable(s.node.host.memory * (1 - headroom)) {}

  // `dense`: the times of a dense layer of a MoE model (its leading `dense_layers`); otherwise
  // a MoE model's probe layers are all MoE layers.
  const LayerTimes& layer(const ParallelOptions& o, bool dense = false) {
    const bool sp = o.sequence_parallel && o.tp > 1;
    std::uint64_t key = mix(mix(mix(o.tp, sp), o.micro_batch), o.seq);
    key = mix(mix(key, static_cast<std::uint64_t>(o.recompute)), dense ? 0xde45eULL : 0);
    if (placed_probe(o)) {
      const int v = o.schedule == PipeSchedule::kInterleaved ? std::max(1, o.virtual_stages) : 1;
      key = mix(mix(mix(mix(mix(key, 0x5eedULL), o.cp), o.ep), o.pp * v), o.dp);
      key = mix(key, static_cast<std::uint64_t>(o.shards_params()));
      key = mix(key, static_cast<std::uint64_t>(o.offloads_params()));  // per-layer fetches
    }
    auto it = layers.find(key);
    if (it != layers.end()) return it->second;
    if (placed_probe(o)) return layers.emplace(key, placed_layer(o, sp, dense)).first->second;
    // The simulator's own stages with 1 and 2 layers each, on a 2-stage pipeline: stage 0 holds
    // the embedding, stage 1 the LM head.
    ParallelOptions q;
    q.system = o.system;
    q.tp = o.tp, q.pp = 2, q.dp = 1, q.gpus = 2 * o.tp;
    q.sequence_parallel = sp;
    q.micro_batch = o.micro_batch;
    q.seq = o.seq;
    q.recompute = o.recompute;
    q.global_batch = o.micro_batch;
    TransformerConfig one = m, two = m;
    one.layers = 2;
    two.layers = 4;
    if (m.is_moe()) {
      one.dense_layers = dense ? one.layers : 0;
      two.dense_layers = dense ? two.layers : 0;
    }
    const hw::GpuSpec& gpu = sys.node.gpu;
    const StageGraphs a0 = build_stage(one, q, 0, gpu, coll, mode);
    const StageGraphs a1 = build_stage(one, q, 1, gpu, coll, mode);
    const StageGraphs b0 = build_stage(two, q, 0, gpu, coll, mode);
    LayerTimes t;
    t.lf = b0.fwd_exec.step_time_s - a0.fwd_exec.step_time_s;
    t.lb = b0.bwd_exec.step_time_s - a0.bwd_exec.step_time_s;
    t.ef = a0.fwd_exec.step_time_s - t.lf;
    t.eb = a0.bwd_exec.step_time_s - t.lb;
    t.hf = a1.fwd_exec.step_time_s - t.lf;
    t.hb = a1.bwd_exec.step_time_s - t.lb;
    t.tp_f = comm_class(b0.fwd_by_class) - comm_class(a0.fwd_by_class);
    t.tp_b = comm_class(b0.bwd_by_class) - comm_class(a0.bwd_by_class);
    return layers.emplace(key, t).first->second;
  }

  // The probe on the layout's own placement: its tp, cp, dp and ep, and as many stages as it has
  // virtual stages (pp x v, as run_parallel builds them), one micro-batch, stages of 1 and 2
  // layers (the model cut to pp v and 2 pp v layers, every layer of a MoE model a MoE layer, or
  // with `dense` every one a dense layer).
  // With one stage it holds the embedding and the head: their extras are summed into the
  // embedding's (the evaluator uses only the sum then).
  LayerTimes placed_layer(const ParallelOptions& o, bool sp, bool dense) {
    const int v = o.schedule == PipeSchedule::kInterleaved ? std::max(1, o.virtual_stages) : 1;
    const int nvs = o.pp * v;
    ParallelOptions q = o;
    q.pp = nvs;
    q.sequence_parallel = sp;
    q.global_batch = o.micro_batch * o.dp;
    q.schedule = PipeSchedule::kOneFOneB;
    q.virtual_stages = 1;
    TransformerConfig one = m, two = m;
    one.layers = nvs;
    two.layers = 2 * nvs;
    one.dense_layers = dense && m.is_moe() ? one.layers : 0;
    two.dense_layers = dense && m.is_moe() ? two.layers : 0;
    const hw::GpuSpec& gpu = sys.node.gpu;
    const StageGraphs a0 = build_stage(one, q, 0, gpu, coll, mode, o.pp);
    const StageGraphs b0 = build_stage(two, q, 0, gpu, coll, mode, o.pp);
    LayerTimes t;
    t.lf = b0.fwd_exec.step_time_s - a0.fwd_exec.step_time_s;
    t.lb = b0.bwd_exec.step_time_s - a0.bwd_exec.step_time_s;
    t.ef = a0.fwd_exec.step_time_s - t.lf;
    t.eb = a0.bwd_exec.step_time_s - t.lb;
    if (nvs > 1) {
      const StageGraphs a1 = build_stage(one, q, nvs - 1, gpu, coll, mode, o.pp);
      t.hf = a1.fwd_exec.step_time_s - t.lf;
      t.hb = a1.bwd_exec.step_time_s - t.lb;
    }
    if (nvs > 2 && o.shards_params()) {
      const StageGraphs mid = build_stage(one, q, 1, gpu, coll, mode, o.pp);
      t.gf = mid.fwd_exec.step_time_s - t.lf;
      t.gb = mid.bwd_exec.step_time_s - t.lb;
    }
    t.tp_f = comm_class(b0.fwd_by_class) - comm_class(a0.fwd_by_class);
    t.tp_b = comm_class(b0.bwd_by_class) - comm_class(a0.bwd_by_class);
    t.ep = (b0.ep_fwd_s + b0.ep_bwd_s) - (a0.ep_fwd_s + a0.ep_bwd_s);
    t.cp = (b0.cp_fwd_s + b0.cp_bwd_s) - (a0.cp_fwd_s + a0.cp_bwd_s);
    t.fsdp = (b0.fsdp_fwd_s + b0.fsdp_bwd_s) - (a0.fsdp_fwd_s + a0.fsdp_bwd_s);
    return t;
  }

  // Device d's parameters as build_stage counts them, per kind: every layer of its chunks (a MoE
  // layer's dense part over tp, its experts / ep over tp), the embeddings on the first and last
  // virtual stage; and its largest layer (ZeRO-3/FSDP gather one whole layer at a time).
  struct DeviceParams {
    double params = 0, expert = 0, max_layer = 0;
  };
  DeviceParams device_params_split(const ParallelOptions& o, int v, int d) const {
    DeviceParams p;
    const int nvs = o.pp * v;
    const int per = m.layers / nvs;
    const double dense_layer = double(m.layer_parameter_count()) / o.tp;
    const double moe_dense = m.is_moe() ? double(m.moe_layer_dense_parameter_count()) / o.tp : 0;
    const double experts =
        m.is_moe() ? double(m.experts / o.ep) * m.expert_parameter_count() / o.tp : 0;
    const double emb = double(o.padded_vocab(m.vocab)) * m.d_model / o.tp;
    for (int c = 0; c < v; ++c) {
      const int vs = c * o.pp + d;
      for (int l = vs * per; l < vs * per + per; ++l) {
        if (!m.moe_layer(l)) {
          p.params += dense_layer;
          p.max_layer = std::max(p.max_layer, dense_layer);
        } else {
          p.params += moe_dense + experts;
          p.expert += experts;
          p.max_layer = std::max(p.max_layer, moe_dense + experts);
        }
      }
      if (vs == 0) p.params += emb + double(m.max_positions) * m.d_model;
      if (vs == nvs - 1 && !(vs == 0 && m.tied_embeddings)) p.params += emb;
    }
    return p;
  }

  // A collective over groups placed as `shape` says, memoized by (kind, bytes, shape).
  // `groups()` gives the groups; called only on a miss (a warm evaluation builds no rank lists).
  template <class Groups>
  double collective(int kind, models::CollOp op, double bytes, std::uint64_t shape,
                    Groups&& groups) {
    const std::uint64_t key =
        mix(mix(mix(static_cast<std::uint64_t>(kind), static_cast<std::uint64_t>(op)), bits(bytes)),
            shape);
    auto it = comm.find(key);
    if (it != comm.end()) return it->second;
    const double t = coll.concurrent_time(op, bytes, groups());
    comm.emplace(key, t);
    return t;
  }

  std::vector<std::vector<int>> dp_groups(const ParallelOptions& o) const {
    std::vector<std::vector<int>> g(o.tp);
    for (int t = 0; t < o.tp; ++t)
      for (int d = 0; d < o.dp; ++d) g[t].push_back(place_rank(o, t, 0, d));
    return g;
  }

  // DP on device 0 as run_parallel does it (CP, EP, ZeRO 0-3): gradients reduced over dp x cp
  // ranks in buckets filled uniformly over the last backward (duration B), a routed expert's in
  // buckets of their own over the dp x cp / ep ranks holding it, one bucket at a time in order
  // of readiness (dense first at a tie); the part past the backward is exposed. ZeRO-1/2 gather
  // the updated parameters after the optimizer; ZeRO-3/FSDP reduce inside the backward (the
  // layer times) and leave nothing here.
  void dp_step(const ParallelOptions& o, const DeviceParams& p0, double B, PlanEstimate& e) {
    e.dp_exposed_s = 0, e.param_gather_s = 0, e.offload_exposed_s = 0;
    const int ddp = o.dp * o.cp, edp = ddp / std::max(1, o.ep);
    const bool reduce = ddp > 1 && !o.shards_params();
    if (!reduce && !o.offloads()) return;
    auto groups = [&] {
      std::vector<std::vector<int>> g(o.tp);
      for (int t = 0; t < o.tp; ++t)
        for (int d = 0; d < o.dp; ++d)
          for (int c = 0; c < o.cp; ++c) g[t].push_back(place_rank(o, t, 0, d, c));
      return g;
    };
    auto egroups = [&] {
      std::vector<std::vector<int>> g;
      for (int t = 0; t < o.tp; ++t)
        for (int x = 0; x < o.ep && edp > 1; ++x) {
          g.emplace_back();
          for (int j = 0; j < o.dp / o.ep; ++j)
            for (int c = 0; c < o.cp; ++c) g.back().push_back(place_rank(o, t, 0, x + o.ep * j, c));
        }
      return g;
    };
    const std::uint64_t shape = mix(mix(mix(mix(o.tp, o.pp), o.dp), o.cp), o.ep);
    const auto op =
        o.zero_stage() >= 1 ? models::CollOp::kReduceScatter : models::CollOp::kAllReduce;
    const double bucket = o.bucket_mb * 1e6;
    const double dense = p0.params - p0.expert;
    const double expert = edp > 1 || o.offloads() ? p0.expert : 0.0;
    // Per kind: bucket count, a full bucket's time and the last one's (reduction: dt; offload's
    // copy of the rank's partition of it to the host: c). Expert buckets are reduced only over
    // dp / ep > 1 ranks; with offload they are copied all the same (as run_parallel).
    struct Kind {
      double n = 0, dt = 0, dt_last = 0, total = 0, c = 0, c_last = 0;
      bool reduced = false;
    } kd[2];
    const double totals[2] = {dense * o.grad_bytes, expert * o.grad_bytes};
    const double share[2] = {o.zero_stage() >= 1 ? 1.0 / ddp : 1.0,
                             o.zero_stage() >= 1 ? 1.0 / std::max(1, edp) : 1.0};
    const OffloadRates rates = o.offloads() ? offload_rates(sys, o) : OffloadRates{};
    for (int k = 0; k < 2; ++k) {
      kd[k].total = totals[k];
      if (totals[k] <= 0) continue;
      auto g = [&] { return k == 0 ? groups() : egroups(); };
      kd[k].n = std::ceil(totals[k] / bucket);
      const double last = totals[k] - (kd[k].n - 1) * bucket;
      kd[k].reduced = reduce && (k == 0 || edp > 1);
      if (kd[k].reduced) {
        kd[k].dt_last = o.dp_comm_scale * collective(3 + k, op, last, shape, g);
        kd[k].dt =
            kd[k].n > 1 ? o.dp_comm_scale * collective(3 + k, op, bucket, shape, g) : kd[k].dt_last;
      }
      if (o.offloads()) {
        kd[k].c_last = offload_copy_time(rates, last * share[k]);
        kd[k].c = offload_copy_time(rates, std::min(bucket, totals[k]) * share[k]);
      }
    }
    // Merge the two kinds' release times (each uniform over B) and run the buckets in turn; each
    // bucket's copy to the host follows its reduction, one copy at a time.
    double end = 0, cend = 0;
    long long i0 = 0, i1 = 0;
    const long long n0 = static_cast<long long>(kd[0].n), n1 = static_cast<long long>(kd[1].n);
    if (n1 == 0 && n0 >= 1) {
      // One kind (a dense model, or experts reduced with the rest): the closed form of the loop
      // below. With N buckets released at k r (r = B / N), reductions a_k (dt, the last dt_l)
      // and copies b_k (c, the last c_l), the last reduction ends at max over j of
      // (j r + sum a_j..a_N), the last copy at max over j <= k of (j r + sum a_j..a_k +
      // sum b_k..b_N): linear in j and k on each piece, so the largest is at a corner.
      const Kind& q = kd[0];
      const double N = q.n, r = B / N, dt = q.dt, dl = q.dt_last, c = q.c, cl = q.c_last;
      if (q.reduced) end = N >= 2 ? std::max(r + (N - 1) * dt + dl, N * r + dl) : r + dl;
      if (o.offloads()) {
        if (N < 2)
          cend = (q.reduced ? r + dl : r) + cl;
        else if (q.reduced)
          cend = std::max({r + dt + (N - 1) * c + cl, r + (N - 1) * dt + c + cl,
                           (N - 1) * r + dt + c + cl, r + (N - 1) * dt + dl + cl, N * r + dl + cl});
        else
          cend = std::max({r + (N - 1) * c + cl, (N - 1) * r + c + cl, N * r + cl});
      }
      i0 = n0;
    }
    while (i0 < n0 || i1 < n1) {
      const double r0 = i0 < n0 ? (i0 + 1.0) / kd[0].n * B : 1e300;
      const double r1 = i1 < n1 ? (i1 + 1.0) / kd[1].n * B : 1e300;
      const int k = r0 <= r1 ? 0 : 1;
      const bool last = k == 0 ? i0 + 1 == n0 : i1 + 1 == n1;
      double ready = k == 0 ? r0 : r1;
      if (kd[k].reduced) {
        end = std::max(end, ready) + (last ? kd[k].dt_last : kd[k].dt);
        ready = end;
      }
      if (o.offloads()) cend = std::max(cend, ready) + (last ? kd[k].c_last : kd[k].c);
      ++(k == 0 ? i0 : i1);
    }
    if (reduce) e.dp_exposed_s = std::max(0.0, end - B);
    if (o.offloads()) e.offload_exposed_s = std::max(0.0, cend - std::max(B, end));
    if (reduce && o.zero_stage() >= 1) {
      e.param_gather_s =
          o.dp_comm_scale * collective(5, models::CollOp::kAllGather, 2.0 * dense, shape, groups);
      if (edp > 1)
        e.param_gather_s += o.dp_comm_scale * collective(6, models::CollOp::kAllGather,
                                                         2.0 * p0.expert, shape, egroups);
    }
  }

  double optimizer(double params) {
    auto it = opt.find(bits(params));
    if (it != opt.end()) return it->second;
    const double t = parallel_optimizer_time(sys.node.gpu, params, mode);
    opt.emplace(bits(params), t);
    return t;
  }

  // Parameters of device d (its chunks), as run_parallel counts them.
  double device_params(const ParallelOptions& o, int v, int d) const {
    const int nvs = o.pp * v;
    const double per = double(m.layers) / nvs;
    const double emb = double(o.padded_vocab(m.vocab)) * m.d_model / o.tp;
    double p = 0;
    for (int c = 0; c < v; ++c) {
      const int vs = c * o.pp + d;
      p += double(m.layer_parameter_count()) * per / o.tp;
      if (vs == 0) p += emb + double(m.max_positions) * m.d_model;
      if (vs == nvs - 1 && !(vs == 0 && m.tied_embeddings)) p += emb;
    }
    return p;
  }

  // The fullest GPU's bytes; `host`: the offloaded state on one node's host (0 without offload).
  double memory(const ParallelOptions& o, double* params0, DeviceParams* split0 = nullptr,
                double* host = nullptr) const {
    const int v = o.schedule == PipeSchedule::kInterleaved ? std::max(1, o.virtual_stages) : 1;
    if (placed_probe(o) || m.is_moe() || o.offloads()) {
      // With the experts and the largest layer, as the simulator's memory counts them.
      const DeviceParams p0 = device_params_split(o, v, 0);
      if (params0) *params0 = p0.params;
      if (split0) *split0 = p0;
      const StageMemory m0 = stage_memory(m, o, 0, p0.params, p0.expert, p0.max_layer);
      double worst = m0.total(), host_worst = m0.host;
      if (o.pp > 1) {
        const DeviceParams pl = device_params_split(o, v, o.pp - 1);
        const StageMemory ml = stage_memory(m, o, o.pp - 1, pl.params, pl.expert, pl.max_layer);
        worst = std::max(worst, ml.total());
        host_worst = std::max(host_worst, ml.host);
      }
      if (host) *host = offload_host_bytes_per_node(sys, o, host_worst);
      return worst;
    }
    if (host) *host = 0;
    const double p0 = device_params(o, v, 0);
    if (params0) *params0 = p0;
    double worst = stage_memory(m, o, 0, p0).total();
    if (o.pp > 1)
      worst = std::max(worst, stage_memory(m, o, o.pp - 1, device_params(o, v, o.pp - 1)).total());
    return worst;
  }
};

PlanEvaluator::PlanEvaluator(const TransformerConfig& m, const hw::SystemSpec& sys, TimingMode mode,
                             double memory_headroom)
    : impl_(std::make_unique<Impl>(m, sys, mode, memory_headroom)) {}
PlanEvaluator::~PlanEvaluator() = default;

long long PlanEvaluator::layer_shapes_built() const {
  return static_cast<long long>(impl_->layers.size());
}

double PlanEvaluator::memory_bytes(const ParallelOptions& o) const {
  return impl_->memory(o, nullptr);
}

PlanEstimate PlanEvaluator::evaluate(const ParallelOptions& o, bool always) {
  Impl& I = *impl_;
  PlanEstimate e;
  e.layout = o;
  e.gpus = o.tp * o.cp * o.pp * o.dp;
  e.hbm_bytes = I.hbm;
  double params0 = 0;
  Impl::DeviceParams split0;
  e.memory_bytes = I.memory(o, &params0, &split0, &e.host_bytes);
  e.host_usable_bytes = I.host_usable;
  e.fits = e.memory_bytes <= I.hbm;
  // Offload: the node's host must hold its GPUs' offloaded state (and the system must say what
  // its host is).
  if (o.offloads() && (!I.sys.node.host.present() || e.host_bytes > I.host_usable)) e.fits = false;
  if (!e.fits && !always) return e;

  const LayerTimes& L = I.layer(o);
  const int p = o.pp;
  const int v = o.schedule == PipeSchedule::kInterleaved ? std::max(1, o.virtual_stages) : 1;
  const int nvs = p * v;
  const double n = double(I.m.layers) / nvs;  // layers per chunk
  const double m = double(o.micro_batches());
  const double chunk = n * (L.lf + L.lb);
  // A MoE model with leading dense layers (DeepSeek-V3's first 3): virtual stage vs holds
  // dense_in(vs) of them, timed by the dense-layer probe, the rest by the MoE one.
  const int nl = I.m.layers / nvs;
  const bool mixed = I.m.is_moe() && I.m.dense_layers > 0;
  const LayerTimes& Ld = mixed ? I.layer(o, true) : L;
  auto dense_in = [&](int vs) { return mixed ? std::clamp(I.m.dense_layers - vs * nl, 0, nl) : 0; };
  auto chunk_fb = [&](int vs) {
    const int k = dense_in(vs);
    return (nl - k) * (L.lf + L.lb) + k * (Ld.lf + Ld.lb);
  };
  // The embedding's extra (with ZeRO-3, the first layer's exposed gather) is the dense probe's
  // when virtual stage 0 starts with a dense layer (forward) or holds only dense ones (backward).
  const double ef = dense_in(0) > 0 ? Ld.ef : L.ef, eb = dense_in(0) == nl ? Ld.eb : L.eb;
  // Device d's F + B per micro-batch: its chunks, the embedding on virtual stage 0, the head on
  // the last one.
  auto device_fb = [&](int d) {
    double t = v * chunk;
    if (mixed) {
      t = 0;
      for (int c = 0; c < v; ++c) t += chunk_fb(c * p + d);
    }
    if (d == 0) t += ef + eb;
    if (d == (nvs - 1) % p) t += L.hf + L.hb;
    // Chunks on neither end: their exposed ZeRO-3/FSDP first-layer gathers (0 otherwise).
    const int ends = (d == 0) + (nvs > 1 && d == (nvs - 1) % p);
    t += (v - ends) * (L.gf + L.gb);
    return t;
  };
  double dmax = device_fb(0);
  if (p > 1) dmax = std::max({dmax, device_fb(p - 1), p > 2 ? device_fb(1) : 0.0});
  double chunks = nvs * chunk;  // every virtual stage's F + B
  if (mixed) {
    chunks = 0;
    for (int vs = 0; vs < nvs; ++vs) chunks += chunk_fb(vs);
    for (int d = 2; d < p - 1; ++d) dmax = std::max(dmax, device_fb(d));
  }
  double p2p = 0;
  if (nvs > 1 && o.cp > 1) {
    // Every TP and CP rank of a stage sends its s/cp tokens' share at once (as run_parallel).
    const bool sp = o.sequence_parallel && o.tp > 1;
    const double bytes = 2.0 * o.micro_batch * o.seq * I.m.d_model / (sp ? o.tp : 1) / o.cp;
    auto pairs = [&] {
      std::vector<std::vector<int>> g;
      for (int c = 0; c < o.cp; ++c)
        for (int t = 0; t < o.tp; ++t)
          g.push_back({place_rank(o, t, 0, 0, c), place_rank(o, t, 1, 0, c)});
      return g;
    };
    p2p = o.pp_comm_scale * I.collective(7, models::CollOp::kSendRecv, bytes,
                                         mix(static_cast<std::uint64_t>(o.tp), o.cp), pairs);
  } else if (nvs > 1) {
    const bool sp = o.sequence_parallel && o.tp > 1;
    const double bytes = 2.0 * o.micro_batch * o.seq * I.m.d_model / (sp ? o.tp : 1);
    auto pairs = [&] {
      std::vector<std::vector<int>> g;
      for (int t = 0; t < o.tp; ++t) g.push_back({place_rank(o, t, 0, 0), place_rank(o, t, 1, 0)});
      return g;
    };
    p2p = o.pp_comm_scale * I.collective(0, models::CollOp::kSendRecv, bytes,
                                         static_cast<std::uint64_t>(o.tp), pairs);
  }
  const double fill = 2.0 * (p - 1) * p2p;
  double pipe = 0;
  const double mid = L.gf + L.gb;  // 0 but with ZeRO-3/FSDP on 3 or more virtual stages
  if (v == 1)
    pipe = chunks + ef + eb + L.hf + L.hb + std::max(0, nvs - 2) * mid + (m - 1) * dmax + fill;
  else
    pipe = m * dmax + (p - 1) * (chunks / nvs + mid) + fill;
  e.pipeline_s = pipe;
  e.bubble_s = pipe - m * device_fb(0);
  e.p2p_exposed_s = fill;
  e.tp_comm_s = (m + p - 1) * n * v * (L.tp_f + L.tp_b);
  double moe0 = n * v;  // device 0's MoE layers (every layer but a MoE model's leading dense ones)
  if (mixed)
    for (int c = 0; c < v; ++c) moe0 -= dense_in(c * p);
  e.ep_comm_s = m * moe0 * L.ep;
  e.cp_comm_s = m * n * v * L.cp;
  e.fsdp_comm_s = m * n * v * L.fsdp;

  // DP on device 0: buckets released uniformly over its last backward (virtual stage 0's), one
  // at a time; what runs past that backward is exposed. For n buckets of time dt (the last dt_n),
  // released every r = B/n, the last ends at max(B, r + (n-1) dt, (n-1) r + dt) + dt_n after the
  // backward starts.
  double tail = 0, gather = 0;
  if (placed_probe(o) || I.m.is_moe() || o.offloads()) {
    const double b0 = (n - dense_in(0)) * L.lb + dense_in(0) * Ld.lb;  // virtual stage 0's layers
    I.dp_step(o, split0, b0 + eb + (nvs == 1 ? L.hb : 0.0), e);
    tail = e.dp_exposed_s;
    gather = e.param_gather_s;
  } else if (o.dp > 1) {
    auto groups = [&] { return I.dp_groups(o); };
    const std::uint64_t shape = mix(mix(o.tp, o.pp), o.dp);
    const double total = params0 * o.grad_bytes;
    const double bucket = o.bucket_mb * 1e6;
    const double nb = std::ceil(total / bucket);
    const auto op = o.zero >= 1 ? models::CollOp::kReduceScatter : models::CollOp::kAllReduce;
    const double last_bytes = total - (nb - 1) * bucket;
    const double dt_last = o.dp_comm_scale * I.collective(1, op, last_bytes, shape, groups);
    const double dt =
        nb > 1 ? o.dp_comm_scale * I.collective(1, op, bucket, shape, groups) : dt_last;
    const double B = n * L.lb + L.eb + (nvs == 1 ? L.hb : 0.0);
    const double r = B / nb;
    tail = dt_last + (nb > 1 ? std::max({0.0, r + (nb - 1) * dt - B, dt - r}) : 0.0);
    if (o.zero >= 1)
      gather = o.dp_comm_scale *
               I.collective(2, models::CollOp::kAllGather, 2.0 * params0, shape, groups);
  }
  e.dp_exposed_s = tail;
  e.param_gather_s = gather;
  if (placed_probe(o) || I.m.is_moe() || o.offloads()) {
    const int ddp = o.dp * o.cp, edp = ddp / std::max(1, o.ep);
    const double dense = split0.params - split0.expert;
    const double n_opt =
        o.zero_stage() >= 1 ? dense / ddp + split0.expert / std::max(1, edp) : split0.params;
    if (o.offloads()) {
      // ZeRO-Offload: Adam on the host over the partition, then its 16-bit copy to the GPU.
      const OffloadRates rates = offload_rates(I.sys, o);
      e.optimizer_s = cpu_adam_time(rates, n_opt);
      e.offload_h2d_s = o.offloads_params() ? 0.0 : offload_copy_time(rates, 2.0 * n_opt);
    } else {
      e.optimizer_s = I.optimizer(n_opt);
    }
  } else {
    e.optimizer_s = I.optimizer(params0 / (o.zero >= 1 ? o.dp : 1));
  }
  e.step_s = pipe + tail + e.offload_exposed_s + e.optimizer_s + e.offload_h2d_s + gather;
  if (I.flops_seq != o.seq) {
    I.flops_seq = o.seq;
    I.flops_per_token_seq = parallel_forward_flops_per_token(I.m, o.seq);
  }
  const double tokens = double(o.global_batch) * o.seq;
  e.mfu = 3 * I.flops_per_token_seq * tokens / e.step_s /
          (I.sys.node.gpu.matmul_peak(hw::Precision::kBf16) * e.gpus);
  return e;
}

namespace {

std::vector<int> divisors(long long n) {
  std::vector<int> d;
  for (long long i = 1; i <= n; ++i)
    if (n % i == 0) d.push_back(static_cast<int>(i));
  return d;
}

}  // namespace

std::vector<ParallelOptions> enumerate_layouts(const TransformerConfig& m, const PlanOptions& p,
                                               const hw::SystemSpec& sys, int gpus) {
  const PlanSpace& s = p.space;
  std::vector<int> tps = s.tp;
  if (tps.empty())
    for (int t = 1; t <= sys.node.gpus; t *= 2) tps.push_back(t);  // TP inside a node
  std::vector<int> pps = s.pp.empty() ? divisors(m.layers) : s.pp;
  const std::vector<int> mbs = s.micro_batch.empty() ? std::vector<int>{1, 2, 4, 8} : s.micro_batch;
  const std::vector<int> sps =
      s.sequence_parallel.empty() ? std::vector<int>{0, 1} : s.sequence_parallel;
  const std::vector<Recompute> rcs =
      s.recompute.empty()
          ? std::vector<Recompute>{Recompute::kNone, Recompute::kSelective, Recompute::kFull}
          : s.recompute;
  const std::vector<int> zeros = s.zero.empty() ? std::vector<int>{0, 1, 2, 3} : s.zero;
  // CP by default from 8192 tokens per sequence (below that, ring steps are short next to the
  // layer and the search would only grow): 1, 2, 4, 8 where 2 x cp divides the sequence.
  std::vector<int> cps = s.cp;
  if (cps.empty()) {
    cps = {1};
    if (p.seq >= 8192)
      for (int c : {2, 4, 8}) cps.push_back(c);
  }
  const std::vector<int> fsdps = s.fsdp.empty() ? std::vector<int>{0} : s.fsdp;
  const std::vector<PipeSchedule> scheds =
      s.schedule.empty()
          ? std::vector<PipeSchedule>{PipeSchedule::kOneFOneB, PipeSchedule::kInterleaved}
          : s.schedule;
  const std::vector<int> vss =
      s.virtual_stages.empty() ? std::vector<int>{2, 3, 4, 6, 8} : s.virtual_stages;
  // Optimizer offload: searched by default where the system gives its host's memory and
  // bandwidth; DeepSpeed offloads ZeRO's partition, so with dp x cp > 1 only with ZeRO >= 1.
  std::vector<Offload> offs = s.offload;
  if (offs.empty()) {
    offs = {Offload::kNone};
    if (sys.node.host.present()) offs.push_back(Offload::kOptimizer);
  }
  std::vector<ParallelOptions> out;
  auto emit = [&](ParallelOptions o) {
    for (Offload f : offs) {
      if (f != Offload::kNone && o.zero_stage() == 0 && o.dp * o.cp > 1) continue;
      if (f == Offload::kOptimizerAndParams && o.zero_stage() != 3) continue;
      o.offload = f;
      out.push_back(o);
    }
  };
  for (int tp : tps) {
    if (tp < 1 || gpus % tp != 0 || m.heads % tp != 0 || m.kv_heads % tp != 0 || m.ffn % tp != 0)
      continue;
    for (int cp : cps) {
      // CP splits each sequence into 2 x cp chunks (parallel_config's check).
      if (cp < 1 || (gpus / tp) % cp != 0 || p.seq % (2LL * cp) != 0) continue;
      for (int pp : pps) {
        if (pp < 1 || (gpus / tp / cp) % pp != 0 || m.layers % pp != 0) continue;
        const int dp = gpus / tp / cp / pp;
        // EP: MoE models only; it divides dp and the experts. Default: every such size.
        std::vector<int> eps;
        if (!m.is_moe()) {
          eps = {1};
        } else if (s.ep.empty()) {
          for (int x = 1; x <= dp; ++x)
            if (dp % x == 0 && m.experts % x == 0) eps.push_back(x);
        } else {
          for (int x : s.ep)
            if (x >= 1 && dp % x == 0 && m.experts % x == 0) eps.push_back(x);
        }
        for (int mb : mbs) {
          if (mb < 1 || p.global_batch % (static_cast<long long>(mb) * dp) != 0) continue;
          for (int sp : sps) {
            if (sp && (tp == 1 || p.seq % tp != 0)) continue;
            for (Recompute rc : rcs)
              for (int ep : eps)
                for (int z : zeros)
                  for (int fs : fsdps) {
                    // ZeRO shards over dp x cp: nothing to shard on one rank; FSDP is its own stage
                    // 3 (searched once, as fsdp).
                    if (z >= 1 && dp * cp == 1) continue;
                    if (fs && (z != 0 || dp * cp == 1)) continue;
                    for (PipeSchedule sc : scheds) {
                      ParallelOptions o;
                      o.system = p.system;
                      o.gpus = gpus;
                      o.tp = tp, o.pp = pp, o.dp = dp;
                      o.cp = cp, o.ep = ep;
                      o.fsdp = fs != 0;
                      o.micro_batch = mb;
                      o.global_batch = p.global_batch;
                      o.seq = p.seq;
                      o.sequence_parallel = sp != 0;
                      o.recompute = rc;
                      o.zero = z;
                      o.schedule = sc;
                      if (sc != PipeSchedule::kInterleaved) {
                        if (sc == PipeSchedule::kGpipe && pp == 1) continue;  // same as 1F1B
                        emit(o);
                        continue;
                      }
                      if (pp < 2 || o.micro_batches() % pp != 0) continue;
                      for (int v : vss) {
                        if (v < 2 || m.layers % (pp * v) != 0) continue;
                        o.virtual_stages = v;
                        emit(o);
                      }
                    }
                  }
          }
        }
      }
    }
  }
  return out;
}

std::vector<int> plan_gpu_counts(const PlanOptions& p, const hw::SystemSpec& sys) {
  if (!p.gpus.empty()) return p.gpus;
  if (p.objective != PlanObjective::kFewestGpus) return {sys.total_gpus()};
  std::vector<int> c;
  for (int g = 1; g <= sys.total_gpus(); ++g)
    if (hw::check_gpu_count(sys, g).empty()) c.push_back(g);
  return c;
}

namespace {

double objective_value(const PlanOptions& p, const PlanEstimate& e, double step) {
  const double tokens = double(p.global_batch) * p.seq;
  switch (p.objective) {
    case PlanObjective::kStepTime:
      return step;
    case PlanObjective::kTokensPerS:
      return -tokens / step;
    case PlanObjective::kCostPerToken:
      return p.usd_per_gpu_hour * e.gpus * step / 3600.0 / tokens;
    case PlanObjective::kFewestGpus:
      return e.gpus;
  }
  return step;
}

// Ranking: the objective, then (ties) step time, GPUs, memory per GPU, the layout's name.
bool better(const PlanEstimate& a, const PlanEstimate& b) {
  if (a.objective != b.objective) return a.objective < b.objective;
  if (a.step() != b.step()) return a.step() < b.step();
  if (a.gpus != b.gpus) return a.gpus < b.gpus;
  if (a.memory_bytes != b.memory_bytes) return a.memory_bytes < b.memory_bytes;
  return layout_name(a.layout) < layout_name(b.layout);
}

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// What would make a layout fit: one knob changed at a time, the variant with the least memory.
std::string help_for(PlanEvaluator& ev, const ParallelOptions& o, double hbm, bool has_host) {
  struct Variant {
    std::string what;
    ParallelOptions o;
  };
  std::vector<Variant> vs;
  auto add = [&](std::string w, auto change) {
    ParallelOptions c = o;
    change(c);
    vs.push_back({std::move(w), c});
  };
  if (o.recompute != Recompute::kFull)
    add("recompute: full", [](ParallelOptions& c) { c.recompute = Recompute::kFull; });
  if (!o.sequence_parallel && o.tp > 1 && o.seq % o.tp == 0)
    add("sequence_parallel: true", [](ParallelOptions& c) { c.sequence_parallel = true; });
  if (o.zero == 0 && o.dp > 1) add("zero: 1", [](ParallelOptions& c) { c.zero = 1; });
  // The deeper ZeRO stages shard gradients (2) and parameters (3) over dp x cp too.
  if (!o.fsdp && o.zero < 3 && o.dp * o.cp > 1)
    add("zero: 3", [](ParallelOptions& c) { c.zero = 3; });
  if (o.micro_batch > 1) add("micro_batch: 1", [](ParallelOptions& c) { c.micro_batch = 1; });
  if (!o.offloads() && has_host && (o.zero_stage() >= 1 || o.dp * o.cp == 1))
    add("offload: optimizer", [](ParallelOptions& c) { c.offload = Offload::kOptimizer; });
  std::string best;
  double best_mem = 1e300;
  bool best_host_short = false;  // its GPUs would fit, but not the offloaded state on the host
  for (const auto& v : vs) {
    const double mem = ev.memory_bytes(v.o);
    if (mem < best_mem) {
      best_mem = mem, best = v.what;
      best_host_short = v.o.offloads() && mem <= hbm && !ev.evaluate(v.o).fits;
    }
  }
  const double now = ev.memory_bytes(o);
  // Weights, gradients and optimizer state divide over tp x pp: about now/hbm times the GPUs.
  const std::string more =
      fmt::format("more GPUs per replica (it needs {:.2f}x the memory; tp x pp = {} now)",
                  now / hbm, o.tp * o.pp);
  if (best.empty() || best_mem >= now) return more;
  if (best_host_short)
    return fmt::format("{} gives {:.1f} GiB, but the node's host cannot hold the offloaded state",
                       best, best_mem / kGiB);
  return fmt::format("{} gives {:.1f} GiB{}", best, best_mem / kGiB,
                     best_mem <= hbm ? " (fits)" : "; still over: " + more);
}

}  // namespace

PlanSim plan_simulate(const TransformerConfig& m, const ParallelOptions& o,
                      const hw::SystemSpec& sys, TimingMode mode) {
  const ParallelResult sim = run_parallel(m, o, sys, mode);
  PlanSim s;
  s.step_s = sim.step_s;
  s.bubble_s = sim.bubble_s;
  s.dp_exposed_s = sim.dp_exposed_s + sim.param_gather_s;
  s.mfu = sim.mfu;
  s.critical_s = sim.critical_s;
  return s;
}

std::string plan_sim_encode(const PlanSim& s) {
  // nlohmann::json writes doubles in their shortest round-trip form: decoding gives them back
  // bit for bit.
  const nlohmann::json j = {{"step_s", s.step_s},
                            {"bubble_s", s.bubble_s},
                            {"dp_exposed_s", s.dp_exposed_s},
                            {"mfu", s.mfu},
                            {"critical_s", s.critical_s}};
  return j.dump();
}

PlanSim plan_sim_decode(const std::string& text) {
  const nlohmann::json j = nlohmann::json::parse(text);
  PlanSim s;
  s.step_s = j.at("step_s").get<double>();
  s.bubble_s = j.at("bubble_s").get<double>();
  s.dp_exposed_s = j.at("dp_exposed_s").get<double>();
  s.mfu = j.at("mfu").get<double>();
  s.critical_s = j.at("critical_s").get<std::map<std::string, double>>();
  return s;
}

PlanResult run_plan(const TransformerConfig& m, const PlanOptions& p, const hw::SystemSpec& sys,
                    const PlanSimulateMany& many) {
  PlanResult r;
  r.options = p;
  r.model_name = m.name;
  r.system = sys;
  const auto t0 = std::chrono::steady_clock::now();
  PlanEvaluator ev(m, sys, p.mode, p.memory_headroom);
  std::vector<PlanEstimate> fit;
  std::vector<PlanEstimate> over;  // the closest misses
  const std::vector<int> counts = plan_gpu_counts(p, sys);
  for (int g : counts) {
    for (const ParallelOptions& o : enumerate_layouts(m, p, sys, g)) {
      ++r.enumerated;
      PlanEstimate e = ev.evaluate(o);
      if (!e.fits) {
        over.push_back(std::move(e));
        continue;
      }
      ++r.evaluated;
      if (p.max_step_s > 0 && e.step_s > p.max_step_s) continue;
      e.objective = objective_value(p, e, e.step_s);
      fit.push_back(std::move(e));
    }
    // The fewest GPUs: once a count has enough layouts that qualify, larger counts rank lower.
    if (p.objective == PlanObjective::kFewestGpus && static_cast<int>(fit.size()) >= p.top_k) break;
  }
  r.fitting = r.evaluated;  // fit in memory (max_step_time may drop some of them after)
  r.search_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (r.enumerated == 0)
    throw std::invalid_argument(
        "the search space is empty: no layout of the listed tp, pp, micro_batch and GPU counts "
        "divides the model and the global batch");
  if (fit.empty() && r.evaluated == 0) {  // nothing fits (else: none within max_step_time)
    std::sort(over.begin(), over.end(), [](const PlanEstimate& a, const PlanEstimate& b) {
      if (a.memory_bytes != b.memory_bytes) return a.memory_bytes < b.memory_bytes;
      return layout_name(a.layout) < layout_name(b.layout);
    });
    for (std::size_t i = 0; i < over.size() && i < 5; ++i)
      r.misses.push_back(
          {over[i].layout, over[i].memory_bytes, over[i].hbm_bytes,
           over[i].memory_bytes <= over[i].hbm_bytes && over[i].layout.offloads()
               ? fmt::format("its GPUs fit, but the host does not: the offloaded optimizer "
                             "state takes {:.0f} GB per node, {:.0f} GB usable "
                             "(node.host.memory less the headroom); offload: none, or more GPUs",
                             over[i].host_bytes / 1e9, over[i].host_usable_bytes / 1e9)
               : help_for(ev, over[i].layout, over[i].hbm_bytes, sys.node.host.present())});
    return r;
  }
  if (fit.empty()) return r;
  std::sort(fit.begin(), fit.end(), better);
  // Pareto front (fast evaluator): by GPUs when several counts were searched, else by memory per
  // GPU, against step time.
  {
    const bool by_gpus = counts.size() > 1;
    std::vector<const PlanEstimate*> ptrs;
    for (const auto& e : fit) ptrs.push_back(&e);
    std::sort(ptrs.begin(), ptrs.end(), [&](const PlanEstimate* a, const PlanEstimate* b) {
      const double xa = by_gpus ? a->gpus : a->memory_bytes,
                   xb = by_gpus ? b->gpus : b->memory_bytes;
      if (xa != xb) return xa < xb;
      return better(*a, *b);
    });
    double best = 1e300;
    for (const PlanEstimate* e : ptrs)
      if (e->step_s < best) best = e->step_s, r.frontier.push_back(*e);
  }
  const std::size_t k = std::min<std::size_t>(fit.size(), static_cast<std::size_t>(p.top_k));
  std::vector<ParallelOptions> layouts;
  for (std::size_t i = 0; i < k; ++i) layouts.push_back(fit[i].layout);
  std::vector<PlanSim> sims;
  if (many) {
    sims = many(layouts);
    if (sims.size() != k) throw std::logic_error("plan: the simulations did not all come back");
  } else {
    for (const auto& o : layouts) sims.push_back(plan_simulate(m, o, sys, p.mode));
  }
  for (std::size_t i = 0; i < k; ++i) {
    PlanEstimate e = fit[i];
    const PlanSim& sim = sims[i];
    e.simulated = true;
    e.sim_step_s = sim.step_s;
    e.sim_bubble_s = sim.bubble_s;
    e.sim_dp_exposed_s = sim.dp_exposed_s;
    e.sim_critical_s = sim.critical_s;
    e.mfu = sim.mfu;
    e.objective = objective_value(p, e, sim.step_s);
    r.top.push_back(std::move(e));
  }
  std::sort(r.top.begin(), r.top.end(), better);
  return r;
}

}  // namespace ridge::workloads
