// validate/'s own programs on the H200, pre-registered set 6 (issue 18): strided reads at gaps,
// footprints, dtypes, ops and buffer sets no earlier record measured, predicted with the swept-L2
// hit fraction and the cold per-atom cap at an HBM3 page (models/kernel.cpp
// l2_sweep_hit_fraction, hbm_row_spread). validate/prereg/own-set6/README.md.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <string>

#include "hw/gpu_loader.hpp"
#include "models/kernel_model.hpp"
#include "models/op.hpp"
#include "models/records.hpp"
#include "tests/validation/own_set_common.hpp"

using namespace ridge;

// ---- own-set6 (validate/prereg/own-set6): the freeze until it is measured --------------------
//
// The model set 6 was pre-registered with is the model in the tree: its predictions reproduce the
// committed ones (1e-6 relative; the file keeps every digit). A change to the fast model or the
// calibrated H200 config fails this test: before the measurement such a change re-makes
// predictions.json in a commit of its own; after it, the change needs a new pre-registered set
// and removes this check in its own commit.
TEST_CASE("own-set6: the current model reproduces the pre-registered predictions",
          "[validation][own-set6]") {
  const std::string root = RIDGE_SOURCE_DIR;
  const hw::GpuSpec g = hw::find_gpu(root + "/configs/hw/h200-sxm-141gb.calibrated.yaml");
  const auto pred = own_sets::read_json(root + "/validate/prereg/own-set6/predictions.json");
  const auto cases = own_sets::read_json(root + "/validate/prereg/own-set6/cases.json");
  REQUIRE(pred.at("records").size() == 19);
  REQUIRE(cases.at("records").size() == 19);
  for (size_t i = 0; i < 19; ++i) {
    const auto& r = pred.at("records")[i];
    const auto& c = cases.at("records")[i];
    INFO(r.at("id").get<std::string>());
    // Each prediction is of its case, with the buffer sets the case names beside its params.
    REQUIRE(r.at("id") == c.at("id"));
    REQUIRE(r.at("params").at("buffers") == c.at("buffers"));
    const auto spec = models::OpSpec::from_json(r.at("op").get<std::string>(), r.at("params"));
    const double t = models::predict_kernel(g, spec).time_s * 1e6;
    CHECK(t == Approx(r.at("timing").at("median_us").get<double>()).epsilon(1e-6));
  }
}

// ---- own-set6 measured (validate/data/h200/own-set6, 2026-12-02) -----------------------------
//
// The targets of issue 18 on the pre-registered predictions, scored as errors.py scores them
// (every case, one class): median |error| <= 5%, p90 <= 15%, the class's median <= 10%. A missed
// target is [!shouldfail] with its figure; the met ones are plain tests.
namespace {

const own_sets::SetErrors& set6() {
  static const auto e = own_sets::score_set(
      std::string(RIDGE_SOURCE_DIR) + "/validate/data/h200/own-set6/own-set6.json",
      std::string(RIDGE_SOURCE_DIR) + "/validate/prereg/own-set6/predictions.json");
  return e;
}

}  // namespace

TEST_CASE("own-set6 pre-registered: 19 cases measured and every one scored",
          "[validation][own-set6]") {
  CHECK(set6().all.size() == 19);
  REQUIRE(set6().by_class.size() == 1);
  CHECK(set6().by_class.count("elementwise strided") == 1);
}

TEST_CASE("own-set6 pre-registered: median <= 5% (missed: 7.6%)",
          "[validation][own-set6][!shouldfail]") {
  CHECK(models::percentile(set6().all, 50) <= 0.05);
}

TEST_CASE("own-set6 pre-registered: p90 <= 15% (met: 14.0%)", "[validation][own-set6]") {
  CHECK(models::percentile(set6().all, 90) <= 0.15);
}

TEST_CASE("own-set6 pre-registered: the strided class median <= 10% (met: 7.6%)",
          "[validation][own-set6]") {
  CHECK(models::percentile(set6().by_class.at("elementwise strided"), 50) <= 0.10);
}
