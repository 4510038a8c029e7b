// validate/'s own programs on the H200, pre-registered set 1 (validate/prereg/own-set1,
// validate/data/h200/own-set1, validate/README.md "Own programs, pre-registered set 1").
//
// The protocol: the model (fast mode, configs/hw/h200-sxm-141gb.calibrated.yaml) was frozen and
// its predictions for 138 cases that no committed record measured were committed (8528ae1) before
// any device call measured them. The measurement commit added the targets of issue 18 point 6 on
// the pre-registered predictions (scored as the README fixed: every case but the 8 attention
// ones), each missed target as a [!shouldfail] test whose name states the miss. The freeze guard
// (the model in the tree reproduces predictions.json) was removed when the model changed after
// the measurement (own-set 2's round): set 1 is fit data since, and these tests read only the
// committed predictions.
// Measured: 2026-12-01 20:29 UTC, one call (validate/data/h200/own-set1/README.md); 137 of the 138
// cases ran (softmax/bf16/r512_c49152 could not launch: validate's one-block-per-row softmax asks
// for more shared memory than an SM has), 129 of them scored.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "models/records.hpp"
#include "tests/validation/own_set_common.hpp"

using namespace ridge;
using own_sets::op_class;
using own_sets::read_json;

namespace {
const std::string kRoot = RIDGE_SOURCE_DIR;

struct Errors {
  std::vector<double> all;                              // |error| of every scored case
  std::map<std::string, std::vector<double>> by_class;  // |error| per op class
  double median() const { return models::percentile(all, 50); }
  double p90() const { return models::percentile(all, 90); }
};

// |pre-registered - measured| / measured of the median time, every measured case but attention.
const Errors& preregistered() {
  static const Errors e = [] {
    const auto measured = read_json(kRoot + "/validate/data/h200/own-set1/own-set1.json");
    const auto pred = read_json(kRoot + "/validate/prereg/own-set1/predictions.json");
    std::map<std::string, double> p;
    for (const auto& r : pred.at("records")) p[r.at("id")] = r.at("timing").at("median_us");
    Errors out;
    for (const auto& r : measured.at("records")) {
      if (r.at("op") == "attention") continue;
      const double m = r.at("timing").at("median_us");
      const double err = std::abs(p.at(r.at("id")) - m) / m;
      out.all.push_back(err);
      out.by_class[op_class(r, false)].push_back(err);
    }
    return out;
  }();
  return e;
}
}  // namespace

// ---- the targets on the pre-registered predictions (errors.md: errors.py --write) --------------

TEST_CASE("own-set1 pre-registered: 129 scored cases measured", "[validation]") {
  // 138 cases - 8 attention (not scored, fixed before measuring) - 1 that could not launch.
  CHECK(preregistered().all.size() == 129);
}

TEST_CASE("own-set1 pre-registered: kernels median <= 5% (missed: 5.2%)",
          "[validation][!shouldfail]") {
  CHECK(preregistered().median() <= 0.05);
}

TEST_CASE("own-set1 pre-registered: kernels p90 <= 15% (missed: 18.5%)",
          "[validation][!shouldfail]") {
  CHECK(preregistered().p90() <= 0.15);
}

TEST_CASE(
    "own-set1 pre-registered: every op class median <= 10% (missed: copy h2d 13.8%; launch "
    "16.7%)",
    "[validation][!shouldfail]") {
  for (const auto& [c, v] : preregistered().by_class) {
    INFO(c);
    CHECK(models::percentile(v, 50) <= 0.10);
  }
}

TEST_CASE("own-set1 pre-registered: op classes other than copy h2d and launch within 10% (met)",
          "[validation]") {
  for (const auto& [c, v] : preregistered().by_class) {
    if (c == "copy h2d" || c == "launch") continue;
    INFO(c << ": " << models::percentile(v, 50));
    CHECK(models::percentile(v, 50) <= 0.10);
  }
}
