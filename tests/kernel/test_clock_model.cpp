// The power roof (models/clock_model.hpp): derived scalings, and the sustained H200 config against
// the power probe's steady-state kernels (validate/data/h200/power/power_probe.json).
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <fstream>
#include <map>
#include <string>

#include "hw/gpu_loader.hpp"
#include "models/clock_model.hpp"
#include "models/kernel_model.hpp"
#include "models/op.hpp"

using namespace ridge;

namespace {

models::OpSpec gemm(long long m, long long n, long long k, const std::string& dtype) {
  return models::OpSpec::from_json("gemm", {{"m", m},
                                            {"n", n},
                                            {"k", k},
                                            {"dtype", dtype},
                                            {"batch", 1},
                                            {"trans_a", false},
                                            {"trans_b", true}});
}

}  // namespace

TEST_CASE("power roof: time is energy over headroom, the clock falls in proportion",
          "[unit][clock]") {
  hw::GpuSpec g = hw::find_gpu("h200");
  models::PowerDemand d;
  d.tensor_flops = 1e12;  // 1 TFLOP of bf16 at 0.80 pJ: 0.80 J
  SECTION("no cap in the config: unchanged, at boost") {
    const auto c = models::power_limit(g, d, 1e-3);
    CHECK(c.time_s == 1e-3);
    CHECK(c.sm_clock_hz == g.clocks.boost_hz);
    CHECK_FALSE(c.power_bound);
  }
  g.model["power_cap_w"] = 700;
  g.model["power_static_w"] = 120;
  SECTION("bound: t = 0.80 J / (700 - 120) W, clock = boost x t_boost / t, power = the cap") {
    const auto c = models::power_limit(g, d, 1e-3);
    CHECK(c.power_bound);
    CHECK(c.time_s == Approx(0.80 / 580));
    CHECK(c.sm_clock_hz == Approx(g.clocks.boost_hz * 1e-3 / (0.80 / 580)));
    CHECK(c.power_w == Approx(700));
  }
  SECTION("not bound: slow work draws less than the cap and keeps the boost clock") {
    const auto c = models::power_limit(g, d, 10e-3);  // 0.80 J over 10 ms = 80 W dynamic
    CHECK_FALSE(c.power_bound);
    CHECK(c.time_s == 10e-3);
    CHECK(c.power_w == Approx(200));
  }
  SECTION("fp8 and HBM bytes use their own energies") {
    models::PowerDemand e;
    e.tensor_flops = 1e12;
    e.tensor_precision = hw::Precision::kFp8;
    e.hbm_bytes = 1e9;  // 0.43 J + 0.128 J
    CHECK(models::power_limit(g, e, 1e-6).time_s == Approx((0.43 + 0.128) / 580));
  }
}

TEST_CASE("power what-if: a lower cap slows a power-bound GEMM by the headroom ratio",
          "[unit][clock]") {
  // Power-bound at 700 W and at 500 W alike, t = E / (cap - static): the ratio is
  // (700 - 120.8) / (500 - 120.8) = 1.5274, whatever the kernel's energy.
  hw::GpuSpec g =
      hw::find_gpu(std::string(RIDGE_SOURCE_DIR) + "/configs/hw/h200-sxm-141gb-sustained.yaml");
  const auto op = gemm(8192, 8192, 8192, "bf16");
  const auto at700 = models::predict_kernel(g, op);
  g.model["power_cap_w"] = 500;
  models::clear_kernel_memo();
  const auto at500 = models::predict_kernel(g, op);
  REQUIRE(at700.bound == "power");
  REQUIRE(at500.bound == "power");
  // Kernel time includes the launch start-up (not scaled): compare the work part.
  const double w700 = at700.detail["work_s"].get<double>();
  const double w500 = at500.detail["work_s"].get<double>();
  CHECK(w500 / w700 == Approx((700 - 120.8) / (500 - 120.8)).epsilon(1e-9));
  CHECK(at500.detail["sm_clock_hz"].get<double>() < at700.detail["sm_clock_hz"].get<double>());
}

TEST_CASE("sustained H200: the probe's steady-state 8192^3 GEMMs within 7%",
          "[validation][clock]") {
  // Measured: validate/data/h200/power/power_probe.json, steady per-repetition time (the last
  // 60% of 2.5 s back to back). The energies were derived from these same phases (in-sample; the
  // check is that the derivation and the code agree): predicted at the time of writing bf16 -0.9%,
  // fp16 -4.4%, fp8 -1.3%, tf32 +6.1%, fp32 +0.5%. 7%: tf32's +6.1% (its t at boost comes from the
  // burst-fitted efficiency, not from the power data) plus rounding margin.
  std::ifstream f(std::string(RIDGE_SOURCE_DIR) + "/validate/data/h200/power/power_probe.json");
  const auto doc = nlohmann::json::parse(f);
  std::map<std::string, double> steady_us;
  for (const auto& p : doc["phases"])
    if (p.contains("steady")) steady_us[p["name"]] = p["steady"]["per_rep_us"].get<double>();
  const hw::GpuSpec g =
      hw::find_gpu(std::string(RIDGE_SOURCE_DIR) + "/configs/hw/h200-sxm-141gb-sustained.yaml");
  for (const std::string dt : {"bf16", "fp16", "fp8_e4m3", "tf32", "fp32"}) {
    const double meas = steady_us.at("gemm " + dt + " 8192") * 1e-6;
    const double pred = models::predict_kernel(g, gemm(8192, 8192, 8192, dt)).time_s;
    INFO(dt << ": predicted " << pred * 1e6 << " us, measured " << meas * 1e6 << " us");
    CHECK(std::fabs(pred / meas - 1) <= 0.07);
  }
}
