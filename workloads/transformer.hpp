// Builders for decoder-only transformers: the ops an eager PyTorch program launches, in order, for
// a training step (mixed precision), a prefill and a decode step (static KV cache, GQA).
//
// The op sequences mirror validate/e2e/train_gpt.py (nanoGPT: fused qkv Linear with bias, SDPA
// flash attention, GELU tanh, tied LM head, F.cross_entropy; bf16 autocast over fp32 master
// weights; fused AdamW) and validate/e2e/decode_llama.py (explicit fp32 RMSNorm, separate q/k/v,
// rotate-half RoPE, index_copy_ into the cache, SDPA with enable_gqa, greedy argmax).
//
// GEMM shapes for a Linear y = x W^T with x [T, d_in], W [d_out, d_in], T tokens:
//   forward  y  = x W^T     m = T,    n = d_out, k = d_in
//   backward dX = dY W      m = T,    n = d_in,  k = d_out   (input gradient)
//            dW = X^T dY    m = d_in, n = d_out, k = T       (weight gradient, stored transposed)
// Autocast (torch.autocast bf16) casts each fp32 weight and bias to bf16 once per forward (one
// cast kernel each) and fp32 activations entering a Linear; LayerNorm and cross-entropy run in
// fp32. In backward each cast has its backward (bf16 -> fp32 gradient cast).
#pragma once

#include "workloads/graph.hpp"
#include "workloads/model_config.hpp"

namespace ridge::workloads {

enum class Recompute { kNone, kSelective, kFull };
std::string_view recompute_name(Recompute r);

struct TrainOptions {
  long long micro_batch = 1;
  long long seq = 1024;
  int grad_accum = 1;  ///< micro-batches per optimizer step
  Recompute recompute = Recompute::kNone;
  /// precision: mixed: the model's weights and gradients are bf16 and the optimizer keeps an fp32
  /// master copy (no per-step weight casts; AdamW reads bf16 gradients and writes the bf16 copy).
  /// false: autocast over fp32 weights (casts to bf16 in every forward, fp32 gradients).
  bool bf16_weights = false;
};

struct InferenceOptions {
  long long batch = 1;
  long long prompt = 1024;   ///< prefill length
  long long context = 1024;  ///< decode: tokens already in the cache
  long long max_len = 2048;  ///< static cache length
  bool cuda_graph = false;  ///< the step (decode, or prefill with its argmax) captured and replayed
};

/// One optimizer step: grad_accum x (forward, loss, backward), then fused AdamW.
Graph build_train_step(const TransformerConfig& m, const TrainOptions& o);
/// Forward over the prompt writing the KV cache; logits of the last token.
Graph build_prefill(const TransformerConfig& m, const InferenceOptions& o);
/// One token per sequence against `context` cached positions, greedy argmax fed back.
Graph build_decode_step(const TransformerConfig& m, const InferenceOptions& o);

}  // namespace ridge::workloads
