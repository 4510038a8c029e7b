// validate/'s own programs on the H200, pre-registered set 8 (issue 18): set 7's mix of classes at
// the layer shapes of other public models, predicted with the model of 6c772e2 (set 7's plus the
// fp32 SIMT tile rate, misaligned GEMMs' split-K and 2-byte ratios, graph replays as first + n x
// period, all fitted on sets 1-7). validate/prereg/own-set8/README.md.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <string>

#include "models/records.hpp"
#include "tests/validation/own_set_common.hpp"

using namespace ridge;

// ---- own-set8 measured (validate/data/h200/own-set8, 2026-12-02) -----------------------------
//
// The targets of issue 18 point 6 on the pre-registered predictions (committed in 7f3fd63, model
// unchanged until the measurement), scored as errors.py scores them (every case; op classes as
// own_sets::op_class with misaligned GEMMs apart): median |error| <= 5%, p90 <= 15%, every
// class's median <= 10%. A missed target is [!shouldfail] with its figure.
namespace {

const own_sets::SetErrors& set8() {
  static const auto e = own_sets::score_set(
      std::string(RIDGE_SOURCE_DIR) + "/validate/data/h200/own-set8/own-set8.json",
      std::string(RIDGE_SOURCE_DIR) + "/validate/prereg/own-set8/predictions.json");
  return e;
}

}  // namespace

TEST_CASE("own-set8 pre-registered: 132 cases measured and every one scored",
          "[validation][own-set8]") {
  CHECK(set8().all.size() == 132);
  CHECK(set8().by_class.size() == 16);
  CHECK(set8().by_class.at("gemm misaligned").size() == 10);
}

TEST_CASE("own-set8 pre-registered: median <= 5% (missed: 5.8%)",
          "[validation][own-set8][!shouldfail]") {
  CHECK(models::percentile(set8().all, 50) <= 0.05);
}

TEST_CASE("own-set8 pre-registered: p90 <= 15% (missed: 17.4%)",
          "[validation][own-set8][!shouldfail]") {
  CHECK(models::percentile(set8().all, 90) <= 0.15);
}

TEST_CASE("own-set8 pre-registered: every op class median <= 10% (met: largest 9.0%)",
          "[validation][own-set8]") {
  for (const auto& [c, v] : set8().by_class) {
    INFO(c << ": " << models::percentile(v, 50));
    CHECK(models::percentile(v, 50) <= 0.10);
  }
}
