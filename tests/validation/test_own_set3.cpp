// validate/'s own programs on the H200, round 3 (issue 18 point 6): the mechanisms own-set2's
// misses showed that the model now has, each checked against a hand derivation: dependent launches
// drained from the stream's queue (models/launch.cpp queued_launches_s), GEMMs with rows not
// 16-byte aligned (models/op_library.cpp unaligned_tensor_scale), strided reads an atom or more
// apart (models/kernel.cpp hbm_row_spread); the pageable copies' staging priced from a host probe
// was refuted by set 3 and removed (set 4's round); the freeze of pre-registered set 3
// (validate/prereg/own-set3) was removed when the model changed after its measurement (set 3 is
// fit data since); its targets stay, scored on the predictions committed before measuring
// (validate/data/h200/own-set3; validate/README.md, "Own programs, pre-registered set 3").
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "hw/gpu_loader.hpp"
#include "models/kernel.hpp"
#include "models/kernel_model.hpp"
#include "models/launch.hpp"
#include "models/op.hpp"
#include "models/records.hpp"
#include "tests/validation/own_set_common.hpp"

using namespace ridge;
using own_sets::read_json;

TEST_CASE("queued dependent launches drain at the GPU's period, then at the host's",
          "[validation][own-set3]") {
  models::KernelParams k{};
  k.queued_kernel_period = 1e-6;
  k.queued_first_kernel = 2e-6;
  k.host_launch_cuda = 4e-6;
  // Within the queue (1024): first-kernel cost + n periods.
  CHECK(models::queued_launches_s(k, 10) == Approx(2e-6 + 10e-6).epsilon(1e-12));
  CHECK(models::queued_launches_s(k, 1024) == Approx(2e-6 + 1024e-6).epsilon(1e-12));
  // Past it: the queue (1024) loses one per 1 us and gains one per 4 us, so it runs dry after
  // t = 1024 x 1 x 4 / (4 - 1) = 1365.33 us, when 1365.33 kernels have run; the other
  // 2000 - 1365.33 = 634.67 wait 4 us each: 2 + 1365.33 + 2538.67 = 3906 us.
  CHECK(models::queued_launches_s(k, 2000) == Approx(3906e-6).epsilon(1e-9));
  // Fewer kernels than run before the queue is dry: the GPU's period throughout.
  CHECK(models::queued_launches_s(k, 1300) == Approx(2e-6 + 1300e-6).epsilon(1e-12));
  // A host faster than the GPU never lets the queue run dry.
  k.host_launch_cuda = 0.5e-6;
  CHECK(models::queued_launches_s(k, 5000) == Approx(2e-6 + 5000e-6).epsilon(1e-12));
}

TEST_CASE("the launch op's dependent kind is timed by the queue", "[validation][own-set3]") {
  hw::GpuSpec g = hw::find_gpu(std::string(RIDGE_SOURCE_DIR) + "/configs/hw/h200-sxm-141gb.yaml");
  g.model["queued_kernel_period"] = 1e-6;
  g.model["queued_first_kernel"] = 2e-6;
  const auto spec = models::OpSpec::from_json("launch", {{"kind", "dependent"}, {"kernels", 100}});
  // The launch op reports per kernel: (2 + 100 x 1) us / 100.
  CHECK(models::predict_kernel(g, spec).time_s == Approx(1.02e-6).epsilon(1e-12));
}

TEST_CASE("strided reads further apart than an atom cost more per atom up to an HBM3 page",
          "[validation][own-set3]") {
  // (gap / 64)^0.22 for 64-byte atoms, 1 at or below an atom, constant from 1 KiB (16 atoms, an
  // HBM3 page) on: own-set5's cold cases at 1.5-12 KiB ran flat across their gaps.
  CHECK(models::hbm_row_spread(4, 16, 64) == 1.0);  // 64 B
  CHECK(models::hbm_row_spread(4, 8, 64) == 1.0);   // 32 B
  CHECK(models::hbm_row_spread(4, 32, 64) == Approx(std::pow(2.0, 0.22)).epsilon(1e-12));
  CHECK(models::hbm_row_spread(4, 128, 64) == Approx(std::pow(8.0, 0.22)).epsilon(1e-12));
  CHECK(models::hbm_row_spread(4, 192, 64) == Approx(std::pow(12.0, 0.22)).epsilon(1e-12));
  CHECK(models::hbm_row_spread(2, 512, 64) == Approx(std::pow(16.0, 0.22)).epsilon(1e-12));
  // Past the page: 1536 B, 2 KiB and 16 KiB gaps all cost the page's 16^0.22 = 1.8404.
  CHECK(models::hbm_row_spread(4, 384, 64) == Approx(1.8403753).epsilon(1e-7));
  CHECK(models::hbm_row_spread(4, 512, 64) == Approx(std::pow(16.0, 0.22)).epsilon(1e-12));
  CHECK(models::hbm_row_spread(4, 4096, 64) == Approx(std::pow(16.0, 0.22)).epsilon(1e-12));
}

TEST_CASE("a GEMM with rows not 16-byte aligned runs at the unaligned fraction of the tensor rate",
          "[validation][own-set3]") {
  hw::GpuSpec g = hw::find_gpu(std::string(RIDGE_SOURCE_DIR) + "/configs/hw/h200-sxm-141gb.yaml");
  g.model["power_cap_w"] = 0.0;  // no power roof: compute time scales with the tensor rate alone
  auto t = [&](double fraction, long long k) {
    g.model["gemm_unaligned_tensor_fraction"] = fraction;
    models::clear_kernel_memo();
    const auto spec =
        models::OpSpec::from_json("gemm", {{"m", 8192}, {"n", 8192}, {"k", k}, {"dtype", "fp16"}});
    return models::predict_kernel(g, spec).time_s;
  };
  // 8192 x 8192 x 8196 fp16: rows of 16392 bytes, 8-byte aligned. Compute-bound: halving the
  // fraction doubles the main loop (within 5%: the prologue, epilogue and tile overheads stay).
  CHECK(t(0.25, 8196) / t(0.5, 8196) == Approx(2.0).epsilon(0.05));
  // The rates of 4- and 2-byte rows: tests/validation/test_own_set4.cpp.
  // Aligned rows (8192: 16384 bytes) do not read the fraction.
  CHECK(t(0.25, 8192) == t(0.5, 8192));
}

// ---- own-set3's targets on the pre-registered predictions (errors.md: errors.py --write) -------
//
// Measured 2026-12-01 23:17 UTC, one call (validate/data/h200/own-set3/README.md); all 134 cases
// ran and every one is scored (the rule fixed before measuring). The scored predictions are
// predictions.json with the pageable copies from the host probe run right before the cases:
// errors.py writes them to validate/data/h200/own-set3/predictions-with-probe.json, and the first
// test checks that file against the frozen model given the probe's rates.
namespace {

const std::string kRoot = RIDGE_SOURCE_DIR;

const own_sets::SetErrors& set3() {
  static const auto e =
      own_sets::score_set(kRoot + "/validate/data/h200/own-set3/own-set3.json",
                          kRoot + "/validate/data/h200/own-set3/predictions-with-probe.json");
  return e;
}

}  // namespace

TEST_CASE("own-set3: the scored pageable predictions are the pre-registered probe formula",
          "[validation][own-set3]") {
  // The formula fixed before measuring (validate/prereg/own-set3/README.md; the model's staging
  // branch it came from was removed after the formula was refuted): t = 3.810 us + B / (64 GB/s x
  // 0.867576) + S(B), S(B) = B / P_d2h for d2h and min(B, 35e6) / P_h2d_cached + (B - min(B,
  // 35e6)) / P_h2d for h2d, P the before probe's rates; 1e-9 relative (JSON keeps every digit).
  const auto probe = read_json(kRoot + "/validate/data/h200/own-set3/host-probe-before.json");
  const auto pred = read_json(kRoot + "/validate/data/h200/own-set3/predictions-with-probe.json");
  int pageable = 0;
  for (const auto& r : pred.at("records")) {
    const auto& p = r.at("params");
    if (r.at("op") != "copy" || p.at("memory") != "pageable") continue;
    ++pageable;
    const double b = p.at("bytes").get<double>();
    double stage = 0;
    if (p.at("direction") == "d2h") {
      stage = b / (probe.at("d2h_gbs").get<double>() * 1e9);
    } else {
      const double cached = std::min(b, 35e6);
      stage = cached / (probe.at("h2d_cached_gbs").get<double>() * 1e9) +
              (b - cached) / (probe.at("h2d_gbs").get<double>() * 1e9);
    }
    const double t_us = (3.810e-6 + b / (64e9 * 0.867576) + stage) * 1e6;
    INFO(r.at("id").get<std::string>());
    CHECK(t_us == Approx(r.at("timing").at("median_us").get<double>()).epsilon(1e-9));
  }
  CHECK(pageable == 8);
}

TEST_CASE("own-set3 pre-registered: 134 cases measured, every one scored",
          "[validation][own-set3]") {
  CHECK(set3().all.size() == 134);
  CHECK(set3().by_class.size() == 16);
  CHECK(set3().by_class.at("gemm misaligned").size() == 8);
}

TEST_CASE("own-set3 pre-registered: kernels median <= 5% (missed: 6.1%)",
          "[validation][own-set3][!shouldfail]") {
  CHECK(models::percentile(set3().all, 50) <= 0.05);
}

TEST_CASE("own-set3 pre-registered: kernels p90 <= 15% (missed: 27.6%)",
          "[validation][own-set3][!shouldfail]") {
  CHECK(models::percentile(set3().all, 90) <= 0.15);
}

TEST_CASE(
    "own-set3 pre-registered: every op class median <= 10% (missed: gemm misaligned 45.3%, "
    "copy d2h 34.5%, copy h2d 20.6%, gemm tf32 17.7%)",
    "[validation][own-set3][!shouldfail]") {
  for (const auto& [c, v] : set3().by_class) {
    INFO(c << ": " << models::percentile(v, 50));
    CHECK(models::percentile(v, 50) <= 0.10);
  }
}

TEST_CASE("own-set3 pre-registered: the 12 op classes that met their 10% median",
          "[validation][own-set3]") {
  // The classes within the target (errors.md): everything but the four missed above.
  for (const auto& [c, v] : set3().by_class) {
    if (c == "gemm misaligned" || c == "copy d2h" || c == "copy h2d" || c == "gemm tf32") continue;
    INFO(c << ": " << models::percentile(v, 50));
    CHECK(models::percentile(v, 50) <= 0.10);
  }
}
