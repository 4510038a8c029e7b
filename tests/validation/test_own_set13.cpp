// validate/'s own programs, pre-registered set 13 (issue 18): set 12's mix of classes at the shapes
// of other public models, predicted with round 7's model (SIMT GEMM epilogue stores, fp8 tile
// epilogues, row kernels' SM cycle) for the H200, and for the lent H100 with the H200's fitted
// figures and the H100's own front-end periods. Launch cases ran apart, between two host launch
// probes, and are scored at the host's measured launch cost, read off the pre-registered launch
// tables. The call got an H200, so the H200 files are the ones scored.
// validate/prereg/own-set13/README.md.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <string>

#include "models/records.hpp"
#include "tests/validation/own_set_common.hpp"

using namespace ridge;

// ---- own-set13 measured (validate/data/h200/own-set13, 2026-12-03) ---------------------------
//
// The targets of issue 18 point 6 on the pre-registered predictions (committed in a4de030, model
// unchanged until the measurement), scored as errors.py scores them (every case; misaligned GEMMs
// apart; launch cases read off launch_table.json at the mean of the two launch probes, the rule
// fixed before measuring). All three targets were met; the figures are the measured ones.
namespace {

const std::string kRoot = RIDGE_SOURCE_DIR;
const std::string kSet = kRoot + "/validate/prereg/own-set13/";

const own_sets::SetErrors& set13() {
  static const auto e = own_sets::score_set(
      kRoot + "/validate/data/h200/own-set13/own-set13.json", kSet + "predictions.json", "",
      kSet + "launch_table.json", kRoot + "/validate/data/h200/own-set13/launch-probe.json");
  return e;
}

}  // namespace

TEST_CASE("own-set13 pre-registered: 132 cases measured and every one scored",
          "[validation][own-set13]") {
  CHECK(set13().all.size() == 132);
  CHECK(set13().by_class.size() == 16);
  CHECK(set13().by_class.at("gemm misaligned").size() == 10);
  CHECK(set13().by_class.at("launch").size() == 10);
}

TEST_CASE("own-set13 pre-registered: median <= 5% (met: 3.4%)", "[validation][own-set13]") {
  CHECK(models::percentile(set13().all, 50) <= 0.05);
}

TEST_CASE("own-set13 pre-registered: p90 <= 15% (met: 14.8%)", "[validation][own-set13]") {
  CHECK(models::percentile(set13().all, 90) <= 0.15);
}

TEST_CASE("own-set13 pre-registered: every op class median <= 10% (met: largest tf32 9.8%)",
          "[validation][own-set13]") {
  for (const auto& [c, v] : set13().by_class) {
    INFO(c << ": " << models::percentile(v, 50));
    CHECK(models::percentile(v, 50) <= 0.10);
  }
}
