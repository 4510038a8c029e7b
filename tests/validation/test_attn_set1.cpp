// Pre-registered attention set 1 (issue 18, validate/prereg/attn-set1): PyTorch SDPA at the
// attention shapes of public models, predicted before its measurement. Until the measurement
// lands, the model in the tree must reproduce the committed predictions.json (the attention
// round's model); predictions-round7.json, the model before that round, is kept as committed and
// scored beside it. validate/prereg/attn-set1/README.md.
#include <catch2/catch.hpp>

#include <cstddef>
#include <string>

#include "hw/gpu_loader.hpp"
#include "models/kernel_model.hpp"
#include "models/op.hpp"
#include "tests/validation/own_set_common.hpp"

using namespace ridge;

TEST_CASE("attn-set1: the current model reproduces the pre-registered predictions",
          "[validation][attn-set1]") {
  const std::string dir = std::string(RIDGE_SOURCE_DIR) + "/validate/prereg/attn-set1/";
  const hw::GpuSpec g =
      hw::find_gpu(std::string(RIDGE_SOURCE_DIR) + "/configs/hw/h200-sxm-141gb.calibrated.yaml");
  const auto pred = own_sets::read_json(dir + "predictions.json").at("records");
  const auto cases = own_sets::read_json(dir + "cases.json").at("records");
  REQUIRE(pred.size() == 30);
  REQUIRE(cases.size() == 30);
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const auto& c = cases[i];
    REQUIRE(pred[i].at("id") == c.at("id"));
    const auto spec = models::OpSpec::from_json(c.at("op").get<std::string>(), c.at("params"));
    const double us =
        models::predict_kernel(g, spec, models::Mode::kFast, models::Timing::kKernel).time_s * 1e6;
    INFO(c.at("id").get<std::string>());
    CHECK(us == Approx(pred[i].at("timing").at("median_us").get<double>()).epsilon(1e-6));
  }
}
