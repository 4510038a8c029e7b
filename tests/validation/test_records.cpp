// Measurement records: strict reading, and the deterministic train/test split.
#include <catch2/catch.hpp>

#include "models/records.hpp"

using namespace ridge::models;

namespace {
const std::string kDir = std::string(RIDGE_TEST_DATA_DIR) + "/records/";
std::string error_of(const std::string& file) {
  try {
    read_records(kDir + file);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "no error";
}
}  // namespace

TEST_CASE("records: a good file reads, extras kept out of the op spec", "[unit][records]") {
  const RecordFile f = read_records(kDir + "good.json");
  REQUIRE(f.records.size() == 2);
  CHECK(f.records[0].spec.has_value());
  CHECK(f.records[0].median_s == Approx(12.5e-6));
  CHECK(f.records[0].params.contains("library"));  // kept in params, not in the spec
  CHECK_FALSE(f.records[1].spec.has_value());      // latency: measured, not predicted
  CHECK(f.sha256.size() == 64);
}

TEST_CASE("records: errors name the file, the record and what was expected", "[config-errors]") {
  CHECK(error_of("bad_schema.json") ==
        kDir + "bad_schema.json: expected an object with \"schema\": \"ridge.records/1\"");
  CHECK(error_of("bad_record.json") ==
        kDir + "bad_record.json: records[1]: params: gemm: k: missing required parameter");
  CHECK(error_of("no_median.json") ==
        kDir +
            "no_median.json: records[0]: timing: expected an object with a number \"median_us\"");
  CHECK(error_of("missing.json").find("cannot read file") != std::string::npos);
}

TEST_CASE("records: the split is deterministic and holds out about a third", "[unit][records]") {
  int held = 0;
  for (int i = 0; i < 3000; ++i) held += is_held_out("case/" + std::to_string(i));
  CHECK(held > 900);
  CHECK(held < 1100);
  CHECK(is_held_out("gemm/bf16/m4096_n4096_k4096") == is_held_out("gemm/bf16/m4096_n4096_k4096"));
}

TEST_CASE("percentile interpolates order statistics", "[unit][records]") {
  // Sorted {1,2,3,4,5}: median 3; p90 at position 3.6 -> 4 + 0.6*(5-4) = 4.6.
  CHECK(percentile({5, 1, 3, 2, 4}, 50) == Approx(3));
  CHECK(percentile({5, 1, 3, 2, 4}, 90) == Approx(4.6));
}

TEST_CASE("records: a value of another type is an error and not a crash", "[config-errors]") {
  // Found by fuzz_records in CI: {"schema": 0} (nlohmann's value() throws type_error for a
  // number where a string is asked for), followed by a NUL byte that ends the parse.
  std::string text = "{\"schema\":0}";
  text.push_back('\0');
  text += " \"ridge.records/1\"";
  try {
    parse_records(text, "t.json");
    FAIL("no error");
  } catch (const std::invalid_argument& e) {
    // The schema's type is now checked before its value is read: the error names it.
    CHECK(std::string(e.what()) ==
          "t.json: expected an object with \"schema\": \"ridge.records/1\"");
  }
}
