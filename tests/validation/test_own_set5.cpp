// validate/'s own programs on the H200, pre-registered set 5 (issue 18 point 6): strided reads at
// gaps and footprints no earlier record measured, predicted with the L2-line residency of strided
// reads (models/op_library.cpp, elementwise `buffers`). validate/prereg/own-set5/README.md.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <string>

#include "hw/gpu_loader.hpp"
#include "models/kernel_model.hpp"
#include "models/op.hpp"
#include "models/records.hpp"
#include "tests/validation/own_set_common.hpp"

using namespace ridge;

// ---- own-set5 measured (validate/data/h200/own-set5, 2026-12-02) -----------------------------
//
// The targets of issue 18 point 6 on the pre-registered predictions, scored as errors.py scores
// them (every case, one class): median |error| <= 5%, p90 <= 15%, the class's median <= 10%. A
// missed target is [!shouldfail] with its figure.
namespace {

const own_sets::SetErrors& set5() {
  static const auto e = own_sets::score_set(
      std::string(RIDGE_SOURCE_DIR) + "/validate/data/h200/own-set5/own-set5.json",
      std::string(RIDGE_SOURCE_DIR) + "/validate/prereg/own-set5/predictions.json");
  return e;
}

}  // namespace

TEST_CASE("own-set5 pre-registered: 16 cases measured and every one scored",
          "[validation][own-set5]") {
  CHECK(set5().all.size() == 16);
  REQUIRE(set5().by_class.size() == 1);
  CHECK(set5().by_class.count("elementwise strided") == 1);
}

TEST_CASE("own-set5 pre-registered: median <= 5% (missed: 14.2%)",
          "[validation][own-set5][!shouldfail]") {
  CHECK(models::percentile(set5().all, 50) <= 0.05);
}

TEST_CASE("own-set5 pre-registered: p90 <= 15% (missed: 57.5%)",
          "[validation][own-set5][!shouldfail]") {
  CHECK(models::percentile(set5().all, 90) <= 0.15);
}

TEST_CASE("own-set5 pre-registered: the strided class median <= 10% (missed: 14.2%)",
          "[validation][own-set5][!shouldfail]") {
  CHECK(models::percentile(set5().by_class.at("elementwise strided"), 50) <= 0.10);
}
