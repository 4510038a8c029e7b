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
#include "models/kernel.hpp"
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

// ---- after own-set7: misaligned GEMMs and CUDA-graph replays (docs/accuracy.md) ---------------

namespace {

hw::GpuSpec calibrated_h200() {
  return hw::find_gpu(std::string(RIDGE_SOURCE_DIR) + "/configs/hw/h200-sxm-141gb.calibrated.yaml");
}

double gemm_s(const hw::GpuSpec& g, long long m, long long n, long long k, const char* dt) {
  models::clear_kernel_memo();
  return models::predict_kernel(
             g, models::OpSpec::from_json("gemm", {{"m", m}, {"n", n}, {"k", k}, {"dtype", dt}}))
      .time_s;
}

}  // namespace

TEST_CASE("a 2-byte k row reads the 2-byte ratio and a 2-byte C row alone the C ratio",
          "[validation][own-set7]") {
  hw::GpuSpec g = hw::find_gpu(std::string(RIDGE_SOURCE_DIR) + "/configs/hw/h200-sxm-141gb.yaml");
  g.model["power_cap_w"] = 0.0;  // no power roof: compute time scales with the tensor rate alone
  g.model["gemm_unaligned_tensor_fraction"] = 0.5;
  auto t = [&](double k_ratio, double c_ratio, long long n, long long k) {
    g.model["gemm_unaligned_2byte_ratio"] = k_ratio;
    g.model["gemm_unaligned_2byte_c_ratio"] = c_ratio;
    return gemm_s(g, 8192, n, k, "fp16");
  };
  // 8192 x n x 8192 fp16, compute-bound. n 8193: C rows of 16386 bytes, 2-byte aligned, A and B
  // rows 16-byte aligned: the C ratio sets the rate, the k ratio is not read; halving the C ratio
  // doubles the main loop (within 5%: prologue, epilogue and tile overheads stay).
  CHECK(t(0.25, 0.5, 8193, 8192) == t(1.0, 0.5, 8193, 8192));
  CHECK(t(1.0, 0.5, 8193, 8192) / t(1.0, 1.0, 8193, 8192) == Approx(2.0).epsilon(0.05));
  // n 8194 (4-byte C rows) reads neither ratio.
  CHECK(t(0.25, 0.25, 8194, 8192) == t(1.0, 1.0, 8194, 8192));
  // k 8193 (2-byte A and B rows) reads the k ratio, with or without a 2-byte C row.
  CHECK(t(0.5, 0.25, 8192, 8193) == t(0.5, 1.0, 8192, 8193));
  CHECK(t(0.5, 0.25, 8193, 8193) == t(0.5, 1.0, 8193, 8193));
  CHECK(t(0.5, 1.0, 8192, 8193) / t(1.0, 1.0, 8192, 8193) == Approx(2.0).epsilon(0.05));
}

// cuBLASLt's sm_80-class kernels split k to fill waves whatever the tile count (own-set7's fp16
// 4096x768x50257: 96 output tiles of 256x128 on 132 SMs at one CTA each, split 11 ways into 1056
// CTAs, waves_count 8.00). Unsplit, 36 SMs idle through the whole k loop; the model's search
// must find a split whose CTAs fill at least 90% of the SM slots of their waves, more than the
// two ways the aligned kernels' rule allows (at most two waves of CTAs).
TEST_CASE("a misaligned GEMM with few output tiles is split into full waves as cuBLAS splits it",
          "[validation][own-set7]") {
  const hw::GpuSpec g = calibrated_h200();
  models::clear_kernel_memo();
  const auto p = models::predict_kernel(
      g, models::OpSpec::from_json("gemm",
                                   {{"m", 4096}, {"n", 768}, {"k", 50257}, {"dtype", "fp16"}}));
  const int split = p.detail.at("split_k").get<int>();
  const double ctas = p.detail.at("tiles").get<double>();
  const double slots = 132.0 * p.occupancy.blocks_per_sm;
  INFO("split " << split << ", " << ctas << " CTAs, " << slots << " slots");
  CHECK(split > 2);
  CHECK(ctas / (std::ceil(ctas / slots) * slots) >= 0.9);
}

// A CUDA-graph replay of n empty kernels costs graph_replay_first + n x graph_node_period
// (hw/model_params.cpp: a FIT on the 15 graph records of launch.json and own-set1..4, 7). The
// per-kernel figure the launch op reports is that over n; checked here against the measured
// records of launch.json and own-set7 (fit data: the fit's largest residual over all 15 is
// 2.7%, so 3%; the single gap of 572 ns it replaced ran 14% over graph/2200).
TEST_CASE("a CUDA-graph replay costs a start plus a period per kernel node",
          "[validation][own-set7]") {
  const hw::GpuSpec g = calibrated_h200();
  auto per_kernel_us = [&](int n) {
    return models::predict_kernel(
               g, models::OpSpec::from_json("launch", {{"kind", "graph"}, {"kernels", n}}))
               .time_s *
           1e6;
  };
  const double first = g.param("graph_replay_first"), period = g.param("graph_node_period");
  for (int n : {10, 250, 2200})
    CHECK(per_kernel_us(n) == Approx((first / n + period) * 1e6).epsilon(1e-9));
  // Measured medians (us per kernel): launch.json graph/10 0.6304, graph/1000 0.501888;
  // own-set7 graph/250 0.511104, graph/2200 0.5006109.
  CHECK(per_kernel_us(10) == Approx(0.6304).epsilon(0.03));
  CHECK(per_kernel_us(1000) == Approx(0.501888).epsilon(0.03));
  CHECK(per_kernel_us(250) == Approx(0.511104).epsilon(0.03));
  CHECK(per_kernel_us(2200) == Approx(0.5006109).epsilon(0.03));
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
