// Unit tests for sim/time.hpp: rounding at the double boundary and integer arithmetic.
#include <catch2/catch.hpp>

#include "sim/time.hpp"

using ridge::sim::Time;

TEST_CASE("Time helpers round to the nearest picosecond", "[unit][time]") {
  CHECK(Time::from_ns(1.0).ps == 1000);
  CHECK(Time::from_us(1.5).ps == 1'500'000);
  CHECK(Time::from_ms(2.0).ps == 2'000'000'000);
  CHECK(Time::from_seconds(1.0).ps == 1'000'000'000'000);
  CHECK(Time::from_ns(0.0004).ps == 0);  // 0.4 ps rounds down
  CHECK(Time::from_ns(0.0006).ps == 1);  // 0.6 ps rounds up
  CHECK(Time::from_ns(-0.0006).ps == -1);
  CHECK(Time::from_seconds(1e-12 / 3).ps == 0);
  CHECK_THROWS(Time::from_seconds(1e8));  // 1e20 ps does not fit in 64 bits
}

TEST_CASE("Time::ceil_seconds rounds up and saturates", "[unit][time]") {
  // 1 byte at 3e9 B/s is 333.33.. ps; it must not end early, so 334 ps.
  CHECK(Time::ceil_seconds(1.0 / 3e9).ps == 334);
  CHECK(Time::ceil_seconds(0.0).ps == 0);
  CHECK(Time::ceil_seconds(1e9) == Time::max());
}

TEST_CASE("Time arithmetic and reporting", "[unit][time]") {
  const Time a = Time::from_us(3);
  const Time b = Time::from_ns(500);
  CHECK((a + b).ps == 3'500'000);
  CHECK((a - b).ps == 2'500'000);
  CHECK((a * 2).ps == 6'000'000);
  CHECK(a / b == 6);
  CHECK((a / 3).ps == 1'000'000);
  CHECK(b < a);
  CHECK(a.us() == Approx(3.0));
  CHECK(a.seconds() == Approx(3e-6));
  Time c{};
  c += a;
  c -= b;
  CHECK(c == Time::from_ps(2'500'000));
}
