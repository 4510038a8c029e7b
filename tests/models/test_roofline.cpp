// The seed 000_dcea19c735a3b2c5.txt's roofline table for an H100-class GPU, reproduced figure by
// figure. The seed uses peak = 989e12 FLOP/s (dense BF16) and bw = 3.35e12 B/s, GEMM traffic
// 2(mk + kn + mn) bytes (bf16, each matrix once) and 2mkn FLOPs, and GELU at 8 FLOPs per element
// with a 2-byte read and a 2-byte write.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "hw/gpu_loader.hpp"
#include "models/op_cost.hpp"
#include "models/roofline.hpp"

using namespace ridge;

namespace {

hw::GpuSpec seed_gpu() {
  hw::GpuSpec g = hw::find_gpu("h100");
  g.compute.tensor_dense[hw::Precision::kBf16] = 989e12;
  g.memory.hbm_bandwidth = 3.35e12;
  return g;
}

models::Roofline gemm(const hw::GpuSpec& g, long long m, long long k, long long n) {
  auto op = models::OpSpec::parse("gemm", {"m=" + std::to_string(m), "n=" + std::to_string(n),
                                           "k=" + std::to_string(k), "dtype=bf16"});
  return models::roofline(g, models::op_cost(op));
}

// Rounds as the seed prints: "{:.1f}" -> one decimal.
double r1(double v) {
  return std::round(v * 10.0) / 10.0;
}

}  // namespace

TEST_CASE("seed 000: ridge point 989/3.35 = 295 FLOP/B", "[analytic][roofline]") {
  const auto r = gemm(seed_gpu(), 1, 8192, 8192);
  // 989e12 / 3.35e12 = 295.22 -> printed "295".
  CHECK(std::round(r.ridge_point) == 295.0);
}

TEST_CASE("seed 000: batch-1 decode GEMV 1x8192x8192", "[analytic][roofline]") {
  const auto r = gemm(seed_gpu(), 1, 8192, 8192);
  // FLOPs 2*1*8192*8192 = 134,217,728; bytes 2*(8192 + 67,108,864 + 8192) = 134,250,496;
  // AI = 0.99976 -> "1.0"; attainable = 0.99976 * 3.35e12 = 3.349e12 -> "3.3" TFLOP/s;
  // memory-bound.
  CHECK(r.flops == 134217728.0);
  CHECK(r.bytes == 134250496.0);
  CHECK(r1(r.intensity) == 1.0);
  CHECK(r1(r.attainable_flops / 1e12) == 3.3);
  CHECK_FALSE(r.compute_bound);
}

TEST_CASE("seed 000: small batch 16x8192x8192", "[analytic][roofline]") {
  const auto r = gemm(seed_gpu(), 16, 8192, 8192);
  // FLOPs 2*16*8192^2 = 2,147,483,648; bytes 2*(131,072 + 67,108,864 + 131,072) = 134,742,016;
  // AI = 15.937 -> "15.9"; attainable = 15.937 * 3.35e12 = 53.39e12 -> "53.4"; memory-bound.
  CHECK(r.flops == 2147483648.0);
  CHECK(r.bytes == 134742016.0);
  CHECK(r1(r.intensity) == 15.9);
  CHECK(r1(r.attainable_flops / 1e12) == 53.4);
  CHECK_FALSE(r.compute_bound);
}

TEST_CASE("seed 000: training GEMM 8192^3", "[analytic][roofline]") {
  const auto r = gemm(seed_gpu(), 8192, 8192, 8192);
  // AI = 2*8192^3 / (2*3*8192^2) = 8192/3 = 2730.67 -> "2730.7"; above the ridge: 989.0 TFLOP/s.
  CHECK(r1(r.intensity) == 2730.7);
  CHECK(r1(r.attainable_flops / 1e12) == 989.0);
  CHECK(r.compute_bound);
}

TEST_CASE("seed 000: skinny 4096x64x4096", "[analytic][roofline]") {
  const auto r = gemm(seed_gpu(), 4096, 64, 4096);
  // m=4096, k=64, n=4096: FLOPs 2*4096*64*4096 = 2,147,483,648; bytes 2*(262,144 + 262,144 +
  // 16,777,216) = 34,603,008; AI = 62.06 -> "62.1"; attainable 62.06 * 3.35e12 = 207.9e12.
  CHECK(r.bytes == 34603008.0);
  CHECK(r1(r.intensity) == 62.1);
  CHECK(r1(r.attainable_flops / 1e12) == 207.9);
  CHECK_FALSE(r.compute_bound);
}

TEST_CASE("seed 000: GELU over 2^28 bf16 elements", "[analytic][roofline]") {
  auto op = models::OpSpec::parse("elementwise", {"op=gelu", "n=268435456", "dtype=bf16"});
  const auto r = models::roofline(seed_gpu(), models::op_cost(op));
  // 8 FLOPs per element over 2+2 bytes: AI = 2.0; time = 4 * 2^28 / 3.35e12 = 0.3205 ms -> "0.32".
  CHECK(r1(r.intensity) == 2.0);
  CHECK(std::round(r.time_s * 1e3 * 100) / 100 == 0.32);
  CHECK_FALSE(r.compute_bound);
}

TEST_CASE("seed 000: square n x n bf16 GEMM has AI n/3, compute-bound above ~900",
          "[analytic][roofline]") {
  const auto g = seed_gpu();
  // AI = 2n^3 / (6n^2) = n/3 exactly; the ridge 295.2 is crossed at n = 886.
  for (long long n : {256, 1024, 4096})
    CHECK(gemm(g, n, n, n).intensity == Approx(n / 3.0).epsilon(1e-12));
  CHECK_FALSE(gemm(g, 880, 880, 880).compute_bound);
  CHECK(gemm(g, 900, 900, 900).compute_bound);
}

TEST_CASE("shipped H100 config gives the seed's printed figures too", "[analytic][roofline]") {
  // The whitepaper's 989.4 TFLOP/s instead of 989 changes nothing the seed prints.
  const auto g = hw::find_gpu("h100");
  CHECK(std::round(gemm(g, 1, 8192, 8192).ridge_point) == 295.0);
  CHECK(r1(gemm(g, 16, 8192, 8192).attainable_flops / 1e12) == 53.4);
}

TEST_CASE("copy h2d is bounded by PCIe, d2d by HBM read+write", "[analytic][roofline]") {
  const auto g = hw::find_gpu("h200");
  auto h2d = models::OpSpec::parse("copy", {"bytes=1000000000", "direction=h2d"});
  // 1e9 B over 64e9 B/s per direction (PCIe Gen5 x16) = 15.625 ms.
  CHECK(models::roofline(g, models::op_cost(h2d)).time_s == Approx(1e9 / 64e9));
  auto d2d = models::OpSpec::parse("copy", {"bytes=1000000000"});
  // read 1e9 + write 1e9 over 4.8e12 B/s = 0.4167 ms.
  CHECK(models::roofline(g, models::op_cost(d2d)).time_s == Approx(2e9 / 4.8e12));
}
