// validate/'s own programs, pre-registered set 14 (issue 18): a replication of set 13 (set 13's mix
// of classes at the shapes of other public models) with the same kernel model, for the H200 and
// for the lent H100. Launch cases are scored at the host's measured launch cost, read off the
// pre-registered launch tables (probes bracketing the launch cases). The call got an H200, so
// the H200 files are the ones scored. validate/prereg/own-set14/README.md.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <string>

#include "models/records.hpp"
#include "tests/validation/own_set_common.hpp"

using namespace ridge;

// ---- own-set14 measured (validate/data/h200/own-set14, 2026-12-03) ---------------------------
//
// The targets of issue 18 point 6 on the pre-registered predictions (committed in 2ab2743, model
// unchanged until the measurement), scored as errors.py scores them (every case; misaligned GEMMs
// apart; launch cases read off launch_table.json at the mean of the two launch probes, the rule
// fixed before measuring). All three targets were met; the figures are the measured ones.
namespace {

const std::string kRoot = RIDGE_SOURCE_DIR;
const std::string kSet = kRoot + "/validate/prereg/own-set14/";

const own_sets::SetErrors& set14() {
  static const auto e = own_sets::score_set(
      kRoot + "/validate/data/h200/own-set14/own-set14.json", kSet + "predictions.json", "",
      kSet + "launch_table.json", kRoot + "/validate/data/h200/own-set14/launch-probe.json");
  return e;
}

}  // namespace

TEST_CASE("own-set14 pre-registered: 132 cases measured and every one scored",
          "[validation][own-set14]") {
  CHECK(set14().all.size() == 132);
  CHECK(set14().by_class.size() == 16);
  CHECK(set14().by_class.at("gemm misaligned").size() == 10);
  CHECK(set14().by_class.at("launch").size() == 10);
}

TEST_CASE("own-set14 pre-registered: median <= 5% (met: 3.3%)", "[validation][own-set14]") {
  REQUIRE(set14().all.size() == 132);
  CHECK(models::percentile(set14().all, 50) <= 0.05);
}

TEST_CASE("own-set14 pre-registered: p90 <= 15% (met: 14.6%)", "[validation][own-set14]") {
  REQUIRE(set14().all.size() == 132);
  CHECK(models::percentile(set14().all, 90) <= 0.15);
}

TEST_CASE("own-set14 pre-registered: every op class median <= 10% (met: largest tf32 8.6%)",
          "[validation][own-set14]") {
  REQUIRE(set14().by_class.size() == 16);
  for (const auto& [c, v] : set14().by_class) {
    INFO(c << ": " << models::percentile(v, 50));
    CHECK(models::percentile(v, 50) <= 0.10);
  }
}
