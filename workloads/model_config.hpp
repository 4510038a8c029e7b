// Model descriptions read from configs/models/*.yaml: decoder-only transformers (GPT and Llama
// styles) and diffusion pipelines (text encoder, DiT denoiser, VAE decoder, fixed video encode).
// Strict: every key is consumed, unknown keys are errors with "did you mean", and every figure
// needs a source (the file's top-level `source:` covers all of them).
#pragma once

#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "hw/config.hpp"

namespace ridge::workloads {

enum class NormType { kLayerNorm, kRmsNorm };

/// A decoder-only transformer.
struct TransformerConfig {
  std::string name;
  std::string style = "gpt";  ///< gpt (nanoGPT op sequence) | llama (HF-Llama op sequence)
  int layers = 0;
  long long d_model = 0;
  int heads = 0;
  int kv_heads = 0;  ///< = heads without GQA
  int head_dim = 0;  ///< d_model / heads unless given
  long long ffn = 0;
  bool gated_mlp = false;                ///< SwiGLU: gate, up and down projections
  std::string activation = "gelu_tanh";  ///< gelu_tanh | silu | gelu (exact, erf)
  long long vocab = 0;
  bool tied_embeddings = false;
  NormType norm = NormType::kLayerNorm;
  bool bias = true;  ///< Linear layers carry biases
  long long max_positions = 0;
  std::string position = "learned";  ///< learned | rope | none
  /// How the norm runs: fused (one PyTorch kernel: F.layer_norm, nn.RMSNorm) or composed (the
  /// Hugging Face RMSNorm's eager pieces); empty: the norm's default (LayerNorm fused, RMSNorm
  /// composed), as configs built in code (workloads/e2e_compare.cpp) leave it. The model-file
  /// loader always sets it.
  std::string norm_impl;
  /// The dtype the training loss is computed in: bf16 (F.cross_entropy on the autocast bf16
  /// logits) or fp32 (logits.float() first, as Hugging Face's loss does).
  std::string loss_dtype = "bf16";
  // Mixture of experts (Shazeer et al. 2017; Mixtral, DeepSeek-V3): each MoE layer's MLP is a
  // router (h x experts), `experts` routed expert MLPs of width expert_ffn of which each token
  // takes top_k, and `shared_experts` MLPs of width shared_expert_ffn every token takes. The
  // first `dense_layers` layers keep a dense MLP of width ffn. experts = 0: a dense model.
  int experts = 0;
  int top_k = 0;
  long long expert_ffn = 0;         ///< = ffn unless given
  int shared_experts = 0;           ///< MLPs every token goes through
  long long shared_expert_ffn = 0;  ///< = expert_ffn unless given
  int dense_layers = 0;             ///< leading layers with a dense MLP

  bool is_moe() const { return experts > 0; }
  /// Layer `l` (0-based) has a MoE MLP.
  bool moe_layer(int l) const { return is_moe() && l >= dense_layers; }
  int moe_layer_count() const { return is_moe() ? layers - dense_layers : 0; }
  /// One routed expert's weights (and biases): (gate,) up and down projections.
  long long expert_parameter_count() const;
  /// A MoE layer's parameters outside its routed experts: attention, norms, router, shared
  /// experts.
  long long moe_layer_dense_parameter_count() const;

  /// Parameters: embeddings, per-layer weights (and biases, norms), final norm, LM head if untied.
  long long parameter_count() const;
  /// A dense layer's parameters.
  long long layer_parameter_count() const;
  /// Weight matrices (2-D tensors) and 1-D tensors (biases, norm weights), for per-tensor kernels.
  long long tensor_count() const;
};

/// The transformer encoder of a diffusion pipeline (CLIP/T5-like, pre-LN, non-causal).
struct TextEncoderConfig {
  int layers = 0;
  long long d_model = 0;
  int heads = 0;
  long long ffn = 0;
  long long vocab = 0;
  long long seq = 0;
  int batch = 2;  ///< cond + uncond prompts
  bool gated_mlp = false;
};

/// A DiT denoiser over latent tokens (adaLN modulation, optional cross-attention to the text).
struct DenoiserConfig {
  int layers = 0;
  long long d_model = 0;
  int heads = 0;
  long long ffn = 0;
  int latent_channels = 4;
  long long latent_frames = 1;
  long long latent_height = 0;
  long long latent_width = 0;
  int patch = 2;
  int patch_t = 1;
  int cfg_batch = 2;  ///< classifier-free guidance doubles the batch
  bool cross_attention = false;
  long long tokens() const;  ///< latent tokens per sample
};

/// A VAE decoder: a conv_in, upsampling stages of two 3x3 convs with GroupNorm and SiLU, a
/// conv_out.
struct VaeConfig {
  int latent_channels = 4;
  long long frames = 1;                                 ///< latent frames decoded (1 for images)
  int temporal_kernel = 1;                              ///< 3 for 3-D convs (kt x 3 x 3), 1 for 2-D
  int temporal_upsample = 1;                            ///< output frames per latent frame
  long long conv_in = 512;                              ///< channels after conv_in
  std::vector<std::pair<long long, long long>> stages;  ///< (c_in, c_out) per 2x upsampling stage
  int out_channels = 3;
  int groups = 32;  ///< GroupNorm groups
};

struct DiffusionConfig {
  std::string name;
  std::string dtype = "bf16";
  TextEncoderConfig text;
  DenoiserConfig denoiser;
  VaeConfig vae;
  double video_encode_s = 0;  ///< fixed host-side encode of the decoded frames (0: none)
  long long output_frames() const;
  long long output_height() const;
  long long output_width() const;
};

/// A loaded model file: one of the two kinds, its source and provenance.
struct ModelConfig {
  std::variant<TransformerConfig, DiffusionConfig> model;
  std::string source;
  std::vector<std::pair<std::string, std::string>> files;  ///< (path, sha256)
  bool is_transformer() const { return model.index() == 0; }
  const TransformerConfig& transformer() const { return std::get<0>(model); }
  const DiffusionConfig& diffusion() const { return std::get<1>(model); }
};

/// Reads a model description from a loaded config tree. Throws hw::ConfigException.
ModelConfig read_model_config(const hw::LoadedConfig& config);
/// Loads configs/models/NAME.yaml or a path. Throws hw::ConfigException.
ModelConfig load_model_config(const std::string& name_or_path);

/// The model file a study names: relative to the study's folder, then as written, then a shipped
/// configs/models name; else the name unchanged (the loader then reports it missing). A name the
/// file system refuses (over 255 bytes) is a missing file, not a filesystem_error.
std::string resolve_study_model(const std::string& study_path, const std::string& name);

}  // namespace ridge::workloads
