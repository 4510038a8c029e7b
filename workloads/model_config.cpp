#include "workloads/model_config.hpp"

#include <fmt/format.h>

#include <charconv>
#include <filesystem>

#include "hw/gpu_loader.hpp"
#include "hw/limits.hpp"

namespace ridge::workloads {

long long TransformerConfig::layer_parameter_count() const {
  const long long hd = head_dim, q = heads * hd, kv = static_cast<long long>(kv_heads) * hd;
  long long p = d_model * q + 2 * d_model * kv + q * d_model;  // q, k, v, o
  p += (gated_mlp ? 3 : 2) * d_model * ffn;                    // (gate,) up, down
  if (bias) p += q + 2 * kv + d_model + (gated_mlp ? 2 : 1) * ffn + d_model;
  p += 2 * (norm == NormType::kLayerNorm ? 2 * d_model : d_model);
  return p;
}

long long TransformerConfig::expert_parameter_count() const {
  long long p = (gated_mlp ? 3 : 2) * d_model * expert_ffn;
  if (bias) p += (gated_mlp ? 2 : 1) * expert_ffn + d_model;
  return p;
}

long long TransformerConfig::moe_layer_dense_parameter_count() const {
  // The dense layer's count less its MLP, plus the router and the shared experts.
  const long long dense_mlp =
      (gated_mlp ? 3 : 2) * d_model * ffn + (bias ? (gated_mlp ? 2 : 1) * ffn + d_model : 0);
  long long shared = (gated_mlp ? 3 : 2) * d_model * shared_expert_ffn;
  if (bias) shared += (gated_mlp ? 2 : 1) * shared_expert_ffn + d_model;
  return layer_parameter_count() - dense_mlp + d_model * experts + shared_experts * shared;
}

long long TransformerConfig::parameter_count() const {
  long long p = vocab * d_model + (layers - moe_layer_count()) * layer_parameter_count();
  p += moe_layer_count() * (moe_layer_dense_parameter_count() +
                            static_cast<long long>(experts) * expert_parameter_count());
  if (position == "learned") p += max_positions * d_model;
  p += norm == NormType::kLayerNorm ? 2 * d_model : d_model;
  if (!tied_embeddings) p += vocab * d_model;
  return p;
}

long long TransformerConfig::tensor_count() const {
  long long per_layer = 4 + (gated_mlp ? 3 : 2);            // weight matrices
  if (bias) per_layer += 4 + (gated_mlp ? 3 : 2);           // their biases
  per_layer += 2 * (norm == NormType::kLayerNorm ? 2 : 1);  // norm weights (biases)
  long long n = 1 + layers * per_layer + (norm == NormType::kLayerNorm ? 2 : 1);
  if (position == "learned") n += 1;
  if (!tied_embeddings) n += 1;
  return n;
}

long long DenoiserConfig::tokens() const {
  return (latent_frames / patch_t) * (latent_height / patch) * (latent_width / patch);
}

long long DiffusionConfig::output_frames() const {
  return vae.temporal_upsample > 1 ? 1 + (vae.frames - 1) * vae.temporal_upsample : vae.frames;
}
long long DiffusionConfig::output_height() const {
  return denoiser.latent_height << vae.stages.size();
}
long long DiffusionConfig::output_width() const {
  return denoiser.latent_width << vae.stages.size();
}

namespace {

// Widths (d_model), vocabulary and positions: far beyond any published model, inside 32 bits
// once multiplied by the batch and sequence limits of a workload.
constexpr long long kMaxWidth = 1 << 20;
constexpr long long kMaxVocab = 1 << 24;
constexpr long long kMaxPositions = 1 << 24;

// A whole, positive channel count: "512abc" is not 512.
bool parse_channels(const std::string& s, long long& out) {
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size() && out >= 1 && out <= kMaxWidth;
}

TransformerConfig read_transformer(hw::MapReader& m) {
  TransformerConfig t;
  t.name = m.text("name");
  t.style = m.choice("style", "gpt", {"gpt", "llama"});
  if (t.style.empty()) t.style = "gpt";  // reported
  t.layers = static_cast<int>(m.integer("layers", std::nullopt, 1, hw::kMaxLayers));
  // Sizes bounded to what a model has (the largest published d_model is ~25,600) and what the
  // builders' 32-bit counts hold: d_model 1e12 was truncated to 32 bits.
  t.d_model = m.integer("d_model", std::nullopt, 1, kMaxWidth);
  t.heads = static_cast<int>(m.integer("heads", std::nullopt, 1, 65536));
  t.kv_heads = static_cast<int>(m.integer("kv_heads", t.heads, 1, 65536));
  const bool explicit_head_dim = m.has("head_dim");
  t.head_dim =
      static_cast<int>(m.integer("head_dim", t.heads > 0 ? t.d_model / t.heads : 64, 1, 1024));
  if (!explicit_head_dim && t.heads > 0 && t.d_model <= kMaxWidth && t.d_model % t.heads != 0) {
    // head_dim = d_model / heads, as PyTorch's MultiheadAttention and HF models require.
    m.sink().add(*m.child("heads", false), m.key_path("heads"),
                 fmt::format("must divide d_model ({} / {} leaves {}), or give head_dim", t.d_model,
                             t.heads, t.d_model % t.heads));
  }
  t.ffn = m.integer("ffn", std::nullopt, 1, 4 * kMaxWidth);
  t.gated_mlp = m.boolean("gated_mlp", false);
  t.activation =
      m.choice("activation", t.gated_mlp ? "silu" : "gelu_tanh", {"gelu_tanh", "silu", "gelu"});
  t.vocab = m.integer("vocab", std::nullopt, 1, kMaxVocab);
  t.tied_embeddings = m.boolean("tied_embeddings", false);
  const std::string norm = m.choice("norm", "layernorm", {"layernorm", "rmsnorm"});
  t.norm = norm == "rmsnorm" ? NormType::kRmsNorm : NormType::kLayerNorm;
  t.bias = m.boolean("bias", t.norm == NormType::kLayerNorm);
  t.max_positions = m.integer("max_positions", std::nullopt, 1, kMaxPositions);
  t.position =
      m.choice("position", t.style == "llama" ? "rope" : "learned", {"learned", "rope", "none"});
  t.norm_impl = m.choice("norm_impl", t.norm == NormType::kRmsNorm ? "composed" : "fused",
                         {"fused", "composed"});
  if (t.norm == NormType::kLayerNorm && t.norm_impl == "composed")
    m.sink().add(*m.child("norm_impl", false), m.key_path("norm_impl"),
                 "composed is the Hugging Face RMSNorm's form: give norm: rmsnorm, or fused");
  t.loss_dtype = m.choice("loss_dtype", "bf16", {"bf16", "fp32"});
  // Mixture of experts: all of these need `experts`.
  t.experts = static_cast<int>(m.integer("experts", 0, 0, 1 << 16));
  t.top_k = static_cast<int>(m.integer("top_k", 1, 1, 1 << 16));
  t.expert_ffn = m.integer("expert_ffn", t.ffn, 1, 4 * kMaxWidth);
  t.shared_experts = static_cast<int>(m.integer("shared_experts", 0, 0, 1 << 16));
  t.shared_expert_ffn = m.integer("shared_expert_ffn", t.expert_ffn, 1, 4 * kMaxWidth);
  t.dense_layers = static_cast<int>(m.integer("dense_layers", 0, 0, hw::kMaxLayers));
  for (const char* k :
       {"top_k", "expert_ffn", "shared_experts", "shared_expert_ffn", "dense_layers"})
    if (t.experts == 0 && m.has(k))
      m.sink().add(*m.child(k, false), m.key_path(k),
                   "needs experts: (a mixture-of-experts model)");
  if (t.experts > 0 && t.top_k > t.experts)
    m.sink().add(*m.child("top_k", false), m.key_path("top_k"),
                 fmt::format("top_k {} is more than the {} experts", t.top_k, t.experts));
  if (t.experts > 0 && t.dense_layers >= t.layers && t.layers > 0)
    m.sink().add(*m.child("dense_layers", false), m.key_path("dense_layers"),
                 fmt::format("dense_layers {} leaves none of the {} layers with experts",
                             t.dense_layers, t.layers));
  if (t.experts == 0) t.top_k = 0, t.dense_layers = 0, t.shared_experts = 0;
  if (t.heads > 0 && t.kv_heads > 0 && t.heads % t.kv_heads != 0 && m.has("kv_heads"))
    m.sink().add(
        *m.child("kv_heads", false), m.key_path("kv_heads"),
        fmt::format("must divide heads ({} % {} = {})", t.heads, t.kv_heads, t.heads % t.kv_heads));
  return t;
}

DiffusionConfig read_diffusion(hw::MapReader& m) {
  DiffusionConfig d;
  d.name = m.text("name");
  d.dtype = m.text("dtype", "bf16");
  if (auto t = m.map("text_encoder")) {
    d.text.layers = static_cast<int>(t->integer("layers", std::nullopt, 1, hw::kMaxLayers));
    d.text.d_model = t->integer("d_model", std::nullopt, 1, kMaxWidth);
    d.text.heads = static_cast<int>(t->integer("heads", std::nullopt, 1, 65536));
    d.text.ffn = t->integer("ffn", std::nullopt, 1, 4 * kMaxWidth);
    d.text.vocab = t->integer("vocab", std::nullopt, 1, kMaxVocab);
    d.text.seq = t->integer("seq", std::nullopt, 1, kMaxPositions);
    d.text.batch = static_cast<int>(t->integer("batch", 2, 1, 1 << 20));
    d.text.gated_mlp = t->boolean("gated_mlp", false);
    t->finish();
  }
  if (auto n = m.map("denoiser")) {
    auto& x = d.denoiser;
    x.layers = static_cast<int>(n->integer("layers", std::nullopt, 1, hw::kMaxLayers));
    x.d_model = n->integer("d_model", std::nullopt, 1, kMaxWidth);
    x.heads = static_cast<int>(n->integer("heads", std::nullopt, 1, 65536));
    x.ffn = n->integer("ffn", std::nullopt, 1, 4 * kMaxWidth);
    x.latent_channels = static_cast<int>(n->integer("latent_channels", 4, 1, 4096));
    x.latent_frames = n->integer("latent_frames", 1, 1, 1 << 16);
    x.latent_height = n->integer("latent_height", std::nullopt, 1, 1 << 16);
    x.latent_width = n->integer("latent_width", std::nullopt, 1, 1 << 16);
    x.patch = static_cast<int>(n->integer("patch", 2, 1, 64));
    x.patch_t = static_cast<int>(n->integer("patch_t", 1, 1, 64));
    x.cfg_batch = static_cast<int>(n->integer("cfg_batch", 2, 1, 1024));
    x.cross_attention = n->boolean("cross_attention", false);
    n->finish();
  }
  if (auto v = m.map("vae")) {
    auto& x = d.vae;
    x.latent_channels =
        static_cast<int>(v->integer("latent_channels", d.denoiser.latent_channels, 1, 4096));
    x.frames = v->integer("frames", d.denoiser.latent_frames, 1, 1 << 16);
    x.temporal_kernel = static_cast<int>(v->integer("temporal_kernel", 1, 1, 7));
    x.temporal_upsample = static_cast<int>(v->integer("temporal_upsample", 1, 1, 16));
    x.conv_in = v->integer("conv_in", 512, 1, kMaxWidth);
    x.out_channels = static_cast<int>(v->integer("out_channels", 3, 1, 64));
    x.groups = static_cast<int>(v->integer("groups", 32, 1, 4096));
    if (const hw::ConfigNode* s = v->child("stages", true)) {
      if (s->kind != hw::ConfigNode::Kind::kSequence) {
        m.sink().add(*s, v->key_path("stages"), "expected a list of [c_in, c_out] pairs");
      } else {
        for (const auto& it : s->items) {
          if (it.kind != hw::ConfigNode::Kind::kSequence || it.items.size() != 2) {
            m.sink().add(it, v->key_path("stages"), "expected a pair [c_in, c_out]");
            continue;
          }
          long long c_in = 0, c_out = 0;
          if (parse_channels(it.items[0].scalar, c_in) &&
              parse_channels(it.items[1].scalar, c_out)) {
            x.stages.emplace_back(c_in, c_out);
          } else {
            m.sink().add(it, v->key_path("stages"),
                         fmt::format("expected whole channel counts in [1, {}], got [{}, {}]",
                                     kMaxWidth, it.items[0].scalar, it.items[1].scalar));
          }
        }
      }
    }
    v->finish();
  }
  d.video_encode_s = m.quantity("video_encode", hw::Dimension::kTime, 0.0, 0.0, 3600.0);
  return d;
}

}  // namespace

ModelConfig read_model_config(const hw::LoadedConfig& config) {
  hw::ErrorSink sink;
  ModelConfig out;
  out.files = config.files;
  std::vector<std::pair<std::string, std::string>> sources;
  hw::MapReader top(config.root, "", sink, &sources);
  if (auto m = top.map("model")) {
    out.source = m->has("source") ? m->node().find("source")->scalar : "";
    const std::string type = m->choice("type", "transformer", {"transformer", "diffusion"});
    if (type == "transformer") {
      out.model = read_transformer(*m);
    } else if (type == "diffusion") {
      out.model = read_diffusion(*m);
    } else {
      for (const auto& e : m->node().entries) m->ignore(e.first);  // depend on the type
    }
    m->finish();
  }
  top.finish();
  sink.throw_if_any();
  return out;
}

ModelConfig load_model_config(const std::string& name_or_path) {
  std::string path = name_or_path;
  if (!std::filesystem::exists(path)) {
    const std::string shipped = hw::config_dir() + "/models/" + name_or_path + ".yaml";
    if (std::filesystem::exists(shipped)) path = shipped;
  }
  return read_model_config(hw::load_config_file(path));
}

}  // namespace ridge::workloads
