// Simulated time and event order for the discrete-event engine.
//
// Captures: time as a strong 64-bit signed integer count of picoseconds (range about +-106 days),
// so that event order never depends on floating-point rounding; and the priority levels that
// break ties between events at the same instant. Events are totally ordered by
// (time, priority, insertion sequence), as in SST-core's (time, priority, order) and gem5's
// integer ticks.
// Ignores: calendars, clock domains and cycle counts; a caller that needs cycles converts them
// with its own frequency.
// Doubles meet time only in this file: the from_* helpers round to the nearest picosecond and
// ceil_seconds rounds up; nothing inside the engine stores or compares floating-point time.
#pragma once

#include <cmath>
#include <compare>
#include <cstdint>
#include <limits>
#include <stdexcept>

namespace ridge::sim {

/// A point in, or a span of, simulated time: an integer number of picoseconds.
struct Time {
  int64_t ps = 0;

  /// Exactly `v` picoseconds.
  static constexpr Time from_ps(int64_t v) { return Time{v}; }
  /// `ns` nanoseconds, rounded to the nearest picosecond.
  static Time from_ns(double ns) { return round_ps(ns * 1e3); }
  /// `us` microseconds, rounded to the nearest picosecond.
  static Time from_us(double us) { return round_ps(us * 1e6); }
  /// `ms` milliseconds, rounded to the nearest picosecond.
  static Time from_ms(double ms) { return round_ps(ms * 1e9); }
  /// `s` seconds, rounded to the nearest picosecond.
  static Time from_seconds(double s) { return round_ps(s * 1e12); }
  /// `s` seconds rounded UP to the next picosecond (a duration that must not end early);
  /// saturates at max() for spans too long to represent. A value within 1e-12 (relative) above
  /// a whole picosecond counts as that picosecond, so that floating-point noise in a quotient
  /// that is exact on paper (1e9 B / 5e9 B/s) does not add one.
  static Time ceil_seconds(double s) {
    const double ps = s * 1e12;
    if (!(ps < kMaxPsAsDouble)) return max();
    const double nearest = std::nearbyint(ps);
    const double rounded =
        std::fabs(ps - nearest) <= 1e-12 * std::fabs(ps) ? nearest : std::ceil(ps);
    return Time{static_cast<int64_t>(rounded)};
  }
  /// Time zero.
  static constexpr Time zero() { return Time{0}; }
  /// The largest representable time, used as "never".
  static constexpr Time max() { return Time{std::numeric_limits<int64_t>::max()}; }

  /// This time in nanoseconds, for reporting only.
  constexpr double ns() const { return static_cast<double>(ps) * 1e-3; }
  /// This time in microseconds, for reporting only.
  constexpr double us() const { return static_cast<double>(ps) * 1e-6; }
  /// This time in milliseconds, for reporting only.
  constexpr double ms() const { return static_cast<double>(ps) * 1e-9; }
  /// This time in seconds, for reporting only.
  constexpr double seconds() const { return static_cast<double>(ps) * 1e-12; }

  constexpr auto operator<=>(const Time&) const = default;
  constexpr Time& operator+=(Time o) {
    ps += o.ps;
    return *this;
  }
  constexpr Time& operator-=(Time o) {
    ps -= o.ps;
    return *this;
  }
  friend constexpr Time operator+(Time a, Time b) { return Time{a.ps + b.ps}; }
  friend constexpr Time operator-(Time a, Time b) { return Time{a.ps - b.ps}; }
  friend constexpr Time operator*(Time a, int64_t k) { return Time{a.ps * k}; }
  friend constexpr Time operator*(int64_t k, Time a) { return Time{a.ps * k}; }
  /// Integer division of a span, truncating toward zero.
  friend constexpr Time operator/(Time a, int64_t k) { return Time{a.ps / k}; }
  /// How many whole `b` fit in `a`.
  friend constexpr int64_t operator/(Time a, Time b) { return a.ps / b.ps; }
  friend constexpr Time operator%(Time a, Time b) { return Time{a.ps % b.ps}; }

 private:
  // 2^63 as a double: every double below it converts to int64_t without overflow.
  static constexpr double kMaxPsAsDouble = 9223372036854775808.0;
  static Time round_ps(double ps) {
    if (!(std::fabs(ps) < kMaxPsAsDouble)) {
      throw std::out_of_range("ridge::sim::Time: value out of the picosecond range");
    }
    return Time{std::llround(ps)};
  }
};

/// Tie-break between events at the same time: lower levels run first; equal levels run in the
/// order they were scheduled.
enum class Priority : uint8_t {
  kFirst = 0,     ///< before everything else at this instant
  kEarly = 64,    ///< before normal work
  kNormal = 128,  ///< the default
  kLate = 192,    ///< after normal work
  kLast = 255,    ///< after everything else at this instant (used to settle shared state)
};

}  // namespace ridge::sim
