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
