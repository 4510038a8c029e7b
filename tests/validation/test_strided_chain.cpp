// Issue 18, round 6: strided elementwise reads with gaps under a sector (validate/'s
// ew_strided_kernel at stride 2-4), against every committed H200 record of the class
// (validate/data/h200 kernels.json, own-set1..11). serial_load_latency and serial_load_blend
// (hw/model_params.cpp) are FITS over these very records (docs/accuracy.md, round 6): the tests
// guard the mechanism against regression; they are not predictions.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hw/gpu_loader.hpp"
#include "models/calibration.hpp"
#include "models/records.hpp"

using namespace ridge;

namespace {

double dtype_size(const std::string& d) {
  return d == "fp32" ? 4 : 2;
}

// The committed strided elementwise records whose gap between elements (bytes) lies in [lo, hi].
std::vector<models::Record> strided(double lo, double hi) {
  std::vector<std::string> files = {"kernels.json"};
  for (int i = 1; i <= 11; ++i)
    files.push_back("own-set" + std::to_string(i) + "/own-set" + std::to_string(i) + ".json");
  std::vector<models::Record> out;
  for (const auto& f : files) {
    auto file = models::read_records(std::string(RIDGE_SOURCE_DIR) + "/validate/data/h200/" + f);
    for (auto& r : file.records) {
      if (r.op != "elementwise") continue;
      const double s = r.params.value("stride", 1.0);
      const double gap = s * dtype_size(r.params.at("dtype").get<std::string>());
      if (s > 1 && gap >= lo && gap <= hi) out.push_back(std::move(r));
    }
  }
  return out;
}

models::Comparison compare(const std::vector<models::Record>& recs) {
  static const hw::GpuSpec g =
      hw::find_gpu(std::string(RIDGE_SOURCE_DIR) + "/configs/hw/h200-sxm-141gb.calibrated.yaml");
  return models::compare(g, recs, models::Mode::kFast, false);
}

}  // namespace

// Gaps of 4-8 bytes (bf16/fp16 stride 2-4, fp32 stride 2): 34 records, all cold (rotated buffer
// sets). Before round 6 they ran up to 41% slower than predicted (median signed -15%: 2^24 bf16
// stride 2 copy 39.5 us against 27.6, own-set11 2.6 Mi elements 9.15 us against 6.48); with the
// serial load chain each lies within 10.5% (largest: own-set11 silu bf16 1.3 Mi elements, -10.4%).
// Limit 12%: the fitted worst plus 1.5 points (a guard on fitted figures, not a target).
TEST_CASE("strided elementwise: gaps under a sector each within 12%", "[validation]") {
  const auto c = compare(strided(1, 8));
  CHECK(c.rows.size() == 34);
  for (const auto& row : c.rows) {
    INFO(row.id << " (" << row.file << "): " << row.error);
    CHECK(std::fabs(row.error) <= 0.12);
  }
}

// Gaps of 9 bytes and more (137 records, 51 of them with L2 hits, which the chain leaves alone):
// the chain must not move the bandwidth-bound cases much. Median |error| 4.4% before round 6,
// 4.6% after (the 2^24 gap-16 records move from +0.7..+5.9% to +3.7..+6.4%). Limit 5.5%.
TEST_CASE("strided elementwise: wider gaps stay bandwidth-bound", "[validation]") {
  const auto c = compare(strided(9, 1e12));
  const auto& all = c.classes.back();
  REQUIRE(all.op_class == "all");
  INFO("median " << all.median_abs << ", p90 " << all.p90_abs);
  CHECK(all.cases == 137);
  CHECK(all.median_abs <= 0.055);
}
