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

StageMemory stage_memory(const TransformerConfig& m, const ParallelOptions& o, int stage,
                         double stage_params) {
  StageMemory mem;
  // Megatron-LM mixed precision: 16-bit weights (2 B), fp32 main gradients (4 B), fp32 master
  // weights with Adam's m and v (12 B); the distributed optimizer (ZeRO-1) shards the 12 B over DP.
  mem.weights = 2 * stage_params;
  mem.grads = 4 * stage_params;
  mem.optimizer = 12 * stage_params / (o.zero >= 1 ? o.dp : 1);
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
  mem.activations = parallel_layer_activation_bytes(m, o.micro_batch, o.seq, o.tp,
                                                    o.sequence_parallel, o.recompute) *
                    layers * double(units);
  return mem;
}

}  // namespace ridge::workloads
