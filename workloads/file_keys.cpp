#include "workloads/file_keys.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "hw/limits.hpp"

namespace ridge::workloads {

namespace {
// Widths, vocabularies and positions: far beyond any published model (the largest published
// d_model is ~25,600), inside 32 bits once multiplied by a workload's batch and sequence limits.
constexpr long long kWidth = 1 << 20;
constexpr long long kVocab = 1 << 24;
constexpr long long kPositions = 1 << 24;
constexpr long long kNotInt = -1;  // lo > hi: the key is not an integer
}  // namespace

const std::vector<FileKey>& study_keys() {
  static const std::vector<FileKey> keys = {
      {"study", "map", "", 1, kNotInt, "the study (the file's only top-level key)"},
      {"study.question", "text", "\"\"", 1, kNotInt, "the question the study answers (printed)"},
      {"study.model", "text", "", 1, kNotInt,
       "a model file (relative to the study) or a shipped model's name (configs/models)"},
      {"study.gpu", "text", "h200", 1, kNotInt,
       "a GPU config file or a shipped GPU's name or alias (ridge hw list)"},
      {"study.mode", "fast|detailed", "fast", 1, kNotInt,
       "fast: closed-form kernel times; detailed: thread blocks simulated as events"},
      {"study.what_if", "list of text", "[]", 1, kNotInt,
       "what-ifs (TARGET*FACTOR, e.g. hbm_bandwidth*1.5, gemm*2; ridge describe params)"},
      {"study.parallel", "map", "(none)", 1, kNotInt,
       "a parallel training step on a system instead of workloads (ridge describe parallel)"},
      {"study.workload", "map", "(none)", 1, kNotInt, "one workload (keys as study.workloads[])"},
      {"study.workloads", "list", "", 1, kNotInt,
       "the workloads, each run and reported (required unless workload or parallel is given)"},
      {"study.workloads[].kind", "train|prefill|decode|diffusion", "", 1, kNotInt,
       "what is run: a training step, a prompt's prefill, one decode step, a diffusion pipeline"},
      {"study.workloads[].label", "text", "the kind", 1, kNotInt, "name in the report"},
      {"study.workloads[].micro_batch", "integer", "1", 1, 1 << 20,
       "train: sequences per micro-batch"},
      {"study.workloads[].seq", "integer", "1024", 1, 1 << 24,
       "train: tokens per sequence (at most the model's max_positions)"},
      {"study.workloads[].grad_accum", "integer", "1", 1, hw::kMaxGradAccum,
       "train: micro-batches accumulated per optimizer step"},
      {"study.workloads[].recompute", "none|selective|full", "none", 1, kNotInt,
       "train: activation recomputation in the backward pass (selective: the attention core, "
       "Korthikanti et al. 2022; full: each layer's forward)"},
      {"study.workloads[].precision", "autocast|mixed", "autocast", 1, kNotInt,
       "train: autocast keeps fp32 master weights and casts them to bf16 each step; mixed keeps "
       "bf16 weights with an fp32 master copy updated by the optimizer"},
      {"study.workloads[].batch", "integer", "1", 1, 1 << 20,
       "prefill, decode: sequences in the batch"},
      {"study.workloads[].prompt", "integer", "1024", 1, 1 << 24,
       "prefill: prompt tokens per sequence (at most max_positions)"},
      {"study.workloads[].context", "integer", "1024", 0, 1 << 24,
       "decode: tokens already cached; context + 1 must fit max_positions and max_len"},
      {"study.workloads[].max_len", "integer", "2048", 1, 1 << 24,
       "prefill, decode: KV-cache length allocated per sequence"},
      {"study.workloads[].graph", "bool", "false", 1, kNotInt,
       "prefill, decode: launched as one CUDA graph (no per-kernel launch cost on the host)"},
      {"study.workloads[].steps", "integer", "20", 1, hw::kMaxDiffusionSteps,
       "diffusion: denoising steps"},
  };
  return keys;
}

const std::vector<FileKey>& model_keys() {
  static const std::vector<FileKey> keys = {
      {"model", "map", "", 1, kNotInt, "the model (the file's only top-level key)"},
      {"model.type", "transformer|diffusion", "transformer", 1, kNotInt,
       "a decoder-only transformer, or a diffusion pipeline (text encoder, denoiser, VAE)"},
      {"model.source", "text", "", 1, kNotInt,
       "where the figures come from (every figure needs one)"},
      {"model.name", "text", "", 1, kNotInt, "name in reports"},
      {"model.style", "gpt|llama", "gpt", 1, kNotInt,
       "transformer: GPT-2/3 (pre-LN, learned positions, GELU) or Llama (RMSNorm, RoPE, SwiGLU) "
       "defaults for the keys below"},
      {"model.layers", "integer", "", 1, hw::kMaxLayers, "transformer: decoder layers"},
      {"model.d_model", "integer", "", 1, kWidth, "transformer: hidden width"},
      {"model.heads", "integer", "", 1, 65536,
       "transformer: attention heads (must divide d_model unless head_dim is given)"},
      {"model.kv_heads", "integer", "heads", 1, 65536,
       "transformer: key/value heads (grouped-query attention; must divide heads)"},
      {"model.head_dim", "integer", "d_model / heads", 1, 1024, "transformer: width of one head"},
      {"model.ffn", "integer", "", 1, 4 * kWidth, "transformer: MLP hidden width"},
      {"model.gated_mlp", "bool", "false", 1, kNotInt,
       "transformer: gated MLP (gate and up projections, as SwiGLU)"},
      {"model.activation", "gelu_tanh|silu|gelu", "silu if gated_mlp, else gelu_tanh", 1, kNotInt,
       "transformer: MLP activation (gelu: the exact erf GELU, timed as torch_gelu)"},
      {"model.vocab", "integer", "", 1, kVocab, "transformer: vocabulary size"},
      {"model.tied_embeddings", "bool", "false", 1, kNotInt,
       "transformer: the LM head shares the embedding's weights"},
      {"model.norm", "layernorm|rmsnorm", "layernorm", 1, kNotInt, "transformer: normalization"},
      {"model.bias", "bool", "true with layernorm", 1, kNotInt,
       "transformer: linear layers carry biases"},
      {"model.max_positions", "integer", "", 1, kPositions,
       "transformer: longest sequence (positions) the model takes"},
      {"model.position", "learned|rope|none", "rope for llama, else learned", 1, kNotInt,
       "transformer: position encoding (none: no position embedding, no rotary kernels)"},
      {"model.norm_impl", "fused|composed", "rmsnorm: composed, layernorm: fused", 1, kNotInt,
       "transformer: fused = one PyTorch kernel (nn.RMSNorm, F.layer_norm); composed = the "
       "Hugging Face RMSNorm's eager pieces (rmsnorm only)"},
      {"model.loss_dtype", "bf16|fp32", "bf16", 1, kNotInt,
       "transformer: training loss on the bf16 logits, or logits.float() first"},
      {"model.experts", "integer", "0", 0, 65536,
       "transformer: routed experts per MoE layer (0: a dense model)"},
      {"model.top_k", "integer", "1", 1, 65536, "MoE: experts each token is routed to"},
      {"model.expert_ffn", "integer", "ffn", 1, 4 * kWidth, "MoE: one routed expert's MLP width"},
      {"model.shared_experts", "integer", "0", 0, 65536, "MoE: MLPs every token goes through"},
      {"model.shared_expert_ffn", "integer", "expert_ffn", 1, 4 * kWidth,
       "MoE: a shared expert's MLP width"},
      {"model.dense_layers", "integer", "0", 0, hw::kMaxLayers,
       "MoE: leading layers that keep a dense MLP of width ffn"},
      {"model.dtype", "text", "bf16", 1, kNotInt, "diffusion: element type of every stage"},
      {"model.text_encoder", "map", "", 1, kNotInt, "diffusion: the text encoder (pre-LN encoder)"},
      {"model.text_encoder.layers", "integer", "", 1, hw::kMaxLayers, "encoder layers"},
      {"model.text_encoder.d_model", "integer", "", 1, kWidth, "hidden width"},
      {"model.text_encoder.heads", "integer", "", 1, 65536, "attention heads"},
      {"model.text_encoder.ffn", "integer", "", 1, 4 * kWidth, "MLP hidden width"},
      {"model.text_encoder.vocab", "integer", "", 1, kVocab, "vocabulary size"},
      {"model.text_encoder.seq", "integer", "", 1, kPositions, "tokens encoded per prompt"},
      {"model.text_encoder.batch", "integer", "2", 1, 1 << 20,
       "prompts encoded (2: the prompt and the negative prompt of classifier-free guidance)"},
      {"model.text_encoder.gated_mlp", "bool", "false", 1, kNotInt, "gated MLP"},
      {"model.denoiser", "map", "", 1, kNotInt, "diffusion: the denoising transformer (DiT)"},
      {"model.denoiser.layers", "integer", "", 1, hw::kMaxLayers, "transformer blocks"},
      {"model.denoiser.d_model", "integer", "", 1, kWidth, "hidden width"},
      {"model.denoiser.heads", "integer", "", 1, 65536, "attention heads"},
      {"model.denoiser.ffn", "integer", "", 1, 4 * kWidth, "MLP hidden width"},
      {"model.denoiser.latent_channels", "integer", "4", 1, 4096, "channels of the latent"},
      {"model.denoiser.latent_frames", "integer", "1", 1, 1 << 16, "latent frames (1 for images)"},
      {"model.denoiser.latent_height", "integer", "", 1, 1 << 16, "latent height"},
      {"model.denoiser.latent_width", "integer", "", 1, 1 << 16, "latent width"},
      {"model.denoiser.patch", "integer", "2", 1, 64, "spatial patch size (tokens per side)"},
      {"model.denoiser.patch_t", "integer", "1", 1, 64, "temporal patch size"},
      {"model.denoiser.cfg_batch", "integer", "2", 1, 1024,
       "batch per step (2: classifier-free guidance runs conditional and unconditional)"},
      {"model.denoiser.cross_attention", "bool", "false", 1, kNotInt,
       "blocks attend to the text encoder's output"},
      {"model.vae", "map", "", 1, kNotInt, "diffusion: the VAE decoder"},
      {"model.vae.latent_channels", "integer", "denoiser.latent_channels", 1, 4096,
       "channels of the latent decoded"},
      {"model.vae.frames", "integer", "denoiser.latent_frames", 1, 1 << 16,
       "latent frames decoded"},
      {"model.vae.temporal_kernel", "integer", "1", 1, 7, "temporal size of the 3-D convolutions"},
      {"model.vae.temporal_upsample", "integer", "1", 1, 16, "temporal upsampling factor"},
      {"model.vae.conv_in", "integer", "512", 1, kWidth, "channels after the input convolution"},
      {"model.vae.out_channels", "integer", "3", 1, 64, "output channels (3: RGB)"},
      {"model.vae.groups", "integer", "32", 1, 4096, "GroupNorm groups"},
      {"model.vae.stages", "list of [c_in, c_out]", "", 1, kWidth,
       "upsampling stages (each doubles height and width), channel counts in the range"},
      {"model.video_encode", "time", "0 s", 1, kNotInt,
       "diffusion: host time to encode the output video (0 s .. 3600 s)"},
  };
  return keys;
}

const FileKey& file_key(const std::vector<FileKey>& table, std::string_view path) {
  for (const auto& k : table)
    if (k.path == path) return k;
  throw std::logic_error(fmt::format("key '{}' is not in its describe table", path));
}

}  // namespace ridge::workloads
