// Tensor-core GEMM tiles (issue 18, round 3, after own-set8's GEMM tail): the tile search offers
// the large nvjet tiles of cuBLAS whose n side is not a power of two (128x320, 160x128, 128x144,
// 128x112; plan_gemm's kTensor). The list was read off these very records (each tile recurs in
// 5-7 of the 7 GEMM data sets), so this checks a model-structure change on seen data: a FIT in the
// project's sense, not a prediction.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "hw/gpu_loader.hpp"
#include "models/kernel.hpp"
#include "models/kernel_model.hpp"
#include "models/op.hpp"
#include "models/records.hpp"
#include "tests/validation/own_set_common.hpp"

using namespace ridge;

// Every 16-bit and fp8 GEMM record of gemm.json and own-set1..4, 7, 8 that cuBLASLt ran on one
// of those four tiles (library.tile is cuBLAS's column-major tile, n side first: "320x128" is a
// row-major 128x320 tile; algo 66, the nvjet kernels): 82 records. Predicted with the calibrated
// H200 (models::percentile). Before the tiles were offered: median |error| 3.3%, p90 14.7%, max
// 32.7% (fp16 2048 x 2560 x 10240: 220 tiles of 192x128, two waves priced, where cuBLAS ran 128
// tiles of 128x320 in one); after: 3.4%, 10.3%, 16.7%. Budgets: p90 12% (fails on the model
// before the change; 1.7 points of room for changes elsewhere in the kernel model), median 4.5%
// (the median does not move: those records' tiles were mostly priced within a few percent
// before, the change is in the tail) and max 20%.
TEST_CASE("GEMMs that cuBLAS ran on its non-power-of-two nvjet tiles: the search offers them",
          "[validation][gemm-tiles]") {
  const hw::GpuSpec g =
      hw::find_gpu(std::string(RIDGE_SOURCE_DIR) + "/configs/hw/h200-sxm-141gb.calibrated.yaml");
  std::vector<std::string> files = {"/validate/data/h200/gemm.json"};
  for (int i : {1, 2, 3, 4, 7, 8})
    files.push_back("/validate/data/h200/own-set" + std::to_string(i) + "/own-set" +
                    std::to_string(i) + ".json");
  const std::set<std::string> tiles = {"320x128", "128x160", "144x128", "112x128"};
  std::vector<double> errs;
  for (const auto& f : files) {
    const auto data = own_sets::read_json(std::string(RIDGE_SOURCE_DIR) + f);
    for (const auto& r : data.at("records")) {
      if (r.value("op", "") != "gemm" || !r.contains("library")) continue;
      const auto& lib = r.at("library");
      if (lib.value("algo_id", 0) != 66 || !tiles.count(lib.value("tile", ""))) continue;
      const auto& p = r.at("params");
      const std::string dt = p.value("dtype", "");
      if (dt != "bf16" && dt != "fp16" && dt != "fp8_e4m3") continue;
      nlohmann::json q = {{"m", p.at("m")},
                          {"n", p.at("n")},
                          {"k", p.at("k")},
                          {"dtype", dt},
                          {"batch", p.value("batch", 1)}};
      for (const char* key : {"trans_a", "trans_b"})
        if (p.contains(key)) q[key] = p.at(key);
      const double t = models::predict_kernel(g, models::OpSpec::from_json("gemm", q)).time_s;
      const double m = r.at("timing").at("median_us").get<double>() * 1e-6;
      errs.push_back(std::abs(t - m) / m);
    }
  }
  REQUIRE(errs.size() == 82);
  CHECK(models::percentile(errs, 50) <= 0.045);
  CHECK(models::percentile(errs, 90) <= 0.12);
  CHECK(models::percentile(errs, 100) <= 0.20);
}

// cuBLAS's choice among its 16-bit nvjet tiles (plan_gemm's kTilePreference: the largest tile
// that fits the output among those priced within 3% of the fastest). The margin is a FIT to the
// recorded choices (library.tile) of these very records, so this checks agreement on seen data,
// not a prediction. Records: every aligned fp16/bf16 GEMM of m, n >= 128 that cuBLASLt ran on
// its nvjet kernels (algo 66) in gemm.json and own-set1..4, 7, 8: 149. The model's tile equals
// cuBLAS's in 65 of them with the fastest tile taken (margin 0), 97 with the rule
// (validate/gemm_plan_table.py; docs/accuracy.md). Budget 90: fails on the model before the rule,
// 7 records of room for changes elsewhere in the kernel model that shift a near tie.
TEST_CASE("16-bit GEMMs: the model takes the nvjet tile cuBLAS recorded in most records",
          "[validation][gemm-tiles]") {
  const hw::GpuSpec g =
      hw::find_gpu(std::string(RIDGE_SOURCE_DIR) + "/configs/hw/h200-sxm-141gb.calibrated.yaml");
  std::vector<std::string> files = {"/validate/data/h200/gemm.json"};
  for (int i : {1, 2, 3, 4, 7, 8})
    files.push_back("/validate/data/h200/own-set" + std::to_string(i) + "/own-set" +
                    std::to_string(i) + ".json");
  int n = 0, agree = 0;
  for (const auto& f : files) {
    const auto data = own_sets::read_json(std::string(RIDGE_SOURCE_DIR) + f);
    for (const auto& r : data.at("records")) {
      if (r.value("op", "") != "gemm" || !r.contains("library")) continue;
      const auto& lib = r.at("library");
      if (lib.value("algo_id", 0) != 66) continue;
      const auto& p = r.at("params");
      const std::string dt = p.value("dtype", "");
      if (dt != "bf16" && dt != "fp16") continue;
      const long long m = p.at("m").get<long long>(), nn = p.at("n").get<long long>(),
                      k = p.at("k").get<long long>();
      if (m < 128 || nn < 128 || (2 * k) % 16 != 0 || (2 * nn) % 16 != 0) continue;
      nlohmann::json q = {
          {"m", m}, {"n", nn}, {"k", k}, {"dtype", dt}, {"batch", p.value("batch", 1)}};
      for (const char* key : {"trans_a", "trans_b"})
        if (p.contains(key)) q[key] = p.at(key);
      const auto pr = models::predict_kernel(g, models::OpSpec::from_json("gemm", q));
      // cuBLAS's tile is column-major, n side first.
      const std::string tile = std::to_string(pr.detail.at("tile_n").get<int>()) + "x" +
                               std::to_string(pr.detail.at("tile_m").get<int>());
      ++n;
      agree += tile == lib.value("tile", "");
    }
  }
  REQUIRE(n == 149);
  CHECK(agree >= 90);
}

// cuBLAS's choice among its SIMT (fp32) tiles (issue 18, round 4; plan_gemm's kSimtSmallMacs: a
// GEMM of fewer than 5e9 multiply-adds whose fastest plan has no split-K runs 128x64 without
// split-K). The threshold is a FIT to the recorded choices (library.tile, splitk) of these very
// records, so this checks agreement on seen data, not a prediction. Records: every fp32 GEMM of
// gemm.json and own-set1..4, 7-9 that cuBLASLt ran on one of the SIMT tiles the model has
// (column-major "128x128", "64x128", "64x64", i.e. row-major 128x128, 128x64, 64x64): 78. The
// model's (tile, split-K) equals cuBLAS's in 29 of them before the rule, 35 with it
// (validate/gemm_plan_table.py; docs/accuracy.md). Budget 33: fails on the model before the rule,
// 2 records of room for changes elsewhere in the kernel model that shift a near tie.
TEST_CASE("fp32 GEMMs: the model takes the SIMT tile and split-K cuBLAS recorded",
          "[validation][gemm-tiles]") {
  const hw::GpuSpec g =
      hw::find_gpu(std::string(RIDGE_SOURCE_DIR) + "/configs/hw/h200-sxm-141gb.calibrated.yaml");
  std::vector<std::string> files = {"/validate/data/h200/gemm.json"};
  for (int i : {1, 2, 3, 4, 7, 8, 9})
    files.push_back("/validate/data/h200/own-set" + std::to_string(i) + "/own-set" +
                    std::to_string(i) + ".json");
  const std::set<std::string> tiles = {"128x128", "64x128", "64x64"};
  int n = 0, agree = 0;
  for (const auto& f : files) {
    const auto data = own_sets::read_json(std::string(RIDGE_SOURCE_DIR) + f);
    for (const auto& r : data.at("records")) {
      if (r.value("op", "") != "gemm" || !r.contains("library")) continue;
      const auto& p = r.at("params");
      if (p.value("dtype", "") != "fp32") continue;
      const auto& lib = r.at("library");
      if (lib.value("algo_id", 0) != 55 || !tiles.count(lib.value("tile", ""))) continue;
      nlohmann::json q = {{"m", p.at("m")},
                          {"n", p.at("n")},
                          {"k", p.at("k")},
                          {"dtype", "fp32"},
                          {"batch", p.value("batch", 1)}};
      for (const char* key : {"trans_a", "trans_b"})
        if (p.contains(key)) q[key] = p.at(key);
      const auto pr = models::predict_kernel(g, models::OpSpec::from_json("gemm", q));
      // cuBLAS's tile is column-major, n side first.
      const std::string tile = std::to_string(pr.detail.at("tile_n").get<int>()) + "x" +
                               std::to_string(pr.detail.at("tile_m").get<int>());
      ++n;
      agree += tile == lib.value("tile", "") &&
               pr.detail.at("split_k").get<int>() == lib.value("splitk", 1);
    }
  }
  REQUIRE(n == 78);
  CHECK(agree >= 33);
}

// ---- fp32 (SIMT) GEMMs: a wave's output store follows its k loop (issue 18, round 7) ----------

// Every fp32 GEMM record that cuBLASLt ran on its SIMT kernels (algo 55) in gemm.json and
// own-set1..4, 7-12: 128 records. simt_epilogue_bandwidth was fitted on these very records (least
// squares in log), so this is a check on seen data, not a prediction. Before the charge (the
// model of round 6): median |error| 3.6%, p90 16.0%, median signed error -1.9% (validate/'s own
// records at k <= 1024 on cuBLAS's tile 5-27% too fast); after: 2.8%, 14.1%, +0.4%. Budgets: p90
// 15% and the signed median within 1.5% of zero both fail on the model before the charge, with
// 0.9 and 1.1 points of room for changes elsewhere; median 3.3%.
TEST_CASE("fp32 SIMT GEMMs of gemm.json and own-set1..12: a wave's output store is charged",
          "[validation][gemm-tiles]") {
  const hw::GpuSpec g =
      hw::find_gpu(std::string(RIDGE_SOURCE_DIR) + "/configs/hw/h200-sxm-141gb.calibrated.yaml");
  std::vector<std::string> files = {"/validate/data/h200/gemm.json"};
  for (int i : {1, 2, 3, 4, 7, 8, 9, 10, 11, 12})
    files.push_back("/validate/data/h200/own-set" + std::to_string(i) + "/own-set" +
                    std::to_string(i) + ".json");
  std::vector<double> abs_errs, errs;
  for (const auto& f : files) {
    const auto data = own_sets::read_json(std::string(RIDGE_SOURCE_DIR) + f);
    for (const auto& r : data.at("records")) {
      if (r.value("op", "") != "gemm" || !r.contains("library")) continue;
      const auto& p = r.at("params");
      if (p.value("dtype", "") != "fp32" || r.at("library").value("algo_id", 0) != 55) continue;
      nlohmann::json q = {{"m", p.at("m")},
                          {"n", p.at("n")},
                          {"k", p.at("k")},
                          {"dtype", "fp32"},
                          {"batch", p.value("batch", 1)}};
      for (const char* key : {"trans_a", "trans_b"})
        if (p.contains(key)) q[key] = p.at(key);
      const double t = models::predict_kernel(g, models::OpSpec::from_json("gemm", q)).time_s;
      const double m = r.at("timing").at("median_us").get<double>() * 1e-6;
      errs.push_back((t - m) / m);
      abs_errs.push_back(std::abs(t - m) / m);
    }
  }
  REQUIRE(errs.size() == 128);
  INFO("median " << models::percentile(abs_errs, 50) << ", p90 " << models::percentile(abs_errs, 90)
                 << ", signed median " << models::percentile(errs, 50));
  CHECK(models::percentile(abs_errs, 50) <= 0.033);
  CHECK(models::percentile(abs_errs, 90) <= 0.15);
  CHECK(std::abs(models::percentile(errs, 50)) <= 0.015);
}

// The mechanism alone: the same fp32 GEMM on the same plan costs one wave's output store more per
// wave with the charge than without it. 4096 x 768 x 128 (own-set10) runs 192 CTAs of 128x128 in
// one wave: 192 x 128 x 128 x 4 bytes = 12.6 MB at 3.0 TB/s, 4.2 us.
TEST_CASE("fp32 SIMT GEMMs: each wave pays its output tiles at simt_epilogue_bandwidth",
          "[validation][gemm-tiles]") {
  hw::GpuSpec g =
      hw::find_gpu(std::string(RIDGE_SOURCE_DIR) + "/configs/hw/h200-sxm-141gb.calibrated.yaml");
  const nlohmann::json q = {{"m", 4096}, {"n", 768}, {"k", 128}, {"dtype", "fp32"}, {"batch", 1}};
  const auto with = models::predict_kernel(g, models::OpSpec::from_json("gemm", q));
  const double bw = g.param("simt_epilogue_bandwidth");
  g.model["simt_epilogue_bandwidth"] = 0.0;
  const auto without = models::predict_kernel(g, models::OpSpec::from_json("gemm", q));
  REQUIRE(with.detail.at("tile_m").get<int>() == without.detail.at("tile_m").get<int>());
  REQUIRE(with.detail.at("tile_n").get<int>() == without.detail.at("tile_n").get<int>());
  REQUIRE(with.detail.at("split_k").get<int>() == 1);
  REQUIRE(without.detail.at("split_k").get<int>() == 1);
  const double tiles = with.detail.at("tiles").get<double>();
  const double tile_bytes =
      4.0 * with.detail.at("tile_m").get<int>() * with.detail.at("tile_n").get<int>();
  REQUIRE(bw == Approx(3.0e12));
  CHECK(with.time_s - without.time_s == Approx(tiles * tile_bytes / bw).epsilon(1e-6));
}

// ---- misaligned GEMMs: the 4-warp sm_80 tile needs two CTAs per SM (issue 18, round 6) ---------

// The mechanism in the kernel model: a wave that leaves fewer than full_rate_blocks blocks on an
// SM lasts as long as one with that many. A compute-only block (no memory traffic): 132 blocks on
// the H200's 132 SMs, one each, take as long as 264 (two each) when two are needed for the full
// rate, and half as long when one suffices.
TEST_CASE("a wave with one 4-warp sm_80 GEMM CTA per SM lasts as long as a full one",
          "[validation][gemm-tiles]") {
  const hw::GpuSpec g =
      hw::find_gpu(std::string(RIDGE_SOURCE_DIR) + "/configs/hw/h200-sxm-141gb.calibrated.yaml");
  const models::KernelParams kp = models::kernel_params(g);
  auto time = [&](long long grid, int full_rate_blocks) {
    models::KernelDesc d;
    d.grid = grid;
    d.block = 128;
    d.flops_tensor = 2.0 * 128 * 128 * 4096;
    d.tensor_precision = hw::Precision::kFp16;
    d.full_rate_blocks = full_rate_blocks;
    return models::estimate_kernel(models::kernel_setup(g, kp, d)).time_s;
  };
  REQUIRE(g.sm.count == 132);
  CHECK(time(132, 2) == Approx(time(264, 2)).epsilon(1e-9));
  CHECK(time(132, 1) < 0.6 * time(264, 1));
  CHECK(time(264, 1) == Approx(time(264, 2)).epsilon(1e-9));  // full waves unchanged
}

// Every tensor-core GEMM record whose rows are not 16-byte aligned and that cuBLASLt ran on its
// sm_80-class kernels (algo 23, 24) in own-set1..11: 67 records (the fp32 ones run SIMT algo 55).
// These records were seen (the round-6 change is a model-structure change read off them, with no
// parameter fitted): a check on seen data, not a prediction. Before (every wave priced at one CTA
// per SM's share): median |error| 7.8%, p90 19.1% (own-set11 bf16 6000x1000x1002 -29%: 376
// CTAs of 128x128, the last 112 alone on their SMs); after: 5.1%, 12.8%. Budgets median 5.5% and
// p90 14%: both fail on the model before, with 0.4 and 1.2 points of room for changes elsewhere.
TEST_CASE("misaligned tensor GEMMs of own-set1..11 on cuBLAS's sm_80 kernels",
          "[validation][gemm-tiles]") {
  const hw::GpuSpec g =
      hw::find_gpu(std::string(RIDGE_SOURCE_DIR) + "/configs/hw/h200-sxm-141gb.calibrated.yaml");
  std::vector<double> errs;
  for (int i : {1, 2, 3, 4, 7, 8, 9, 10, 11}) {
    const auto data =
        own_sets::read_json(std::string(RIDGE_SOURCE_DIR) + "/validate/data/h200/own-set" +
                            std::to_string(i) + "/own-set" + std::to_string(i) + ".json");
    for (const auto& r : data.at("records")) {
      if (r.value("op", "") != "gemm" || !r.contains("library")) continue;
      const int algo = r.at("library").value("algo_id", 0);
      if (algo != 23 && algo != 24) continue;
      const auto& p = r.at("params");
      nlohmann::json q = {{"m", p.at("m")},
                          {"n", p.at("n")},
                          {"k", p.at("k")},
                          {"dtype", p.at("dtype")},
                          {"batch", p.value("batch", 1)}};
      for (const char* key : {"trans_a", "trans_b"})
        if (p.contains(key)) q[key] = p.at(key);
      const double t = models::predict_kernel(g, models::OpSpec::from_json("gemm", q)).time_s;
      const double m = r.at("timing").at("median_us").get<double>() * 1e-6;
      errs.push_back(std::abs(t - m) / m);
    }
  }
  REQUIRE(errs.size() == 67);
  CHECK(models::percentile(errs, 50) <= 0.055);
  CHECK(models::percentile(errs, 90) <= 0.14);
}

TEST_CASE("fp8 GEMMs of the H200 records: each tile's epilogue holds up the tensor cores",
          "[validation][gemm-tiles]") {
  // Every fp8 GEMM record of validate/data/h200 (gemm.json and own-set1..4 and 7..12, 136
  // records) against the calibrated H200, with gemm_fp8_tile_epilogue (hw/model_params.cpp, a FIT
  // to these records, so this is an in-sample regression guard, not a prediction). Measured when
  // written, without the epilogue (0 ns) -> with it (350 ns): all 136 median |error| 3.61% ->
  // 3.32%, p90 13.1% -> 13.1%; the eight short-k records (k <= 2048, m and n >= 512) median
  // signed -8.4% -> -5.5%. The bounds sit between the two (so the test fails without the
  // epilogue) with about 5% relative headroom on the side the model now reaches: 3.5% and 14%
  // for all, a short-k median signed of -7% or above (and at most +3%).
  const hw::GpuSpec g =
      hw::find_gpu(std::string(RIDGE_SOURCE_DIR) + "/configs/hw/h200-sxm-141gb.calibrated.yaml");
  std::vector<std::string> files = {std::string(RIDGE_SOURCE_DIR) +
                                    "/validate/data/h200/gemm.json"};
  for (int i : {1, 2, 3, 4, 7, 8, 9, 10, 11, 12})
    files.push_back(std::string(RIDGE_SOURCE_DIR) + "/validate/data/h200/own-set" +
                    std::to_string(i) + "/own-set" + std::to_string(i) + ".json");
  std::vector<double> abs_errs, short_k;
  for (const auto& f : files) {
    const auto data = own_sets::read_json(f);
    for (const auto& r : data.at("records")) {
      if (r.value("op", "") != "gemm") continue;
      const auto& p = r.at("params");
      if (p.value("dtype", "") != "fp8_e4m3") continue;
      nlohmann::json q = {{"m", p.at("m")},
                          {"n", p.at("n")},
                          {"k", p.at("k")},
                          {"dtype", p.at("dtype")},
                          {"batch", p.value("batch", 1)}};
      for (const char* key : {"trans_a", "trans_b"})
        if (p.contains(key)) q[key] = p.at(key);
      const double t = models::predict_kernel(g, models::OpSpec::from_json("gemm", q)).time_s;
      const double m = r.at("timing").at("median_us").get<double>() * 1e-6;
      abs_errs.push_back(std::abs(t - m) / m);
      if (p.at("k").get<double>() <= 2048 && p.at("m").get<double>() >= 512 &&
          p.at("n").get<double>() >= 512)
        short_k.push_back((t - m) / m);
    }
  }
  REQUIRE(abs_errs.size() == 136);
  REQUIRE(short_k.size() == 8);
  CHECK(models::percentile(abs_errs, 50) <= 0.035);
  CHECK(models::percentile(abs_errs, 90) <= 0.14);
  CHECK(models::percentile(short_k, 50) >= -0.07);
  CHECK(models::percentile(short_k, 50) <= 0.03);
}
