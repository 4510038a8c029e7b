// validate/'s own programs, pre-registered set 11 (issue 18): set 10's mix of classes at the layer
// shapes of other public models, predicted with round 5's model (the calibrated overlay's launch
// cost refitted on every lease's launch records) for the H200, and with the H200's fitted figures
// carried to the H100's datasheet figures for an H100. The call got an H200, so the H200 file is
// the one scored. validate/prereg/own-set11/README.md, validate/data/h200/own-set11/README.md.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "models/records.hpp"
#include "tests/validation/own_set_common.hpp"

using namespace ridge;

// ---- own-set11 measured (validate/data/h200/own-set11, 2026-12-02) ---------------------------
//
// The targets of issue 18 point 6 on the pre-registered predictions (committed in 2e9ebff, model
// unchanged until the measurement), scored as errors.py scores them (every case; op classes as
// own_sets::op_class with misaligned GEMMs apart): median |error| <= 5%, p90 <= 15%, every
// class's median <= 10%. A missed target is [!shouldfail] with its figure.
namespace {

const own_sets::SetErrors& set11() {
  static const auto e = own_sets::score_set(
      std::string(RIDGE_SOURCE_DIR) + "/validate/data/h200/own-set11/own-set11.json",
      std::string(RIDGE_SOURCE_DIR) + "/validate/prereg/own-set11/predictions.json");
  return e;
}

}  // namespace

TEST_CASE("own-set11 pre-registered: 132 cases measured and every one scored",
          "[validation][own-set11]") {
  CHECK(set11().all.size() == 132);
  CHECK(set11().by_class.size() == 16);
  CHECK(set11().by_class.at("gemm misaligned").size() == 10);
}

TEST_CASE("own-set11 pre-registered: median <= 5% (met: 4.0%)", "[validation][own-set11]") {
  CHECK(models::percentile(set11().all, 50) <= 0.05);
}

TEST_CASE("own-set11 pre-registered: p90 <= 15% (missed: 16.8%)",
          "[validation][own-set11][!shouldfail]") {
  CHECK(models::percentile(set11().all, 90) <= 0.15);
}

TEST_CASE("own-set11 pre-registered: every op class median <= 10% (missed: launch 19.8%)",
          "[validation][own-set11][!shouldfail]") {
  for (const auto& [c, v] : set11().by_class) {
    INFO(c << ": " << models::percentile(v, 50));
    CHECK(models::percentile(v, 50) <= 0.10);
  }
}

// The fifteen classes that met the class target, each within 10% (guard): every class but
// launches (largest: softmax 8.6%).
TEST_CASE("own-set11 pre-registered: the fifteen classes within 10% (guard)",
          "[validation][own-set11]") {
  int n = 0;
  for (const auto& [c, v] : set11().by_class) {
    if (c == "launch") continue;
    ++n;
    INFO(c << ": " << models::percentile(v, 50));
    CHECK(models::percentile(v, 50) <= 0.10);
  }
  CHECK(n == 15);
}

// ---- own-set11 on an H100 (validate/data/h100/own-set11): the H200's fit carried over ---------
//
// The same set measured on an H100 and scored against predictions-h100.json (committed in 2e9ebff
// with configs/hw/h100-sxm5-80gb.h200-fit.yaml, before either measurement): same targets.
namespace {

const own_sets::SetErrors& set11_h100() {
  static const auto e = own_sets::score_set(
      std::string(RIDGE_SOURCE_DIR) + "/validate/data/h100/own-set11/own-set11.json",
      std::string(RIDGE_SOURCE_DIR) + "/validate/prereg/own-set11/predictions-h100.json");
  return e;
}

}  // namespace

TEST_CASE("own-set11 on an H100: 132 cases measured and every one scored",
          "[validation][own-set11]") {
  CHECK(set11_h100().all.size() == 132);
  CHECK(set11_h100().by_class.size() == 16);
}

TEST_CASE("own-set11 on an H100: median <= 5% (met: 4.9%)", "[validation][own-set11]") {
  CHECK(models::percentile(set11_h100().all, 50) <= 0.05);
}

TEST_CASE("own-set11 on an H100: p90 <= 15% (missed: 17.5%)",
          "[validation][own-set11][!shouldfail]") {
  CHECK(models::percentile(set11_h100().all, 90) <= 0.15);
}

TEST_CASE("own-set11 on an H100: every op class median <= 10% (missed: launch 12.3% softmax 10.1%)",
          "[validation][own-set11][!shouldfail]") {
  for (const auto& [c, v] : set11_h100().by_class) {
    INFO(c << ": " << models::percentile(v, 50));
    CHECK(models::percentile(v, 50) <= 0.10);
  }
}

// The fourteen classes that met the class target on the H100 (guard): all but launches and
// softmax (largest: gemm tf32 9.3%).
TEST_CASE("own-set11 on an H100: the fourteen classes within 10% (guard)",
          "[validation][own-set11]") {
  int n = 0;
  for (const auto& [c, v] : set11_h100().by_class) {
    if (c == "launch" || c == "softmax") continue;
    ++n;
    INFO(c << ": " << models::percentile(v, 50));
    CHECK(models::percentile(v, 50) <= 0.10);
  }
  CHECK(n == 14);
}

// The launch conditioning that scores own-set12 on (own_sets::launch_conditioned, the C++ copy of
// own_prereg.launch_conditioned) on a two-column table worked by hand: probe runs 3.1 and 3.3 us
// average 3.2, which lies 0.4 of the way from the probe column's 3.0 to 3.5, so a launch case whose
// column reads 2.0 and 3.0 is predicted 2.0 + 0.4 x 1.0 = 2.4 us; a case that is not a launch
// keeps its prediction.
TEST_CASE("own sets: launch cases are read off the table at the probe's host cost",
          "[unit][own-set12]") {
  const std::string dir = std::filesystem::temp_directory_path().string();
  const std::string table = dir + "/launch_table_unit_test.json";
  const std::string probe = dir + "/launch_probe_unit_test.json";
  {
    std::ofstream t(table);
    t << R"({"host_launch_us": [3.0, 3.5], "probe": ["probe/launch/eager/2000"],
             "cases": {"probe/launch/eager/2000": [3.0, 3.5], "launch/eager/10": [2.0, 3.0]}})";
    std::ofstream p(probe);
    p << R"({"records": [{"id": "before/launch/eager/2000", "timing": {"median_us": 3.1}},
                         {"id": "after/launch/eager/2000", "timing": {"median_us": 3.3}}]})";
  }
  const auto out =
      own_sets::launch_conditioned({{"launch/eager/10", 9.0}, {"gemm/x", 5.0}}, table, probe);
  CHECK(out.at("launch/eager/10") == Approx(2.4));
  CHECK(out.at("gemm/x") == 5.0);
  std::remove(table.c_str());
  std::remove(probe.c_str());
}
