// validate/'s own programs on the H200, pre-registered set 9 (issue 18): set 8's mix of classes at
// the layer shapes of other public models, predicted with the model of cee2f25 (round 3: cuBLAS's
// nvjet tiles and the 16-bit choice rule, row waves overlapping, HBM by direction, the cold-read
// ramp; all fitted on sets 1-8). validate/prereg/own-set9/README.md.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <string>

#include "models/records.hpp"
#include "tests/validation/own_set_common.hpp"

using namespace ridge;

// ---- own-set9 measured (validate/data/h200/own-set9, 2026-12-02) -----------------------------
//
// The targets of issue 18 point 6 on the pre-registered predictions (committed in cd3a9d9, model
// unchanged until the measurement), scored as errors.py scores them (every case; op classes as
// own_sets::op_class with misaligned GEMMs apart): median |error| <= 5%, p90 <= 15%, every
// class's median <= 10%. A missed target is [!shouldfail] with its figure.
namespace {

const own_sets::SetErrors& set9() {
  static const auto e = own_sets::score_set(
      std::string(RIDGE_SOURCE_DIR) + "/validate/data/h200/own-set9/own-set9.json",
      std::string(RIDGE_SOURCE_DIR) + "/validate/prereg/own-set9/predictions.json");
  return e;
}

}  // namespace

TEST_CASE("own-set9 pre-registered: 132 cases measured and every one scored",
          "[validation][own-set9]") {
  CHECK(set9().all.size() == 132);
  CHECK(set9().by_class.size() == 16);
  CHECK(set9().by_class.at("gemm misaligned").size() == 10);
}

TEST_CASE("own-set9 pre-registered: median <= 5% (met: 3.5%)", "[validation][own-set9]") {
  CHECK(models::percentile(set9().all, 50) <= 0.05);
}

TEST_CASE("own-set9 pre-registered: p90 <= 15% (missed: 16.0%)",
          "[validation][own-set9][!shouldfail]") {
  CHECK(models::percentile(set9().all, 90) <= 0.15);
}

TEST_CASE(
    "own-set9 pre-registered: every op class median <= 10% (missed: gemm fp32 16.2% and "
    "launch 10.2%)",
    "[validation][own-set9][!shouldfail]") {
  for (const auto& [c, v] : set9().by_class) {
    INFO(c << ": " << models::percentile(v, 50));
    CHECK(models::percentile(v, 50) <= 0.10);
  }
}

// The fourteen classes that met the class target, each within 10% (guard): every class but fp32
// GEMMs and launches (largest: softmax 8.9%).
TEST_CASE("own-set9 pre-registered: the fourteen classes within 10% (guard)",
          "[validation][own-set9]") {
  int n = 0;
  for (const auto& [c, v] : set9().by_class) {
    if (c == "gemm fp32" || c == "launch") continue;
    ++n;
    INFO(c << ": " << models::percentile(v, 50));
    CHECK(models::percentile(v, 50) <= 0.10);
  }
  CHECK(n == 14);
}
