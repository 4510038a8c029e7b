#include "workloads/transformer.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "workloads/builder_util.hpp"

namespace ridge::workloads {

std::string_view recompute_name(Recompute r) {
  switch (r) {
    case Recompute::kNone:
      return "none";
    case Recompute::kSelective:
      return "selective";
    case Recompute::kFull:
      return "full";
  }
  return "?";
}

namespace {

using C = Category;

// Shapes of one layer's Linears: (name, d_in, d_out).
struct Linear {
  std::string name;
  long long d_in, d_out;
};

struct Shapes {
  long long b, s, T, d, q, kv, ffn;  // batch, seq, tokens, model dim, q width, kv width, ffn
  int H, KV, hd;
};

Shapes shapes(const TransformerConfig& m, long long b, long long s) {
  Shapes x{};
  x.b = b, x.s = s, x.T = b * s, x.d = m.d_model, x.H = m.heads, x.KV = m.kv_heads,
  x.hd = m.head_dim;
  x.q = static_cast<long long>(m.heads) * m.head_dim;
  x.kv = static_cast<long long>(m.kv_heads) * m.head_dim;
  x.ffn = m.ffn;
  return x;
}

// ---- training (autocast bf16 over fp32 master weights) ----

// A Linear's forward under autocast: casts (weight, bias, fp32 input) then the GEMM (bias
// epilogue). With bf16 weights (precision: mixed) the weight and bias need no cast.
void linear_fwd(Emitter& e, const TransformerConfig& m, const std::string& n, long long T,
                long long din, long long dout, bool fp32_input) {
  if (!e.bf16_weights) {
    e.cast(n + ".cast_w", din * dout, 4, 2);
    if (m.bias) e.cast(n + ".cast_b", dout, 4, 2);
  }
  if (fp32_input) e.cast(n + ".cast_x", T * din, 4, 2);
  e.gemm(n, T, dout, din);
}

// A Linear's backward: dX (m=T, n=d_in, k=d_out), dW (m=d_in, n=d_out, k=T), bias gradient (a
// column reduction of dY), the casts' backward (bf16 -> fp32 weight/bias gradients, and the input
// gradient back to fp32 when the input was fp32), and with gradient accumulation the add into
// .grad.
void linear_bwd(Emitter& e, const TransformerConfig& m, const std::string& n, long long T,
                long long din, long long dout, bool fp32_input, bool accumulate) {
  e.gemm(n + ".dX", T, din, dout);
  e.gemm(n + ".dW", din, dout, T);
  // Autocast: the weight is fp32, so its gradient is cast back; bf16 weights keep bf16 gradients.
  if (!e.bf16_weights) e.cast(n + ".dW.to_fp32", din * dout, 2, 4);
  if (m.bias) {
    e.pass(n + ".db", C::kElementwise, 2.0 * T * dout, 2.0 * dout, double(T * dout));
    if (!e.bf16_weights) e.cast(n + ".db.to_fp32", dout, 2, 4);
  }
  if (fp32_input) e.cast(n + ".dX.to_fp32", T * din, 2, 4);
  if (accumulate) {
    const char* gdt = e.bf16_weights ? "bf16" : "fp32";
    e.elementwise(n + ".grad_acc_w", "add", din * dout, gdt);
    if (m.bias) e.elementwise(n + ".grad_acc_b", "add", dout, gdt);
  }
}

void norm_fwd(Emitter& e, const TransformerConfig& m, const std::string& n, long long rows,
              bool fp32) {
  if (m.norm == NormType::kRmsNorm && m.norm_impl == "fused") {
    // nn.RMSNorm: one vectorized_layer_norm_kernel<rms> (models/op_framework).
    e.kernel(n, C::kElementwise, "torch_rmsnorm",
             {{"rows", rows},
              {"cols", m.d_model},
              {"dtype", fp32 ? "fp32" : "bf16"},
              {"impl", "fused"},
              {"pass", "fwd"}});
    return;
  }
  if (m.norm == NormType::kLayerNorm) {
    e.kernel(n, C::kElementwise, "layernorm",
             {{"rows", rows}, {"cols", m.d_model}, {"dtype", fp32 ? "fp32" : "bf16"}});
    return;
  }
  // HF-style explicit fp32 RMSNorm: x.float(), pow(2), mean(-1), + eps, rsqrt, mul, .to(bf16), w *.
  const long long N = rows * m.d_model;
  e.cast(n + ".to_fp32", N, 2, 4);
  e.elementwise(n + ".pow", "mul", N, "fp32");
  const int mean = e.row_reduction(n + ".mean", rows, m.d_model, true);  // pow's output
  e.graph().op(mean).eager_call = EagerCall::kReduction;
  e.elementwise(n + ".add_eps", "add", rows, "fp32");
  e.elementwise(n + ".rsqrt", "mul", rows, "fp32");
  e.elementwise(n + ".mul", "mul", N, "fp32");
  e.cast(n + ".to_bf16", N, 4, 2);
  e.elementwise(n + ".weight", "mul", N, "bf16");
}

void norm_bwd(Emitter& e, const TransformerConfig& m, const std::string& n, long long rows,
              bool accumulate) {
  if (m.norm == NormType::kRmsNorm && m.norm_impl == "fused") {
    // nn.RMSNorm's backward: layer_norm_grad_input_kernel_vectorized + GammaBeta (2 kernels).
    e.kernel(n + ".bwd", C::kElementwise, "torch_rmsnorm",
             {{"rows", rows},
              {"cols", m.d_model},
              {"dtype", "fp32"},
              {"impl", "fused"},
              {"pass", "bwd"}},
             2);
    if (accumulate) e.elementwise(n + ".grad_acc", "add", m.d_model, "fp32");
    return;
  }
  const double N = double(rows) * m.d_model;
  const int kernels =
      m.norm == NormType::kLayerNorm ? 1 : 4;  // explicit RMSNorm: its pieces' grads
  // dx: reads x and dy (fp32), writes dx; dgamma(/dbeta): a column reduction over rows.
  e.pass(n + ".bwd_dx", C::kElementwise, 8.0 * N, 4.0 * N, 8.0 * N, kernels);
  if (m.norm == NormType::kLayerNorm) {
    // PyTorch's GammaBetaBackwardCUDAKernelTemplate<float, 32, 32, 256>: one 32x32-thread block per
    // 32 columns, each looping over all rows (grid 24 at d = 768, 32 at d = 1024 in the e2e
    // timelines): only d/32 SMs pull the 8 bytes per element of x and dy.
    e.kernel(n + ".bwd_dw", C::kElementwise, "custom",
             {{"grid", (m.d_model + 31) / 32},
              {"block", 1024},
              {"bytes_read", 8.0 * N},
              {"bytes_written", 8.0 * m.d_model},
              {"flops_fp32", 4.0 * N}});
  } else {
    e.pass(n + ".bwd_dw", C::kElementwise, 8.0 * N, 8.0 * m.d_model, 2.0 * N);
  }
  if (accumulate) e.elementwise(n + ".grad_acc", "add", m.d_model, "fp32");
}

void rope(Emitter& e, const std::string& n, long long N) {
  // q * cos + cat(-x2, x1) * sin: mul, neg, cat, mul, add.
  e.elementwise(n + ".mul_cos", "mul", N);
  e.views(2);  // rotate_half: x[..., :h], x[..., h:]
  e.elementwise(n + ".neg", "mul", N / 2);
  const int cat = e.elementwise(n + ".cat", "copy", N);
  e.graph().op(cat).eager_call = EagerCall::kCat;
  e.elementwise(n + ".mul_sin", "mul", N);
  e.elementwise(n + ".add", "add", N);
}

void attention_fwd(Emitter& e, const TransformerConfig& m, const Shapes& x, bool train) {
  const bool rope_pos = m.position == "rope";
  if (m.style == "gpt") {
    linear_fwd(e, m, "attn.qkv", x.T, x.d, x.q + 2 * x.kv, train);
  } else {
    linear_fwd(e, m, "attn.q", x.T, x.d, x.q, false);
    linear_fwd(e, m, "attn.k", x.T, x.d, x.kv, false);
    linear_fwd(e, m, "attn.v", x.T, x.d, x.kv, false);
  }
  if (rope_pos) {
    rope(e, "attn.rope_q", x.T * x.q);
    rope(e, "attn.rope_k", x.T * x.kv);
  }
  e.kernel("attn.sdpa", C::kAttention, "attention",
           {{"batch", x.b},
            {"heads", x.H},
            {"kv_heads", x.KV},
            {"seq_q", x.s},
            {"head_dim", x.hd},
            {"causal", true},
            {"pass", "fwd"}});
  // y.transpose(1, 2).reshape(...) launches nothing: cuDNN's SDPA writes its output in the
  // query's stride order, [b, s, h, d] for q = x.view(b, s, h, d).transpose(1, 2), so the reshape
  // is a view (no copy kernel between SDPA and the projection in any e2e timeline).
  linear_fwd(e, m, "attn.proj", x.T, x.q, x.d, false);
}

// The MLP activation over n bf16 elements. gelu_tanh and silu keep the op sequence the e2e runs
// were matched with (elementwise gelu/silu, and a mul for the backward); the exact GELU is
// F.gelu(approximate='none') as models/op_framework times it, forward and backward.
void activation(Emitter& e, const TransformerConfig& m, const std::string& n, long long count,
                bool bwd) {
  if (m.activation == "gelu") {
    e.kernel(
        n, C::kElementwise, "torch_gelu",
        {{"n", count}, {"dtype", "bf16"}, {"approximate", "none"}, {"pass", bwd ? "bwd" : "fwd"}});
    return;
  }
  if (bwd)
    e.elementwise(n, "mul", count);
  else
    e.elementwise(n, m.activation == "silu" ? "silu" : "gelu", count);
}

void layer_fwd(Emitter& e, const TransformerConfig& m, const Shapes& x) {
  norm_fwd(e, m, "ln1", x.T, true);
  attention_fwd(e, m, x, true);
  e.elementwise("residual1", "add", x.T * x.d, "fp32");
  norm_fwd(e, m, "ln2", x.T, true);
  if (m.gated_mlp) {
    linear_fwd(e, m, "mlp.gate", x.T, x.d, x.ffn, m.norm == NormType::kLayerNorm);
    linear_fwd(e, m, "mlp.up", x.T, x.d, x.ffn, false);
    activation(e, m, "mlp.act", x.T * x.ffn, false);
    e.elementwise("mlp.mul", "mul", x.T * x.ffn);
  } else {
    linear_fwd(e, m, "mlp.up", x.T, x.d, x.ffn, m.norm == NormType::kLayerNorm);
    activation(e, m, "mlp.act", x.T * x.ffn, false);
  }
  linear_fwd(e, m, "mlp.down", x.T, x.ffn, x.d, false);
  e.elementwise("residual2", "add", x.T * x.d, "fp32");
}

void layer_bwd(Emitter& e, const TransformerConfig& m, const Shapes& x, bool acc) {
  const bool ln = m.norm == NormType::kLayerNorm;
  linear_bwd(e, m, "mlp.down", x.T, x.ffn, x.d, false, acc);
  if (m.gated_mlp) {
    e.elementwise("mlp.mul.bwd", "mul", 2 * x.T * x.ffn);
    activation(e, m, "mlp.act.bwd", x.T * x.ffn, true);
    linear_bwd(e, m, "mlp.up", x.T, x.d, x.ffn, false, acc);
    linear_bwd(e, m, "mlp.gate", x.T, x.d, x.ffn, ln, acc);
    e.elementwise("mlp.dX_sum", "add", x.T * x.d);
  } else {
    activation(e, m, "mlp.act.bwd", x.T * x.ffn, true);
    linear_bwd(e, m, "mlp.up", x.T, x.d, x.ffn, ln, acc);
  }
  norm_bwd(e, m, "ln2", x.T, acc);
  e.elementwise("residual2.grad_sum", "add", x.T * x.d, "fp32");
  linear_bwd(e, m, "attn.proj", x.T, x.q, x.d, false, acc);
  // The reshape's and transpose's backward are views too (see attention_fwd).
  // FlashAttention backward: dot(dO, O) preprocessing, the main kernel, dQ conversion.
  e.kernel("attn.sdpa.bwd", C::kAttention, "attention",
           {{"batch", x.b},
            {"heads", x.H},
            {"kv_heads", x.KV},
            {"seq_q", x.s},
            {"head_dim", x.hd},
            {"causal", true},
            {"pass", "bwd"}},
           3);
  if (m.position == "rope") {
    e.elementwise("attn.rope_q.bwd", "mul", 2 * x.T * x.q);
    e.elementwise("attn.rope_k.bwd", "mul", 2 * x.T * x.kv);
  }
  if (m.style == "gpt") {
    // q, k, v came from one fused projection by split(): their gradients are concatenated
    // (CatArrayBatchedCopy in the e2e timelines) before the projection's backward.
    e.elementwise("attn.qkv.grad_cat", "copy", x.T * (x.q + 2 * x.kv));
    linear_bwd(e, m, "attn.qkv", x.T, x.d, x.q + 2 * x.kv, true, acc);
  } else {
    linear_bwd(e, m, "attn.v", x.T, x.d, x.kv, false, acc);
    linear_bwd(e, m, "attn.k", x.T, x.d, x.kv, false, acc);
    linear_bwd(e, m, "attn.q", x.T, x.d, x.q, false, acc);
    e.elementwise("attn.dX_sum", "add", 2 * x.T * x.d);
  }
  norm_bwd(e, m, "ln1", x.T, acc);
  e.elementwise("residual1.grad_sum", "add", x.T * x.d, "fp32");
}

void micro_batch(Emitter& e, const TransformerConfig& m, const TrainOptions& o, int mb) {
  const Shapes x = shapes(m, o.micro_batch, o.seq);
  const bool acc = mb > 0;
  const std::string mbp = o.grad_accum > 1 ? fmt::format("mb{}.", mb) : "";
  e.layer = -1;
  e.prefix = mbp;
  e.host_path = HostPath::kAutogradForward;
  // Embeddings run in fp32 (autocast leaves embedding alone).
  if (m.position == "learned")
    e.kernel("embed.arange", C::kElementwise, "elementwise",
             {{"op", "copy"}, {"n", o.seq}, {"dtype", "fp32"}});
  e.kernel("embed.tokens", C::kElementwise, "embedding",
           {{"tokens", x.T}, {"dim", x.d}, {"vocab", m.vocab}, {"dtype", "fp32"}});
  if (m.position == "learned") {
    e.kernel("embed.positions", C::kElementwise, "embedding",
             {{"tokens", o.seq}, {"dim", x.d}, {"vocab", m.max_positions}, {"dtype", "fp32"}});
    e.elementwise("embed.add", "add", x.T * x.d, "fp32");
  }
  for (int l = 0; l < m.layers; ++l) {
    e.layer = l;
    e.prefix = mbp + fmt::format("layer{}.", l);
    layer_fwd(e, m, x);
  }
  e.layer = -1;
  e.prefix = mbp;
  norm_fwd(e, m, "ln_f", x.T, true);
  linear_fwd(e, m, "lm_head", x.T, x.d, m.vocab, true);
  // F.cross_entropy on the bf16 logits under autocast, as its kernels run (e2e timelines of
  // validate/e2e/train_gpt.py, validate/data/h200/e2e_run4/timelines.tar.gz): log_softmax in bf16
  // with fp32 accumulation (cunn_SoftMaxForward<bf16, float, bf16>), its output cast to fp32, then
  // nll_loss (one 512-thread block gathering the targets' log-probabilities).
  const double TV = static_cast<double>(x.T) * static_cast<double>(m.vocab);
  const double T = static_cast<double>(x.T);
  if (m.loss_dtype == "fp32") {
    // loss_dtype fp32: F.cross_entropy(logits.float(), targets) (Hugging Face's loss): the cast,
    // log_softmax and nll_loss in fp32, and their backward, as models/op_framework times them.
    const nlohmann::json ce = {
        {"rows", x.T}, {"vocab", m.vocab}, {"logits_dtype", "bf16"}, {"loss_dtype", "fp32"}};
    nlohmann::json fwd = ce, bwd = ce;
    fwd["pass"] = "fwd";
    bwd["pass"] = "bwd";
    e.kernel("loss.cross_entropy", C::kElementwise, "torch_cross_entropy", fwd, 3);
    e.host_path = HostPath::kAutogradBackward;
    e.elementwise("loss.backward_seed", "copy", 1, "fp32");
    e.kernel("loss.cross_entropy.bwd", C::kElementwise, "torch_cross_entropy", bwd, 4);
  } else {
    e.kernel("loss.log_softmax", C::kElementwise, "softmax",
             {{"rows", x.T}, {"cols", m.vocab}, {"dtype", "bf16"}});
    e.cast("loss.to_fp32", x.T * m.vocab, 2, 4);
    const auto nll = [&](const std::string& name, double written) {
      e.kernel(name, C::kElementwise, "custom",
               {{"grid", 1},
                {"block", 512},
                {"bytes_read", 12.0 * T},
                {"bytes_written", written},
                {"flops_fp32", T}});
    };
    nll("loss.nll", 4.0);
    // loss.backward(): from here on the autograd engine launches every kernel. nll_loss's backward
    // scatters -1/T into a zeroed fp32 gradient of the logits' size (a fill of T x V), which is
    // cast back to bf16 for log_softmax's backward.
    e.host_path = HostPath::kAutogradBackward;
    e.elementwise("loss.backward_seed", "copy", 1, "fp32");
    e.pass("loss.grad_zeros", C::kElementwise, 0.0, 4.0 * TV, 0.0);
    nll("loss.nll.bwd", 4.0 * T);
    e.cast("loss.grad_to_bf16", x.T * m.vocab, 4, 2);
    e.pass("loss.log_softmax.bwd", C::kElementwise, 4.0 * TV, 2.0 * TV, 3.0 * TV);
  }
  {
    // The LM head has no bias; with tied embeddings its dW accumulates into the embedding's grad.
    TransformerConfig nobias = m;
    nobias.bias = false;
    linear_bwd(e, nobias, "lm_head", x.T, x.d, m.vocab, true, acc);
  }
  norm_bwd(e, m, "ln_f", x.T, acc);
  for (int l = m.layers - 1; l >= 0; --l) {
    e.layer = l;
    e.prefix = mbp + fmt::format("layer{}.", l);
    if (o.recompute == Recompute::kFull) {
      e.prefix = mbp + fmt::format("layer{}.recompute.", l);
      layer_fwd(e, m, x);
      e.prefix = mbp + fmt::format("layer{}.", l);
    }
    // Selective recomputation (Korthikanti et al. 2022) recomputes the attention core; with
    // FlashAttention its backward already recomputes the scores, so it adds no kernel here.
    layer_bwd(e, m, x, acc);
  }
  e.layer = -1;
  e.prefix = mbp;
  // embedding_dense_backward: sort indices, segment offsets, per-segment sums, scatter.
  e.kernel("embed.tokens.bwd", C::kElementwise, "embedding",
           {{"tokens", x.T}, {"dim", x.d}, {"vocab", m.vocab}, {"dtype", "fp32"}, {"pass", "bwd"}},
           5);
  if (m.tied_embeddings) e.elementwise("embed.tokens.grad_sum", "add", m.vocab * x.d, "fp32");
  if (m.position == "learned") {
    e.kernel("embed.positions.bwd", C::kElementwise, "embedding",
             {{"tokens", o.seq},
              {"dim", x.d},
              {"vocab", m.max_positions},
              {"dtype", "fp32"},
              {"pass", "bwd"}},
             5);
  }
  e.host_path = HostPath::kPlain;
}

// ---- inference (bf16 weights, inference_mode) ----

void infer_layer(Emitter& e, const TransformerConfig& m, const Shapes& x, long long kv_len,
                 bool prefill) {
  // Host-only calls around the kernels (eager): the layer's and the norm's module calls, the
  // attention module call, q/k/v .view().transpose(), rotate_half's slices (in rope), the cache
  // slices, o.transpose().reshape(), the MLP's module calls.
  e.views(2);
  norm_fwd(e, m, "input_norm", x.T, false);
  e.views(1);
  if (m.style == "gpt") {
    e.gemm("attn.qkv", x.T, x.q + 2 * x.kv, x.d);
    e.splits(1);
    e.views(6);
  } else {
    e.gemm("attn.q", x.T, x.q, x.d);
    e.views(2);
    e.gemm("attn.k", x.T, x.kv, x.d);
    e.views(2);
    e.gemm("attn.v", x.T, x.kv, x.d);
    e.views(2);
  }
  if (m.position == "rope") {
    rope(e, "attn.rope_q", x.T * x.q);
    rope(e, "attn.rope_k", x.T * x.kv);
  }
  // k_cache.index_copy_(2, pos, k) and v: reads the new rows, writes them into the cache.
  e.pass("attn.cache_k", C::kMemoryCopy, 2.0 * x.T * x.kv + 8.0 * x.s, 2.0 * x.T * x.kv);
  e.pass("attn.cache_v", C::kMemoryCopy, 2.0 * x.T * x.kv + 8.0 * x.s, 2.0 * x.T * x.kv);
  if (!prefill) e.views(2);  // k_cache[:, :, :kv_len], v_cache[...]
  e.kernel("attn.sdpa", C::kAttention, "attention",
           {{"batch", x.b},
            {"heads", x.H},
            {"kv_heads", x.KV},
            {"seq_q", x.s},
            {"seq_kv", kv_len},
            {"head_dim", x.hd},
            {"causal", prefill},
            {"pass", "fwd"}});
  e.views(2);  // o.transpose(1, 2).reshape(...): views (see attention_fwd)
  e.gemm("attn.o", x.T, x.d, x.q);
  e.elementwise("residual1", "add", x.T * x.d);
  e.views(1);
  norm_fwd(e, m, "post_norm", x.T, false);
  e.views(1);
  if (m.gated_mlp) {
    e.gemm("mlp.gate", x.T, x.ffn, x.d);
    e.elementwise("mlp.act", m.activation == "silu" ? "silu" : "gelu", x.T * x.ffn);
    e.gemm("mlp.up", x.T, x.ffn, x.d);
    e.elementwise("mlp.mul", "mul", x.T * x.ffn);
  } else {
    e.gemm("mlp.up", x.T, x.ffn, x.d);
    e.elementwise("mlp.act", m.activation == "silu" ? "silu" : "gelu", x.T * x.ffn);
  }
  e.gemm("mlp.down", x.T, x.d, x.ffn);
  e.elementwise("residual2", "add", x.T * x.d);
}

// The single-GPU builders have dense MLPs only: a mixture-of-experts model runs in a parallel
// study (workloads/parallel.hpp), where its experts, router and all-to-alls are built.
void require_dense(const TransformerConfig& m) {
  if (m.is_moe())
    throw std::invalid_argument(fmt::format(
        "{}: a mixture-of-experts model ({} experts) runs only in a study with a parallel: block "
        "(the single-GPU workloads build dense MLPs)",
        m.name, m.experts));
}

Graph build_inference(const TransformerConfig& m, const InferenceOptions& o, bool prefill) {
  require_dense(m);
  Graph g;
  Emitter e(g);
  const long long s = prefill ? o.prompt : 1;
  const long long kv_len = prefill ? o.prompt : o.context + 1;
  const Shapes x = shapes(m, o.batch, s);
  e.kernel("embed.tokens", C::kElementwise, "embedding",
           {{"tokens", x.T}, {"dim", x.d}, {"vocab", m.vocab}, {"dtype", "bf16"}});
  if (m.position == "rope") {
    // cos/sin tables: index_select by position (fp32) and .to(bf16), once per forward.
    for (const char* t : {"cos", "sin"}) {
      e.pass(fmt::format("rope.{}.index_select", t), C::kElementwise, 4.0 * s * x.hd,
             4.0 * s * x.hd);
      e.cast(fmt::format("rope.{}.to_bf16", t), s * x.hd, 4, 2);
    }
  } else {
    e.kernel("embed.positions", C::kElementwise, "embedding",
             {{"tokens", s}, {"dim", x.d}, {"vocab", m.max_positions}, {"dtype", "bf16"}});
    e.elementwise("embed.add", "add", x.T * x.d);
  }
  for (int l = 0; l < m.layers; ++l) {
    e.layer = l;
    e.prefix = fmt::format("layer{}.", l);
    infer_layer(e, m, x, kv_len, prefill);
  }
  e.layer = -1;
  e.prefix = "";
  const long long rows = o.batch;  // prefill keeps the last token only (x[:, -1:])
  e.views(prefill ? 2 : 1);        // x[:, -1:, :] in prefill; the norm's module call
  norm_fwd(e, m, "final_norm", rows, false);
  e.gemm("lm_head", rows, m.vocab, x.d);
  // A captured prefill (o.cuda_graph) holds the loop's greedy first token too: argmax and the
  // copy into the token buffer are in the graph (validate/e2e/serve_llama.py --graphs). The eager
  // prefill's argmax stays outside Ridge's step, as the e2e prefill cases time it.
  if (!prefill || o.cuda_graph) {
    e.views(1);  // logits[:, -1, :]
    e.pass("sample.argmax", C::kElementwise, 2.0 * rows * m.vocab, 8.0 * rows,
           double(rows * m.vocab));
    e.elementwise("sample.copy_token", "copy", rows, "fp32");
    if (o.cuda_graph) {
      g.captured_begin = 0;
      g.captured_end = static_cast<int>(g.size());
    }
  }
  g.add(host_node("host.synchronize", NodeKind::kSync));
  return g;
}

}  // namespace

Graph build_train_step(const TransformerConfig& m, const TrainOptions& o) {
  require_dense(m);
  Graph g;
  Emitter e(g);
  e.bf16_weights = o.bf16_weights;
  // opt.zero_grad(set_to_none=True): host work only, walking every parameter tensor.
  OpNode zero = host_node("optimizer.zero_grad", NodeKind::kHost);
  zero.host_tensors = static_cast<int>(m.tensor_count());
  e.add(zero);
  for (int mb = 0; mb < o.grad_accum; ++mb) micro_batch(e, m, o, mb);
  e.layer = -1;
  e.prefix = "";
  // torch.optim.AdamW(fused=True): step counters (one _foreach_add_), then _fused_adamw_ over all
  // tensors in multi-tensor-apply chunks (one launch per chunk).
  e.elementwise("optimizer.step_count", "add", m.tensor_count(), "fp32");
  // multi_tensor_apply: 65536-element chunks, at most 320 blocks and 36 tensors (depth-4 lists) per
  // launch.
  const long long by_chunks = (m.parameter_count() / 65536 + 320) / 320;
  const long long by_tensors = (m.tensor_count() + 35) / 36;
  const int chunks = static_cast<int>(std::max(by_chunks, by_tensors));
  const int adamw = e.kernel(
      "optimizer.adamw", C::kOptimizer, "adamw",
      {{"params", m.parameter_count()}, {"grad_dtype", o.bf16_weights ? "bf16" : "fp32"}}, chunks);
  g.op(adamw).host_tensors = static_cast<int>(m.tensor_count());
  // bf16 weights: the updated fp32 master copy is written back to the model's bf16 weights.
  if (o.bf16_weights) e.cast("optimizer.master_to_bf16", m.parameter_count(), 4, 2);
  g.add(host_node("host.synchronize", NodeKind::kSync));
  return g;
}

Graph build_prefill(const TransformerConfig& m, const InferenceOptions& o) {
  return build_inference(m, o, true);
}
Graph build_decode_step(const TransformerConfig& m, const InferenceOptions& o) {
  return build_inference(m, o, false);
}

}  // namespace ridge::workloads
