// Streaming serving metrics with bounded memory: latency percentiles from a fixed-size log-bucket
// histogram, and a down-sampled time series of KV use, batch size and queue length.
//
// Histogram: 64 buckets per octave from 1 us to 2^40 us (~12.7 days), 2560 counters. A value is
// reported as its bucket's geometric midpoint, so a percentile's relative error is at most
// 2^(1/128) - 1 = 0.54% (plus the rank's own granularity); values below 1 us count as 1 us.
// Time series: at most `capacity` points; when full, every second point is dropped and the
// sampling stride doubles (so memory stays fixed and the series spans the whole run).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

namespace ridge::workloads {

class LogHistogram {
 public:
  static constexpr int kPerOctave = 64;
  static constexpr int kOctaves = 40;
  static constexpr double kMinS = 1e-6;
  void add(double seconds);
  /// The p-th percentile (0 < p <= 100) in seconds; 0 when empty.
  double percentile(double p) const;
  double mean() const { return count_ ? sum_ / double(count_) : 0; }
  std::int64_t count() const { return count_; }
  /// Fraction of values <= x (counting a bucket fully when its midpoint is <= x).
  double fraction_at_most(double seconds) const;
  /// Adds another histogram's values (same buckets: exact).
  void merge(const LogHistogram& o);

 private:
  std::array<std::int64_t, kPerOctave * kOctaves> bins_{};
  std::int64_t count_ = 0;
  double sum_ = 0;
  static int index(double seconds);
  static double midpoint(int i);
};

struct SeriesPoint {
  double t_s = 0;
  double kv_used = 0;    ///< fraction of KV blocks in use
  int batch = 0;         ///< sequences in the iteration
  int queue = 0;         ///< requests waiting
  long long tokens = 0;  ///< tokens in the iteration
};

class TimeSeries {
 public:
  explicit TimeSeries(std::size_t capacity = 4096) : cap_(capacity) {}
  void add(const SeriesPoint& p);
  const std::vector<SeriesPoint>& points() const { return pts_; }

 private:
  std::size_t cap_;
  std::int64_t stride_ = 1, seen_ = 0;
  std::vector<SeriesPoint> pts_;
};

}  // namespace ridge::workloads
