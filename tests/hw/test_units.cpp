// Quantities with units: GB = 1e9 B, GiB = 2^30 B (IEC 80000-13), bandwidths in bytes per second.
#include <catch2/catch.hpp>

#include <cstdint>

#include "hw/json_number.hpp"
#include "hw/units.hpp"

using namespace ridge::hw;

TEST_CASE("units: sizes, bandwidths, clocks, rates, times", "[unit][units]") {
  CHECK(parse_quantity("60 MiB", Dimension::kBytes).value == 60.0 * 1048576);
  CHECK(parse_quantity("80 GB", Dimension::kBytes).value == 80e9);
  CHECK(parse_quantity("141GB", Dimension::kBytes).value == 141e9);
  CHECK(parse_quantity("4.8 TB/s", Dimension::kBandwidth).value == Approx(4.8e12));
  CHECK(parse_quantity("1.98 GHz", Dimension::kFrequency).value == Approx(1.98e9));
  CHECK(parse_quantity("1980 MHz", Dimension::kFrequency).value == Approx(1.98e9));
  CHECK(parse_quantity("989.4 TFLOP/s", Dimension::kFlopRate).value == Approx(989.4e12));
  CHECK(parse_quantity("4.5 us", Dimension::kTime).value == Approx(4.5e-6));
  CHECK(parse_quantity("600 ns", Dimension::kTime).value == Approx(600e-9));
  CHECK(parse_quantity("85%", Dimension::kFraction).value == Approx(0.85));
  CHECK(parse_quantity("0.85", Dimension::kFraction).value == Approx(0.85));
}

TEST_CASE("units: errors say what was expected", "[unit][units]") {
  CHECK(parse_quantity("4800", Dimension::kBandwidth).error.find("value without a unit") == 0);
  CHECK(parse_quantity("60 GHz", Dimension::kBytes).error.find("unknown unit 'GHz'") == 0);
  CHECK_FALSE(parse_quantity("fast", Dimension::kBandwidth).error.empty());
  // Bits only as line rates ("400 Gb/s" = 50 GB/s, tests/systems); a size in bits is refused.
  CHECK_FALSE(parse_quantity("1 Gb", Dimension::kBytes).error.empty());
  CHECK_FALSE(
      parse_quantity("1 MiHz", Dimension::kFrequency).error.empty());  // binary prefix on Hz
  CHECK_FALSE(parse_quantity("3 ms", Dimension::kBytes).error.empty());
  CHECK_FALSE(parse_quantity("nan GB", Dimension::kBytes).error.empty());
}

TEST_CASE("units: formatting round-trips the binary sizes", "[unit][units]") {
  CHECK(format_quantity(62914560, Dimension::kBytes) == "60 MiB");
  CHECK(format_quantity(4.8e12, Dimension::kBandwidth) == "4.80 TB/s");
  CHECK(format_quantity(2.5e-6, Dimension::kTime) == "2.500 us");
}

TEST_CASE("json_integer: integers within the type, integral floats, nothing else",
          "[unit][units]") {
  using J = nlohmann::json;
  CHECK(json_integer<int64_t>(J(42)) == 42);
  CHECK(json_integer<int64_t>(J::parse("1e3")) == 1000);  // a float holding an integer
  CHECK(json_integer<int64_t>(J::parse("-0.0")) == 0);
  CHECK_FALSE(json_integer<int64_t>(J::parse("2.5")));   // a fraction
  CHECK_FALSE(json_integer<int64_t>(J::parse("1e25")));  // beyond int64 (UB for get<>())
  CHECK_FALSE(json_integer<int64_t>(J("7")));            // a string
  CHECK_FALSE(json_integer<int64_t>(J(true)));
  // The ends of int64: -2^63 is exact as a double and fits; 2^63 as a double is one past max.
  CHECK(json_integer<int64_t>(J::parse("-9223372036854775808")) == INT64_MIN);
  CHECK(json_integer<int64_t>(J::parse("-9.223372036854775808e18")) == INT64_MIN);
  CHECK_FALSE(json_integer<int64_t>(J::parse("9.223372036854775808e18")));
  CHECK_FALSE(json_integer<int64_t>(J::parse("9223372036854775808")));  // unsigned, past max
  // Narrow and unsigned types: their own ranges.
  CHECK(json_integer<int>(J(2147483647)) == 2147483647);
  CHECK_FALSE(json_integer<int>(J(2147483648LL)));
  CHECK_FALSE(json_integer<std::size_t>(J(-1)));
  CHECK_FALSE(json_integer<std::size_t>(J::parse("-1e0")));
  CHECK(json_integer<std::size_t>(J::parse("1.8446744073709549568e19")) ==
        18446744073709549568ULL);  // 2^64 - 2048, the largest double below 2^64
  CHECK_FALSE(json_integer<std::size_t>(J::parse("1.8446744073709551616e19")));  // 2^64
  CHECK_THROWS_WITH(json_integer_at<int>(J::parse("1e25")),
                    Catch::Contains("expected an integer") && Catch::Contains("1e+25"));
}
