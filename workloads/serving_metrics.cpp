#include "workloads/serving_metrics.hpp"

#include <algorithm>
#include <cmath>

namespace ridge::workloads {

int LogHistogram::index(double s) {
  if (!(s > kMinS)) return 0;
  const int i = static_cast<int>(std::floor(std::log2(s / kMinS) * kPerOctave));
  return std::clamp(i, 0, kPerOctave * kOctaves - 1);
}

double LogHistogram::midpoint(int i) {
  return kMinS * std::exp2((i + 0.5) / kPerOctave);
}

void LogHistogram::add(double s) {
  ++bins_[static_cast<std::size_t>(index(s))];
  ++count_;
  sum_ += s;
}

void LogHistogram::merge(const LogHistogram& o) {
  for (std::size_t i = 0; i < bins_.size(); ++i) bins_[i] += o.bins_[i];
  count_ += o.count_;
  sum_ += o.sum_;
}

double LogHistogram::percentile(double p) const {
  if (count_ == 0) return 0;
  // Nearest rank: the smallest value with at least p% of the values at or below it.
  const auto rank =
      std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(p / 100.0 * double(count_))));
  std::int64_t seen = 0;
  for (std::size_t i = 0; i < bins_.size(); ++i) {
    seen += bins_[i];
    if (seen >= rank) return midpoint(static_cast<int>(i));
  }
  return midpoint(static_cast<int>(bins_.size()) - 1);
}

double LogHistogram::fraction_at_most(double s) const {
  if (count_ == 0) return 1;
  std::int64_t n = 0;
  for (std::size_t i = 0; i < bins_.size(); ++i)
    if (midpoint(static_cast<int>(i)) <= s) n += bins_[i];
  return double(n) / double(count_);
}

void TimeSeries::add(const SeriesPoint& p) {
  if (seen_++ % stride_ != 0) return;
  pts_.push_back(p);
  if (pts_.size() >= cap_) {
    std::size_t w = 0;
    for (std::size_t r = 0; r < pts_.size(); r += 2) pts_[w++] = pts_[r];
    pts_.resize(w);
    stride_ *= 2;
    // Keep later samples on the new grid: the next kept sample is `stride_` iterations after the
    // last one kept.
    seen_ = 1;
  }
}

}  // namespace ridge::workloads
