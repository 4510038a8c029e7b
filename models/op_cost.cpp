#include "models/op_cost.hpp"

#include "models/op_framework.hpp"

#include <algorithm>
#include <stdexcept>
#include <string_view>

namespace ridge::models {

double causal_fraction(long long seq_q, long long seq_kv) {
  // Query i (0-based) sees keys 0 .. i + (seq_kv - seq_q): min(seq_kv, seq_kv - seq_q + i + 1)
  // keys.
  const double sq = static_cast<double>(seq_q);
  const double skv = static_cast<double>(seq_kv);
  const double offset = skv - sq;
  double kept = 0;
  if (offset >= 0) {
    // keys(i) = offset + i + 1 for all i (never exceeds seq_kv since i < seq_q).
    kept = sq * offset + sq * (sq + 1) / 2.0;
  } else {
    for (long long i = 0; i < seq_q; ++i)
      kept += std::clamp(offset + static_cast<double>(i) + 1, 0.0, skv);
  }
  return kept / (sq * skv);
}

hw::Precision gemm_precision(const std::string& dtype) {
  if (dtype == "fp32") return hw::Precision::kFp32;
  if (dtype == "tf32") return hw::Precision::kTf32;
  if (dtype == "fp16") return hw::Precision::kFp16;
  if (dtype == "bf16") return hw::Precision::kBf16;
  if (dtype == "fp8_e4m3" || dtype == "fp8_e5m2") return hw::Precision::kFp8;
  throw std::invalid_argument("unknown GEMM dtype '" + dtype + "'");
}

namespace {
double elementwise_flops(const std::string& op) {
  if (op == "copy") return 0;
  if (op == "gelu") return 8;
  if (op == "silu") return 4;
  return 1;  // add, mul, relu
}
int elementwise_inputs(const std::string& op) {
  return (op == "add" || op == "mul") ? 2 : 1;
}
}  // namespace

OpCost op_cost(const OpSpec& op) {
  if (is_framework_op(op.kind())) return framework_op_cost(op);
  OpCost c;
  // Compared as string_view: lengths first, so the kinds before this op's cost no memcmp.
  const std::string_view k = op.kind();
  if (k == "gemm") {
    const double m = op.f("m"), n = op.f("n"), kk = op.f("k"), batch = op.f("batch");
    const std::string& dt = op.s("dtype");
    const double in = dtype_bytes(dt);
    // cuBLASLt writes fp8 GEMMs to bf16, others to their own type (fp32 and tf32 to fp32).
    const double out = (dt == "fp8_e4m3" || dt == "fp8_e5m2") ? 2.0 : in;
    c.flops = 2.0 * m * n * kk * batch;
    c.bytes_read = batch * (m * kk + kk * n) * in;
    c.bytes_written = batch * m * n * out;
    c.precision = gemm_precision(dt);
    c.tensor = dt != "fp32";
  } else if (k == "elementwise") {
    const double n = op.f("n"), e = dtype_bytes(op.s("dtype"));
    c.flops = elementwise_flops(op.s("op")) * n;
    c.bytes_read = elementwise_inputs(op.s("op")) * n * e;
    c.bytes_written = n * e;
  } else if (k == "softmax" || k == "layernorm" || k == "rmsnorm") {
    const double r = op.f("rows"), cols = op.f("cols"), e = dtype_bytes(op.s("dtype"));
    // Per element: softmax max, subtract, exp, sum, scale = 5; layernorm sum, (x-mean)^2 and its
    // sum, normalise, scale, shift = 8 (the 2 subtractions counted once); rmsnorm x^2 and its sum,
    // scale by rsqrt, weight = 4.
    const double per = k == "softmax" ? 5 : (k == "layernorm" ? 8 : 4);
    const double weights = k == "softmax" ? 0 : (k == "layernorm" ? 2 : 1);
    c.flops = per * r * cols;
    c.bytes_read = r * cols * e + weights * cols * e;
    c.bytes_written = r * cols * e;
  } else if (k == "attention") {
    const double b = op.f("batch"), h = op.f("heads"), kvh = op.f("kv_heads");
    const double sq = op.f("seq_q"), skv = op.f("seq_kv"), d = op.f("head_dim");
    const std::string& dt = op.s("dtype");
    const double e = dtype_bytes(dt);
    const double frac = op.b("causal") ? causal_fraction(op.i("seq_q"), op.i("seq_kv")) : 1.0;
    const double fwd = 4.0 * b * h * sq * skv * d * frac;
    const double q = b * h * sq * d * e, kv = b * kvh * skv * d * e;
    const std::string& pass = op.s("pass");
    if (pass == "fwd") {
      c.flops = fwd;
      c.bytes_read = q + 2 * kv;
      c.bytes_written = q;  // O
    } else if (pass == "bwd") {
      c.flops = 2.5 * fwd;
      c.bytes_read = 3 * q + 2 * kv;  // Q, O, dO, K, V
      c.bytes_written = q + 2 * kv;   // dQ, dK, dV
    } else {
      c.flops = 3.5 * fwd;
      c.bytes_read = 4 * q + 4 * kv;
      c.bytes_written = 2 * q + 2 * kv;
    }
    c.precision = dt == "fp8_e4m3" ? hw::Precision::kFp8
                  : dt == "fp16"   ? hw::Precision::kFp16
                                   : hw::Precision::kBf16;
    c.tensor = true;
  } else if (k == "copy") {
    const double bytes = op.f("bytes");
    if (op.s("direction") == "d2d") {
      c.bytes_read = bytes;
      c.bytes_written = bytes;
    } else {
      c.memory = MemoryLevel::kPcie;
      c.bytes_read = bytes;
    }
  } else if (k == "embedding") {
    const double t = op.f("tokens"), d = op.f("dim"), e = dtype_bytes(op.s("dtype"));
    if (op.s("pass") == "fwd") {
      c.bytes_read = t * d * e + t * 8;  // rows and int64 indices
      c.bytes_written = t * d * e;
    } else {
      // Gradient rows accumulated into an fp32 table gradient (read-modify-write).
      c.flops = t * d;
      c.bytes_read = t * d * e + t * 8 + t * d * 4;
      c.bytes_written = t * d * 4;
    }
  } else if (k == "cross_entropy") {
    const double r = op.f("rows"), v = op.f("vocab"), e = dtype_bytes(op.s("dtype"));
    c.flops = 5 * r * v;
    c.bytes_read = r * v * e + r * 8;
    c.bytes_written = op.s("pass") == "fwd" ? r * 4 : r * v * e;
  } else if (k == "adamw") {
    const double p = op.f("params"), g = dtype_bytes(op.s("grad_dtype"));
    // Read param, m, v (fp32) and the gradient; write param, m, v. About 12 FLOPs per parameter
    // (two moment updates, bias corrections folded, sqrt, divide, weight decay, update).
    c.flops = 12 * p;
    c.bytes_read = p * (12 + g);
    c.bytes_written = p * 12;
  } else if (k == "conv2d") {
    const double nb = op.f("batch"), h = op.f("h"), w = op.f("w"), ci = op.f("c_in"),
                 co = op.f("c_out");
    const double r = op.f("r"), s = op.f("s"), st = op.f("stride"), pad = op.f("pad");
    const double e = dtype_bytes(op.s("dtype"));
    const double ho = std::floor((h + 2 * pad - r) / st) + 1,
                 wo = std::floor((w + 2 * pad - s) / st) + 1;
    c.flops = 2 * nb * ho * wo * co * ci * r * s;
    c.bytes_read = (nb * h * w * ci + co * r * s * ci) * e;
    c.bytes_written = nb * ho * wo * co * e;
    c.precision = op.s("dtype") == "fp32"   ? hw::Precision::kTf32
                  : op.s("dtype") == "fp16" ? hw::Precision::kFp16
                                            : hw::Precision::kBf16;
    c.tensor = true;
  } else if (k == "custom") {
    const double t = op.f("flops_tensor"), f32 = op.f("flops_fp32"), f64 = op.f("flops_fp64");
    c.flops = t + f32 + f64;
    c.bytes_read = op.f("bytes_read");
    c.bytes_written = op.f("bytes_written");
    if (t >= f32 && t >= f64 && t > 0) {
      const std::string& dt = op.s("tensor_dtype");
      c.precision = gemm_precision(dt);
      c.tensor = true;
    } else if (f64 > f32) {
      c.precision = hw::Precision::kFp64;
    }
  } else if (k == "membw") {
    const double bytes = op.f("bytes");
    const std::string& kind = op.s("kind");
    c.bytes_read = kind == "write" ? 0 : bytes;
    c.bytes_written = kind == "read" ? 0 : bytes;
  } else if (k == "launch") {
    // Nothing moved, nothing computed: all launch cost.
  } else {
    throw std::invalid_argument("op_cost: no cost model for op '" + std::string(k) + "'");
  }
  c.min_bytes = c.bytes_read + c.bytes_written;
  return c;
}

}  // namespace ridge::models
