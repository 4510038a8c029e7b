// validate/'s own programs on the H200, pre-registered set 7 (issue 18): every class the fast
// kernel model prices, at the layer shapes of public models, predicted with the model of b63b6a2
// (set 6's plus misaligned GEMMs on cuBLAS's sm_80 tiles and the pageable-copy forms of the
// host-set round). validate/prereg/own-set7/README.md.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "hw/gpu_loader.hpp"
#include "models/kernel_model.hpp"
#include "models/op.hpp"
#include "models/records.hpp"
#include "tests/validation/own_set_common.hpp"

using namespace ridge;

// ---- own-set7 measured (validate/data/h200/own-set7, 2026-12-02) -----------------------------
//
// The targets of issue 18 point 6 on the pre-registered predictions (committed in 3f756cc, model
// unchanged until the measurement), scored as errors.py scores them (every case; op classes as
// own_sets::op_class with misaligned GEMMs apart): median |error| <= 5%, p90 <= 15%, every
// class's median <= 10%. A missed target is [!shouldfail] with its figure.
namespace {

const own_sets::SetErrors& set7() {
  static const auto e = own_sets::score_set(
      std::string(RIDGE_SOURCE_DIR) + "/validate/data/h200/own-set7/own-set7.json",
      std::string(RIDGE_SOURCE_DIR) + "/validate/prereg/own-set7/predictions.json");
  return e;
}

}  // namespace

TEST_CASE("own-set7 pre-registered: 132 cases measured and every one scored",
          "[validation][own-set7]") {
  CHECK(set7().all.size() == 132);
  CHECK(set7().by_class.size() == 16);
  CHECK(set7().by_class.at("gemm misaligned").size() == 10);
}

TEST_CASE("own-set7 pre-registered: median <= 5% (missed: 6.3%)",
          "[validation][own-set7][!shouldfail]") {
  CHECK(models::percentile(set7().all, 50) <= 0.05);
}

TEST_CASE("own-set7 pre-registered: p90 <= 15% (missed: 21.5%)",
          "[validation][own-set7][!shouldfail]") {
  CHECK(models::percentile(set7().all, 90) <= 0.15);
}

TEST_CASE(
    "own-set7 pre-registered: every op class median <= 10% (missed: gemm misaligned 17.8%; gemm "
    "fp32 15.7%; launch 12.8%)",
    "[validation][own-set7][!shouldfail]") {
  for (const auto& [c, v] : set7().by_class) {
    INFO(c << ": " << models::percentile(v, 50));
    CHECK(models::percentile(v, 50) <= 0.10);
  }
}

TEST_CASE("own-set7 pre-registered: the 13 op classes that met their 10% median",
          "[validation][own-set7]") {
  for (const auto& [c, v] : set7().by_class) {
    if (c == "gemm misaligned" || c == "gemm fp32" || c == "launch") continue;
    INFO(c << ": " << models::percentile(v, 50));
    CHECK(models::percentile(v, 50) <= 0.10);
  }
}

// ---- fp32 (SIMT) GEMMs on the live model (issue 18, after own-set7's fp32 miss) ----------------
//
// The SIMT tile rate falls with the tile's (m + n) / (m n) (op_library.cpp simt_tile_factor, a FIT
// to these very records) and SIMT GEMMs may split k over many waves (plan_gemm): this checks the
// fit and the tile search together, it is no prediction. Every fp32 GEMM record of own-set1..7 and
// gemm.json (96), predicted now with the calibrated H200 (models::percentile). Before the tile
// factor and the SIMT split-K: median |error| 3.7%, p90 26.2%, set 7's eight 15.7% (all too fast);
// after: 2.9%, 20.8%, 11.9%. Budgets 4.5%, 24.5% and 12.5%: room for small changes elsewhere in the
// kernel model; the p90 and set-7 budgets fail on the model before the change.
TEST_CASE("fp32 GEMMs of all sets on the live model: SIMT tile rates by tile shape",
          "[validation][own-set7][fp32]") {
  const hw::GpuSpec g =
      hw::find_gpu(std::string(RIDGE_SOURCE_DIR) + "/configs/hw/h200-sxm-141gb.calibrated.yaml");
  std::vector<std::string> files = {"/validate/data/h200/gemm.json"};
  for (int i = 1; i <= 7; ++i)
    files.push_back("/validate/data/h200/own-set" + std::to_string(i) + "/own-set" +
                    std::to_string(i) + ".json");
  std::vector<double> all, set7;
  for (const auto& f : files) {
    const auto data = own_sets::read_json(std::string(RIDGE_SOURCE_DIR) + f);
    for (const auto& r : data.at("records")) {
      if (r.value("op", "") != "gemm" || r.at("params").value("dtype", "") != "fp32") continue;
      const auto& p = r.at("params");
      nlohmann::json q = {{"m", p.at("m")},
                          {"n", p.at("n")},
                          {"k", p.at("k")},
                          {"dtype", "fp32"},
                          {"batch", p.value("batch", 1)}};
      for (const char* key : {"trans_a", "trans_b"})
        if (p.contains(key)) q[key] = p.at(key);
      const double t = models::predict_kernel(g, models::OpSpec::from_json("gemm", q)).time_s;
      const double m = r.at("timing").at("median_us").get<double>() * 1e-6;
      all.push_back(std::abs(t - m) / m);
      if (f.find("own-set7") != std::string::npos) set7.push_back(all.back());
    }
  }
  REQUIRE(all.size() == 96);
  REQUIRE(set7.size() == 8);
  CHECK(models::percentile(all, 50) <= 0.045);
  CHECK(models::percentile(all, 90) <= 0.245);
  CHECK(models::percentile(set7, 50) <= 0.125);
}
