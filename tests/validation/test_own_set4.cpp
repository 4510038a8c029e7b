// validate/'s own programs on the H200, round 4 (issue 18 point 6): what own-set3's misses changed
// in the model, each checked against a hand derivation: GEMMs with 4- and 8-byte-aligned rows at
// one rate and 2-byte-aligned rows at gemm_unaligned_2byte_ratio of it (models/op_library.cpp
// unaligned_tensor_scale), and pageable copies at the fitted efficiencies again (the host-probe
// staging formula refuted by set 3 and removed; since set 4's round, a d2h start-up and the h2d
// source cached whole or not at all).
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

// GEMM tails (issue 18): the tiles cuBLAS was recorded running. Rows not 16-byte aligned run
// cuBLASLt's sm_80 kernels, whose tiles in all 21 such records (own-set1..4, library.tile) were
// 128x256, 256x128 or 128x128 with 3 stages and no cluster: the model plans on those alone.
TEST_CASE("GEMMs with rows not 16-byte aligned run on the sm_80 kernels' tiles",
          "[validation][own-set4]") {
  const hw::GpuSpec g =
      hw::find_gpu(std::string(RIDGE_SOURCE_DIR) + "/configs/hw/h200-sxm-141gb.calibrated.yaml");
  // Shapes of set 4's and set 3's misaligned cases (2-, 4- and 8-byte rows, tf32 and 16-bit),
  // and ones no record has (a skinny m, a small square, an unaligned n).
  const std::vector<std::vector<long long>> shapes = {
      {2048, 4096, 1027}, {4096, 4096, 4098}, {3000, 1002, 3000}, {64, 11008, 4097},
      {1000, 1000, 1001}, {600, 4000, 1003},  {16, 8192, 8190},   {300, 300, 302}};
  for (const char* dt : {"fp16", "bf16", "tf32"})
    for (const auto& s : shapes) {
      const auto spec =
          models::OpSpec::from_json("gemm", {{"m", s[0]}, {"n", s[1]}, {"k", s[2]}, {"dtype", dt}});
      const auto p = models::predict_kernel(g, spec);
      const int tm = p.detail.at("tile_m").get<int>(), tn = p.detail.at("tile_n").get<int>();
      INFO(dt << " " << s[0] << "x" << s[1] << "x" << s[2] << ": tile " << tm << "x" << tn);
      CHECK(((tm == 128 && (tn == 128 || tn == 256)) || (tm == 256 && tn == 128)));
      CHECK(p.detail.at("stages").get<int>() == 3);
      CHECK(p.detail.at("cluster").get<int>() == 1);
      CHECK(p.detail.at("row_alignment_bytes").get<double>() < 16);
    }
}

// Pageable copies are priced from fixed rates, whatever the host (the probe formula was refuted):
// d2h pays a start-up before its bytes (the first staged chunk's DMA and the wait for it), h2d runs
// wholly at the cached or the DRAM rate (hw/model_params.cpp).
TEST_CASE("a pageable copy costs a fixed rate whatever the host and d2h a start-up first",
          "[validation][own-set4]") {
  hw::GpuSpec g = hw::find_gpu(std::string(RIDGE_SOURCE_DIR) + "/configs/hw/h200-sxm-141gb.yaml");
  g.model["copy_latency"] = 4e-6;
  g.model["pcie_efficiency_pageable_d2h"] = 0.25;
  g.model["pageable_d2h_startup"] = 30e-6;
  g.model["pcie_efficiency_pageable_cached"] = 0.25;
  g.model["pcie_efficiency_pageable_uncached"] = 0.125;
  g.model["host_cache_bytes"] = 1e8;
  const double link = g.interconnect.pcie_bandwidth;
  auto per_call = [&](long long bytes, const char* dir, const char* memory = "pageable") {
    const auto spec = models::OpSpec::from_json(
        "copy", {{"bytes", bytes}, {"direction", dir}, {"memory", memory}});
    return models::predict_kernel(g, spec, models::Mode::kFast, models::Timing::kPerCall)
        .per_call_time_s;
  };
  // d2h, 3e8 bytes: 4 us + 30 us + 3e8 / (0.25 link); 1e6 bytes: the same start-up.
  CHECK(per_call(300'000'000, "d2h") == Approx(34e-6 + 3e8 / (0.25 * link)).epsilon(1e-12));
  CHECK(per_call(1'000'000, "d2h") == Approx(34e-6 + 1e6 / (0.25 * link)).epsilon(1e-12));
  // h2d, 3e8 bytes, past the 1e8 cache: all of it from DRAM at 0.125 link, no start-up.
  CHECK(per_call(300'000'000, "h2d") == Approx(4e-6 + 3e8 / (0.125 * link)).epsilon(1e-12));
  // Pinned copies pay neither (the engine reads or writes the host buffer directly).
  const double pinned = g.param("pcie_efficiency_pinned");
  CHECK(per_call(300'000'000, "d2h", "pinned") ==
        Approx(4e-6 + 3e8 / (pinned * link)).epsilon(1e-12));
}

// Set 4's strided misses (+129% to +160%, elements 2-4 KiB apart) were runs over one buffer whose
// touched lines fit in L2: repeated runs read them from L2 (models/op_library.cpp, elementwise).
// Set 5 measured how much of L2 such runs keep: a fraction of the lines falling with the
// footprint, P(Poisson(lambda) <= 7) with lambda = 8 x footprint / (0.74 x L2) (models/kernel.cpp
// l2_sweep_hit_fraction; W = 8 and 0.74 are fits).
TEST_CASE("repeated strided sweeps keep the lines of sets within their ways",
          "[validation][own-set4]") {
  const double l2 = 62914560.0;
  CHECK(models::l2_sweep_hit_fraction(0, l2) == 1.0);
  // lambda 4, 8, 16 (footprints 0.37, 0.74, 1.48 x L2): e^-l sum_{k<8} l^k / k!, by hand
  // (e.g. lambda 8: e^-8 (1 + 8 + 32 + 85.33 + 170.67 + 273.07 + 364.09 + 416.10) = 0.45296).
  CHECK(models::l2_sweep_hit_fraction(0.37 * l2, l2) == Approx(0.9488664).epsilon(1e-6));
  CHECK(models::l2_sweep_hit_fraction(0.74 * l2, l2) == Approx(0.4529608).epsilon(1e-6));
  CHECK(models::l2_sweep_hit_fraction(1.48 * l2, l2) == Approx(0.0099998).epsilon(1e-5));
  // Scale-free: the same fraction of a chip with half the L2 at half the footprint.
  CHECK(models::l2_sweep_hit_fraction(0.37 * l2 / 2, l2 / 2) ==
        Approx(models::l2_sweep_hit_fraction(0.37 * l2, l2)).epsilon(1e-12));
}

TEST_CASE("a strided read keeps its swept fraction of L2 when runs repeat its buffers",
          "[validation][own-set4]") {
  const hw::GpuSpec g =
      hw::find_gpu(std::string(RIDGE_SOURCE_DIR) + "/configs/hw/h200-sxm-141gb.yaml");
  // The figures below are derived from this L2 size: 60 MiB, and 64-byte HBM atoms.
  REQUIRE(g.memory.l2_size == 62914560.0);
  REQUIRE(g.param("hbm_access_bytes") == 64.0);
  auto pred = [&](const char* op, const char* dtype, long long n, int stride, long long buffers) {
    const auto spec = models::OpSpec::from_json(
        "elementwise",
        {{"op", op}, {"dtype", dtype}, {"n", n}, {"stride", stride}, {"buffers", buffers}});
    return models::predict_kernel(g, spec);
  };
  // Read from L2: HBM moves the output alone (n x element bytes, written back).
  auto from_l2 = [](const models::KernelPrediction& p, double out_bytes) {
    return p.hbm_bytes == Approx(out_bytes).epsilon(1e-12);
  };
  // From HBM: at least one 32-byte sector per element read, on top of the output.
  auto from_hbm = [](const models::KernelPrediction& p, double n, double inputs, double e) {
    return p.hbm_bytes >= n * (32.0 * inputs + e);
  };
  // fp32 stride 512: elements 2 KiB apart, one 128-byte line each, 132 n bytes with the output.
  // n = 1000: lambda = 8 x 132000 / (0.74 x 62914560) = 0.0227, every line kept.
  CHECK(from_l2(pred("copy", "fp32", 1000, 512, 1), 1000.0 * 4));
  // Set 4's own case, n = 262144: lambda = 8 x 132 x 262144 / 46556774.4 = 5.9459, hit 0.75139.
  // The misses cost a 32-byte sector each, read as a 64-byte atom (x 2) at the page's 16^0.22:
  // 262144 x 32 x (1 - 0.75139) x 2 x 1.84038 + 4 x 262144 = 8.7248e6 bytes.
  CHECK(pred("copy", "fp32", 262144, 512, 1).hbm_bytes == Approx(8.72482e6).epsilon(1e-5));
  // Two buffer sets at half the elements: the same footprint, the same bytes per element.
  CHECK(pred("copy", "fp32", 131072, 512, 2).hbm_bytes == Approx(8.72482e6 / 2).epsilon(1e-5));
  // A line per element however far apart: stride 65536 (256 KiB gaps) at the same n is the same.
  CHECK(pred("copy", "fp32", 262144, 65536, 1).hbm_bytes == Approx(8.72482e6).epsilon(1e-5));
  // 2 x L2 of lines (n = 953250): lambda 21.6, hit 2.6e-4: below a thousandth, from HBM.
  CHECK(from_hbm(pred("copy", "fp32", 953250, 512, 1), 953250, 1, 4));
  // buffers 0 (the default: inputs come from HBM, as in a model's graph): from HBM at any size.
  CHECK(from_hbm(pred("copy", "fp32", 1000, 512, 0), 1000, 1, 4));
  // Contiguous reads keep the cliff at L2's size: fp16 copy, 2 n bytes read and 2 n written, up
  // to n = 15728640 (60 MiB / 4).
  CHECK(from_l2(pred("copy", "fp16", 15728640, 1, 1), 15728640.0 * 2));
  CHECK(pred("copy", "fp16", 15728641, 1, 1).hbm_bytes == Approx(15728641.0 * 4).epsilon(1e-9));
  // Three quarters from L2 is faster than all from HBM.
  CHECK(pred("copy", "fp32", 262144, 512, 1).time_s < pred("copy", "fp32", 262144, 512, 0).time_s);
}

TEST_CASE("a record's buffers beside its params reach the elementwise op's buffers",
          "[validation][own-set4]") {
  const std::string text = R"({"schema": "ridge.records/1", "records": [
    {"id": "a", "op": "elementwise", "params": {"op": "copy", "n": 8, "stride": 2}, "buffers": 3},
    {"id": "b", "op": "elementwise", "params": {"op": "copy", "n": 8, "buffers": 5}, "buffers": 3},
    {"id": "c", "op": "elementwise", "params": {"op": "copy", "n": 8}},
    {"id": "d", "op": "softmax", "params": {"rows": 8, "cols": 8}, "buffers": 3}]})";
  const auto f = models::parse_records(text, "t.json");
  REQUIRE(f.records.size() == 4);
  CHECK(f.records[0].spec->i("buffers") == 3);  // from beside the params
  CHECK(f.records[1].spec->i("buffers") == 5);  // params win
  CHECK(f.records[2].spec->i("buffers") == 0);  // the default
  CHECK(f.records[3].spec.has_value());         // an op without buffers ignores it
  // A bad value beside the params is reported at that key, not under params.
  const std::string bad = R"({"schema": "ridge.records/1", "records": [
    {"id": "a", "op": "elementwise", "params": {"op": "copy", "n": 8}, "buffers": -1}]})";
  CHECK_THROWS_WITH(models::parse_records(bad, "t.json"),
                    "t.json: records[0]: buffers: expected a non-negative integer");
}

// ---- own-set4 measured (validate/data/h200/own-set4, 2026-12-02) -----------------------------
//
// The targets of issue 18 point 6 on the pre-registered predictions, scored as errors.py scores
// them (every case; op classes as own_sets::op_class with misaligned GEMMs apart): median |error|
// <= 5%, p90 <= 15%, every class's median <= 10%. A missed target is [!shouldfail] with its figure.
namespace {

const own_sets::SetErrors& set4() {
  static const auto e = own_sets::score_set(
      std::string(RIDGE_SOURCE_DIR) + "/validate/data/h200/own-set4/own-set4.json",
      std::string(RIDGE_SOURCE_DIR) + "/validate/prereg/own-set4/predictions.json");
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
