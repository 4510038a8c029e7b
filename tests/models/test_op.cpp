// The op vocabulary: parsing, defaults and the errors a user sees.
#include <catch2/catch.hpp>

#include "models/op.hpp"
#include "models/op_cost.hpp"

using ridge::models::OpSpec;

TEST_CASE("op parse fills defaults and keeps names", "[unit][op]") {
  auto op = OpSpec::parse("gemm", {"m=16", "n=32", "k=64"});
  CHECK(op.s("dtype") == "bf16");
  CHECK(op.i("batch") == 1);
  CHECK_FALSE(op.b("trans_a"));
  auto a = OpSpec::parse("attention", {"heads=32", "seq_q=1", "seq_kv=1024"});
  CHECK(a.i("kv_heads") == 32);
}

TEST_CASE("op parse errors name the parameter and what was expected", "[unit][op]") {
  auto msg = [](auto f) {
    try {
      f();
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(msg([] {
          OpSpec::parse("gemm", {"m=16", "n=32"});
        }) == "gemm: k: missing required parameter");
  CHECK(msg([] {
          OpSpec::parse("gemm", {"m=16", "n=32", "k=8", "dtpye=bf16"});
        }).find("did you mean 'dtype'") != std::string::npos);
  CHECK(msg([] {
          OpSpec::parse("gemm", {"m=1.5", "n=32", "k=8"});
        }) == "gemm: m: expected an integer, got '1.5'");
  CHECK(msg([] {
          OpSpec::parse("gemm", {"m=16", "n=32", "k=8", "dtype=int4"});
        }).find("expected one of") != std::string::npos);
  CHECK(msg([] { OpSpec::parse("gemn", {}); }).find("unknown op 'gemn'") != std::string::npos);
  CHECK(msg([] {
          OpSpec::parse("attention", {"heads=6", "kv_heads=4", "seq_q=8"});
        }) == "attention: kv_heads: must divide heads");
}

TEST_CASE("causal fraction counts kept query-key pairs", "[analytic][op]") {
  // Square s=4: rows keep 1,2,3,4 of 4 keys -> 10/16.
  CHECK(ridge::models::causal_fraction(4, 4) == Approx(10.0 / 16));
  // Decode: 1 query against 1024 keys sees all of them.
  CHECK(ridge::models::causal_fraction(1, 1024) == Approx(1.0));
  // 2 queries at the end of 4 keys: 3 + 4 of 8 pairs.
  CHECK(ridge::models::causal_fraction(2, 4) == Approx(7.0 / 8));
}

TEST_CASE("op cost: seed 003's fused y = phi(ax+b) traffic, 24N -> 8N bytes", "[analytic][op]") {
  // Three fp32 elementwise kernels (scale, add bias, activation), each reading and writing N
  // floats: 3 x 8N = 24N bytes; the fused kernel reads x and writes y once: 8N.
  const long long n = 1 << 20;
  double unfused = 0;
  // Scalar a and b make the scale and the bias unary ops, like the activation: three passes.
  auto unary = OpSpec::parse("elementwise", {"op=relu", "n=" + std::to_string(n), "dtype=fp32"});
  for (int pass = 0; pass < 3; ++pass) unfused += ridge::models::op_cost(unary).min_bytes;
  auto fused = OpSpec::parse("elementwise", {"op=gelu", "n=" + std::to_string(n), "dtype=fp32"});
  CHECK(unfused == 24.0 * n);
  CHECK(ridge::models::op_cost(fused).min_bytes == 8.0 * n);
}
