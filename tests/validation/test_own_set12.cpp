// validate/'s own programs, pre-registered set 12 (issue 18): set 11's mix of classes at the shapes
// of other public models, predicted with round 6's model (serial strided load chains, row-kernel
// block turnover, lone 4-warp sm_80 GEMM CTAs) for the H200, and for the lent H100 with the H200's
// fitted figures and the H100's own front-end periods. Launch cases are scored at the host's
// measured launch cost, read off the pre-registered launch tables. The call got an H200, so the
// H200 files are the ones scored.
// validate/prereg/own-set12/README.md.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <string>

#include "models/records.hpp"
#include "tests/validation/own_set_common.hpp"

using namespace ridge;

namespace {

const std::string kRoot = RIDGE_SOURCE_DIR;
const std::string kSet = kRoot + "/validate/prereg/own-set12/";

}  // namespace

// ---- own-set12 measured (validate/data/h200/own-set12, 2026-12-02) ---------------------------
//
// The targets of issue 18 point 6 on the pre-registered predictions (committed in 9c08c0d, model
// unchanged until the measurement), scored as errors.py scores them (every case; misaligned GEMMs
// apart; launch cases read off launch_table.json at the mean of the two launch probes, the rule
// fixed before measuring). A missed target is [!shouldfail] with its figure.
namespace {

const own_sets::SetErrors& set12() {
  static const auto e = own_sets::score_set(
      kRoot + "/validate/data/h200/own-set12/own-set12.json", kSet + "predictions.json", "",
      kSet + "launch_table.json", kRoot + "/validate/data/h200/own-set12/launch-probe.json");
  return e;
}

}  // namespace

TEST_CASE("own-set12 pre-registered: 132 cases measured and every one scored",
          "[validation][own-set12]") {
  CHECK(set12().all.size() == 132);
  CHECK(set12().by_class.size() == 16);
  CHECK(set12().by_class.at("gemm misaligned").size() == 10);
  CHECK(set12().by_class.at("launch").size() == 10);
}

TEST_CASE("own-set12 pre-registered: median <= 5% (met: 3.8%)", "[validation][own-set12]") {
  CHECK(models::percentile(set12().all, 50) <= 0.05);
}

TEST_CASE("own-set12 pre-registered: p90 <= 15% (missed: 16.4%)",
          "[validation][own-set12][!shouldfail]") {
  CHECK(models::percentile(set12().all, 90) <= 0.15);
}

TEST_CASE(
    "own-set12 pre-registered: every op class median <= 10% (missed: gemm fp32 12.5% launch "
    "16.7%)",
    "[validation][own-set12][!shouldfail]") {
  for (const auto& [c, v] : set12().by_class) {
    INFO(c << ": " << models::percentile(v, 50));
    CHECK(models::percentile(v, 50) <= 0.10);
  }
}

// The fourteen classes that met the class target, each within 10% (guard): every class but fp32
// GEMMs and launches (largest: tf32 GEMMs 9.9%).
TEST_CASE("own-set12 pre-registered: the fourteen classes within 10% (guard)",
          "[validation][own-set12]") {
  int n = 0;
  for (const auto& [c, v] : set12().by_class) {
    if (c == "launch" || c == "gemm fp32") continue;
    ++n;
    INFO(c << ": " << models::percentile(v, 50));
    CHECK(models::percentile(v, 50) <= 0.10);
  }
  CHECK(n == 14);
}
