// validate/'s own programs on the H200, pre-registered set 7 (issue 18): every class the fast
// kernel model prices, at the layer shapes of public models, predicted with the model of b63b6a2
// (set 6's plus misaligned GEMMs on cuBLAS's sm_80 tiles and the pageable-copy forms of the
// host-set round). validate/prereg/own-set7/README.md.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <string>

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
