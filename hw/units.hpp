// Quantities with units, parsed from config strings such as "4.8 TB/s", "60 MiB", "1.98 GHz".
//
// Captures: decimal (k, M, G, T, P = 1e3..1e15) and binary (Ki, Mi, Gi, Ti = 2^10..2^40) prefixes,
// for bytes, bytes per second, hertz, FLOP/s and seconds. GB = 1e9 bytes and GiB = 2^30 bytes,
// following IEC 80000-13; bandwidths use the same prefixes ("GB/s" = 1e9 B/s, as NVIDIA's
// datasheets and nccl-tests use). Network line rates may be given in bits ("400 Gb/s" =
// 50 GB/s: decimal prefixes, 8 bits to the byte); sizes never are.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace ridge::hw {

/// What a quantity measures; each kind has one base unit (bytes, B/s, Hz, FLOP/s, seconds).
enum class Dimension { kCount, kBytes, kBandwidth, kFrequency, kFlopRate, kTime, kFraction };

/// A parsed quantity in its base unit, or an error message saying what was expected.
struct ParsedQuantity {
  double value = 0.0;
  std::string error;  ///< empty on success
};

/// Parses "4.8 TB/s" as Dimension::kBandwidth into 4.8e12. A bare number is accepted only for
/// kCount and kFraction; any other dimension without a unit is an error ("value without a unit").
ParsedQuantity parse_quantity(std::string_view text, Dimension dim);

/// The base unit's name, for messages and `ridge hw show`: "B", "B/s", "Hz", "FLOP/s", "s".
std::string_view base_unit(Dimension dim);

/// Human formatting with decimal prefixes for rates and binary for sizes where exact:
/// 4.8e12 B/s -> "4.80 TB/s", 62914560 B -> "60 MiB".
std::string format_quantity(double value, Dimension dim);

}  // namespace ridge::hw
