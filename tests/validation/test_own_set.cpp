// validate/'s own programs on the H200, pre-registered set 1 (validate/prereg/own-set1,
// validate/data/h200/own-set1, validate/README.md "Own programs, pre-registered set 1").
//
// The protocol: the model (fast mode, configs/hw/h200-sxm-141gb.calibrated.yaml) was frozen and
// its predictions for 138 cases that no committed record measured were committed (8528ae1) before
// any device call measured them. Not measured yet (the session that made them was lent no GPU:
// new device loans were paused); until then this file guards the freeze: the model in the tree
// must still give the committed predictions. The measurement commit adds the targets of issue 18
// point 6 on the pre-registered predictions (scored as the README fixed: every case but the 8
// attention ones), each missed target as a [!shouldfail] test whose name states the miss.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <fstream>
#include <string>

#include "hw/gpu_loader.hpp"
#include "models/kernel_model.hpp"
#include "models/op.hpp"

using namespace ridge;

namespace {
const std::string kRoot = RIDGE_SOURCE_DIR;

nlohmann::json read_json(const std::string& path) {
  std::ifstream f(path);
  REQUIRE(f.good());
  return nlohmann::json::parse(f);
}
}  // namespace

// The model the set was pre-registered with is the model in the tree: its predictions reproduce the
// committed ones (1e-6 relative; the file keeps every digit). A change to the fast model or the
// calibrated H200 config fails this test: until the set is measured, such a change re-makes
// predictions.json (validate/prereg/own-set1/README.md's command) in a commit of its own, before
// any measurement; once it is measured, the change needs a new pre-registered set instead.
TEST_CASE("own-set1: the current model reproduces the pre-registered predictions", "[validation]") {
  const hw::GpuSpec g = hw::find_gpu(kRoot + "/configs/hw/h200-sxm-141gb.calibrated.yaml");
  const auto pred = read_json(kRoot + "/validate/prereg/own-set1/predictions.json");
  for (const auto& r : pred.at("records")) {
    const auto spec = models::OpSpec::from_json(r.at("op").get<std::string>(), r.at("params"));
    const auto timing = r.at("timing").at("method") == "per_call" ? models::Timing::kPerCall
                                                                  : models::Timing::kKernel;
    const double t = models::predict_kernel(g, spec, models::Mode::kFast, timing).time_s * 1e6;
    INFO(r.at("id").get<std::string>());
    CHECK(t == Approx(r.at("timing").at("median_us").get<double>()).epsilon(1e-6));
  }
}
