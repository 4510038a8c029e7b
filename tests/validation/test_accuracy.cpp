// Kernel-level accuracy on the H200: predictions of the calibrated model against the held-out
// third of the committed measurements (validate/data/h200/*.json; split by a hash of each record's
// id, models/records.hpp). The overlay configs/hw/h200-sxm-141gb.calibrated.yaml was fitted by
// `ridge calibrate` on the other two thirds only (its header names the command), so these cases
// played no part in it; but they sit between fitted cases of the same sweeps, so this measures
// interpolation (the extrapolation splits: test_calibration_splits.cpp and validate/README.md).
// Attention records are left out: they time validate/'s own reference kernel, about 15x slower than
// FlashAttention, which the attention op models (validate/OUTLIERS.md).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "hw/gpu_loader.hpp"
#include "models/calibration.hpp"

using namespace ridge;

namespace {

std::vector<models::Record> measured() {
  std::vector<models::Record> out;
  for (const char* f : {"gemm", "kernels", "memory", "launch", "compute"}) {
    auto file =
        models::read_records(std::string(RIDGE_SOURCE_DIR) + "/validate/data/h200/" + f + ".json");
    for (auto& r : file.records)
      if (r.id.rfind("attention/", 0) != 0) out.push_back(std::move(r));
  }
  return out;
}

models::ClassStats overall(models::Mode mode) {
  static const auto records = measured();
  const hw::GpuSpec g =
      hw::find_gpu(std::string(RIDGE_SOURCE_DIR) + "/configs/hw/h200-sxm-141gb.calibrated.yaml");
  const auto c = models::compare(g, records, mode, /*held_out_only=*/true);
  REQUIRE(c.classes.back().op_class == "all");
  return c.classes.back();
}

}  // namespace

// The budget: median absolute error <= 5% and 90th percentile <= 15% on held-out cases.
// Met by the fast mode (4.6% median, 14.2% p90 over 179 cases; docs/accuracy.md). The detailed
// mode (the interval model, models/interval) fits nothing and does not meet it (below).
TEST_CASE("kernel predictions meet the accuracy budget on held-out H200 cases", "[validation]") {
  const auto s = overall(models::Mode::kFast);
  INFO("fast: median " << s.median_abs << ", p90 " << s.p90_abs);
  CHECK(s.median_abs <= 0.05);
  CHECK(s.p90_abs <= 0.15);
}

// Regression guards for what holds today (fast: 4.6% median, 14.2% p90, the limits set when
// they were 4.8% / 14.8%).
TEST_CASE("kernel predictions: today's held-out accuracy does not regress", "[validation]") {
  {
    const auto s = overall(models::Mode::kFast);
    INFO("fast: median " << s.median_abs << ", p90 " << s.p90_abs);
    CHECK(s.cases >= 150);
    CHECK(s.median_abs <= 0.052);
    CHECK(s.p90_abs <= 0.155);
  }
  {
    // The detailed mode from hardware figures only: measured 18.8% median, 29.8% p90 on the same
    // cases (validate/README.md, "Detailed mode (interval model) against the fast mode"); the
    // limits are those plus about 1 point.
    const auto s = overall(models::Mode::kDetailed);
    INFO("detailed: median " << s.median_abs << ", p90 " << s.p90_abs);
    CHECK(s.cases >= 150);
    CHECK(s.median_abs <= 0.20);
    CHECK(s.p90_abs <= 0.31);
  }
}
