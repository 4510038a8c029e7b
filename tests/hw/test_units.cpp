// Quantities with units: GB = 1e9 B, GiB = 2^30 B (IEC 80000-13), bandwidths in bytes per second.
#include <catch2/catch.hpp>

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
