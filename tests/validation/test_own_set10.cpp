// validate/'s own programs on the H200, pre-registered set 10 (issue 18): set 9's mix of classes
// at the layer shapes of other public models, predicted with the model of b2293b3 (round 3 plus
// round 4's fp32 tile rule, all fitted on sets 1-9). validate/prereg/own-set10/README.md.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <string>

#include "models/records.hpp"
#include "tests/validation/own_set_common.hpp"

using namespace ridge;

// ---- own-set10 measured (validate/data/h200/own-set10, 2026-12-02) ---------------------------
//
// The targets of issue 18 point 6 on the pre-registered predictions (committed in 35a1125, model
// unchanged until the measurement), scored as errors.py scores them (every case; op classes as
// own_sets::op_class with misaligned GEMMs apart): median |error| <= 5%, p90 <= 15%, every
// class's median <= 10%. A missed target is [!shouldfail] with its figure.
namespace {

const own_sets::SetErrors& set10() {
  static const auto e = own_sets::score_set(
      std::string(RIDGE_SOURCE_DIR) + "/validate/data/h200/own-set10/own-set10.json",
      std::string(RIDGE_SOURCE_DIR) + "/validate/prereg/own-set10/predictions.json");
  return e;
}

}  // namespace

TEST_CASE("own-set10 pre-registered: 132 cases measured and every one scored",
          "[validation][own-set10]") {
  CHECK(set10().all.size() == 132);
  CHECK(set10().by_class.size() == 16);
  CHECK(set10().by_class.at("gemm misaligned").size() == 10);
}

TEST_CASE("own-set10 pre-registered: median <= 5% (met: 4.2%)", "[validation][own-set10]") {
  CHECK(models::percentile(set10().all, 50) <= 0.05);
}

TEST_CASE("own-set10 pre-registered: p90 <= 15% (missed: 16.4%)",
          "[validation][own-set10][!shouldfail]") {
  CHECK(models::percentile(set10().all, 90) <= 0.15);
}

TEST_CASE("own-set10 pre-registered: every op class median <= 10% (missed: launch 10.5%)",
          "[validation][own-set10][!shouldfail]") {
  for (const auto& [c, v] : set10().by_class) {
    INFO(c << ": " << models::percentile(v, 50));
    CHECK(models::percentile(v, 50) <= 0.10);
  }
}

// The fifteen classes that met the class target, each within 10% (guard): every class but
// launches (largest: elementwise strided 8.0%; fp32 GEMMs, set 9's other miss, 5.5%).
TEST_CASE("own-set10 pre-registered: the fifteen classes within 10% (guard)",
          "[validation][own-set10]") {
  int n = 0;
  for (const auto& [c, v] : set10().by_class) {
    if (c == "launch") continue;
    ++n;
    INFO(c << ": " << models::percentile(v, 50));
    CHECK(models::percentile(v, 50) <= 0.10);
  }
  CHECK(n == 15);
}
