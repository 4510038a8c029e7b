#include "workloads/model_config.hpp"

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

long long TransformerConfig::parameter_count() const {
  long long p = vocab * d_model + layers * layer_parameter_count();
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

TransformerConfig read_transformer(hw::MapReader& m) {
  TransformerConfig t;
  t.name = m.text("name");
  t.style = m.text("style", "gpt");
  if (t.style != "gpt" && t.style != "llama")
    m.sink().add(*m.child("style", false), m.key_path("style"), "expected gpt or llama");
  t.layers = static_cast<int>(m.integer("layers", std::nullopt, 1, hw::kMaxLayers));
  t.d_model = m.integer("d_model", std::nullopt, 1);
  t.heads = static_cast<int>(m.integer("heads", std::nullopt, 1, 65536));
  t.kv_heads = static_cast<int>(m.integer("kv_heads", t.heads, 1, 65536));
  t.head_dim =
      static_cast<int>(m.integer("head_dim", t.heads > 0 ? t.d_model / t.heads : 64, 1, 1024));
  t.ffn = m.integer("ffn", std::nullopt, 1);
  t.gated_mlp = m.boolean("gated_mlp", false);
  t.activation = m.text("activation", t.gated_mlp ? "silu" : "gelu_tanh");
  if (t.activation != "gelu_tanh" && t.activation != "silu" && m.has("activation"))
    m.sink().add(*m.child("activation", false), m.key_path("activation"),
                 "expected gelu_tanh or silu");
  t.vocab = m.integer("vocab", std::nullopt, 1);
  t.tied_embeddings = m.boolean("tied_embeddings", false);
  const std::string norm = m.text("norm", "layernorm");
  if (norm == "layernorm")
    t.norm = NormType::kLayerNorm;
  else if (norm == "rmsnorm")
    t.norm = NormType::kRmsNorm;
  else
    m.sink().add(*m.child("norm", false), m.key_path("norm"), "expected layernorm or rmsnorm");
  t.bias = m.boolean("bias", t.norm == NormType::kLayerNorm);
  t.max_positions = m.integer("max_positions", std::nullopt, 1);
  t.position = m.text("position", t.style == "llama" ? "rope" : "learned");
  if (t.position != "learned" && t.position != "rope" && m.has("position"))
    m.sink().add(*m.child("position", false), m.key_path("position"), "expected learned or rope");
  if (t.heads > 0 && t.kv_heads > 0 && t.heads % t.kv_heads != 0 && m.has("kv_heads"))
    m.sink().add(*m.child("kv_heads", false), m.key_path("kv_heads"), "must divide heads");
  return t;
}

DiffusionConfig read_diffusion(hw::MapReader& m) {
  DiffusionConfig d;
  d.name = m.text("name");
  d.dtype = m.text("dtype", "bf16");
  if (auto t = m.map("text_encoder")) {
    d.text.layers = static_cast<int>(t->integer("layers", std::nullopt, 1, hw::kMaxLayers));
    d.text.d_model = t->integer("d_model", std::nullopt, 1);
    d.text.heads = static_cast<int>(t->integer("heads", std::nullopt, 1, 65536));
    d.text.ffn = t->integer("ffn", std::nullopt, 1);
    d.text.vocab = t->integer("vocab", std::nullopt, 1);
    d.text.seq = t->integer("seq", std::nullopt, 1);
    d.text.batch = static_cast<int>(t->integer("batch", 2, 1, 1 << 20));
    d.text.gated_mlp = t->boolean("gated_mlp", false);
    t->finish();
  }
  if (auto n = m.map("denoiser")) {
    auto& x = d.denoiser;
    x.layers = static_cast<int>(n->integer("layers", std::nullopt, 1, hw::kMaxLayers));
    x.d_model = n->integer("d_model", std::nullopt, 1);
    x.heads = static_cast<int>(n->integer("heads", std::nullopt, 1, 65536));
    x.ffn = n->integer("ffn", std::nullopt, 1);
    x.latent_channels = static_cast<int>(n->integer("latent_channels", 4, 1, 4096));
    x.latent_frames = n->integer("latent_frames", 1, 1);
    x.latent_height = n->integer("latent_height", std::nullopt, 1);
    x.latent_width = n->integer("latent_width", std::nullopt, 1);
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
    x.frames = v->integer("frames", d.denoiser.latent_frames, 1);
    x.temporal_kernel = static_cast<int>(v->integer("temporal_kernel", 1, 1, 7));
    x.temporal_upsample = static_cast<int>(v->integer("temporal_upsample", 1, 1, 16));
    x.conv_in = v->integer("conv_in", 512, 1);
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
          try {
            x.stages.emplace_back(std::stoll(it.items[0].scalar), std::stoll(it.items[1].scalar));
          } catch (const std::exception&) {
            m.sink().add(it, v->key_path("stages"), "expected integer channel counts");
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
    const std::string type = m->text("type", "transformer");
    if (type == "transformer") {
      out.model = read_transformer(*m);
    } else if (type == "diffusion") {
      out.model = read_diffusion(*m);
    } else {
      sink.add(*m->child("type", false), m->key_path("type"), "expected transformer or diffusion");
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
