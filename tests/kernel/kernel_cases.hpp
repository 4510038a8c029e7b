// Random op shapes for the kernel model's property tests: every op of the vocabulary, seeded.
#pragma once

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "models/op.hpp"

namespace ridge::test {

inline long long pick(std::mt19937_64& rng, long long lo, long long hi) {
  // Log-uniform in [lo, hi]: sizes span orders of magnitude.
  std::uniform_real_distribution<double> u(std::log(double(lo)), std::log(double(hi)));
  return std::llround(std::exp(u(rng)));
}

/// One random op of `kind`, sized so the detailed model stays quick (grids of <= ~10^4 blocks).
inline models::OpSpec random_op(const std::string& kind, std::mt19937_64& rng) {
  auto s = [](long long v) { return std::to_string(v); };
  const std::vector<std::string> dts = {"bf16", "fp16", "fp32"};
  const std::string dt = dts[rng() % 3];
  std::vector<std::string> t;
  if (kind == "gemm") {
    const std::vector<std::string> g = {"bf16", "fp16", "fp8_e4m3", "tf32", "fp32"};
    t = {"m=" + s(pick(rng, 1, 8192)), "n=" + s(pick(rng, 64, 8192)), "k=" + s(pick(rng, 64, 8192)),
         "dtype=" + g[rng() % g.size()]};
  } else if (kind == "elementwise") {
    const std::vector<std::string> ops = {"copy", "add", "mul", "relu", "gelu", "silu"};
    t = {"op=" + ops[rng() % ops.size()], "n=" + s(pick(rng, 1000, 1LL << 28)), "dtype=" + dt,
         "stride=" + s(rng() % 3 == 0 ? pick(rng, 1, 16) : 1)};
  } else if (kind == "softmax" || kind == "layernorm" || kind == "rmsnorm") {
    t = {"rows=" + s(pick(rng, 1, 32768)), "cols=" + s(pick(rng, 64, 65536)), "dtype=" + dt};
  } else if (kind == "attention") {
    const long long heads = 8 * pick(rng, 1, 8);
    const bool decode = rng() % 3 == 0;
    const std::vector<std::string> passes = {"fwd", "bwd", "fwd_bwd"};
    t = {"batch=" + s(pick(rng, 1, 8)),
         "heads=" + s(heads),
         "kv_heads=" + s(heads / 8 * (1 + rng() % 2)),
         "seq_q=" + s(decode ? 1 : pick(rng, 128, 4096)),
         "seq_kv=" + s(pick(rng, 128, 8192)),
         "head_dim=" + s(rng() % 2 ? 64 : 128),
         std::string("causal=") + (rng() % 2 ? "true" : "false"),
         "pass=" + (decode ? std::string("fwd") : passes[rng() % 3])};
  } else if (kind == "copy") {
    const std::vector<std::string> d = {"d2d", "h2d", "d2h"};
    t = {"bytes=" + s(pick(rng, 1024, 1LL << 32)), "direction=" + d[rng() % 3],
         std::string("memory=") + (rng() % 2 ? "pinned" : "pageable")};
  } else if (kind == "embedding") {
    t = {"tokens=" + s(pick(rng, 1, 65536)), "dim=" + s(pick(rng, 256, 8192)),
         "vocab=" + s(pick(rng, 1000, 200000)), "dtype=" + dt,
         std::string("pass=") + (rng() % 2 ? "fwd" : "bwd")};
  } else if (kind == "cross_entropy") {
    t = {"rows=" + s(pick(rng, 1, 16384)), "vocab=" + s(pick(rng, 1000, 200000)), "dtype=" + dt,
         std::string("pass=") + (rng() % 2 ? "fwd" : "bwd")};
  } else if (kind == "adamw") {
    t = {"params=" + s(pick(rng, 1000, 1LL << 30)), "grad_dtype=" + dt};
  } else if (kind == "conv2d") {
    t = {"batch=" + s(pick(rng, 1, 32)),   "h=" + s(pick(rng, 7, 128)),
         "w=" + s(pick(rng, 7, 128)),      "c_in=" + s(pick(rng, 3, 512)),
         "c_out=" + s(pick(rng, 16, 512)), "dtype=" + dt};
  } else if (kind == "custom") {
    t = {"grid=" + s(pick(rng, 1, 20000)),
         "block=" + s(32 * pick(rng, 1, 32)),
         "registers=" + s(pick(rng, 16, 128)),
         "flops_fp32=" + s(pick(rng, 1, 1LL << 34)),
         "bytes_read=" + s(pick(rng, 1, 1LL << 32)),
         "bytes_written=" + s(pick(rng, 1, 1LL << 30)),
         "stride=" + s(pick(rng, 1, 32)),
         "reuse=" + s(pick(rng, 1, 16)),
         "ilp=" + s(pick(rng, 1, 8))};
  } else if (kind == "membw") {
    const std::vector<std::string> k = {"read", "write", "copy"};
    t = {"kind=" + k[rng() % 3], "bytes=" + s(pick(rng, 1024, 1LL << 32))};
  } else if (kind == "launch") {
    const std::vector<std::string> k = {"bare", "dependent", "graph"};
    t = {"kind=" + k[rng() % 3], "kernels=" + s(pick(rng, 1, 1000))};
  }
  return models::OpSpec::parse(kind, t);
}

}  // namespace ridge::test
