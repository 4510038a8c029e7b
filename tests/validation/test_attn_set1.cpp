// Pre-registered attention set 1 (issue 18, validate/prereg/attn-set1): PyTorch SDPA at the
// attention shapes of public models, measured on the H200 (validate/data/h200/attn-set1) after
// both predictions files were committed: predictions.json (the attention round's model, cafc4fd)
// is scored against the targets, as errors.py scores it (every case; classes prefill causal,
// prefill full, chunk, decode, fwd_bwd). All three targets were met; the figures are the measured
// ones. validate/prereg/attn-set1/README.md.
#include <catch2/catch.hpp>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "models/records.hpp"
#include "tests/validation/own_set_common.hpp"

using namespace ridge;

namespace {

const std::string kRoot = RIDGE_SOURCE_DIR;

std::string attention_class(const nlohmann::json& p) {
  if (p.at("pass") == "fwd_bwd") return "fwd_bwd";
  const int sq = p.at("seq_q"), skv = p.at("seq_kv");
  if (sq == 1) return "decode";
  if (sq < skv && sq <= 512) return "chunk";
  return p.at("causal").get<bool>() ? "prefill causal" : "prefill full";
}

struct Scored {
  std::vector<double> all;
  std::map<std::string, std::vector<double>> by_class;
};

const Scored& scored() {
  static const Scored s = [] {
    Scored out;
    // Each document held in a local: a range-for over a temporary's member would dangle.
    const auto predicted =
        own_sets::read_json(kRoot + "/validate/prereg/attn-set1/predictions.json");
    const auto measured =
        own_sets::read_json(kRoot + "/validate/data/h200/attn-set1/attn-set1.json");
    std::map<std::string, double> pred;
    for (const auto& r : predicted.at("records")) pred[r.at("id")] = r.at("timing").at("median_us");
    for (const auto& r : measured.at("records")) {
      const double m = r.at("timing").at("median_us");
      const double e = std::fabs(pred.at(r.at("id")) - m) / m;
      out.all.push_back(e);
      out.by_class[attention_class(r.at("params"))].push_back(e);
    }
    return out;
  }();
  return s;
}

}  // namespace

TEST_CASE("attn-set1 pre-registered: 30 cases measured and every one scored",
          "[validation][attn-set1]") {
  CHECK(scored().all.size() == 30);
  CHECK(scored().by_class.size() == 5);
}

TEST_CASE("attn-set1 pre-registered: median <= 5% (met: 4.5%)", "[validation][attn-set1]") {
  REQUIRE(scored().all.size() == 30);
  INFO("median " << models::percentile(scored().all, 50));
  CHECK(models::percentile(scored().all, 50) <= 0.05);
}

TEST_CASE("attn-set1 pre-registered: p90 <= 15% (met: 14.7%)", "[validation][attn-set1]") {
  REQUIRE(scored().all.size() == 30);
  INFO("p90 " << models::percentile(scored().all, 90));
  CHECK(models::percentile(scored().all, 90) <= 0.15);
}

TEST_CASE("attn-set1 pre-registered: every class median <= 10% (met: largest fwd_bwd 9.4%)",
          "[validation][attn-set1]") {
  REQUIRE(scored().by_class.size() == 5);
  for (const auto& [c, v] : scored().by_class) {
    INFO(c << ": " << models::percentile(v, 50));
    CHECK(models::percentile(v, 50) <= 0.10);
  }
}
