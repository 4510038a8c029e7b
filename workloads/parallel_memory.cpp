// Memory per GPU per pipeline stage (see workloads/parallel.hpp).
#include <algorithm>

#include "workloads/parallel.hpp"

namespace ridge::workloads {

// Korthikanti et al. 2022, "Reducing Activation Recomputation in Large Transformer Models",
// Table 2, bytes per layer with 16-bit activations, s tokens, b micro-batch, h hidden, a heads,
// t tensor-parallel size (sec. 4.1 derives sbh(34 + 5as/h) without parallelism: 11sbh + 5as^2b
// attention, 19sbh MLP, 4sbh the two norms):
//   TP:                    sbh (10 + 24/t + 5as/(ht))  (norms, dropouts, the regions' inputs
//                                                       stay replicated: 10sbh)
//   TP + SP:               sbh/t (34 + 5as/h)          (everything sharded)
//   TP + selective:        sbh (10 + 24/t)             (the 5as^2b scores recomputed)
//   TP + SP + selective:   34 sbh/t
//   full recompute:        2sbh (the layer's input only; /t with SP)
double parallel_layer_activation_bytes(const TransformerConfig& m, long long micro_batch,
                                       long long seq, int tp, bool sequence_parallel, Recompute r) {
  const double s = double(seq), b = double(micro_batch), h = double(m.d_model);
  const double a = double(m.heads), t = double(tp);
  const double sbh = s * b * h;
  const bool sp = sequence_parallel && tp > 1;
  if (r == Recompute::kFull) return 2 * sbh / (sp ? t : 1);
  const double scores = r == Recompute::kSelective ? 0 : 5 * a * s / h;
  if (sp) return sbh / t * (34 + scores);
  return sbh * (10 + 24 / t + scores / t);
}

// A MoE layer keeps (bytes per token of the layer's s b tokens, t = tp, sequence parallel as
// Megatron requires with tp > 1; f the expert width, k top-k, c the capacity factor or 1, g 2 for
// SwiGLU and 1 otherwise), in place of Korthikanti's 19 sbh MLP term:
//   2h/t          the norm's output, the router's input (sharded with SP)
//   4E/t + 12k/t  fp32 router logits and the top-k probabilities with their indices
//   2hkc/t        the permuted tokens, the experts' FC1 input (its rows after the TP all-gather:
//                 k c T tokens over the TP group, k c T / t per rank)
//   2 g f kc/t    FC1's output, the activation's input
//   2 f kc/t      the activation's output, FC2's input
//   h/t           the dropout mask of the residual
// and the shared experts as a dense MLP of width F = shared_experts x shared_expert_ffn:
//   2h/t + 2gF/t + 2F/t. Recompute full keeps the layer's input only (2h/t).
// With CP each rank keeps Korthikanti's bytes for its s/cp tokens, except the attention scores
// (5as^2b/t for s x s): its s/cp queries meet all s keys over the ring, 5a(s/cp)sb/t, cp times
// the formula's term at s/cp.
double cp_layer_activation_bytes(const TransformerConfig& m, const ParallelOptions& o) {
  const long long sl = o.seq / std::max(1, o.cp);
  const double bytes =
      parallel_layer_activation_bytes(m, o.micro_batch, sl, o.tp, o.sequence_parallel, o.recompute);
  if (o.cp <= 1 || o.recompute != Recompute::kNone) return bytes;
  const double scores = 5.0 * m.heads * double(sl) * double(sl) * o.micro_batch / o.tp;
  return bytes + (o.cp - 1) * scores;
}

double moe_layer_activation_bytes(const TransformerConfig& m, const ParallelOptions& o) {
  const double s = double(o.seq) / std::max(1, o.cp), b = double(o.micro_batch);
  const double h = double(m.d_model);
  const double t = o.sequence_parallel && o.tp > 1 ? double(o.tp) : 1.0;
  const double tp = double(o.tp);
  if (o.recompute == Recompute::kFull) return 2 * s * b * h / t;
  const double k = m.top_k, c = o.capacity_factor > 0 ? o.capacity_factor : 1.0;
  const double g = m.gated_mlp ? 2 : 1, f = double(m.expert_ffn);
  const double F = double(m.shared_experts) * m.shared_expert_ffn;
  double per_token = 2 * h / t + (4.0 * m.experts + 12 * k) / t + 2 * h * k * c / t;
  per_token += (2 * g * f + 2 * f) * k * c / tp + h / t;
  if (F > 0) per_token += 2 * h / t + (2 * g * F + 2 * F) / tp;
  // Attention's share of Korthikanti's formula (the layer's total less its 19 sbh MLP term).
  const double dense = cp_layer_activation_bytes(m, o);
  const double mlp = 19 * s * b * h / t;
  return dense - mlp + s * b * per_token;
}

StageMemory stage_memory(const TransformerConfig& m, const ParallelOptions& o, int stage,
                         double stage_params, double expert_params, double max_layer_params) {
  StageMemory mem;
  // Megatron-LM mixed precision: 16-bit weights (2 B), fp32 main gradients (4 B), fp32 master
  // weights with Adam's m and v (12 B); the distributed optimizer (ZeRO-1) shards the 12 B over DP
  // (a routed expert's over the dp / ep ranks holding the same experts).
  mem.weights = 2 * stage_params;
  mem.grads = 4 * stage_params;
  const double dense = stage_params - expert_params;
  const int ddp = o.dp * o.cp;  // with CP, the optimizer is sharded over DP x CP
  const int edp = std::max(1, ddp / std::max(1, o.ep));
  // ZeRO-1 shards the 12 B of optimizer state, ZeRO-2 the 4 B of gradients too, ZeRO-3 and FSDP
  // the 2 B of weights too (18 B / N per parameter in all), plus the layer being computed and
  // the one prefetched, gathered whole (2 x 2 B x the largest layer).
  const double sharded = dense / ddp + expert_params / edp;
  const int z = o.zero_stage();
  mem.optimizer = z >= 1 ? 12 * sharded : 12 * stage_params;
  if (z >= 2) mem.grads = 4 * sharded;
  if (z >= 3) mem.weights = 2 * sharded + 2 * 2 * max_layer_params;
  // Optimizer offload (ZeRO-Offload): the 12 B of the rank's partition leave the GPU; the host
  // keeps them with an fp32 copy of the partition's gradients (16 B per parameter). The GPU keeps
  // its gradient buffers as above (Ridge's 4 B fp32 main gradients; DeepSpeed's 16-bit buckets
  // would be 2 B: the GPU figure is high by up to 2 B per parameter).
  if (o.offloads()) {
    const double part = z >= 1 ? sharded : stage_params;
    mem.host = kOffloadHostBytesPerParam * part;
    mem.optimizer = 0;
    // Parameter offload (ZeRO-3): the 16-bit partition on the host too; the GPU keeps only the
    // gathered layers (the one computed and the one prefetched).
    if (o.offloads_params() && z >= 3) {
      mem.host += 2 * part;
      mem.weights = 2 * 2 * max_layer_params;
    }
  }
  const long long micro = o.micro_batches();
  // 1F1B: stage s holds p - s micro-batches in flight at most (its warm-up forwards plus the one in
  // 1F1B); GPipe keeps all of them until the backwards start. Interleaved with v chunks: device s
  // holds its warm-up (p - s - 1) x 2 + (v - 1) x p chunk-forwards plus one, each of L/(pv)
  // layers; for s = 0 that is L (1 + (p-1)/(pv)) layers' worth (Korthikanti et al. 2022
  // sec. 4.2.3).
  const bool inter = o.schedule == PipeSchedule::kInterleaved && o.virtual_stages > 1;
  const int v = inter ? o.virtual_stages : 1;
  long long units = 0;  // chunk-forwards in flight
  if (o.schedule == PipeSchedule::kGpipe)
    units = micro;
  else if (inter)
    units = std::min<long long>((o.pp - stage - 1) * 2LL + (v - 1LL) * o.pp + 1, micro * v);
  else
    units = std::min<long long>(o.pp - stage, micro);
  mem.in_flight = static_cast<int>(units);
  const double layers = double(m.layers) / (o.pp * v);
  // The device's layers by kind: MoE layers among the ones it holds (interleaved chunks are
  // spread over the model; their MoE share is taken as the model's).
  double moe_share = 0;
  if (m.is_moe()) {
    if (v == 1) {
      const int per = m.layers / o.pp, first = stage * per;
      int n = 0;
      for (int l = first; l < first + per; ++l) n += m.moe_layer(l);
      moe_share = double(n) / per;
    } else {
      moe_share = double(m.moe_layer_count()) / m.layers;
    }
  }
  const double dense_bytes = cp_layer_activation_bytes(m, o);
  const double moe_bytes = m.is_moe() ? moe_layer_activation_bytes(m, o) : 0;
  mem.activations =
      ((1 - moe_share) * dense_bytes + moe_share * moe_bytes) * layers * double(units);
  return mem;
}

}  // namespace ridge::workloads
