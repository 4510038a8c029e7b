#include "workloads/diffusion.hpp"

#include <fmt/format.h>

#include "workloads/builder_util.hpp"

namespace ridge::workloads {
namespace {

using C = Category;

void text_encoder(Emitter& e, const TextEncoderConfig& t) {
  const long long T = t.batch * t.seq, d = t.d_model;
  e.prefix = "text.";
  e.kernel("embed", C::kElementwise, "embedding", {{"tokens", T}, {"dim", d}, {"vocab", t.vocab}});
  e.elementwise("pos_add", "add", T * d);
  for (int l = 0; l < t.layers; ++l) {
    e.prefix = fmt::format("text.layer{}.", l);
    e.layer = l;
    e.views(1);  // the block's module call
    e.kernel("ln1", C::kElementwise, "layernorm", {{"rows", T}, {"cols", d}});
    e.gemm("attn.qkv", T, 3 * d, d);
    e.splits(1);  // .split(C, dim=2), then q, k, v .view().transpose()
    e.views(6);
    e.kernel("attn.sdpa", C::kAttention, "attention",
             {{"batch", t.batch}, {"heads", t.heads}, {"seq_q", t.seq}, {"head_dim", d / t.heads}});
    // y.transpose(1, 2).reshape(B, T, C): views, cuDNN's SDPA output is already [B, T, H, D]
    // in memory (no copy kernel before the projection in the e2e timeline).
    e.views(2);
    e.gemm("attn.proj", T, d, d);
    e.elementwise("residual1", "add", T * d);
    e.kernel("ln2", C::kElementwise, "layernorm", {{"rows", T}, {"cols", d}});
    if (t.gated_mlp) {
      e.gemm("mlp.gate", T, t.ffn, d);
      e.elementwise("mlp.act", "gelu", T * t.ffn);
      e.gemm("mlp.up", T, t.ffn, d);
      e.elementwise("mlp.mul", "mul", T * t.ffn);
    } else {
      e.gemm("mlp.up", T, t.ffn, d);
      e.elementwise("mlp.act", "gelu", T * t.ffn);
    }
    e.gemm("mlp.down", T, d, t.ffn);
    e.elementwise("residual2", "add", T * d);
  }
  e.layer = -1;
  e.prefix = "text.";
  e.kernel("ln_f", C::kElementwise, "layernorm", {{"rows", T}, {"cols", d}});
}

void modulate(Emitter& e, const std::string& n, long long B, long long N, long long d) {
  e.views(2);  // scale.unsqueeze(1), shift.unsqueeze(1)
  e.elementwise(n + ".one_plus_scale", "add", B * d);
  e.elementwise(n + ".mul_scale", "mul", B * N * d);
  e.elementwise(n + ".add_shift", "add", B * N * d);
}

void denoiser(Emitter& e, const DiffusionConfig& m, const std::string& prefix) {
  const DenoiserConfig& x = m.denoiser;
  const long long B = x.cfg_batch, N = x.tokens(), d = x.d_model, BN = B * N;
  const long long patch_in =
      static_cast<long long>(x.latent_channels) * x.patch * x.patch * x.patch_t;
  const int hd = static_cast<int>(d / x.heads);
  const long long Lt = m.text.seq;
  e.prefix = prefix;
  e.layer = -1;
  e.views(2);  // patchify: reshape, permute (then the reshape's copy)
  e.elementwise("patchify", "copy", BN * patch_in);
  e.gemm("x_embed", BN, d, patch_in);
  e.elementwise("pos_add", "add", BN * d);
  // Timestep embedding: t.float() * freqs, cos, sin, cat, .to(bf16); then the t-MLP and text proj.
  for (const char* k : {"t.mul", "t.cos", "t.sin", "t.cat"}) {
    const int id = e.elementwise(k, "mul", B * 256, "fp32");
    if (std::string_view(k) == "t.cat") e.graph().op(id).eager_call = EagerCall::kCat;
  }
  e.cast("t.to_bf16", B * 256, 4, 2);
  e.gemm("t.fc1", B, d, 256);
  e.elementwise("t.silu", "silu", B * d);
  e.gemm("t.fc2", B, d, d);
  e.gemm("y_proj", B, d, m.text.d_model);
  e.elementwise("c_add", "add", B * d);
  for (int l = 0; l < x.layers; ++l) {
    e.prefix = prefix + fmt::format("block{}.", l);
    e.layer = l;
    e.views(1);  // the block's module call
    e.elementwise("adaLN.silu", "silu", B * d);
    e.gemm("adaLN", B, 6 * d, d);
    e.splits(1);  // .chunk(6, dim=1)
    e.kernel("norm1", C::kElementwise, "layernorm", {{"rows", BN}, {"cols", d}});
    modulate(e, "mod1", B, N, d);
    e.gemm("attn.qkv", BN, 3 * d, d);
    e.views(2);   // qkv .reshape(...).permute(...)
    e.splits(1);  // .unbind(0)
    e.kernel("attn.sdpa", C::kAttention, "attention",
             {{"batch", B}, {"heads", x.heads}, {"seq_q", N}, {"head_dim", hd}});
    e.views(2);  // a.transpose(1, 2).reshape(B, T, d): views (as in the text encoder)
    e.gemm("attn.proj", BN, d, d);
    e.views(1);  // g_msa.unsqueeze(1)
    e.elementwise("attn.gate", "mul", BN * d);
    e.elementwise("residual1", "add", BN * d);
    if (x.cross_attention) {
      e.kernel("xattn.norm", C::kElementwise, "layernorm", {{"rows", BN}, {"cols", d}});
      e.gemm("xattn.q", BN, d, d);
      e.gemm("xattn.kv", B * Lt, 2 * d, m.text.d_model);
      e.kernel("xattn.sdpa", C::kAttention, "attention",
               {{"batch", B}, {"heads", x.heads}, {"seq_q", N}, {"seq_kv", Lt}, {"head_dim", hd}});
      e.views(2);  // transpose + reshape of the output: views
      e.gemm("xattn.o", BN, d, d);
      e.elementwise("xattn.residual", "add", BN * d);
    }
    e.kernel("norm2", C::kElementwise, "layernorm", {{"rows", BN}, {"cols", d}});
    modulate(e, "mod2", B, N, d);
    e.gemm("mlp.fc1", BN, x.ffn, d);
    e.elementwise("mlp.gelu", "gelu", BN * x.ffn);
    e.gemm("mlp.fc2", BN, d, x.ffn);
    e.views(1);  // g_mlp.unsqueeze(1)
    e.elementwise("mlp.gate", "mul", BN * d);
    e.elementwise("residual2", "add", BN * d);
  }
  e.prefix = prefix;
  e.layer = -1;
  e.elementwise("final.silu", "silu", B * d);
  e.gemm("final.adaLN", B, 2 * d, d);
  e.splits(1);  // .chunk(2, dim=1)
  e.kernel("final.norm", C::kElementwise, "layernorm", {{"rows", BN}, {"cols", d}});
  modulate(e, "final.mod", B, N, d);
  e.gemm("final.out", BN, patch_in, d);
  e.views(2);  // unpatchify: reshape, permute (then the reshape's copy)
  e.elementwise("unpatchify", "copy", BN * patch_in);
}

void sampler_step(Emitter& e, const DiffusionConfig& m, int i) {
  const DenoiserConfig& x = m.denoiser;
  const long long lat = x.latent_channels * x.latent_frames * x.latent_height * x.latent_width;
  e.prefix = fmt::format("step{}.", i);
  e.layer = -1;
  const int cat = e.elementwise("cat_cfg", "copy", x.cfg_batch * lat);
  e.graph().op(cat).eager_call = EagerCall::kCat;
  e.views(2);  // ts[i:i+1].expand(B)
  e.elementwise("t_index", "copy", 2, "fp32");
  denoiser(e, m, fmt::format("step{}.dit.", i));
  e.prefix = fmt::format("step{}.", i);
  e.layer = -1;
  // x = x - (1/K) (e_u + g (e_c - e_u)): chunk(2), then sub, mul, add, mul, sub.
  e.splits(1);
  for (const char* k : {"cfg.sub", "cfg.scale", "cfg.add", "step.scale", "step.sub"})
    e.elementwise(k, "add", lat);
}

void vae_decode(Emitter& e, const DiffusionConfig& m) {
  const VaeConfig& v = m.vae;
  long long h = m.denoiser.latent_height, w = m.denoiser.latent_width;
  const long long out_frames = m.output_frames();
  const int kt = v.temporal_kernel;
  e.prefix = "vae.";
  e.layer = -1;
  e.elementwise("channels_last", "copy", v.frames * v.latent_channels * h * w);
  // Layout changes (eager PyTorch, channels_last weights): a transpose is an elementwise copy
  // whose reads each fall in a different 32-byte sector (stride 16 bf16 elements).
  auto transpose = [&](const std::string& n, long long elems) {
    e.kernel(n, C::kElementwise, "elementwise",
             {{"op", "copy"}, {"n", elems}, {"dtype", "bf16"}, {"stride", 16}}, 1, 0);
  };
  // cuDNN's implicit GEMM, then the bias as its own broadcast add (read and write the output).
  auto conv = [&](const std::string& n, long long frames, long long hh, long long ww, long long cin,
                  long long cout) {
    e.kernel(n, C::kGemm, "conv2d",
             {{"batch", frames}, {"h", hh}, {"w", ww}, {"c_in", cin * kt}, {"c_out", cout}});
    const double out = 2.0 * frames * hh * ww * cout;
    e.pass(n + ".bias", C::kElementwise, out, out, out / 2, 1);
    e.graph().op(static_cast<int>(e.graph().size()) - 1).host_dispatches = 0;
  };
  // GroupNorm over a channels_last tensor (native_group_norm wants NCHW): the transpose to NCHW,
  // the row moments with one block per (image, group) -- 32 blocks for one image, so it cannot
  // use the whole GPU's bandwidth --, the fused scale/shift, and the normalise pass. The moments
  // kernel (RowwiseMomentsCUDAKernel<bf16>) loads one bf16 per thread per iteration of a strided
  // Welford loop: 2-byte loads, one in flight per thread.
  auto group_norm = [&](const std::string& n, long long frames, long long elems) {
    transpose(n + ".to_nchw", elems);
    e.kernel(n + ".moments", C::kElementwise, "custom",
             {{"grid", frames * v.groups},
              {"block", 512},
              {"bytes_read", 2.0 * elems},
              {"bytes_written", 8.0 * frames * v.groups},
              {"flops_fp32", 2.0 * elems},
              {"ilp", 1},
              {"load_bytes", 2}},
             1, 1);
    e.kernel(n + ".params", C::kElementwise, "custom",
             {{"grid", 1}, {"block", 256}, {"bytes_read", 64.0}, {"bytes_written", 64.0}}, 1, 0);
    e.pass(n + ".apply", C::kElementwise, 2.0 * elems, 2.0 * elems, 2.0 * elems, 1);
    e.graph().op(static_cast<int>(e.graph().size()) - 1).host_dispatches = 0;
  };
  conv("conv_in", v.frames, h, w, v.latent_channels, v.conv_in);
  int si = 0;
  bool nchw = false;  // conv_in's output is channels_last; the stages leave NCHW after GroupNorm
  for (auto [cin, cout] : v.stages) {
    const long long f = out_frames;
    h *= 2;
    w *= 2;
    const std::string s = fmt::format("stage{}.", si++);
    e.elementwise(s + "upsample", "copy", f * cin * h * w);
    if (nchw) transpose(s + "to_nhwc1", f * cin * h * w);
    conv(s + "conv1", f, h, w, cin, cout);
    group_norm(s + "gn1", f, f * cout * h * w);
    e.elementwise(s + "silu1", "silu", f * cout * h * w);
    transpose(s + "to_nhwc2", f * cout * h * w);
    conv(s + "conv2", f, h, w, cout, cout);
    group_norm(s + "gn2", f, f * cout * h * w);
    e.elementwise(s + "silu2", "silu", f * cout * h * w);
    nchw = true;
  }
  const long long last_c = v.stages.empty() ? v.conv_in : v.stages.back().second;
  if (nchw) transpose("to_nhwc_out", out_frames * last_c * h * w);
  conv("conv_out", out_frames, h, w, last_c, v.out_channels);
  const long long px = out_frames * v.out_channels * h * w;
  // ((x.float() * 0.5 + 0.5).clamp(0, 1) * 255).to(uint8)
  e.cast("post.to_fp32", px, 2, 4);
  for (const char* k : {"post.mul", "post.add", "post.clamp", "post.scale"})
    e.elementwise(k, "mul", px, "fp32");
  e.cast("post.to_uint8", px, 4, 1);
}

void add_sync(Graph& g, const std::string& name) {
  g.add(host_node(name, NodeKind::kSync));
}

}  // namespace

Graph build_diffusion_pipeline(const DiffusionConfig& m, const DiffusionOptions& o) {
  Graph g;
  Emitter e(g);
  if (o.include_text) text_encoder(e, m.text);
  for (int i = 0; i < o.steps; ++i) sampler_step(e, m, i);
  if (o.include_vae) {
    vae_decode(e, m);
    // host.copy_(frame, non_blocking=True) into pinned memory: a copy-engine transfer.
    OpNode c;
    c.name = "d2h_frames";
    c.kind = NodeKind::kCopy;
    c.category = Category::kMemoryCopy;
    const long long bytes = m.output_frames() * m.output_height() * m.output_width() * 3;
    c.op = models::OpSpec::from_json("copy", {{"bytes", bytes}, {"direction", "d2h"}});
    e.prefix = "";
    e.add(c);
  }
  add_sync(g, "host.synchronize");
  if (m.video_encode_s > 0) {
    OpNode enc = host_node("video_encode", NodeKind::kHost);
    enc.fixed_time_s = m.video_encode_s;
    g.add(enc);
  }
  return g;
}

Graph build_denoiser_call(const DiffusionConfig& m) {
  Graph g;
  Emitter e(g);
  denoiser(e, m, "dit.");
  add_sync(g, "host.synchronize");
  return g;
}

Graph build_text_encoder_call(const DiffusionConfig& m) {
  Graph g;
  Emitter e(g);
  text_encoder(e, m.text);
  add_sync(g, "host.synchronize");
  return g;
}

Graph build_vae_decode_call(const DiffusionConfig& m) {
  Graph g;
  Emitter e(g);
  vae_decode(e, m);
  add_sync(g, "host.synchronize");
  return g;
}

}  // namespace ridge::workloads
