// The detailed mode's interval model (models/interval): properties with their derivations.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>

#include "hw/gpu_loader.hpp"
#include "models/interval.hpp"
#include "models/kernel_model.hpp"
#include "models/op_cost.hpp"
#include "models/op_library.hpp"
#include "models/roofline.hpp"
#include "tests/kernel/kernel_cases.hpp"

using namespace ridge;

namespace {

models::KernelDesc custom_desc(const hw::GpuSpec& g, std::vector<std::string> params) {
  const auto kp = models::kernel_params(g);
  return models::plan_op(g, kp, models::OpSpec::parse("custom", params)).kernels.front().desc;
}

// GPU work time of one custom kernel under the interval model on the engine.
double interval_time(const hw::GpuSpec& g, const std::vector<std::string>& params,
                     double clock_hz = 0) {
  const auto kp = models::kernel_params(g);
  models::IntervalHw h = models::interval_hw(g, kp);
  if (clock_hz > 0) h.clock_hz = clock_hz;
  const auto s = models::interval_setup(g, kp, custom_desc(g, params), h);
  return models::simulate_kernel_interval(g, kp, s, h);
}

}  // namespace

TEST_CASE("interval: an MLP-bound stream runs at bytes in flight / latency", "[analytic]") {
  // 132 blocks of one warp, one SM each, one 16-byte vector load per lane in flight (ilp=1): each
  // SM keeps 32 x 16 = 512 B in flight for hbm_latency, so it moves 512 B / 600 ns = 0.85 GB/s and
  // the chip 113 GB/s, far under the 4.8 TB/s peak: time = bytes per SM / (512 B / latency), plus
  // one latency and one block dispatch (< 1 us against ~80 ms: within 0.1%).
  const hw::GpuSpec g = hw::find_gpu("h200");
  const double sms = g.sm.count, per_sm = 64.0 * 1024 * 1024;
  const double t = interval_time(g, {"grid=" + std::to_string(g.sm.count), "block=32", "ilp=1",
                                     "bytes_read=" + std::to_string(per_sm * sms)});
  const double expected = per_sm / (512.0 / g.param("hbm_latency"));
  CHECK(t == Approx(expected).epsilon(0.001));
}

TEST_CASE("interval: a full-occupancy stream runs at the HBM peak, not an efficiency",
          "[analytic]") {
  // 8 blocks of 256 threads per SM, ilp 4: 64 warps x 4 x 512 B = 128 KiB wanted, the MSHR limit
  // (256 lines x 128 B = 32 KiB) allows 32 KiB per SM: 132 x 32 KiB / 600 ns = 7.2 TB/s of
  // parallelism, above the 4.8 TB/s datasheet peak, so the HBM link (at its peak) sets the time:
  // bytes / 4.8 TB/s, plus a latency (< 0.1% of ~28 ms).
  const hw::GpuSpec g = hw::find_gpu("h200");
  const double bytes = 128.0 * 1024 * 1024 * 1024;
  const double t = interval_time(g, {"grid=" + std::to_string(8 * g.sm.count), "block=256", "ilp=4",
                                     "bytes_read=" + std::to_string(bytes)});
  CHECK(t == Approx(bytes / g.memory.hbm_bandwidth).epsilon(0.002));
  // The fast mode's answer uses hbm_efficiency < 1: the two modes disagree here by design.
  CHECK(g.param("hbm_efficiency") < 0.99);
}

TEST_CASE("interval: more resident warps never slow an MLP-bound kernel", "[property]") {
  // One block per SM, its warps 1..32: bytes in flight per SM = warps x 512 B, up to the MSHR
  // limit; the rate min(warps x 512, 32 KiB) / latency never falls, so the time never rises.
  const hw::GpuSpec g = hw::find_gpu("h200");
  const std::string bytes = "bytes_read=" + std::to_string(132.0 * 8 * 1024 * 1024);
  double prev = 1e30;
  for (int block : {32, 64, 128, 256, 512, 1024}) {
    const double t = interval_time(g, {"grid=" + std::to_string(g.sm.count),
                                       "block=" + std::to_string(block), "ilp=2", bytes});
    INFO("block " << block << ": " << t << " s");
    CHECK(t <= prev * (1 + 1e-9));
    prev = t;
  }
}

TEST_CASE("interval: an issue-bound kernel scales with 1/clock", "[analytic]") {
  // FP32 FMAs only, no memory: 4 schedulers x 32 lanes x 2 FLOP = 256 FLOP per SM per cycle, so
  // time = flops / (256 x SMs x clock) (plus one block_dispatch per block, 0.1 us against ~4 ms:
  // within 0.01%); halving the clock doubles it.
  const hw::GpuSpec g = hw::find_gpu("h200");
  const double flops = 256.0 * g.sm.count * g.clocks.boost_hz * 4e-3;  // 4 ms at boost
  const std::vector<std::string> p = {"grid=" + std::to_string(4 * g.sm.count), "block=256",
                                      "bytes_read=0", "flops_fp32=" + std::to_string(flops)};
  const double t1 = interval_time(g, p, g.clocks.boost_hz);
  const double t2 = interval_time(g, p, g.clocks.boost_hz / 2);
  CHECK(t1 == Approx(4e-3).epsilon(0.001));
  CHECK(t2 / t1 == Approx(2.0).epsilon(0.001));
}

TEST_CASE("interval: tensor MMAs run at the per-SM rate at the clock", "[analytic]") {
  // bf16 MMAs only: the datasheet's dense peak / SMs per SM at boost, no tensor efficiency.
  const hw::GpuSpec g = hw::find_gpu("h200");
  const double peak = g.compute.tensor_dense.at(hw::Precision::kBf16);
  const double flops = peak * 2e-3;  // 2 ms at peak
  const double t =
      interval_time(g, {"grid=" + std::to_string(g.sm.count), "block=128", "bytes_read=0",
                        "tensor_dtype=bf16", "flops_tensor=" + std::to_string(flops)});
  CHECK(t == Approx(2e-3).epsilon(0.001));
}

TEST_CASE("interval: the detailed mode reads no fitted efficiency", "[unit]") {
  // Changing every efficiency and MLP parameter the fast mode fits moves the fast answer and
  // leaves the detailed one bit-identical (a custom kernel: its plan reads none of them either).
  hw::GpuSpec g = hw::find_gpu("h200");
  const auto op = models::OpSpec::parse(
      "custom", {"grid=2000", "block=256", "bytes_read=4e9", "flops_fp32=1e10", "sfu_ops=1e8"});
  models::clear_kernel_memo();
  const auto f1 = models::predict_kernel(g, op, models::Mode::kFast);
  const auto d1 = models::predict_kernel(g, op, models::Mode::kDetailed);
  for (const char* k : {"hbm_efficiency", "l2_efficiency", "vector_efficiency"})
    g.model[k] = 0.5 * g.param(k);
  g.model["max_inflight_bytes_per_sm"] = 4096;
  g.model["loads_in_flight_per_warp"] = 1;
  const auto f2 = models::predict_kernel(g, op, models::Mode::kFast);
  const auto d2 = models::predict_kernel(g, op, models::Mode::kDetailed);
  CHECK(f2.time_s > 1.2 * f1.time_s);
  CHECK(d2.time_s == d1.time_s);
}

TEST_CASE("interval: no op beats the datasheet roofline", "[property]") {
  // The interval model runs every unit and link at most at its datasheet peak on at least the
  // op's minimum bytes, so each op's kernel time is >= the roofline time (flops / peak, min bytes
  // / HBM peak); 0.1% for float rounding in the event engine.
  const hw::GpuSpec g = hw::find_gpu("h200");
  std::mt19937_64 rng(7);
  const std::vector<std::string> kinds = {"gemm",    "elementwise", "softmax",   "layernorm",
                                          "rmsnorm", "attention",   "embedding", "cross_entropy",
                                          "adamw",   "conv2d"};
  for (int i = 0; i < 40; ++i) {
    const auto op = test::random_op(kinds[i % kinds.size()], rng);
    const auto d = models::predict_kernel(g, op, models::Mode::kDetailed);
    const double floor = models::roofline(g, models::op_cost(op)).time_s;
    INFO(op.str() << ": detailed " << d.kernel_time_s << " s, roofline " << floor << " s");
    CHECK(std::isfinite(d.kernel_time_s));
    CHECK(d.kernel_time_s >= floor * 0.999);
  }
}

namespace {
// Two copies of a custom kernel on streams 0 and 1 of one interval-model GPU: when the last ends.
double two_streams(const hw::GpuSpec& g, const std::vector<std::string>& params) {
  const auto kp0 = models::kernel_params(g);
  auto kp = kp0;
  kp.kernel_startup = 0;
  kp.kernel_gap = 0;
  const models::IntervalHw h = models::interval_hw(g, kp);
  const auto s = models::interval_setup(g, kp, custom_desc(g, params), h);
  sim::Simulator sim;
  models::GpuSim gpu(sim, g, kp, models::interval_links(h));
  double end = 0;
  for (int stream : {0, 1})
    gpu.launch(stream, s, [&](sim::Time, sim::Time e) { end = std::max(end, e.seconds()); });
  sim.run();
  return end;
}
}  // namespace

TEST_CASE("interval: concurrent kernels share SMs and HBM as their limits say", "[analytic]") {
  const hw::GpuSpec g = hw::find_gpu("h200");
  // MLP-bound: 66 one-warp blocks each (half the SMs), ilp 1. Placed on the least-loaded SMs,
  // the two kernels' blocks land on different SMs (and sharing one, 2 x 512 B would still be far
  // under its 32 KiB MSHR limit): each block keeps its 512 B in flight, and 132 x 512 B / 600 ns =
  // 113 GB/s is far under the HBM peak, so two take as long as one (within 0.1%: the dispatch of a
  // block, 0.1 us, against ~40 ms).
  const std::vector<std::string> mlp = {"grid=66", "block=32", "ilp=1", "bytes_read=1.5e9"};
  const double one = interval_time(g, mlp);
  CHECK(two_streams(g, mlp) == Approx(one).epsilon(0.001));
  // HBM-bound: full occupancy as in the stream test above; two such kernels share the 4.8 TB/s
  // link, so the pair moves twice the bytes at the same peak: twice the time (within 1%: the
  // second kernel's blocks wait for SM slots but the link stays saturated throughout).
  const std::vector<std::string> bw = {"grid=" + std::to_string(8 * g.sm.count), "block=256",
                                       "ilp=4", "bytes_read=2e10"};
  const double one_bw = interval_time(g, bw);
  CHECK(one_bw == Approx(2e10 / g.memory.hbm_bandwidth).epsilon(0.002));
  CHECK(two_streams(g, bw) == Approx(2 * one_bw).epsilon(0.01));
}
