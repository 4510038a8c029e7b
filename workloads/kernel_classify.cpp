#include "workloads/kernel_classify.hpp"

#include <algorithm>
#include <cstdio>
#include <numeric>

namespace ridge::workloads {
namespace {

bool has(std::string_view s, std::string_view w) {
  return s.find(w) != std::string_view::npos;
}

// Saturating product (a damaged trace's dims must not overflow): negative dims count as 0.
int64_t mul_sat(int64_t a, int64_t b) {
  constexpr int64_t kMax = int64_t{1} << 62;
  if (a <= 0 || b <= 0) return 0;
  return a > kMax / b ? kMax : a * b;
}

int64_t numel(const std::vector<int64_t>& d) {
  int64_t n = 1;
  for (int64_t x : d) n = mul_sat(n, x);
  return n;
}

const std::vector<int64_t>* dims(const CpuOp* op, std::size_t i) {
  if (!op || i >= op->input_dims.size()) return nullptr;
  return &op->input_dims[i];
}

std::string_view type_at(const CpuOp* op, std::size_t i) {
  if (!op || i >= op->input_types.size()) return {};
  return op->input_types[i];
}

std::optional<models::OpSpec> make(std::string_view kind, const nlohmann::json& p) {
  try {
    return models::OpSpec::from_json(kind, p);
  } catch (const std::invalid_argument&) {
    return std::nullopt;  // sizes out of the vocabulary's ranges: keep it as a custom op
  }
}

std::optional<models::OpSpec> map_gemm(const CpuOp* op) {
  if (!op) return std::nullopt;
  const std::string& n = op->name;
  std::size_t a = 0, b = 1;
  if (n == "aten::addmm" || n == "aten::baddbmm" || n == "aten::addbmm")
    a = 1, b = 2;
  else if (n != "aten::mm" && n != "aten::bmm" && n != "aten::matmul" && n != "aten::linear")
    return std::nullopt;
  const auto* da = dims(op, a);
  const auto* db = dims(op, b);
  if (!da || !db || da->size() < 2 || db->size() < 2) return std::nullopt;
  const std::string_view dt = dtype_of(type_at(op, a));
  if (dt.empty()) return std::nullopt;
  int64_t m = 0, k = 0, nn = 0, batch = 1;
  if (n == "aten::linear") {  // x [..., K], weight [N, K]
    k = da->back();
    m = numel(*da) / std::max<int64_t>(1, k);
    nn = (*db)[0];
  } else {
    m = (*da)[da->size() - 2], k = da->back(), nn = db->back();
    if (m < 1 || k < 1) return std::nullopt;
    if (da->size() > 2) batch = numel(*da) / mul_sat(m, k);
    if (n == "aten::matmul" && db->size() == 2 && da->size() > 2) m = mul_sat(m, batch), batch = 1;
  }
  if (m < 1 || nn < 1 || k < 1 || batch < 1) return std::nullopt;
  return make("gemm", {{"m", m}, {"n", nn}, {"k", k}, {"batch", batch}, {"dtype", dt}});
}

// Index of the is_causal argument of the aten attention ops (native_functions.yaml signatures).
int causal_arg(const std::string& n) {
  if (n == "aten::_cudnn_attention_forward") return 10;
  if (n == "aten::_cudnn_attention_backward") return 14;
  if (n == "aten::_scaled_dot_product_cudnn_attention") return 6;
  if (n == "aten::_scaled_dot_product_flash_attention") return 4;
  if (n == "aten::_scaled_dot_product_efficient_attention") return 5;
  if (n == "aten::_flash_attention_forward") return 8;
  if (n == "aten::_flash_attention_backward") return 12;
  if (n == "aten::scaled_dot_product_attention") return 4;
  return -1;
}

std::optional<models::OpSpec> map_attention(const GpuActivity& a, const CpuOp* op) {
  if (!op || !has(op->name, "attention")) return std::nullopt;
  const std::string& nm = a.name;
  const bool main = has(nm, "fprop") || has(nm, "bprop") || has(nm, "flash_fwd") ||
                    has(nm, "flash_bwd") || has(nm, "fmha") || has(nm, "attention_kernel");
  if (!main) return std::nullopt;
  const bool bwd = has(op->name, "backward");
  const std::size_t qi = bwd ? 1 : 0, ki = bwd ? 2 : 1;
  const auto* q = dims(op, qi);
  const auto* k = dims(op, ki);
  if (!q || !k || q->size() != 4 || k->size() != 4) return std::nullopt;
  const std::string_view dt = dtype_of(type_at(op, qi));
  if (dt != "bf16" && dt != "fp16") return std::nullopt;
  bool causal = false;
  const int ci = causal_arg(op->name);
  if (ci >= 0 && static_cast<std::size_t>(ci) < op->concrete_inputs.size())
    causal = op->concrete_inputs[static_cast<std::size_t>(ci)] == "True";
  return make("attention", {{"batch", (*q)[0]},
                            {"heads", (*q)[1]},
                            {"kv_heads", (*k)[1]},
                            {"seq_q", (*q)[2]},
                            {"seq_kv", (*k)[2]},
                            {"head_dim", (*q)[3]},
                            {"causal", causal},
                            {"dtype", dt},
                            {"pass", bwd ? "bwd" : "fwd"}});
}

std::optional<models::OpSpec> map_elementwise(const GpuActivity& a, const CpuOp* op) {
  if (!op || !has(a.name, "elementwise_kernel")) return std::nullopt;
  int64_t n = 0;
  std::size_t at = 0;
  for (std::size_t i = 0; i < op->input_dims.size(); ++i) {
    if (op->input_dims[i].empty()) continue;  // scalars
    const int64_t e = numel(op->input_dims[i]);
    if (e > n) n = e, at = i;
  }
  if (n < 1) return std::nullopt;
  std::string_view dt = dtype_of(type_at(op, at));
  if (dt.empty() || dt == "tf32" || dt == "fp8_e4m3") return std::nullopt;
  if (has(a.name, "FillFunctor"))  // writes only
    return make("membw", {{"kind", "write"},
                          {"bytes", mul_sat(n, static_cast<int64_t>(models::dtype_bytes(dt)))}});
  int full = 0;  // tensor inputs of the full size
  for (const auto& d : op->input_dims)
    if (!d.empty() && numel(d) == n) ++full;
  std::string f;
  const std::string& nm = a.name;
  if (has(nm, "Backward") || has(nm, "backward"))
    f = full >= 2 ? "add" : "copy";
  else if (has(nm, "gelu") || has(nm, "Gelu"))
    f = "gelu";
  else if (has(nm, "silu"))
    f = "silu";
  else if (has(nm, "relu") || has(nm, "clamp"))
    f = "relu";
  else if (has(nm, "MulFunctor") || has(nm, "mul_kernel"))
    f = full >= 2 ? "mul" : "copy";
  else if (has(nm, "add") || has(nm, "Add"))
    f = full >= 2 ? "add" : "copy";
  else if (has(nm, "copy"))
    f = "copy";
  else
    f = full >= 2 ? "add" : "copy";
  return make("elementwise", {{"op", f}, {"n", n}, {"dtype", dt}});
}

std::optional<models::OpSpec> map_rows(std::string_view kind, const CpuOp* op) {
  const auto* x = dims(op, 0);
  if (!x || x->empty()) return std::nullopt;
  const std::string_view dt = dtype_of(type_at(op, 0));
  if (dt != "bf16" && dt != "fp16" && dt != "fp32") return std::nullopt;
  const int64_t cols = x->back();
  return make(kind,
              {{"rows", numel(*x) / std::max<int64_t>(1, cols)}, {"cols", cols}, {"dtype", dt}});
}

// "[1, 1]" -> 1 when both entries agree; -1 otherwise.
int64_t square_arg(const CpuOp* op, std::size_t i) {
  if (!op || i >= op->concrete_inputs.size()) return -1;
  const std::string& s = op->concrete_inputs[i];
  int64_t a = -1, b = -1;
  if (std::sscanf(s.c_str(), "[%ld, %ld]", &a, &b) != 2 || a != b) return -1;
  return a;
}

// aten::cudnn_convolution(input [N, C, H, W], weight [K, C, R, S], padding, stride, dilation,
// groups, ...): dims are logical (NCHW) whatever the memory format.
std::optional<models::OpSpec> map_conv(const CpuOp* op) {
  if (!op || (op->name != "aten::cudnn_convolution" && op->name != "aten::_convolution" &&
              op->name != "aten::convolution"))
    return std::nullopt;
  const auto* x = dims(op, 0);
  const auto* w = dims(op, 1);
  if (!x || !w || x->size() != 4 || w->size() != 4 || (*w)[2] != (*w)[3]) return std::nullopt;
  const std::string_view dt = dtype_of(type_at(op, 0));
  if (dt != "bf16" && dt != "fp16" && dt != "fp32") return std::nullopt;
  // Argument positions: cudnn_convolution(input, weight, padding, stride, dilation, groups, ...);
  // convolution / _convolution(input, weight, bias, stride, padding, dilation, transposed, ...).
  const bool cudnn = op->name == "aten::cudnn_convolution";
  const int64_t pad = square_arg(op, cudnn ? 2 : 4);
  const int64_t stride = square_arg(op, cudnn ? 3 : 3);
  const int64_t dilation = square_arg(op, cudnn ? 4 : 5);
  if (pad < 0 || stride < 1 || dilation != 1 || (*w)[1] != (*x)[1]) return std::nullopt;
  return make("conv2d", {{"batch", (*x)[0]},
                         {"c_in", (*x)[1]},
                         {"h", (*x)[2]},
                         {"w", (*x)[3]},
                         {"c_out", (*w)[0]},
                         {"r", (*w)[2]},
                         {"s", (*w)[3]},
                         {"stride", stride},
                         {"pad", pad},
                         {"dtype", dt}});
}

}  // namespace

std::string_view dtype_of(std::string_view t) {
  if (t == "c10::BFloat16") return "bf16";
  if (t == "c10::Half") return "fp16";
  if (t == "float") return "fp32";
  if (t == "c10::Float8_e4m3fn") return "fp8_e4m3";
  return {};
}

std::string classify_kernel(const GpuActivity& a) {
  if (a.kind == GpuActivityKind::kMemcpy) return "copy";
  if (a.kind == GpuActivityKind::kMemset) return "memset";
  const std::string& n = a.name;
  if (has(n, "nccl") || has(n, "Nccl") || !a.collective.empty()) return "communication";
  if (has(n, "fprop_implicit_gemm") || has(n, "dgrad") || has(n, "wgrad") || has(n, "convolve") ||
      has(n, "conv2d") || has(n, "implicit_convolve"))
    return "conv";
  if (has(n, "flash") || has(n, "fmha") || has(n, "sdpa") || has(n, "attention") ||
      has(n, "cudnn::fusion"))
    return "attention";
  if (has(n, "nvjet") || has(n, "gemm") || has(n, "cutlass") || has(n, "gemv") ||
      has(n, "splitKreduce") || has(n, "cublas"))
    return "gemm";
  if (has(n, "layer_norm") || has(n, "LayerNorm") || has(n, "rms_norm") || has(n, "RmsNorm") ||
      has(n, "GroupNorm") || has(n, "RowwiseMoments") || has(n, "GammaBeta") ||
      has(n, "ComputeFusedParams") || has(n, "batch_norm"))
    return "norm";
  if (has(n, "SoftMax") || has(n, "softmax") || has(n, "Softmax")) return "softmax";
  if (has(n, "reduce_kernel") || has(n, "Reduce")) return "reduction";
  if (has(n, "multi_tensor_apply") || has(n, "FusedOptimizer") || has(n, "adam"))
    return "optimizer";
  if (has(n, "elementwise") || has(n, "CatArray") || has(n, "gather") || has(n, "index") ||
      has(n, "upsample") || has(n, "Fill"))
    return "elementwise";
  return "other";
}

std::optional<models::OpSpec> map_kernel(const GpuActivity& a, const std::string& cls,
                                         const CpuOp* op, bool main_kernel) {
  if (cls == "copy") {
    if (a.bytes < 1) return std::nullopt;
    const std::string& n = a.name;
    std::string dir = "d2d", mem = "device";
    if (has(n, "HtoD"))
      dir = "h2d";
    else if (has(n, "DtoH"))
      dir = "d2h";
    else if (!has(n, "DtoD"))
      return std::nullopt;  // peer or array copies: not in the vocabulary
    if (dir != "d2d") mem = has(n, "Pageable") ? "pageable" : "pinned";
    return make("copy", {{"bytes", a.bytes}, {"direction", dir}, {"memory", mem}});
  }
  if (cls == "memset") {
    if (a.bytes < 1) return std::nullopt;
    return make("membw", {{"kind", "write"}, {"bytes", a.bytes}});
  }
  if (!main_kernel) return std::nullopt;
  if (cls == "gemm") {
    if (has(a.name, "splitKreduce")) return std::nullopt;
    return map_gemm(op);
  }
  if (cls == "attention") return map_attention(a, op);
  if (cls == "conv") {
    if (has(a.name, "dgrad") || has(a.name, "wgrad")) return std::nullopt;  // backward passes
    return map_conv(op);
  }
  if (cls == "elementwise") return map_elementwise(a, op);
  if (cls == "norm") {
    if (!op || has(a.name, "grad") || has(a.name, "Backward") || has(a.name, "backward"))
      return std::nullopt;
    if (op->name == "aten::native_layer_norm" || op->name == "aten::layer_norm")
      return map_rows("layernorm", op);
    if (has(op->name, "rms_norm")) return map_rows("rmsnorm", op);
    return std::nullopt;
  }
  if (cls == "softmax") {
    if (!op || has(a.name, "Backward") || has(a.name, "backward")) return std::nullopt;
    if (op->name != "aten::_softmax" && op->name != "aten::softmax" &&
        op->name != "aten::_log_softmax" && op->name != "aten::log_softmax")
      return std::nullopt;
    return map_rows("softmax", op);
  }
  if (cls == "reduction") {
    const auto* x = dims(op, 0);
    if (!x || x->empty()) return std::nullopt;
    const std::string_view dt = dtype_of(type_at(op, 0));
    if (dt.empty()) return std::nullopt;
    const auto bytes = mul_sat(numel(*x), static_cast<int64_t>(models::dtype_bytes(dt)));
    return make("membw", {{"kind", "read"}, {"bytes", bytes}});
  }
  return std::nullopt;
}

models::OpSpec custom_op(const GpuActivity& a) {
  auto prod = [](const std::array<int64_t, 3>& d) {
    int64_t p = 1;
    for (int64_t x : d) p = mul_sat(p, std::max<int64_t>(1, x));
    return p;
  };
  // A block occupies whole warps: its threads rounded up to a multiple of 32 (the custom op's
  // block must be one).
  const int64_t threads = (std::clamp<int64_t>(prod(a.block), 1, 1024) + 31) / 32 * 32;
  nlohmann::json p = {{"grid", std::max<int64_t>(1, prod(a.grid))},
                      {"block", threads},
                      {"registers", std::clamp<int64_t>(a.registers, 1, 255)},
                      {"shared_bytes", std::clamp<int64_t>(a.shared_bytes, 0, 1 << 20)}};
  try {
    return models::OpSpec::from_json("custom", p);
  } catch (const std::invalid_argument&) {
    // Out of the custom op's ranges (a grid beyond 2^53 blocks): the smallest custom op; the
    // measured duration is what times it anyway.
    return models::OpSpec::from_json("custom", {{"grid", 1}, {"block", 32}});
  }
}

}  // namespace ridge::workloads
