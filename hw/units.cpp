#include "hw/units.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <utility>

namespace ridge::hw {
namespace {

struct Prefix {
  std::string_view text;
  double factor;
};

// Longest first so "Ki" is tried before "K"-less matches; "" last.
constexpr std::array<Prefix, 14> kPrefixes = {{{"Ki", 1024.0},
                                               {"Mi", 1048576.0},
                                               {"Gi", 1073741824.0},
                                               {"Ti", 1099511627776.0},
                                               {"k", 1e3},
                                               {"K", 1e3},
                                               {"M", 1e6},
                                               {"G", 1e9},
                                               {"T", 1e12},
                                               {"P", 1e15},
                                               {"m", 1e-3},
                                               {"u", 1e-6},
                                               {"n", 1e-9},
                                               {"p", 1e-12}}};

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Base-unit spellings accepted for each dimension.
bool matches_base(std::string_view unit, Dimension dim) {
  switch (dim) {
    case Dimension::kBytes:
      return unit == "B";
    case Dimension::kBandwidth:
      return unit == "B/s" || unit == "Bps";
    case Dimension::kFrequency:
      return unit == "Hz";
    case Dimension::kFlopRate:
      return unit == "FLOP/s" || unit == "FLOPS" || unit == "OP/s" || unit == "OPS";
    case Dimension::kTime:
      return unit == "s";
    case Dimension::kCount:
    case Dimension::kFraction:
      return false;
  }
  return false;
}

// Binary prefixes make sense only for sizes (and sizes per second); small prefixes only for time.
bool prefix_allowed(const Prefix& p, Dimension dim) {
  const bool binary = p.text.size() == 2;
  const bool small = p.factor < 1.0;
  if (binary) return dim == Dimension::kBytes || dim == Dimension::kBandwidth;
  if (small) return dim == Dimension::kTime;
  return true;
}

std::string expected_units(Dimension dim) {
  switch (dim) {
    case Dimension::kBytes:
      return "a size such as '60 MiB' or '80 GB'";
    case Dimension::kBandwidth:
      return "a bandwidth such as '4.8 TB/s', '900 GB/s' or '400 Gb/s' (bits)";
    case Dimension::kFrequency:
      return "a frequency such as '1.98 GHz' or '1980 MHz'";
    case Dimension::kFlopRate:
      return "a rate such as '989.4 TFLOP/s'";
    case Dimension::kTime:
      return "a time such as '4.5 us' or '600 ns'";
    case Dimension::kCount:
      return "a number";
    case Dimension::kFraction:
      return "a number, or a percentage such as '85%'";
  }
  return "a value";
}

}  // namespace

ParsedQuantity parse_quantity(std::string_view text, Dimension dim) {
  ParsedQuantity out;
  std::string_view s = trim(text);
  double number = 0.0;
  const char* begin = s.data();
  const char* end = s.data() + s.size();
  auto [ptr, ec] = std::from_chars(begin, end, number);
  if (ec != std::errc() || ptr == begin) {
    out.error = fmt::format("expected {}, got '{}'", expected_units(dim), text);
    return out;
  }
  if (!std::isfinite(number)) {
    out.error = fmt::format("expected a finite number, got '{}'", text);
    return out;
  }
  std::string_view unit = trim(std::string_view(ptr, static_cast<size_t>(end - ptr)));
  if (dim == Dimension::kCount) {
    if (!unit.empty()) out.error = fmt::format("expected a plain number, got '{}'", text);
    out.value = number;
    return out;
  }
  if (dim == Dimension::kFraction) {
    if (unit == "%") {
      out.value = number / 100.0;
    } else if (unit.empty()) {
      out.value = number;
    } else {
      out.error = fmt::format("expected {}, got '{}'", expected_units(dim), text);
    }
    return out;
  }
  if (unit.empty()) {
    out.error =
        fmt::format("value without a unit: expected {}, got '{}'", expected_units(dim), text);
    return out;
  }
  if (matches_base(unit, dim)) {
    out.value = number;
    return out;
  }
  // Network line rates are quoted in bits ("400 Gb/s"): 8 bits to the byte, decimal prefixes.
  if (dim == Dimension::kBandwidth) {
    for (const Prefix& p : kPrefixes) {
      if (p.text.size() != 1 || p.factor < 1.0) continue;
      const std::string_view rest = unit.substr(std::min(unit.size(), p.text.size()));
      if (unit.size() > p.text.size() && unit.substr(0, p.text.size()) == p.text &&
          (rest == "b/s" || rest == "bit/s" || rest == "bps")) {
        out.value = number * p.factor / 8.0;
        return out;
      }
    }
  }
  for (const Prefix& p : kPrefixes) {
    if (unit.size() > p.text.size() && unit.substr(0, p.text.size()) == p.text &&
        matches_base(unit.substr(p.text.size()), dim) && prefix_allowed(p, dim)) {
      out.value = number * p.factor;
      return out;
    }
  }
  // Common spellings of microseconds.
  if (dim == Dimension::kTime && (unit == "us" || unit == "\xC2\xB5s" || unit == "usec")) {
    out.value = number * 1e-6;
    return out;
  }
  out.error = fmt::format("unknown unit '{}': expected {}", unit, expected_units(dim));
  return out;
}

std::string_view base_unit(Dimension dim) {
  switch (dim) {
    case Dimension::kBytes:
      return "B";
    case Dimension::kBandwidth:
      return "B/s";
    case Dimension::kFrequency:
      return "Hz";
    case Dimension::kFlopRate:
      return "FLOP/s";
    case Dimension::kTime:
      return "s";
    case Dimension::kCount:
    case Dimension::kFraction:
      return "";
  }
  return "";
}

std::string format_quantity(double value, Dimension dim) {
  if (dim == Dimension::kCount) return fmt::format("{:g}", value);
  if (dim == Dimension::kFraction) return fmt::format("{:.1f}%", value * 100.0);
  if (dim == Dimension::kTime) {
    const double a = std::fabs(value);
    if (a >= 1.0) return fmt::format("{:.3f} s", value);
    if (a >= 1e-3) return fmt::format("{:.3f} ms", value * 1e3);
    if (a >= 1e-6) return fmt::format("{:.3f} us", value * 1e6);
    return fmt::format("{:.1f} ns", value * 1e9);
  }
  if (dim == Dimension::kBytes) {
    static constexpr std::array<std::pair<double, std::string_view>, 4> kBin = {
        {{1099511627776.0, "TiB"}, {1073741824.0, "GiB"}, {1048576.0, "MiB"}, {1024.0, "KiB"}}};
    for (auto [f, name] : kBin) {
      if (std::fabs(value) >= f && std::fmod(value, f) == 0.0)
        return fmt::format("{:g} {}", value / f, name);
    }
  }
  static constexpr std::array<std::pair<double, std::string_view>, 5> kDec = {
      {{1e15, "P"}, {1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}}};
  std::string_view unit = base_unit(dim);
  for (auto [f, name] : kDec) {
    if (std::fabs(value) >= f) return fmt::format("{:.2f} {}{}", value / f, name, unit);
  }
  return fmt::format("{:g} {}", value, unit);
}

}  // namespace ridge::hw
