#include "models/op.hpp"

#include "hw/limits.hpp"
#include "models/op_cost.hpp"
#include "models/op_framework.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <stdexcept>

namespace ridge::models {
namespace {

using P = ParamType;
const std::vector<std::string_view> kGemmDtypes = {"fp32", "tf32",     "fp16",
                                                   "bf16", "fp8_e4m3", "fp8_e5m2"};
const std::vector<std::string_view> kFloatDtypes = {"fp32", "fp16", "bf16"};
constexpr double kBig = 9.007199254740992e15;

std::vector<OpDecl> with_framework_ops(std::vector<OpDecl> v) {
  append_framework_ops(v);  // the torch_* ops (models/op_framework)
  return v;
}

const std::vector<OpDecl>& table() {
  static const std::vector<OpDecl> t = with_framework_ops({
      {"gemm",
       "C[m,n] = A[m,k] B[k,n] through the vendor BLAS (cuBLASLt), optionally batched",
       {{"m", P::kInt, "", {}, 1, kBig, "rows of A and C"},
        {"n", P::kInt, "", {}, 1, kBig, "columns of B and C"},
        {"k", P::kInt, "", {}, 1, kBig, "reduction dimension"},
        {"dtype", P::kEnum, "bf16", kGemmDtypes, 0, 0,
         "input precision; fp32 runs on CUDA cores, tf32 on tensor cores"},
        {"batch", P::kInt, "1", {}, 1, kBig, "independent GEMMs of the same shape in one launch"},
        {"trans_a", P::kBool, "false", {}, 0, 1, "A stored transposed"},
        {"trans_b", P::kBool, "false", {}, 0, 1, "B stored transposed"}}},
      {"elementwise",
       "y = op(x[, x2]) over n elements",
       {{"op",
         P::kEnum,
         "",
         {"copy", "add", "mul", "relu", "gelu", "silu"},
         0,
         0,
         "the function; add and mul read two inputs"},
        {"n", P::kInt, "", {}, 1, kBig, "output elements"},
        {"dtype", P::kEnum, "bf16", kFloatDtypes, 0, 0, "element type"},
        {"stride", P::kInt, "1", {}, 1, 1 << 20, "element stride of the reads (1 = coalesced)"},
        {"buffers",
         P::kInt,
         "0",
         {},
         0,
         kBig,
         "buffer sets repeated runs rotate over (0: inputs come from HBM; n > 0: L2-resident "
         "when n sets of the lines read, and the output, fit in L2)"}}},
      {"softmax",
       "row softmax of a rows x cols matrix",
       {{"rows", P::kInt, "", {}, 1, kBig, ""},
        {"cols", P::kInt, "", {}, 1, kBig, ""},
        {"dtype", P::kEnum, "bf16", kFloatDtypes, 0, 0, ""}}},
      {"layernorm",
       "LayerNorm over the last dimension (mean, variance, scale and shift)",
       {{"rows", P::kInt, "", {}, 1, kBig, ""},
        {"cols", P::kInt, "", {}, 1, kBig, ""},
        {"dtype", P::kEnum, "bf16", kFloatDtypes, 0, 0, ""}}},
      {"rmsnorm",
       "RMSNorm over the last dimension",
       {{"rows", P::kInt, "", {}, 1, kBig, ""},
        {"cols", P::kInt, "", {}, 1, kBig, ""},
        {"dtype", P::kEnum, "bf16", kFloatDtypes, 0, 0, ""}}},
      {"attention",
       "flash-style fused attention; seq_q = 1 is a decode step against a KV cache",
       {{"batch", P::kInt, "1", {}, 1, kBig, ""},
        {"heads", P::kInt, "", {}, 1, 1 << 16, "query heads"},
        {"kv_heads", P::kInt, "0", {}, 0, 1 << 16, "key/value heads (GQA); 0 = heads"},
        {"seq_q", P::kInt, "", {}, 1, kBig, "query positions"},
        {"seq_kv", P::kInt, "0", {}, 0, kBig, "key/value positions; 0 = seq_q"},
        {"head_dim", P::kInt, "128", {}, 1, 1024, ""},
        {"causal",
         P::kBool,
         "false",
         {},
         0,
         1,
         "causal mask (queries aligned to the end of the keys)"},
        {"dtype", P::kEnum, "bf16", {"fp16", "bf16", "fp8_e4m3"}, 0, 0, ""},
        {"pass", P::kEnum, "fwd", {"fwd", "fwd_bwd", "bwd"}, 0, 0, "forward, backward, or both"}}},
      {"copy",
       "a memory copy by a copy engine (cudaMemcpyAsync)",
       {{"bytes", P::kInt, "", {}, 1, kBig, ""},
        {"direction", P::kEnum, "d2d", {"d2d", "h2d", "d2h"}, 0, 0, ""},
        {"memory",
         P::kEnum,
         "pinned",
         {"pinned", "pageable", "device"},
         0,
         0,
         "host memory kind (h2d, d2h); device for d2d"}}},
      {"embedding",
       "gather of token rows from an embedding table",
       {{"tokens", P::kInt, "", {}, 1, kBig, ""},
        {"dim", P::kInt, "", {}, 1, kBig, ""},
        {"vocab", P::kInt, "", {}, 1, kBig, ""},
        {"dtype", P::kEnum, "bf16", kFloatDtypes, 0, 0, ""},
        {"pass", P::kEnum, "fwd", {"fwd", "bwd"}, 0, 0, "bwd scatters gradients into the table"}}},
      {"cross_entropy",
       "softmax cross-entropy loss over logits (forward and its gradient)",
       {{"rows", P::kInt, "", {}, 1, kBig, ""},
        {"vocab", P::kInt, "", {}, 1, kBig, ""},
        {"dtype", P::kEnum, "bf16", kFloatDtypes, 0, 0, ""},
        {"pass", P::kEnum, "fwd", {"fwd", "bwd"}, 0, 0, ""}}},
      {"adamw",
       "fused AdamW step over a parameter count (fp32 master weights and moments)",
       {{"params", P::kInt, "", {}, 1, kBig, "parameters updated"},
        {"grad_dtype", P::kEnum, "fp32", kFloatDtypes, 0, 0, "gradient precision"}}},
      {"conv2d",
       "2-D convolution as an implicit GEMM, NHWC",
       {{"batch", P::kInt, "1", {}, 1, kBig, ""},
        {"h", P::kInt, "", {}, 1, kBig, "input height"},
        {"w", P::kInt, "", {}, 1, kBig, "input width"},
        {"c_in", P::kInt, "", {}, 1, kBig, ""},
        {"c_out", P::kInt, "", {}, 1, kBig, ""},
        {"r", P::kInt, "3", {}, 1, 64, "filter height"},
        {"s", P::kInt, "3", {}, 1, 64, "filter width"},
        {"stride", P::kInt, "1", {}, 1, 64, ""},
        {"pad", P::kInt, "1", {}, 0, 64, ""},
        {"dtype", P::kEnum, "bf16", kFloatDtypes, 0, 0, ""}}},
      {"custom",
       "a user's own kernel as a raw descriptor",
       {{"grid", P::kInt, "", {}, 1, kBig, "blocks"},
        {"block", P::kInt, "256", {}, 1, 1024, "threads per block"},
        {"registers", P::kInt, "32", {}, 1, 255, "registers per thread"},
        {"shared_bytes", P::kInt, "0", {}, 0, 1 << 20, "shared memory per block"},
        {"flops_tensor", P::kFloat, "0", {}, 0, 1e30, "tensor-core FLOPs, whole kernel"},
        {"tensor_dtype",
         P::kEnum,
         "bf16",
         {"tf32", "fp16", "bf16", "fp8_e4m3", "fp8_e5m2"},
         0,
         0,
         ""},
        {"flops_fp32", P::kFloat, "0", {}, 0, 1e30, "FP32 FLOPs on CUDA cores"},
        {"flops_fp64", P::kFloat, "0", {}, 0, 1e30, "FP64 FLOPs"},
        {"sfu_ops", P::kFloat, "0", {}, 0, 1e30, "special-function operations (exp, rsqrt, ...)"},
        {"bytes_read", P::kFloat, "0", {}, 0, 1e30, "bytes read from global memory"},
        {"bytes_written", P::kFloat, "0", {}, 0, 1e30, "bytes written to global memory"},
        {"stride",
         P::kInt,
         "1",
         {},
         1,
         1 << 20,
         "access stride in elements of 4 bytes (1 = coalesced)"},
        {"reuse",
         P::kFloat,
         "1",
         {},
         1,
         1e9,
         "times each distinct byte is read (by other blocks: L2 can serve)"},
        {"ilp", P::kInt, "1", {}, 1, 64, "independent memory operations in flight per thread"},
        {"load_bytes",
         P::kInt,
         "16",
         {},
         1,
         16,
         "bytes one thread loads per memory operation (16: 128-bit vector loads; 2: scalar "
         "bf16)"},
        {"just_written",
         P::kFloat,
         "0",
         {},
         0,
         1e30,
         "bytes of bytes_read that the kernel before this one wrote: L2 serves them when they "
         "fit in it (a norm's reduction reading the tensor the step before produced)"}}},
      // Microbenchmark ops, measured by validate/ridge-bench.
      {"membw",
       "streaming read, write or copy of a buffer",
       {{"kind", P::kEnum, "copy", {"read", "write", "copy"}, 0, 0, ""},
        {"bytes", P::kInt, "", {}, 1, kBig, "buffer size (a copy moves twice this)"},
        {"buffers",
         P::kInt,
         "1",
         {},
         1,
         kBig,
         "buffers the repetitions rotate over (1: the same buffer, L2-resident when it fits)"}}},
      {"launch",
       "launch cost of empty kernels",
       {{"kind",
         P::kEnum,
         "bare",
         {"bare", "dependent", "eager", "graph", "per_call", "back_to_back"},
         0,
         0,
         "bare: host cost of one launch; dependent: GPU time per kernel, queue pre-filled; eager: "
         "the same "
         "issued live; graph: per kernel in a graph replay; per_call: one kernel timed alone; "
         "back_to_back: "
         "a tiny kernel repeated"},
        {"kernels", P::kInt, "1", {}, 1, kBig, ""}}},
  });
  return t;
}

[[noreturn]] void bad(std::string_view kind, std::string_view key, const std::string& what) {
  throw std::invalid_argument(fmt::format("{}: {}: {}", kind, key, what));
}

nlohmann::json parse_value(std::string_view kind, const ParamDecl& d, std::string_view text) {
  switch (d.type) {
    case P::kInt: {
      double v = 0;
      auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
      if (ec != std::errc() || p != text.data() + text.size() || v != std::floor(v)) {
        bad(kind, d.name, fmt::format("expected an integer, got '{}'", text));
      }
      if (v < d.lo || v > d.hi)
        bad(kind, d.name, fmt::format("{} is out of range [{}, {}]", text, d.lo, d.hi));
      return static_cast<long long>(v);
    }
    case P::kFloat: {
      double v = 0;
      auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
      if (ec != std::errc() || p != text.data() + text.size() || !std::isfinite(v)) {
        bad(kind, d.name, fmt::format("expected a number, got '{}'", text));
      }
      if (v < d.lo || v > d.hi)
        bad(kind, d.name, fmt::format("{} is out of range [{}, {}]", text, d.lo, d.hi));
      return v;
    }
    case P::kBool:
      if (text == "true" || text == "1" || text == "yes") return true;
      if (text == "false" || text == "0" || text == "no") return false;
      bad(kind, d.name, fmt::format("expected true or false, got '{}'", text));
    case P::kEnum:
      if (std::find(d.choices.begin(), d.choices.end(), text) == d.choices.end()) {
        bad(kind, d.name,
            fmt::format("expected one of {}, got '{}'", fmt::join(d.choices, "|"), text));
      }
      return std::string(text);
  }
  return nullptr;
}

std::string nearest(std::string_view key, const OpDecl& decl) {
  std::string best;
  size_t best_d = 99;
  for (const auto& p : decl.params) {
    // Small edit distance by common prefix/suffix is enough for parameter names.
    size_t d = 0;
    const size_t n = std::max(key.size(), p.name.size());
    for (size_t i = 0; i < n; ++i)
      d += (i >= key.size() || i >= p.name.size() || key[i] != p.name[i]);
    if (d < best_d) {
      best_d = d;
      best = p.name;
    }
  }
  return best_d <= 2 ? best : std::string();
}

}  // namespace

std::span<const OpDecl> op_vocabulary() {
  return table();
}

const OpDecl* find_op(std::string_view kind) {
  for (const auto& d : table())
    if (d.kind == kind) return &d;
  return nullptr;
}

long long OpSpec::i(std::string_view name) const {
  return params_.at(std::string(name)).get<long long>();
}
double OpSpec::f(std::string_view name) const {
  return params_.at(std::string(name)).get<double>();
}
bool OpSpec::b(std::string_view name) const {
  return params_.at(std::string(name)).get<bool>();
}
const std::string& OpSpec::s(std::string_view name) const {
  return params_.at(std::string(name)).get_ref<const std::string&>();
}

std::string OpSpec::str() const {
  std::string out = kind_;
  if (!decl_) return out;
  for (const auto& p : decl_->params) {
    const auto& v = params_.at(std::string(p.name));
    out += ' ';
    out += p.name;
    out += '=';
    out += v.is_string() ? v.get<std::string>() : v.dump();
  }
  return out;
}

struct OpBuilder {
  static OpSpec build(std::string_view kind,
                      const std::vector<std::pair<std::string, std::string>>& kv) {
    const OpDecl* decl = find_op(kind);
    if (!decl) {
      std::vector<std::string_view> names;
      for (const auto& d : table()) names.push_back(d.kind);
      throw std::invalid_argument(
          fmt::format("unknown op '{}': expected one of {}", kind, fmt::join(names, ", ")));
    }
    OpSpec spec;
    nlohmann::json params = nlohmann::json::object();
    for (const auto& [key, value] : kv) {
      auto it = std::find_if(decl->params.begin(), decl->params.end(),
                             [&k = key](const ParamDecl& p) { return p.name == k; });
      if (it == decl->params.end()) {
        const std::string near = nearest(key, *decl);
        std::vector<std::string_view> names;
        for (const auto& p : decl->params) names.push_back(p.name);
        bad(kind, key,
            near.empty() ? fmt::format("unknown parameter (valid: {})", fmt::join(names, ", "))
                         : fmt::format("unknown parameter (did you mean '{}'?)", near));
      }
      if (params.contains(key)) bad(kind, key, "given twice");
      params[key] = parse_value(kind, *it, value);
    }
    for (const auto& p : decl->params) {
      if (params.contains(std::string(p.name))) continue;
      if (p.fallback.empty()) bad(kind, p.name, "missing required parameter");
      params[std::string(p.name)] = parse_value(kind, p, p.fallback);
    }
    // Derived defaults.
    if (kind == "attention") {
      if (params["kv_heads"].get<long long>() == 0) params["kv_heads"] = params["heads"];
      if (params["seq_kv"].get<long long>() == 0) params["seq_kv"] = params["seq_q"];
      if (params["heads"].get<long long>() % params["kv_heads"].get<long long>() != 0) {
        bad(kind, "kv_heads", "must divide heads");
      }
    }
    if (kind == "custom" && params["block"].get<long long>() % 32 != 0) {
      // Not an error in CUDA, but the model counts whole warps; say so rather than guess.
      bad(kind, "block", "expected a multiple of 32 threads");
    }
    if (kind == "custom" &&
        params["just_written"].get<double>() > params["bytes_read"].get<double>()) {
      bad(kind, "just_written", "expected at most bytes_read (the bytes the kernel reads)");
    }
    OpSpec out;
    out.kind_ = std::string(kind);
    out.params_ = std::move(params);
    out.decl_ = decl;
    // Products of sizes, checked before any model multiplies them in integers (a GEMM of 2^40
    // cubed gave "2 us, grid 0"): computed in doubles, exact to 2^53 and finite far beyond.
    const OpCost c = op_cost(out);
    const double bytes = c.bytes_read + c.bytes_written;
    if (!(bytes <= hw::kMaxOpBytes))
      throw std::invalid_argument(fmt::format(
          "{}: sizes: {:.3g} bytes read and written is over the limit of 2^50 (1 PiB) per op", kind,
          bytes));
    if (!(c.flops <= hw::kMaxOpFlops))
      throw std::invalid_argument(
          fmt::format("{}: sizes: {:.3g} FLOPs is over the limit of {:g} per op", kind, c.flops,
                      hw::kMaxOpFlops));
    return out;
  }
};

OpSpec OpSpec::parse(std::string_view kind, const std::vector<std::string>& tokens) {
  std::vector<std::pair<std::string, std::string>> kv;
  for (const auto& t : tokens) {
    const auto eq = t.find('=');
    if (eq == std::string::npos || eq == 0) {
      throw std::invalid_argument(fmt::format("{}: '{}': expected key=value", kind, t));
    }
    kv.emplace_back(t.substr(0, eq), t.substr(eq + 1));
  }
  return OpBuilder::build(kind, kv);
}

OpSpec OpSpec::from_json(std::string_view kind, const nlohmann::json& params) {
  if (!params.is_object())
    throw std::invalid_argument(fmt::format("{}: params: expected an object", kind));
  std::vector<std::pair<std::string, std::string>> kv;
  for (const auto& [k, v] : params.items()) {
    if (v.is_string())
      kv.emplace_back(k, v.get<std::string>());
    else if (v.is_boolean())
      kv.emplace_back(k, v.get<bool>() ? "true" : "false");
    else if (v.is_number_integer())
      kv.emplace_back(k, std::to_string(v.get<long long>()));
    else if (v.is_number())
      kv.emplace_back(k, fmt::format("{}", v.get<double>()));
    else
      throw std::invalid_argument(
          fmt::format("{}: {}: expected a number, string or boolean", kind, k));
  }
  return OpBuilder::build(kind, kv);
}

double dtype_bytes(std::string_view dtype) {
  if (dtype == "fp32" || dtype == "tf32") return 4;
  if (dtype == "fp16" || dtype == "bf16") return 2;
  if (dtype == "fp8_e4m3" || dtype == "fp8_e5m2" || dtype == "fp8") return 1;
  if (dtype == "fp64") return 8;
  throw std::invalid_argument(fmt::format("unknown dtype '{}'", dtype));
}

}  // namespace ridge::models
