// One pipeline stage's micro-batch on one rank, Megatron-LM style (see workloads/parallel.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>
#include <unordered_map>

#include "hw/nccl_tuning.hpp"
#include "models/collective.hpp"
#include "workloads/analysis.hpp"
#include "workloads/builder_util.hpp"
#include "workloads/op_timer.hpp"
#include "workloads/parallel.hpp"

namespace ridge::workloads {

struct CollectiveTimes::Impl {
  hw::NcclTuning tuning;
  struct Entry {
    double time_s;
    int sm_blocks;
  };
  std::unordered_map<std::string, Entry> memo;
};

CollectiveTimes::CollectiveTimes(const hw::SystemSpec& system)
    : system_(system), impl_(std::make_shared<Impl>()) {
  impl_->tuning = hw::load_nccl_tuning(system.nccl.version);
}

double CollectiveTimes::time(models::CollOp op, double bytes, const std::vector<int>& ranks) {
  if (ranks.size() < 2 || bytes <= 0) return 0;
  return lookup(op, bytes, {ranks}).first;
}

double CollectiveTimes::concurrent_time(models::CollOp op, double bytes,
                                        const std::vector<std::vector<int>>& groups) {
  if (groups.empty() || groups.front().size() < 2 || bytes <= 0) return 0;
  return lookup(op, bytes, groups).first;
}

int CollectiveTimes::sm_blocks(models::CollOp op, double bytes, const std::vector<int>& ranks) {
  if (ranks.size() < 2 || bytes <= 0) return 0;
  return lookup(op, bytes, {ranks}).second;
}

std::pair<double, int> CollectiveTimes::lookup(models::CollOp op, double bytes,
                                               const std::vector<std::vector<int>>& groups) {
  // Shape: the ranks relative to the first rank's node, so a TP group on node 5 and one on node 0
  // share a memo entry (every node of a system is alike; rail-optimised leaves are too).
  const int per_node = system_.node.gpus;
  int low = groups.front().front();
  for (const auto& g : groups)
    for (int r : g) low = std::min(low, r);
  const int base = low / per_node * per_node;
  std::ostringstream key;
  key << static_cast<int>(op) << ':' << bytes;
  for (const auto& g : groups) {
    key << '|';
    for (int r : g) key << ',' << r - base;
  }
  auto it = impl_->memo.find(key.str());
  if (it != impl_->memo.end()) return {it->second.time_s, it->second.sm_blocks};
  // models::simulate_collective builds a fabric of exactly the group's size and a tuner that
  // assumes the ranks fill nodes in order; a strided group (a DP group with one rank per node)
  // needs the fabric up to its last rank and NCCL's model seeing its real nodes x ranks per node,
  // and concurrent groups need one fabric. So the same steps are done here: a fabric of whole
  // nodes, shifted to the system's first node (the same links, always inside the system), a tuner
  // on a copy of the system whose node holds as many GPUs as a group has in one node, every group
  // started at once; the time is the last one's.
  std::vector<models::CollectiveRequest> reqs;
  int top = 0;
  for (const auto& g : groups) {
    models::CollectiveRequest req;
    req.op = op;
    req.bytes = bytes;
    req.gpus = static_cast<int>(g.size());
    req.ranks = g;
    for (int& r : req.ranks) r -= base, top = std::max(top, r);
    reqs.push_back(std::move(req));
  }
  const auto& first = reqs.front().ranks;
  int in_node = 0;
  for (int r : first) in_node += r / per_node == first.front() / per_node;
  hw::SystemSpec tuned = system_;
  if (system_.network.kind != hw::NetworkKind::kNvlinkDomain)
    tuned.node.gpus = std::max(1, in_node);
  const int fabric_gpus = std::min(system_.total_gpus(), (top / per_node + 1) * per_node);
  sim::Simulator sim;
  sim::FlowNetwork net(sim);
  const models::Fabric fabric(system_, fabric_gpus, net);
  const models::NcclTuner tuner(tuned, impl_->tuning, reqs.front().gpus);
  Impl::Entry e{0, 0};
  for (const auto& req : reqs)
    models::start_collective(sim, net, fabric, tuner, req, [&e](const models::CollectiveResult& r) {
      e.time_s = std::max(e.time_s, r.time_s);
      e.sm_blocks = std::max(e.sm_blocks, r.sm_blocks);
    });
  sim.run();
  ++simulated_;
  impl_->memo.emplace(key.str(), e);
  return {e.time_s, e.sm_blocks};
}

std::vector<std::string> placement_order(const ParallelOptions& o) {
  if (o.placement.empty()) return {"tp", "cp", "pp", "ep", "dp"};
  std::vector<std::string> order = o.placement;
  if (std::find(order.begin(), order.end(), "cp") == order.end()) {
    auto tp = std::find(order.begin(), order.end(), "tp");
    order.insert(tp == order.end() ? order.begin() : tp + 1, "cp");
  }
  return order;
}

// Mixed radix over the placement order: rank = sum of coordinate x the sizes of the dimensions
// inside it. The default order gives t + tp (stage + pp d), the order before EP existed.
int place_rank(const ParallelOptions& o, int t, int stage, int d, int c) {
  const int ep = std::max(1, o.ep);
  int rank = 0, stride = 1;
  for (const std::string& dim : placement_order(o)) {
    int coord = 0, size = 1;
    if (dim == "tp")
      coord = t, size = o.tp;
    else if (dim == "pp")
      coord = stage, size = o.pp;
    else if (dim == "ep")
      coord = d % ep, size = ep;
    else if (dim == "cp")
      coord = c, size = o.cp;
    else
      coord = d / ep, size = std::max(1, o.dp / ep);
    rank += coord * stride;
    stride *= size;
  }
  return rank;
}

namespace {

using C = Category;

struct Dims {
  long long b, s, T, h, ffn, V;  // micro-batch, seq, tokens, hidden, ffn, vocab
  int a, t, hd;                  // heads, tp, head dim
  long long q, kv;               // query and key/value widths (heads x head dim)
  bool sp;
};

std::vector<int> tp_group(const ParallelOptions& o, int stage) {
  std::vector<int> r;
  for (int t = 0; t < o.tp; ++t) r.push_back(place_rank(o, t, stage, 0));
  return r;
}

// Every EP group of a stage (one per TP rank and outer DP rank), each its ep ranks in order: they
// run their all-to-alls at once on one fabric.
std::vector<std::vector<int>> ep_groups(const ParallelOptions& o, int stage) {
  std::vector<std::vector<int>> groups;
  for (int c = 0; c < o.cp; ++c)
    for (int j = 0; j < o.dp / o.ep; ++j)
      for (int t = 0; t < o.tp; ++t) {
        std::vector<int> g;
        for (int e = 0; e < o.ep; ++e) g.push_back(place_rank(o, t, stage, e + o.ep * j, c));
        groups.push_back(std::move(g));
      }
  return groups;
}

// Every CP ring of a stage (one per TP and DP rank), each its cp ranks in ring order.
std::vector<std::vector<int>> cp_rings(const ParallelOptions& o, int stage) {
  std::vector<std::vector<int>> rings;
  for (int d = 0; d < o.dp; ++d)
    for (int t = 0; t < o.tp; ++t) {
      std::vector<int> g;
      for (int c = 0; c < o.cp; ++c) g.push_back(place_rank(o, t, stage, d, c));
      rings.push_back(std::move(g));
    }
  return rings;
}

class StageBuilder {
 public:
  // `place` and `place_stage`: the device pipeline the groups live on (see build_stage).
  StageBuilder(Graph& g, const TransformerConfig& m, const ParallelOptions& o,
               const ParallelOptions& place, int place_stage, CollectiveTimes& coll,
               const hw::GpuSpec& gpu, TimingMode mode)
      : e_(g),
        m_(m),
        o_(o),
        coll_(coll),
        group_(tp_group(place, place_stage)),
        gpu_(gpu),
        mode_(mode) {
    const int stage = place_stage;
    // With CP each rank holds s / cp of every sequence (its two balanced chunks): the layer's
    // GEMMs run on those tokens, and attention on blocks of s / cp queries by s / cp keys.
    d_.b = o.micro_batch, d_.s = o.seq / std::max(1, o.cp), d_.T = d_.b * d_.s, d_.h = m.d_model,
    d_.ffn = m.ffn;
    d_.V = o.padded_vocab(m.vocab), d_.a = m.heads, d_.t = o.tp, d_.hd = m.head_dim,
    d_.sp = o.sequence_parallel && o.tp > 1;
    d_.q = static_cast<long long>(m.heads) * m.head_dim;
    d_.kv = static_cast<long long>(m.kv_heads) * m.head_dim;
    if (m.is_moe() && o.ep > 1) ep_groups_ = ep_groups(place, stage);
    if (o.cp > 1) cp_rings_ = cp_rings(place, stage);
    if (o.shards_params()) {
      // ZeRO-3 / FSDP groups: per TP rank, the stage's DP x CP ranks; for routed experts the
      // ranks holding the same experts (dp / ep x cp of them).
      for (int t = 0; t < o.tp; ++t) {
        dp_groups_.emplace_back();
        for (int d = 0; d < o.dp; ++d)
          for (int c = 0; c < o.cp; ++c)
            dp_groups_.back().push_back(place_rank(place, t, stage, d, c));
        for (int e = 0; e < o.ep; ++e) {
          edp_groups_.emplace_back();
          for (int j = 0; j < o.dp / o.ep; ++j)
            for (int c = 0; c < o.cp; ++c)
              edp_groups_.back().push_back(place_rank(place, t, stage, e + o.ep * j, c));
        }
      }
    }
  }
  Emitter& e() { return e_; }
  const Dims& d() const { return d_; }
  int collectives = 0;
  double comm_s = 0;
  int ep_collectives = 0;
  double ep_comm_s = 0;
  int cp_transfers = 0;
  double cp_comm_s = 0, cp_block_bytes = 0;
  int fsdp_calls = 0;
  double fsdp_comm_s = 0;

  // ---- ZeRO-3 / FSDP (PyTorch FSDP full shard, DeepSpeed stage 3): each layer's parameters
  // all-gathered (bf16) before its forward and again before its backward, the next layer's
  // gather issued when this layer starts (prefetch one layer ahead), on a stream of its own;
  // each layer's gradients reduce-scattered after its backward on another. Both are NCCL kernels
  // beside the compute (their SMs not taken from it). Every TP rank's group at once on one fabric.
  // Returns the ids of the layer's gathers (the dense part over DP x CP, routed experts over the
  // ranks holding them).
  std::vector<int> fsdp(const std::string& name, models::CollOp op, int layer, double per_param,
                        int stream, const std::vector<int>& deps) {
    std::vector<int> ids;
    if (dp_groups_.empty()) return ids;
    double dense = 0, experts = 0;
    if (m_.moe_layer(layer)) {
      dense = double(m_.moe_layer_dense_parameter_count()) / d_.t;
      experts = double(m_.experts / o_.ep) * m_.expert_parameter_count() / d_.t;
    } else {
      dense = double(m_.layer_parameter_count()) / d_.t;
    }
    // Parameter offload (ZeRO-Infinity): before its all-gather the rank's partition of the layer
    // is copied host-to-device over the GPU's PCIe link (one op: the copy, then the gather).
    const bool fetch = o_.offloads_params() && op == models::CollOp::kAllGather;
    auto one = [&](double params, const std::vector<std::vector<int>>& groups, const char* tag) {
      if (params <= 0 || groups.empty()) return;
      const double ranks = double(groups.front().size());
      double t = ranks >= 2
                     ? coll_.concurrent_time(op, per_param * params, groups) * o_.dp_comm_scale
                     : 0.0;
      if (fetch)
        t += offload_copy_time(offload_rates(coll_.system(), o_), per_param * params / ranks);
      if (t <= 0) return;
      OpNode n;
      n.name = "fsdp." + name + tag;
      n.kind = NodeKind::kKernel;
      n.category = C::kCommunication;
      n.fixed_time_s = t;
      n.layer = e_.layer;
      const int saved = e_.stream;
      e_.stream = stream;
      ids.push_back(e_.add(std::move(n), deps));
      e_.stream = saved;
      ++fsdp_calls;
      fsdp_comm_s += t;
    };
    one(dense, dp_groups_, "");
    one(experts, edp_groups_, ".experts");
    return ids;
  }
  std::vector<int> gather(int layer, const std::vector<int>& deps) {
    return fsdp(fmt::format("all_gather{}", layer), models::CollOp::kAllGather, layer, 2.0, 2,
                deps);
  }
  void reduce(int layer) {
    const int last = static_cast<int>(e_.graph().size()) - 1;
    fsdp(fmt::format("reduce_scatter{}", layer), models::CollOp::kReduceScatter, layer,
         double(o_.grad_bytes), 3, last >= 0 ? std::vector<int>{last} : std::vector<int>{});
  }
  // The compute stream waits for all of `ids`; returns the wait's id (-1: none).
  int wait_all(const std::vector<int>& ids) {
    if (ids.empty()) return -1;
    OpNode w;
    w.name = "fsdp.wait";
    w.kind = NodeKind::kWait;
    w.category = C::kCommunication;
    w.host_dispatches = 0;
    w.kernels = 0;
    return e_.add(std::move(w), ids);
  }
  double a2a_bytes = 0, tokens_per_expert = 0;

  // A TP collective over the stage's group: bytes is nccl-tests' size (all-reduce and the
  // all-gather's output / reduce-scatter's input: the full T x h bf16 activation).
  void tp(const std::string& name, models::CollOp op) { tp_op(name, op, false, {}); }
  // A TP collective; `async`: on the communication stream (Megatron's backward issues it
  // asynchronously and waits for it later), depending on `deps`. Returns its id (-1: none).
  int tp_op(const std::string& name, models::CollOp op, bool async, const std::vector<int>& deps,
            double bytes = 0) {
    if (d_.t < 2) return -1;
    if (bytes <= 0) bytes = 2.0 * d_.T * d_.h;
    const double t = coll_.time(op, bytes, group_) * o_.tp_comm_scale;
    if (t <= 0) return -1;  // removed by a what-if (tp_comm*0)
    OpNode n;
    n.name = "tp." + name;
    // Asynchronous NCCL calls run beside the GEMMs: modelled on a copy engine, which the
    // executor overlaps with compute (the few SMs NCCL's kernel takes are not taken from the
    // GEMM: see workloads/parallel.hpp).
    n.kind = async ? NodeKind::kCopy : NodeKind::kKernel;
    n.category = C::kCommunication;
    n.fixed_time_s = t;
    n.layer = e_.layer;
    const int saved = e_.stream;
    if (async) e_.stream = 1;
    const int id = e_.add(std::move(n), deps);
    e_.stream = saved;
    ++collectives;
    comm_s += t;
    return id;
  }
  // The compute stream waits for `id` (cudaStreamWaitEvent / handle.wait()).
  void wait(int id) {
    if (id < 0) return;
    OpNode w;
    w.name = "tp.wait";
    w.kind = NodeKind::kWait;
    w.category = C::kCommunication;
    w.host_dispatches = 0;
    w.kernels = 0;
    e_.add(std::move(w), {id});
  }
  // A column-parallel Linear's backward as Megatron-LM's LinearWithGradAccumulationAndAsync-
  // Communication runs it: with SP, all-gather the saved (sharded) input asynchronously while dX
  // is computed; then reduce-scatter (SP) or all-reduce dX asynchronously while dW is computed
  // (dW needs the gathered input); the next op waits for dX's collective.
  void column_bwd(const std::string& n, const std::string& region, long long din, long long dout) {
    const int prev = static_cast<int>(e_.graph().size()) - 1;
    int ag = -1;
    if (d_.sp)
      ag = tp_op(region + ".all_gather_input", models::CollOp::kAllGather, true,
                 prev >= 0 ? std::vector<int>{prev} : std::vector<int>{});
    const double bytes = 2.0 * d_.T * d_.h;
    const int dx = e_.gemm(n + ".dX", d_.T, din, dout);
    if (ag >= 0) {
      OpNode& g = e_.graph().op(dx);
      const auto op = models::CollOp::kAllGather;
      g.fixed_time_s = overlapped(g.op, coll_.time(op, bytes, group_) * o_.tp_comm_scale,
                                  coll_.sm_blocks(op, bytes, group_));
    }
    const auto rop = d_.sp ? models::CollOp::kReduceScatter : models::CollOp::kAllReduce;
    const int red = tp_op(region + (d_.sp ? ".reduce_scatter" : ".all_reduce"), rop, true, {dx});
    wait(ag);
    const int dw = e_.gemm(n + ".dW", din, dout, d_.T);
    if (red >= 0) {
      OpNode& g = e_.graph().op(dw);
      g.fixed_time_s = overlapped(g.op, coll_.time(rop, bytes, group_) * o_.tp_comm_scale,
                                  coll_.sm_blocks(rop, bytes, group_));
    }
    wait(red);
  }
  // Entering a TP region: identity forward (all-reduce backward), or all-gather with SP.
  void enter_fwd(const std::string& n) {
    if (d_.sp) tp(n + ".all_gather", models::CollOp::kAllGather);
  }
  // Leaving a TP region: all-reduce forward (identity backward), or reduce-scatter with SP.
  void leave_fwd(const std::string& n) {
    tp(n + (d_.sp ? ".reduce_scatter" : ".all_reduce"),
       d_.sp ? models::CollOp::kReduceScatter : models::CollOp::kAllReduce);
  }
  void leave_bwd(const std::string& n) {
    if (d_.sp) tp(n + ".all_gather", models::CollOp::kAllGather);
  }
  long long norm_rows() const { return d_.sp ? d_.T / d_.t : d_.T; }

  void layernorm(const std::string& n) {
    e_.kernel(n, C::kElementwise, "layernorm",
              {{"rows", norm_rows()}, {"cols", d_.h}, {"dtype", "bf16"}});
  }
  void layernorm_bwd(const std::string& n) {
    const double N = double(norm_rows()) * d_.h;
    e_.pass(n + ".bwd", C::kElementwise, 6.0 * N, 2.0 * N + 8.0 * d_.h, 8.0 * N);
  }
  // Fused bias + dropout + residual add (Megatron's bias_dropout_add_fused): reads x, residual,
  // writes the output and the 1-byte mask.
  void bias_dropout_add(const std::string& n, bool bwd) {
    const double N = double(norm_rows()) * d_.h;
    e_.pass(n + (bwd ? ".bwd" : ""), C::kElementwise, bwd ? 3.0 * N : 4.0 * N,
            bwd ? 4.0 * N : 3.0 * N, N);
  }
  // QK^T, scale-mask-softmax and dropout on b x a/t heads.
  void core_scores() {
    const long long bh = d_.b * d_.a / d_.t;
    e_.gemm("attn.qk", d_.s, d_.s, d_.hd, bh);
    e_.kernel("attn.softmax", C::kAttention, "softmax",
              {{"rows", bh * d_.s}, {"cols", d_.s}, {"dtype", "bf16"}});
    const double S = double(bh) * d_.s * d_.s;
    e_.pass("attn.dropout", C::kAttention, 2.0 * S, 3.0 * S, S);
  }
  // ---- Context parallelism: ring attention (Transformer Engine's p2p CP, as Megatron-Core runs
  // it). Each rank keeps its queries and passes K and V blocks around the cp ring: at step i it
  // computes attention on block i while block i+1 arrives (a send/recv on the communication
  // stream, every ring of the stage at once on one fabric); cp blocks in all. Megatron's causal
  // load balancing (each rank holding chunks i and 2cp-1-i) gives every rank the same work, so
  // one rank stands for all. The blocks are computed whole (s/cp x s/cp scores, as the cp = 1
  // builder computes the full s x s), and each block after the first rescales the output by the
  // running softmax statistics (online softmax). Backward passes K, V and their gradients around
  // the ring (twice the bytes).
  int cp_send(const std::string& name, double bytes, const std::vector<int>& deps) {
    const double t =
        coll_.concurrent_time(models::CollOp::kSendRecv, bytes, cp_rings_) * o_.cp_comm_scale;
    if (t <= 0) return -1;  // removed by a what-if (cp_comm*0)
    OpNode n;
    n.name = "cp." + name;
    n.kind = NodeKind::kCopy;
    n.category = C::kCommunication;
    n.fixed_time_s = t;
    n.layer = e_.layer;
    const int saved = e_.stream;
    e_.stream = 1;
    const int id = e_.add(std::move(n), deps);
    e_.stream = saved;
    ++cp_transfers;
    cp_comm_s += t;
    return id;
  }
  // Runs `block(i)` for the cp blocks with the ring transfers between them.
  template <typename F>
  void ring(const std::string& name, double bytes, F block) {
    if (cp_rings_.empty()) return block(0);
    cp_block_bytes = 4.0 * d_.b * d_.s * d_.kv / d_.t;  // K and V, bf16, this rank's heads
    int arriving = -1;
    for (int i = 0; i < o_.cp; ++i) {
      const int last = static_cast<int>(e_.graph().size()) - 1;
      std::vector<int> deps;
      if (arriving >= 0)
        deps.push_back(arriving);
      else if (last >= 0)
        deps.push_back(last);
      const int next = i + 1 < o_.cp ? cp_send(fmt::format("{}{}", name, i), bytes, deps) : -1;
      wait(arriving);
      block(i);
      if (i > 0) {
        const double O = double(d_.b) * d_.s * d_.q / d_.t;  // the output block, bf16
        e_.pass("attn.cp_rescale", C::kAttention, 4.0 * O, 2.0 * O, 2.0 * O);
      }
      arriving = next;
    }
  }
  void core_attention_fwd() {
    ring("kv", 4.0 * d_.b * d_.s * d_.kv / d_.t, [&](int) {
      core_scores();
      e_.gemm("attn.av", d_.s, d_.hd, d_.s, d_.b * d_.a / d_.t);
    });
  }
  // Q, K and V widths on one TP rank (GQA: kv_heads of head_dim for K and V).
  long long qkv_t() const { return (d_.q + 2 * d_.kv) / d_.t; }
  // A dense MLP of width f (split over TP) on the region's T tokens: FC1 (gate and up fused for
  // SwiGLU), the activation, FC2.
  void mlp_fwd(const std::string& n, long long f) {
    const long long f_t = f / d_.t;
    enter_fwd(n);
    e_.gemm(n + ".fc1", d_.T, (m_.gated_mlp ? 2 : 1) * f_t, d_.h);
    e_.elementwise(n + (m_.gated_mlp ? ".swiglu" : ".bias_gelu"), m_.gated_mlp ? "silu" : "gelu",
                   d_.T * f_t, "bf16");
    e_.gemm(n + ".fc2", d_.T, d_.h, f_t);
    leave_fwd(n);
  }
  void mlp_bwd(const std::string& n, long long f) {
    const long long f_t = f / d_.t;
    leave_bwd(n);
    linear_bwd(n + ".fc2", f_t, d_.h);
    e_.elementwise(n + (m_.gated_mlp ? ".swiglu.bwd" : ".bias_gelu.bwd"), "mul",
                   (m_.gated_mlp ? 2 : 1) * d_.T * f_t, "bf16");
    column_bwd(n + ".fc1", n, d_.h, (m_.gated_mlp ? 2 : 1) * f_t);
  }
  bool moe() const { return m_.moe_layer(e_.layer); }
  void layer_fwd() {
    layernorm("ln1");
    enter_fwd("attn");
    e_.gemm("attn.qkv", d_.T, qkv_t(), d_.h);
    core_attention_fwd();
    e_.gemm("attn.proj", d_.T, d_.h, d_.q / d_.t);
    leave_fwd("attn");
    bias_dropout_add("attn.bda", false);
    layernorm("ln2");
    if (moe())
      moe_fwd();
    else
      mlp_fwd("mlp", d_.ffn);
    bias_dropout_add("mlp.bda", false);
  }

  // ---- Mixture of experts (Megatron-Core's MoELayer with the all-to-all token dispatcher) ----
  // Tokens on this rank: s/tp of the micro-batch with sequence parallelism (required with tp > 1
  // for MoE models), all of it otherwise.
  long long moe_tokens() const { return d_.sp ? d_.T / d_.t : d_.T; }
  // Padding to capacity multiplies the routed tokens (dropless: 1).
  double capacity() const { return o_.capacity_factor > 0 ? o_.capacity_factor : 1.0; }
  // An all-to-all over the stage's EP groups (all of them at once), on the compute stream: Megatron
  // issues it synchronously (no overlap without --overlap-moe-expert-parallel-comm). `bytes` is
  // nccl-tests' size: the rank's whole send buffer, (ep-1)/ep of it leaving the GPU.
  void ep_a2a(const std::string& name) {
    if (ep_groups_.empty()) return;
    const double t =
        coll_.concurrent_time(models::CollOp::kAllToAll, a2a_bytes, ep_groups_) * o_.ep_comm_scale;
    if (t <= 0) return;  // removed by a what-if (ep_comm*0)
    OpNode n;
    n.name = "ep." + name;
    n.kind = NodeKind::kKernel;
    n.category = C::kCommunication;
    n.fixed_time_s = t;
    n.layer = e_.layer;
    e_.add(std::move(n));
    ++ep_collectives;
    ep_comm_s += t;
  }
  void moe_sizes() {
    const long long Tr = moe_tokens();
    const int k = m_.top_k;
    // Per rank: Tr tokens x top-k routed copies of h bf16 values (x capacity when padded).
    a2a_bytes = 2.0 * Tr * k * d_.h * capacity();
    // Balanced routing: the EP group's ep x T x k routed tokens (T: the TP group's tokens, after
    // the TP all-gather) spread evenly over the E experts, so each of this rank's E/ep experts
    // takes ep T k / E of them (x capacity when padded).
    tokens_per_expert = double(o_.ep) * d_.T * k / m_.experts * capacity();
  }
  long long local_experts() const { return m_.experts / o_.ep; }
  long long expert_rows() const { return static_cast<long long>(std::ceil(tokens_per_expert)); }
  void moe_fwd() {
    moe_sizes();
    const long long Tr = moe_tokens(), E = m_.experts, k = m_.top_k;
    const long long fe_t = m_.expert_ffn / d_.t, El = local_experts(), n = expert_rows();
    const double routed = double(Tr) * k * capacity();  // token copies leaving the permutation
    // Router: Tr x E logits (a replicated h x E weight), softmax and top-k over the E logits (fp32,
    // Megatron's --moe-router-dtype fp32), routing map and probabilities written.
    e_.gemm("moe.router", Tr, E, d_.h);
    e_.pass("moe.topk_softmax", C::kElementwise, 4.0 * Tr * E, 12.0 * Tr * k, 8.0 * Tr * E);
    // Permutation: each token copied once per chosen expert, grouped by expert.
    e_.pass("moe.permute", C::kElementwise, 2.0 * Tr * d_.h, 2.0 * routed * d_.h);
    ep_a2a("moe.dispatch");
    // Expert tensor parallelism = TP (Megatron's default): the received tokens gathered over TP.
    tp_op("moe.all_gather", models::CollOp::kAllGather, false, {}, a2a_bytes * d_.t);
    // Grouped GEMMs: El local experts, n tokens each.
    e_.gemm("moe.expert.fc1", n, (m_.gated_mlp ? 2 : 1) * fe_t, d_.h, El);
    e_.elementwise("moe.expert.act", m_.gated_mlp ? "silu" : "gelu", El * n * fe_t, "bf16");
    e_.gemm("moe.expert.fc2", n, d_.h, fe_t, El);
    tp_op("moe.reduce_scatter", models::CollOp::kReduceScatter, false, {}, a2a_bytes * d_.t);
    ep_a2a("moe.combine");
    // Un-permutation: the k expert outputs of each token weighted by its probabilities and summed.
    e_.pass("moe.unpermute", C::kElementwise, 2.0 * routed * d_.h, 2.0 * Tr * d_.h,
            2.0 * routed * d_.h);
    if (m_.shared_experts > 0) mlp_fwd("moe.shared", m_.shared_experts * m_.shared_expert_ffn);
  }
  void moe_bwd() {
    moe_sizes();
    const long long Tr = moe_tokens(), E = m_.experts, k = m_.top_k;
    const long long fe_t = m_.expert_ffn / d_.t, El = local_experts(), n = expert_rows();
    const long long fw_t = (m_.gated_mlp ? 2 : 1) * fe_t;
    const double routed = double(Tr) * k * capacity();
    if (m_.shared_experts > 0) mlp_bwd("moe.shared", m_.shared_experts * m_.shared_expert_ffn);
    // Gradients retrace the forward: un-permute's backward scatters the k copies (and the
    // probabilities' gradient), the combine's transpose is a dispatch, and so on.
    e_.pass("moe.unpermute.bwd", C::kElementwise, 2.0 * Tr * d_.h + 2.0 * routed * d_.h,
            2.0 * routed * d_.h + 4.0 * routed, 2.0 * routed * d_.h);
    ep_a2a("moe.combine.bwd");
    tp_op("moe.all_gather.bwd", models::CollOp::kAllGather, false, {}, a2a_bytes * d_.t);
    e_.gemm("moe.expert.fc2.dX", n, fe_t, d_.h, El);
    e_.gemm("moe.expert.fc2.dW", fe_t, d_.h, n, El);
    e_.elementwise("moe.expert.act.bwd", "mul", El * n * fw_t, "bf16");
    e_.gemm("moe.expert.fc1.dX", n, d_.h, fw_t, El);
    e_.gemm("moe.expert.fc1.dW", d_.h, fw_t, n, El);
    tp_op("moe.reduce_scatter.bwd", models::CollOp::kReduceScatter, false, {}, a2a_bytes * d_.t);
    ep_a2a("moe.dispatch.bwd");
    e_.pass("moe.permute.bwd", C::kElementwise, 2.0 * routed * d_.h, 2.0 * Tr * d_.h,
            routed * d_.h);
    e_.pass("moe.topk_softmax.bwd", C::kElementwise, 4.0 * Tr * E + 8.0 * Tr * k, 4.0 * Tr * E,
            8.0 * Tr * E);
    linear_bwd_rows("moe.router", Tr, d_.h, E);
  }
  // A Linear's backward: dX (T x d_in from d_out) and dW (d_in x d_out over T).
  void linear_bwd(const std::string& n, long long din, long long dout) {
    linear_bwd_rows(n, d_.T, din, dout);
  }
  void linear_bwd_rows(const std::string& n, long long rows, long long din, long long dout) {
    e_.gemm(n + ".dX", rows, din, dout);
    e_.gemm(n + ".dW", din, dout, rows);
  }
  void layer_bwd(Recompute rc) {
    const long long bh = d_.b * d_.a / d_.t;
    const double S = double(bh) * d_.s * d_.s;
    if (rc == Recompute::kFull) {
      const std::string p = e_.prefix;
      e_.prefix = p + "recompute.";
      layer_fwd();
      e_.prefix = p;
    }
    bias_dropout_add("mlp.bda", true);
    if (moe())
      moe_bwd();
    else
      mlp_bwd("mlp", d_.ffn);
    layernorm_bwd("ln2");
    bias_dropout_add("attn.bda", true);
    leave_bwd("attn");
    linear_bwd("attn.proj", d_.q / d_.t, d_.h);
    ring("kv_dkv", 8.0 * d_.b * d_.s * d_.kv / d_.t, [&](int) {
      if (rc == Recompute::kSelective) {
        // Megatron-LM checkpoints CoreAttention whole (_checkpointed_attention_forward): QK^T,
        // softmax, dropout and the product with V are re-run before its backward.
        const std::string p = e_.prefix;
        e_.prefix = p + "recompute.";
        core_scores();
        e_.gemm("attn.av", d_.s, d_.hd, d_.s, d_.b * d_.a / d_.t);
        e_.prefix = p;
      }
      // AV backward: dP = dO V^T (s x s over hd), dV = P^T dO (s x hd over s).
      e_.gemm("attn.av.dP", d_.s, d_.s, d_.hd, bh);
      e_.gemm("attn.av.dV", d_.s, d_.hd, d_.s, bh);
      e_.pass("attn.dropout.bwd", C::kAttention, 3.0 * S, 2.0 * S, S);
      e_.pass("attn.softmax.bwd", C::kAttention, 4.0 * S, 2.0 * S, 3.0 * S);
      // QK^T backward: dQ = dS K, dK = dS^T Q (s x hd over s each).
      e_.gemm("attn.qk.dQ", d_.s, d_.hd, d_.s, bh);
      e_.gemm("attn.qk.dK", d_.s, d_.hd, d_.s, bh);
    });
    column_bwd("attn.qkv", "attn", d_.h, qkv_t());
    layernorm_bwd("ln1");
  }
  // Vocab-parallel embedding lookup: each rank gathers its vocabulary shard, then the region's
  // exit collective combines the shards.
  void embedding_fwd() {
    e_.pass("embedding", C::kElementwise, 2.0 * d_.T * d_.h, 2.0 * d_.T * d_.h);
    leave_fwd("embedding");
  }
  void embedding_bwd() {
    leave_bwd("embedding");
    e_.pass("embedding.bwd", C::kElementwise, 2.0 * d_.T * d_.h, 4.0 * d_.T * d_.h);
  }
  void head_fwd() {
    layernorm("final_ln");
    enter_fwd("head");
    e_.gemm("lm_head", d_.T, d_.V / d_.t, d_.h);
    e_.kernel("loss", C::kElementwise, "cross_entropy",
              {{"rows", d_.T}, {"vocab", d_.V / d_.t}, {"dtype", "bf16"}, {"pass", "fwd"}});
  }
  void head_bwd() {
    e_.kernel("loss.bwd", C::kElementwise, "cross_entropy",
              {{"rows", d_.T}, {"vocab", d_.V / d_.t}, {"dtype", "bf16"}, {"pass", "bwd"}});
    column_bwd("lm_head", "head", d_.h, d_.V / d_.t);
    layernorm_bwd("final_ln");
  }

 private:
  Emitter e_;
  const TransformerConfig& m_;
  const ParallelOptions& o_;
  CollectiveTimes& coll_;
  std::vector<int> group_;
  std::vector<std::vector<int>> ep_groups_;               // empty: no EP all-to-alls
  std::vector<std::vector<int>> cp_rings_;                // empty: no CP
  std::vector<std::vector<int>> dp_groups_, edp_groups_;  // empty: parameters not sharded
  const hw::GpuSpec& gpu_;
  TimingMode mode_;
  std::map<int, hw::GpuSpec> reduced_;  // the GPU less n SMs, by n
  Dims d_{};

  // A GEMM beside a collective of `comm_s` whose kernel holds `blocks` SMs: the kernel model's
  // time on the GPU less those SMs while they overlap, on the whole GPU after (the work left
  // when the collective ends runs at the full rate).
  double overlapped(const models::OpSpec& op, double comm_s, int blocks) {
    const double full = op_time(gpu_, op, mode_);
    if (comm_s <= 0 || blocks <= 0 || blocks >= gpu_.sm.count) return full;
    auto it = reduced_.find(blocks);
    if (it == reduced_.end()) {
      WhatIf w;
      w.target = "sm_count";
      w.gpu_figure = true;
      w.factor = double(gpu_.sm.count - blocks) / gpu_.sm.count;
      it = reduced_.emplace(blocks, scaled_gpu(gpu_, w)).first;
    }
    const double slow = op_time(it->second, op, mode_);
    if (comm_s >= slow) return slow;
    return comm_s + (1 - comm_s / slow) * full;
  }
};

// The critical path by class, communication split by kind: EP all-to-alls ("ep.") apart from
// the TP collectives (reported as tp_comm by the schedule).
std::map<std::string, double> by_kind(const Graph& g, const CriticalPath& cp) {
  std::map<std::string, double> out;
  for (const auto& seg : cp.segments) {
    std::string cls = seg.cls;
    if (cls == "communication" && seg.op >= 0) {
      const std::string& name = g.op(seg.op).name;
      if (name.rfind("ep.", 0) == 0 || name.find(".ep.") != std::string::npos) cls = "ep_comm";
      if (name.rfind("cp.", 0) == 0 || name.find(".cp.") != std::string::npos) cls = "cp_comm";
      if (name.rfind("fsdp.", 0) == 0 || name.find(".fsdp.") != std::string::npos) cls = "dp_comm";
    }
    out[cls] += seg.t1_s - seg.t0_s;
  }
  return out;
}

}  // namespace

StageGraphs build_stage(const TransformerConfig& m, const ParallelOptions& o, int stage,
                        const hw::GpuSpec& gpu, CollectiveTimes& coll, TimingMode mode,
                        int device_pp) {
  StageGraphs sg;
  ParallelOptions place = o;
  if (device_pp > 0) place.pp = device_pp;
  const int place_stage = stage % place.pp;
  const int per = m.layers / o.pp;
  sg.first_layer = stage * per;
  sg.layers = per;
  const bool first = stage == 0, last = stage == o.pp - 1;
  {
    StageBuilder b(sg.forward, m, o, place, place_stage, coll, gpu, mode);
    b.e().host_path = HostPath::kAutogradForward;
    if (first) b.embedding_fwd();
    // ZeRO-3 / FSDP: the first layer's gather, then each layer waits for its own and issues the
    // next one's (prefetch one layer ahead).
    std::vector<int> next = b.gather(sg.first_layer, {});
    for (int l = 0; l < per; ++l) {
      b.e().layer = sg.first_layer + l;
      b.e().prefix = fmt::format("layer{}.", sg.first_layer + l);
      const int w = b.wait_all(next);
      next = l + 1 < per ? b.gather(sg.first_layer + l + 1,
                                    w >= 0 ? std::vector<int>{w} : std::vector<int>{})
                         : std::vector<int>{};
      b.layer_fwd();
    }
    b.e().layer = -1;
    b.e().prefix.clear();
    if (last) b.head_fwd();
    sg.tp_fwd_s = b.comm_s;
    sg.tp_collectives_fwd = b.collectives;
    sg.ep_fwd_s = b.ep_comm_s;
    sg.ep_collectives_fwd = b.ep_collectives;
    sg.a2a_bytes = b.a2a_bytes;
    sg.tokens_per_expert = b.tokens_per_expert;
    sg.cp_fwd_s = b.cp_comm_s;
    sg.cp_transfers_fwd = b.cp_transfers;
    sg.cp_block_bytes = b.cp_block_bytes;
    sg.fsdp_fwd_s = b.fsdp_comm_s;
    sg.fsdp_calls_fwd = b.fsdp_calls;
  }
  {
    StageBuilder b(sg.backward, m, o, place, place_stage, coll, gpu, mode);
    b.e().host_path = HostPath::kAutogradBackward;
    if (last) b.head_bwd();
    std::vector<int> next = b.gather(sg.first_layer + per - 1, {});
    for (int l = per - 1; l >= 0; --l) {
      b.e().layer = sg.first_layer + l;
      b.e().prefix = fmt::format("layer{}.", sg.first_layer + l);
      const int w = b.wait_all(next);
      next = l > 0 ? b.gather(sg.first_layer + l - 1,
                              w >= 0 ? std::vector<int>{w} : std::vector<int>{})
                   : std::vector<int>{};
      b.layer_bwd(o.recompute);
      b.reduce(sg.first_layer + l);
    }
    b.e().layer = -1;
    b.e().prefix.clear();
    if (first) b.embedding_bwd();
    sg.tp_bwd_s = b.comm_s;
    sg.tp_collectives_bwd = b.collectives;
    sg.ep_bwd_s = b.ep_comm_s;
    sg.ep_collectives_bwd = b.ep_collectives;
    sg.cp_bwd_s = b.cp_comm_s;
    sg.cp_transfers_bwd = b.cp_transfers;
    sg.fsdp_bwd_s = b.fsdp_comm_s;
    sg.fsdp_calls_bwd = b.fsdp_calls;
  }
  ExecOptions eo;
  eo.mode = mode;
  sg.fwd_exec = execute(sg.forward, gpu, eo);
  sg.bwd_exec = execute(sg.backward, gpu, eo);
  sg.fwd_by_class = by_kind(sg.forward, critical_path(sg.forward, sg.fwd_exec));
  sg.bwd_by_class = by_kind(sg.backward, critical_path(sg.backward, sg.bwd_exec));
  // Parameters on this rank: its layers' weights split over tp (norm weights and row-parallel
  // biases replicated, counted whole: a rounding at these sizes), embeddings on the first stage,
  // the LM head (tied: its own copy, as Megatron keeps it) on the last. A MoE layer holds its
  // dense part (attention, router, shared experts) split over tp and experts / ep routed experts
  // split over tp (expert tensor parallelism = tp).
  sg.params = 0;
  for (int l = sg.first_layer; l < sg.first_layer + per; ++l) {
    if (!m.moe_layer(l)) {
      sg.params += double(m.layer_parameter_count()) / o.tp;
      sg.max_layer_params = std::max(sg.max_layer_params, double(m.layer_parameter_count()) / o.tp);
      continue;
    }
    const double experts = double(m.experts / o.ep) * m.expert_parameter_count() / o.tp;
    sg.params += double(m.moe_layer_dense_parameter_count()) / o.tp;
    sg.expert_params += experts;
    sg.max_layer_params =
        std::max(sg.max_layer_params, double(m.moe_layer_dense_parameter_count()) / o.tp + experts);
  }
  sg.params += sg.expert_params;
  const double emb = double(o.padded_vocab(m.vocab)) * m.d_model / o.tp;
  if (first) sg.params += emb + double(m.max_positions) * m.d_model;
  if (last && !(first && m.tied_embeddings)) sg.params += emb;
  return sg;
}

}  // namespace ridge::workloads
