#include "workloads/op_timer.hpp"

#include "models/op_cost.hpp"
#include "models/roofline.hpp"

namespace ridge::workloads {

// Stand-in until models/kernel_model.hpp lands: the roofline bound.
double op_time(const hw::GpuSpec& gpu, const models::OpSpec& op, TimingMode) {
  return models::roofline(gpu, models::op_cost(op)).time_s;
}

std::string op_bound(const hw::GpuSpec& gpu, const models::OpSpec& op, TimingMode) {
  return models::roofline(gpu, models::op_cost(op)).compute_bound ? "compute" : "memory";
}

double OpTimer::time(const models::OpSpec& op) {
  std::string key = op.kind();
  key += ' ';
  key += op.params().dump();
  if (auto it = memo_.find(key); it != memo_.end()) return it->second;
  const double t = op_time(gpu_, op, mode_);
  memo_.emplace(std::move(key), t);
  return t;
}

}  // namespace ridge::workloads
