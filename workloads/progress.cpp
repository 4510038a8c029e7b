#include "workloads/progress.hpp"

namespace ridge::workloads {

namespace {
std::function<void(const Progress&)>& reporter() {
  static std::function<void(const Progress&)> f;
  return f;
}
}  // namespace

void set_progress_reporter(std::function<void(const Progress&)> f) {
  reporter() = std::move(f);
}

void report_progress(const Progress& p) {
  if (reporter()) reporter()(p);
}

}  // namespace ridge::workloads
