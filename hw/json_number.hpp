// Checked integers from JSON. nlohmann's get<T>() for an integral T converts a float with
// static_cast: 1e25 read as an int64 is undefined behaviour, 2.5 silently becomes 2. Readers of
// files a user or another program wrote (imported timelines and graph files, measurement records)
// take integers through json_integer instead: an integer within T's range, or a float holding an
// integral value within it (1e3 reads as 1000), and nothing else.
#pragma once

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <type_traits>

namespace ridge::hw {

/// The integer `v` holds, or nullopt for a fraction, a value beyond T or a non-number.
template <class T>
std::optional<T> json_integer(const nlohmann::json& v) {
  static_assert(std::is_integral_v<T> && !std::is_same_v<T, bool>);
  using Lim = std::numeric_limits<T>;
  if (v.is_number_unsigned()) {
    const auto u = v.get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(Lim::max())) return std::nullopt;
    return static_cast<T>(u);
  }
  if (v.is_number_integer()) {
    const auto i = v.get<std::int64_t>();
    if constexpr (std::is_signed_v<T>) {
      if (i < static_cast<std::int64_t>(Lim::min()) || i > static_cast<std::int64_t>(Lim::max()))
        return std::nullopt;
    } else {
      if (i < 0 || static_cast<std::uint64_t>(i) > static_cast<std::uint64_t>(Lim::max()))
        return std::nullopt;
    }
    return static_cast<T>(i);
  }
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (!std::isfinite(d) || d != std::trunc(d)) return std::nullopt;
    // T's range as doubles, both ends exact: min is 0 or -2^digits, max + 1 is 2^digits.
    const double lo = static_cast<double>(Lim::min()), end = std::ldexp(1.0, Lim::digits);
    if (d < lo || d >= end) return std::nullopt;
    return static_cast<T>(d);
  }
  return std::nullopt;
}

/// json_integer, or nlohmann's type_error 302 naming what was expected and what `v` is, so that a
/// reader that turns nlohmann's exceptions into located errors reports it in place.
template <class T>
T json_integer_at(const nlohmann::json& v) {
  if (const auto i = json_integer<T>(v)) return *i;
  throw nlohmann::json::type_error::create(
      302,
      std::string("expected an integer from ") + std::to_string(std::numeric_limits<T>::min()) +
          " to " + std::to_string(std::numeric_limits<T>::max()) + ", but is " +
          (v.is_number() ? v.dump() : std::string(v.type_name())),
      &v);
}

}  // namespace ridge::hw
