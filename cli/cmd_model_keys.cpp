// `ridge describe model`: the keys of a transformer model file (configs/models/*.yaml, `model:`
// with `type: transformer`), as workloads/model_config.cpp reads them.
#include <fmt/format.h>

#include "cli/output.hpp"

namespace ridge::cli {

namespace {
struct ModelKey {
  const char* name;
  const char* values;
  const char* fallback;
  const char* meaning;
};

// Kept in step with the loader's reads in workloads/model_config.cpp (read_transformer).
constexpr ModelKey kTransformerKeys[] = {
    {"name", "text", "(required)", "shown in reports"},
    {"style", "gpt|llama", "gpt", "op sequence: nanoGPT or Hugging Face Llama"},
    {"layers", "int", "(required)", ""},
    {"d_model", "int", "(required)", "hidden size"},
    {"heads", "int", "(required)", "query heads"},
    {"kv_heads", "int", "heads", "key/value heads (GQA)"},
    {"head_dim", "int", "d_model / heads", ""},
    {"ffn", "int", "(required)", "MLP hidden size"},
    {"gated_mlp", "bool", "false", "SwiGLU: gate, up and down projections"},
    {"activation", "gelu_tanh|silu|gelu", "silu if gated_mlp, else gelu_tanh",
     "gelu is the exact (erf) GELU, timed as torch_gelu approximate=none"},
    {"vocab", "int", "(required)", ""},
    {"tied_embeddings", "bool", "false", "LM head shares the token embedding"},
    {"norm", "layernorm|rmsnorm", "layernorm", ""},
    {"norm_impl", "fused|composed", "layernorm: fused, rmsnorm: composed",
     "fused: one PyTorch kernel (F.layer_norm, nn.RMSNorm, torch_rmsnorm impl=fused); composed: "
     "the Hugging Face RMSNorm's eager pieces (rmsnorm only)"},
    {"bias", "bool", "true for layernorm, else false", "Linear layers carry biases"},
    {"max_positions", "int", "(required)", ""},
    {"position", "learned|rope|none", "llama: rope, gpt: learned",
     "none: no position embedding and no rotary kernels"},
    {"loss_dtype", "bf16|fp32", "bf16",
     "training loss dtype: bf16 = F.cross_entropy on the autocast logits; fp32 = "
     "logits.float() first (torch_cross_entropy logits_dtype=bf16 loss_dtype=fp32)"},
};
}  // namespace

/// `ridge describe model`: the transformer model-file keys.
void describe_model_keys(std::string& text, nlohmann::json& j) {
  Table t({"key", "values", "default", "meaning"});
  for (const auto& k : kTransformerKeys) {
    t.row({k.name, k.values, k.fallback, k.meaning});
    j.push_back(
        {{"key", k.name}, {"values", k.values}, {"default", k.fallback}, {"meaning", k.meaning}});
  }
  text = "transformer model files (configs/models/*.yaml, model: {type: transformer, ...}):\n" +
         t.str();
}

}  // namespace ridge::cli
