// Issue 21, limits and silently wrong answers: each limit of `ridge describe limits` refused with
// a clear error, and inputs that used to give a wrong answer without a word.
#include <catch2/catch.hpp>

#include "hw/limits.hpp"
#include "tests/cli/harness.hpp"

using namespace ridge::test;

TEST_CASE("limits: JSON depth pre-scan counts brackets outside strings", "[unit]") {
  using ridge::hw::json_depth_error;
  const std::string ok = std::string(128, '[') + std::string(128, ']');
  CHECK(json_depth_error(ok).empty());
  const std::string deep = std::string(129, '[') + std::string(129, ']');
  CHECK(json_depth_error(deep) == "byte 128: JSON nested more than 128 levels deep (the limit)");
  // Brackets inside strings, escaped quotes included, do not count.
  const std::string in_string =
      "[\"" + std::string(500, '[') + "\\\"" + std::string(500, '{') + "\"]";
  CHECK(json_depth_error(in_string).empty());
}
