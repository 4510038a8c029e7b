// validate/'s own programs on the H200, round 4 (issue 18 point 6): what own-set3's misses changed
// in the model, each checked against a hand derivation: GEMMs with 4- and 8-byte-aligned rows at
// one rate and 2-byte-aligned rows at gemm_unaligned_2byte_ratio of it (models/op_library.cpp
// unaligned_tensor_scale), and pageable copies at the fitted efficiencies again (the host-probe
// staging formula refuted by set 3 and removed).
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "hw/gpu_loader.hpp"
#include "models/kernel.hpp"
#include "models/kernel_model.hpp"
#include "models/op.hpp"
#include "models/records.hpp"
#include "tests/validation/own_set_common.hpp"

using namespace ridge;

TEST_CASE("GEMM rows 4 or 8 bytes aligned run at one rate, 2-byte rows at the 2-byte ratio of it",
          "[validation][own-set4]") {
  hw::GpuSpec g = hw::find_gpu(std::string(RIDGE_SOURCE_DIR) + "/configs/hw/h200-sxm-141gb.yaml");
  g.model["power_cap_w"] = 0.0;  // no power roof: compute time scales with the tensor rate alone
  g.model["gemm_unaligned_tensor_fraction"] = 0.5;
  auto t = [&](double ratio, long long k) {
    g.model["gemm_unaligned_2byte_ratio"] = ratio;
    models::clear_kernel_memo();
    const auto spec =
        models::OpSpec::from_json("gemm", {{"m", 8192}, {"n", 8192}, {"k", k}, {"dtype", "fp16"}});
    return models::predict_kernel(g, spec).time_s;
  };
  // 8192 x 8192 x k fp16, compute-bound. k 8196: 16392-byte rows, 8-byte aligned; k 8194: 16388,
  // 4-byte aligned: the same rate, so the same time within 0.1% (one k step more or less).
  CHECK(t(0.5, 8194) / t(0.5, 8196) == Approx(1.0).epsilon(0.001));
  // k 8193: 16386-byte rows, 2-byte aligned: half the rate at ratio 0.5, so twice the main loop
  // (within 5%: prologue, epilogue and tile overheads stay), and a ratio of 1 is the 4-byte rate.
  CHECK(t(0.5, 8193) / t(0.5, 8194) == Approx(2.0).epsilon(0.05));
  CHECK(t(1.0, 8193) / t(0.5, 8194) == Approx(1.0).epsilon(0.001));
  // Rows of 4 and 8 bytes do not read the ratio; aligned rows (k 8192) read neither.
  CHECK(t(0.25, 8194) == t(0.5, 8194));
  CHECK(t(0.25, 8192) == t(0.5, 8192));
}

TEST_CASE("a pageable copy costs its bytes at the fitted pageable rate, whatever the host",
          "[validation][own-set4]") {
  hw::GpuSpec g = hw::find_gpu(std::string(RIDGE_SOURCE_DIR) + "/configs/hw/h200-sxm-141gb.yaml");
  g.model["copy_latency"] = 4e-6;
  g.model["pcie_efficiency_pageable_d2h"] = 0.25;
  g.model["pcie_efficiency_pageable"] = 0.25;
  g.model["pcie_efficiency_pageable_uncached"] = 0.125;
  g.model["host_cache_bytes"] = 1e8;
  const double link = g.interconnect.pcie_bandwidth;
  auto per_call = [&](long long bytes, const char* dir) {
    const auto spec = models::OpSpec::from_json(
        "copy", {{"bytes", bytes}, {"direction", dir}, {"memory", "pageable"}});
    return models::predict_kernel(g, spec, models::Mode::kFast, models::Timing::kPerCall)
        .per_call_time_s;
  };
  // d2h, 3e8 bytes: 4 us + 3e8 / (0.25 link).
  CHECK(per_call(300'000'000, "d2h") == Approx(4e-6 + 3e8 / (0.25 * link)).epsilon(1e-12));
  // h2d, 3e8 bytes: 1e8 from the host's caches at 0.25 link, 2e8 from DRAM at 0.125 link.
  CHECK(per_call(300'000'000, "h2d") ==
        Approx(4e-6 + 1e8 / (0.25 * link) + 2e8 / (0.125 * link)).epsilon(1e-12));
}

// ---- own-set4 measured (validate/data/h200/own-set4, 2026-12-02) -----------------------------
//
// The targets of issue 18 point 6 on the pre-registered predictions, scored as errors.py scores
// them (every case; op classes as own_sets::op_class with misaligned GEMMs apart): median |error|
// <= 5%, p90 <= 15%, every class's median <= 10%. A missed target is [!shouldfail] with its figure.
namespace {

struct Set4 {
  std::vector<double> all;
  std::map<std::string, std::vector<double>> by_class;
};

const Set4& set4() {
  static const Set4 e = [] {
    const std::string root = RIDGE_SOURCE_DIR;
    const auto measured = own_sets::read_json(root + "/validate/data/h200/own-set4/own-set4.json");
    const auto pred = own_sets::read_json(root + "/validate/prereg/own-set4/predictions.json");
    std::map<std::string, double> p;
    for (const auto& r : pred.at("records")) p[r.at("id")] = r.at("timing").at("median_us");
    Set4 out;
    for (const auto& r : measured.at("records")) {
      const double m = r.at("timing").at("median_us");
      const double err = std::abs(p.at(r.at("id")) - m) / m;
      out.by_class[own_sets::op_class(r, true)].push_back(err);
      out.all.push_back(err);
    }
    return out;
  }();
  return e;
}

}  // namespace

TEST_CASE("own-set4 pre-registered: 132 cases measured and every one scored",
          "[validation][own-set4]") {
  CHECK(set4().all.size() == 132);
  CHECK(set4().by_class.size() == 16);
  CHECK(set4().by_class.at("gemm misaligned").size() == 10);
}

TEST_CASE("own-set4 pre-registered: median <= 5% (missed: 6.4%)",
          "[validation][own-set4][!shouldfail]") {
  CHECK(models::percentile(set4().all, 50) <= 0.05);
}

TEST_CASE("own-set4 pre-registered: p90 <= 15% (missed: 28.7%)",
          "[validation][own-set4][!shouldfail]") {
  CHECK(models::percentile(set4().all, 90) <= 0.15);
}

TEST_CASE(
    "own-set4 pre-registered: every op class median <= 10% (missed: elementwise strided 66.8%; "
    "gemm misaligned 20.0%; launch 13.5%; copy d2h 11.0%)",
    "[validation][own-set4][!shouldfail]") {
  for (const auto& [c, v] : set4().by_class) {
    INFO(c << ": " << models::percentile(v, 50));
    CHECK(models::percentile(v, 50) <= 0.10);
  }
}

TEST_CASE("own-set4 pre-registered: the 12 op classes that met their 10% median",
          "[validation][own-set4]") {
  for (const auto& [c, v] : set4().by_class) {
    if (c == "elementwise strided" || c == "gemm misaligned" || c == "launch" || c == "copy d2h")
      continue;
    INFO(c << ": " << models::percentile(v, 50));
    CHECK(models::percentile(v, 50) <= 0.10);
  }
}
