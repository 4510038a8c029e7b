#include "workloads/model_config.hpp"

#include <fmt/format.h>

#include <charconv>
#include <filesystem>

#include "hw/gpu_loader.hpp"
#include "hw/limits.hpp"
#include "workloads/file_keys.hpp"

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

// Widths (d_model): the range workloads/file_keys.cpp gives model.d_model (a VAE stage's channels
// share it).
const long long kMaxWidth = file_key(model_keys(), "model.d_model").hi;

// An integer model key, its range from model_keys() (the table `ridge describe model` prints).
long long mint(hw::MapReader& r, std::string_view prefix, std::string_view key,
               std::optional<long long> fallback) {
  const FileKey& k = file_key(model_keys(), fmt::format("{}.{}", prefix, key));
  return r.integer(key, fallback, k.lo, k.hi);
}

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
  t.layers = static_cast<int>(mint(m, "model", "layers", std::nullopt));
  // Sizes bounded to what a model has (the largest published d_model is ~25,600) and what the
  // builders' 32-bit counts hold: d_model 1e12 was truncated to 32 bits.
  t.d_model = mint(m, "model", "d_model", std::nullopt);
  t.heads = static_cast<int>(mint(m, "model", "heads", std::nullopt));
  t.kv_heads = static_cast<int>(mint(m, "model", "kv_heads", t.heads));
  const bool explicit_head_dim = m.has("head_dim");
  t.head_dim =
      static_cast<int>(mint(m, "model", "head_dim", t.heads > 0 ? t.d_model / t.heads : 64));
  if (!explicit_head_dim && t.heads > 0 && t.d_model <= kMaxWidth && t.d_model % t.heads != 0) {
    // head_dim = d_model / heads, as PyTorch's MultiheadAttention and HF models require.
    const hw::ConfigNode* heads = m.child("heads", false);
    const hw::ConfigNode* width = m.child("d_model", false);
    m.sink().add(*heads, m.key_path("heads"),
                 fmt::format("must divide d_model ({} / {} leaves {}), or give head_dim", t.d_model,
                             t.heads, t.d_model % t.heads));
    // An overlay that changes one of the two: its own line is named too (the error stood only at
    // the base file's heads when an overlay set d_model).
    if (width && heads && width->file != heads->file)
      m.sink().add(*width, m.key_path("d_model"),
                   fmt::format("{} is not divisible by heads {} ({}:{})", t.d_model, t.heads,
                               heads->file, heads->line));
  }
  t.ffn = mint(m, "model", "ffn", std::nullopt);
  t.gated_mlp = m.boolean("gated_mlp", false);
  t.activation =
      m.choice("activation", t.gated_mlp ? "silu" : "gelu_tanh", {"gelu_tanh", "silu", "gelu"});
  t.vocab = mint(m, "model", "vocab", std::nullopt);
  t.tied_embeddings = m.boolean("tied_embeddings", false);
  const std::string norm = m.choice("norm", "layernorm", {"layernorm", "rmsnorm"});
  t.norm = norm == "rmsnorm" ? NormType::kRmsNorm : NormType::kLayerNorm;
  t.bias = m.boolean("bias", t.norm == NormType::kLayerNorm);
  t.max_positions = mint(m, "model", "max_positions", std::nullopt);
  t.position =
      m.choice("position", t.style == "llama" ? "rope" : "learned", {"learned", "rope", "none"});
  t.norm_impl = m.choice("norm_impl", t.norm == NormType::kRmsNorm ? "composed" : "fused",
                         {"fused", "composed"});
  if (t.norm == NormType::kLayerNorm && t.norm_impl == "composed")
    m.sink().add(*m.child("norm_impl", false), m.key_path("norm_impl"),
                 "composed is the Hugging Face RMSNorm's form: give norm: rmsnorm, or fused");
  t.loss_dtype = m.choice("loss_dtype", "bf16", {"bf16", "fp32"});
  // Mixture of experts: all of these need `experts`.
  t.experts = static_cast<int>(mint(m, "model", "experts", 0));
  t.top_k = static_cast<int>(mint(m, "model", "top_k", 1));
  t.expert_ffn = mint(m, "model", "expert_ffn", t.ffn);
  t.shared_experts = static_cast<int>(mint(m, "model", "shared_experts", 0));
  t.shared_expert_ffn = mint(m, "model", "shared_expert_ffn", t.expert_ffn);
  t.dense_layers = static_cast<int>(mint(m, "model", "dense_layers", 0));
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
    d.text.layers = static_cast<int>(mint(*t, "model.text_encoder", "layers", std::nullopt));
    d.text.d_model = mint(*t, "model.text_encoder", "d_model", std::nullopt);
    d.text.heads = static_cast<int>(mint(*t, "model.text_encoder", "heads", std::nullopt));
    d.text.ffn = mint(*t, "model.text_encoder", "ffn", std::nullopt);
    d.text.vocab = mint(*t, "model.text_encoder", "vocab", std::nullopt);
    d.text.seq = mint(*t, "model.text_encoder", "seq", std::nullopt);
    d.text.batch = static_cast<int>(mint(*t, "model.text_encoder", "batch", 2));
    d.text.gated_mlp = t->boolean("gated_mlp", false);
    t->finish();
  }
  if (auto n = m.map("denoiser")) {
    auto& x = d.denoiser;
    x.layers = static_cast<int>(mint(*n, "model.denoiser", "layers", std::nullopt));
    x.d_model = mint(*n, "model.denoiser", "d_model", std::nullopt);
    x.heads = static_cast<int>(mint(*n, "model.denoiser", "heads", std::nullopt));
    x.ffn = mint(*n, "model.denoiser", "ffn", std::nullopt);
    x.latent_channels = static_cast<int>(mint(*n, "model.denoiser", "latent_channels", 4));
    x.latent_frames = mint(*n, "model.denoiser", "latent_frames", 1);
    x.latent_height = mint(*n, "model.denoiser", "latent_height", std::nullopt);
    x.latent_width = mint(*n, "model.denoiser", "latent_width", std::nullopt);
    x.patch = static_cast<int>(mint(*n, "model.denoiser", "patch", 2));
    x.patch_t = static_cast<int>(mint(*n, "model.denoiser", "patch_t", 1));
    x.cfg_batch = static_cast<int>(mint(*n, "model.denoiser", "cfg_batch", 2));
    x.cross_attention = n->boolean("cross_attention", false);
    n->finish();
  }
  if (auto v = m.map("vae")) {
    auto& x = d.vae;
    x.latent_channels =
        static_cast<int>(mint(*v, "model.vae", "latent_channels", d.denoiser.latent_channels));
    x.frames = mint(*v, "model.vae", "frames", d.denoiser.latent_frames);
    x.temporal_kernel = static_cast<int>(mint(*v, "model.vae", "temporal_kernel", 1));
    x.temporal_upsample = static_cast<int>(mint(*v, "model.vae", "temporal_upsample", 1));
    x.conv_in = mint(*v, "model.vae", "conv_in", 512);
    x.out_channels = static_cast<int>(mint(*v, "model.vae", "out_channels", 3));
    x.groups = static_cast<int>(mint(*v, "model.vae", "groups", 32));
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

std::string resolve_study_model(const std::string& study_path, const std::string& name) {
  namespace fs = std::filesystem;
  // error_code forms: a name the file system refuses (over 255 bytes) is a missing file, reported
  // by the model loader, not a filesystem_error (found by fuzz_study: exit 1, no file or line).
  std::error_code ec;
  const fs::path rel = fs::path(study_path).parent_path() / name;
  if (fs::is_regular_file(rel, ec)) return rel.string();
  if (fs::is_regular_file(name, ec)) return name;
  const fs::path shipped = fs::path(hw::config_dir()) / "models" / (name + ".yaml");
  if (fs::exists(shipped, ec)) return shipped.string();
  return name;
}

ModelConfig load_model_config(const std::string& name_or_path) {
  std::string path = name_or_path;
  std::error_code ec;  // a name the file system refuses is a missing file, not an exception
  if (!std::filesystem::exists(path, ec)) {
    const std::string shipped = hw::config_dir() + "/models/" + name_or_path + ".yaml";
    if (std::filesystem::exists(shipped, ec)) path = shipped;
  }
  return read_model_config(hw::load_config_file(path));
}

}  // namespace ridge::workloads
