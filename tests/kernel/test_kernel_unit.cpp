// Unit tests of the kernel model's parts: sector counting, launch line-up, the memo, the CLI-facing
// prediction fields.
#include <catch2/catch.hpp>

#include "hw/gpu_loader.hpp"
#include "models/kernel.hpp"
#include "models/kernel_model.hpp"
#include "models/launch.hpp"

using namespace ridge;

TEST_CASE("sectors per warp request follow the 32-byte sector rule", "[unit]") {
  // 32 lanes x 4 B = 128 B contiguous = 4 sectors; bf16 64 B = 2; fp32 stride 2 spans 256 B = 8.
  CHECK(models::sectors_per_request(4, 1) == 4);
  CHECK(models::sectors_per_request(2, 1) == 2);
  CHECK(models::sectors_per_request(4, 2) == 8);
  CHECK(models::sectors_per_request(4, 8) == 32);
  CHECK(models::sectors_per_request(4, 1000) == 32);  // one sector per lane at most
}

TEST_CASE("kernels of one call line up behind the host and each other", "[unit]") {
  models::KernelParams k{};
  k.host_launch_eager = 8e-6;
  k.host_launch_cuda = 2e-6;
  k.kernel_startup = 1e-6;
  k.kernel_gap = 0.5e-6;
  // Two 10 us kernels: GPU-bound. kernel = 2 x (1 + 10) + 0.5 = 22.5 us; per call adds the eager
  // dispatch of the first (8 us) since the second launch (issued at 10 us) waits for the GPU.
  const models::LaunchedWork w[] = {{10e-6, 2}};
  const auto t = models::line_up(k, w, models::Issue::kEager);
  CHECK(t.kernel_s == Approx(22.5e-6));
  CHECK(t.per_call_s == Approx(30.5e-6));
  // 100 empty kernels: host-bound at 2 us each: last issued at 8 + 99 x 2 = 206 us, ends 1 us
  // later.
  const models::LaunchedWork e[] = {{0.0, 100}};
  CHECK(models::line_up(k, e, models::Issue::kEager).per_call_s == Approx(207e-6));
}

TEST_CASE("the memo returns the same prediction and misses when the spec changes", "[unit]") {
  hw::GpuSpec g = hw::find_gpu("h200");
  const auto op = models::OpSpec::parse("gemm", {"m=4096", "n=4096", "k=4096"});
  const auto a = models::predict_kernel(g, op);
  const auto b = models::predict_kernel(g, op);
  CHECK(a.time_s == b.time_s);
  g.memory.hbm_bandwidth *= 0.25;
  g.compute.tensor_dense[hw::Precision::kBf16] *= 0.25;
  CHECK(models::predict_kernel(g, op).time_s > a.time_s * 2);
}

TEST_CASE("a prediction fills the interface's fields", "[unit]") {
  const hw::GpuSpec g = hw::find_gpu("h200");
  const auto p =
      models::predict_kernel(g, models::OpSpec::parse("gemm", {"m=8192", "n=8192", "k=8192"}),
                             models::Mode::kFast, models::Timing::kPerCall);
  CHECK(p.time_s == p.per_call_time_s);
  CHECK(p.per_call_time_s > p.kernel_time_s);
  CHECK(p.kernels == 1);
  CHECK(p.bound == "compute");
  CHECK(p.flops == Approx(2.0 * 8192 * 8192 * 8192));
  CHECK(p.grid > 0);
  CHECK(p.block > 0);
  CHECK(p.waves >= 1);
  CHECK(p.occupancy.blocks_per_sm >= 1);
  CHECK(p.kernel_name.rfind("gemm", 0) == 0);
  CHECK(p.roof_fraction > 0.5);
  CHECK(p.roof_fraction <= 1.0);
}

TEST_CASE("a custom kernel's just-written input is read from L2 when it fits there", "[unit]") {
  // One 512-thread block reading 256 KiB with one 16-byte load in flight a thread (8 KiB a round,
  // 32 rounds): latency-bound, so every round waits HBM's latency when the bytes come from HBM and
  // L2's when the kernel before left them in L2: 32 rounds, each shorter by hbm_latency -
  // l2_latency. (The wave's exposed latency stays HBM's in both: the kernel's writes go there.)
  const hw::GpuSpec g = hw::find_gpu("h200");
  auto t = [&](const std::string& just_written) {
    return models::predict_kernel(
               g, models::OpSpec::parse("custom", {"grid=1", "block=512", "bytes_read=262144",
                                                   "bytes_written=64", "ilp=1", just_written}))
        .kernel_time_s;
  };
  const double cold = t("just_written=0"), warm = t("just_written=262144");
  const double step = g.param("hbm_latency") - g.param("l2_latency");
  CHECK(cold - warm == Approx(32 * step).epsilon(0.02));
  // A tensor larger than L2 re-read from its start finds that start evicted: no hits.
  auto big = [&](const std::string& just_written) {
    return models::predict_kernel(
               g, models::OpSpec::parse(
                      "custom", {"grid=132", "block=512", "bytes_read=2e9", "ilp=1", just_written}))
        .kernel_time_s;
  };
  CHECK(big("just_written=2e9") == big("just_written=0"));
  CHECK_THROWS_WITH(models::OpSpec::parse("custom", {"grid=1", "bytes_read=10", "just_written=11"}),
                    Catch::Contains("just_written") && Catch::Contains("at most bytes_read"));
}
