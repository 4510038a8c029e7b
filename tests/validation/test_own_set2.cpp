// validate/'s own programs on the H200, round 2 (issue 18 point 6): the two mechanisms own-set1's
// misses showed that the model now has (models/kernel.cpp hbm_atom_amplification; the pageable
// host-to-device staging of models/op_library.cpp with hw/model_params.cpp's host_cache_bytes and
// pcie_efficiency_pageable_cached / _uncached, in its current all-or-nothing form), each checked
// against a hand derivation; and the targets
// of pre-registered set 2 (validate/prereg/own-set2) on its measurement, scored on the predictions
// committed before it (the freeze check was removed when the model changed after it: set 2 is fit
// data since)
// (validate/data/h200/own-set2; validate/README.md, "Own programs, pre-registered set 2").
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
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

TEST_CASE("strided reads between a sector and an atom apart move the whole span from HBM",
          "[validation][own-set2]") {
  // 64-byte HBM atoms, 32-byte sectors. A gap of g bytes between the elements a warp reads:
  // g <= 32: the sectors already count every byte (factor 1); 32 < g < 64: every atom of the span
  // is touched, so HBM moves g bytes per element, g / 32 sectors' worth; g >= 64: one whole atom
  // per element, 64 / 32 = 2.
  CHECK(models::hbm_atom_amplification(4, 1, 64) == 1.0);
  CHECK(models::hbm_atom_amplification(4, 8, 64) == 1.0);          // 32 B
  CHECK(models::hbm_atom_amplification(4, 10, 64) == 1.25);        // 40 B
  CHECK(models::hbm_atom_amplification(4, 12, 64) == 1.5);         // 48 B (own-set1: fp32 s12)
  CHECK(models::hbm_atom_amplification(2, 24, 64) == 1.5);         // 48 B (own-set1: bf16 s24)
  CHECK(models::hbm_atom_amplification(4, 16, 64) == 2.0);         // 64 B
  CHECK(models::hbm_atom_amplification(4, 48, 64) == 2.0);         // 192 B
  CHECK(models::hbm_atom_amplification(2, 20, 128) == 40.0 / 32);  // 40 B, 128-byte atoms
}

// Set 1's pageable h2d misses gave the copy a cached and a DRAM rate. The first form priced a
// cached prefix (host_cache_bytes at the cached rate, the rest at the DRAM rate); the records of
// every host since show a repeated copy past the cache runs wholly at the DRAM rate (an LRU cache
// swept cyclically keeps nothing), so the copy now takes one rate or the other
// (hw/model_params.cpp pcie_efficiency_pageable_cached).
TEST_CASE("a pageable h2d copy runs at the cached rate while its source fits and at DRAM's past it",
          "[validation][own-set2]") {
  hw::GpuSpec g = hw::find_gpu(std::string(RIDGE_SOURCE_DIR) + "/configs/hw/h200-sxm-141gb.yaml");
  g.model["host_cache_bytes"] = 1e8;
  g.model["pcie_efficiency_pageable_cached"] = 0.25;
  g.model["pcie_efficiency_pageable_uncached"] = 0.125;
  g.model["copy_latency"] = 5e-6;
  const double link = g.interconnect.pcie_bandwidth;
  auto per_call = [&](long long bytes, const char* dir) {
    const auto spec = models::OpSpec::from_json(
        "copy", {{"bytes", bytes}, {"direction", dir}, {"memory", "pageable"}});
    return models::predict_kernel(g, spec, models::Mode::kFast, models::Timing::kPerCall)
        .per_call_time_s;
  };
  // Within the cache: latency + bytes at the cached rate.
  CHECK(per_call(50'000'000, "h2d") == Approx(5e-6 + 5e7 / (0.25 * link)).epsilon(1e-12));
  CHECK(per_call(100'000'000, "h2d") == Approx(5e-6 + 1e8 / (0.25 * link)).epsilon(1e-12));
  // One byte past it: every byte at the DRAM rate (the cached-prefix form gave 1e8 at 0.25).
  CHECK(per_call(100'000'001, "h2d") == Approx(5e-6 + 100'000'001 / (0.125 * link)).epsilon(1e-12));
  CHECK(per_call(300'000'000, "h2d") == Approx(5e-6 + 3e8 / (0.125 * link)).epsilon(1e-12));
}

// ---- own-set2's targets on the pre-registered predictions (errors.md: errors.py --write) -------
//
// Measured 2026-12-01 20:54 UTC, one call (validate/data/h200/own-set2/README.md); all 132 cases
// ran. Scored as the README fixed before measuring: every case but the 2 GEMMs with a leading
// dimension (k of A and B, n of C) that is not a multiple of 16 bytes.
namespace {

// Misaligned GEMMs are measured but not scored (set 2's rule, fixed before measuring).
const own_sets::SetErrors& set2() {
  static const auto e = own_sets::score_set(
      std::string(RIDGE_SOURCE_DIR) + "/validate/data/h200/own-set2/own-set2.json",
      std::string(RIDGE_SOURCE_DIR) + "/validate/prereg/own-set2/predictions.json",
      "gemm misaligned");
  return e;
}

}  // namespace

TEST_CASE("own-set2 pre-registered: 130 scored cases and 2 misaligned GEMMs measured",
          "[validation][own-set2]") {
  // 132 cases, all measured; 2 misaligned GEMMs not scored (rule fixed before measuring).
  CHECK(set2().all.size() == 130);
  CHECK(set2().by_class.at("gemm misaligned").size() == 2);
}

TEST_CASE("own-set2 pre-registered: kernels median <= 5% (met: 4.3%)", "[validation][own-set2]") {
  CHECK(models::percentile(set2().all, 50) <= 0.05);
}

TEST_CASE("own-set2 pre-registered: kernels p90 <= 15% (missed: 21.0%)",
          "[validation][own-set2][!shouldfail]") {
  CHECK(models::percentile(set2().all, 90) <= 0.15);
}

TEST_CASE("own-set2 pre-registered: every op class median <= 10% (met: largest copy d2h 9.2%)",
          "[validation][own-set2]") {
  for (const auto& [c, v] : set2().by_class) {
    if (c == "gemm misaligned") continue;
    INFO(c << ": " << models::percentile(v, 50));
    CHECK(models::percentile(v, 50) <= 0.10);
  }
}
