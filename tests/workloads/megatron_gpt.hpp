// The Megatron GPT models of Korthikanti et al. 2022 Table 3 (hidden, heads, layers), FFN 4h,
// vocab 51200 (GPT-2's 50257 padded to a multiple of 128 x tp, as Megatron-LM pads it), seq 2048:
// shared by the parallel-training and planning tests.
#pragma once

#include "workloads/model_config.hpp"

namespace ridge::test {

inline workloads::TransformerConfig megatron_gpt(long long h, int heads, int layers) {
  workloads::TransformerConfig m;
  m.name = "megatron";
  m.layers = layers;
  m.d_model = h;
  m.heads = heads;
  m.kv_heads = heads;
  m.head_dim = static_cast<int>(h / heads);
  m.ffn = 4 * h;
  m.vocab = 51200;
  m.tied_embeddings = true;
  m.max_positions = 2048;
  return m;
}

}  // namespace ridge::test
