#include "workloads/op_timer.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "hw/limits.hpp"
#include "models/kernel_model.hpp"
#include "models/op_support.hpp"
#include "workloads/progress.hpp"

namespace ridge::workloads {

namespace {
models::Mode to_mode(TimingMode m) {
  return m == TimingMode::kDetailed ? models::Mode::kDetailed : models::Mode::kFast;
}
}  // namespace

double op_time(const hw::GpuSpec& gpu, const models::OpSpec& op, TimingMode mode) {
  models::require_supported(gpu, op);
  return models::predict_kernel(gpu, op, to_mode(mode), models::Timing::kKernel,
                                models::Detail::kSkip)
      .kernel_time_s;
}

std::string op_bound(const hw::GpuSpec& gpu, const models::OpSpec& op, TimingMode mode) {
  return models::predict_kernel(gpu, op, to_mode(mode), models::Timing::kKernel,
                                models::Detail::kSkip)
      .bound;
}

const OpTimer::Entry& OpTimer::lookup(const models::OpSpec& op) {
  // nlohmann's std::hash walks the parameter tree (no dump); equal parameters hash equally.
  const std::size_t key =
      std::hash<nlohmann::json>{}(op.params()) * 31 + std::hash<std::string>{}(op.kind());
  for (auto [it, end] = memo_.equal_range(key); it != end; ++it)
    if (it->second.kind == op.kind() && it->second.params == op.params()) return it->second.entry;
  try {
    models::require_supported(gpu_, op);
  } catch (const std::invalid_argument& e) {
    throw OpError("", op.kind(), op.params(), e.what());
  }
  if (mode_ == TimingMode::kDetailed) {
    // Detailed mode simulates every thread block: bounded per execution (each distinct shape is
    // simulated once), with the fast mode named as the way out.
    detailed_blocks_ += models::simulated_blocks(
        models::predict_kernel(gpu_, op, models::Mode::kFast, models::Timing::kKernel));
    if (detailed_blocks_ > hw::kMaxDetailedBlocks)
      throw std::invalid_argument(fmt::format(
          "detailed mode: this workload would simulate more than {:g} thread blocks (the "
          "budget, ~30 s; see `ridge describe limits`); fast mode answers it: use mode: fast or "
          "--mode fast",
          hw::kMaxDetailedBlocks));
  }
  models::KernelPrediction p;
  try {
    p = models::predict_kernel(gpu_, op, to_mode(mode_), models::Timing::kKernel,
                               models::Detail::kSkip);
  } catch (const std::invalid_argument& e) {
    throw OpError("", op.kind(), op.params(), e.what());
  }
  const Entry& e =
      memo_.emplace(key, Slot{op.kind(), op.params(), Entry{p.kernel_time_s, p.kernels}})
          ->second.entry;
  if (mode_ == TimingMode::kDetailed)
    report_progress({"detailed mode", detailed_blocks_, hw::kMaxDetailedBlocks,
                     static_cast<int>(memo_.size())});
  return e;
}

double OpTimer::time(const models::OpSpec& op) {
  return lookup(op).time_s;
}
int OpTimer::kernels(const models::OpSpec& op) {
  return lookup(op).kernels;
}

}  // namespace ridge::workloads
