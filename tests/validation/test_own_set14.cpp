// validate/'s own programs, pre-registered set 14 (issue 18): a replication of set 13 (set 13's mix
// of classes at the shapes of other public models) with the same kernel model, for the H200 and
// for the lent H100. Launch cases are scored at the host's measured launch cost, read off the
// pre-registered launch tables (probes bracketing the launch cases).
// validate/prereg/own-set14/README.md.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <string>

#include "hw/gpu_loader.hpp"
#include "models/kernel_model.hpp"
#include "models/op.hpp"
#include "tests/validation/own_set_common.hpp"

using namespace ridge;

namespace {

const std::string kRoot = RIDGE_SOURCE_DIR;
const std::string kSet = kRoot + "/validate/prereg/own-set14/";

double predict_us(const hw::GpuSpec& g, const nlohmann::json& op, const nlohmann::json& params,
                  const nlohmann::json& timing) {
  const auto spec = models::OpSpec::from_json(op.get<std::string>(), params);
  // Host copies are timed per call (their launch in), as ridge predict reads timing.method.
  const auto t =
      timing.at("method") == "per_call" ? models::Timing::kPerCall : models::Timing::kKernel;
  return models::predict_kernel(g, spec, models::Mode::kFast, t).time_s * 1e6;
}

// The model in the tree reproduces a committed predictions file, case by case (1e-6 relative; the
// file keeps every digit). A change to the fast model or to the config fails this until the set is
// measured; after it, such a change needs a new pre-registered set and removes this check in its
// own commit.
void check_predictions(const std::string& config, const std::string& file) {
  const hw::GpuSpec g = hw::find_gpu(kRoot + "/" + config);
  const auto pred = own_sets::read_json(kSet + file);
  const auto cases = own_sets::read_json(kSet + "cases.json");
  REQUIRE(pred.at("records").size() == 132);
  REQUIRE(cases.at("records").size() == 132);
  for (size_t i = 0; i < 132; ++i) {
    const auto& r = pred.at("records")[i];
    const auto& c = cases.at("records")[i];
    INFO(r.at("id").get<std::string>());
    REQUIRE(r.at("id") == c.at("id"));
    if (c.contains("buffers")) REQUIRE(r.at("params").at("buffers") == c.at("buffers"));
    CHECK(predict_us(g, r.at("op"), r.at("params"), c.at("timing")) ==
          Approx(r.at("timing").at("median_us").get<double>()).epsilon(1e-6));
  }
}

// The launch table (validate/prereg/launch_table.py) is the same model with host_launch_cuda set
// to each column's figure: three columns (both ends and one inside) are re-predicted here.
void check_launch_table(const std::string& config, const std::string& file) {
  const auto table = own_sets::read_json(kSet + file);
  const auto cases = own_sets::read_json(kSet + "cases.json");
  const auto probe = own_sets::read_json(kSet + "host_launch_probe.json");
  const std::vector<double> hosts = table.at("host_launch_us");
  REQUIRE(hosts.size() == 49);
  for (const size_t col : {size_t{0}, size_t{24}, size_t{48}}) {
    hw::GpuSpec g = hw::find_gpu(kRoot + "/" + config);
    g.model["host_launch_cuda"] = hosts[col] * 1e-6;
    size_t seen = 0;
    auto check = [&](const nlohmann::json& r, const std::string& id) {
      INFO(id << " at host_launch_cuda " << hosts[col] << " us");
      const std::vector<double> v = table.at("cases").at(id);
      CHECK(predict_us(g, r.at("op"), r.at("params"), r.at("timing")) ==
            Approx(v[col]).epsilon(1e-6));
      ++seen;
    };
    for (const auto& r : cases.at("records")) {
      const std::string id = r.at("id");
      if (id.rfind("launch/", 0) == 0) check(r, id);
    }
    for (const auto& r : probe.at("records")) check(r, "probe/" + r.at("id").get<std::string>());
    CHECK(seen == table.at("cases").size());
  }
}

}  // namespace

TEST_CASE("own-set14 (H200): the current model reproduces the pre-registered predictions",
          "[validation][own-set14]") {
  check_predictions("configs/hw/h200-sxm-141gb.calibrated.yaml", "predictions.json");
  check_launch_table("configs/hw/h200-sxm-141gb.calibrated.yaml", "launch_table.json");
}

TEST_CASE("own-set14 (H100): the current model reproduces the pre-registered predictions",
          "[validation][own-set14]") {
  check_predictions("configs/hw/h100-sxm5-80gb.lent.yaml", "predictions-h100.json");
  check_launch_table("configs/hw/h100-sxm5-80gb.lent.yaml", "launch_table-h100.json");
}
