#include "models/op_support.hpp"

#include <fmt/format.h>

#include <stdexcept>
#include <vector>

#include "hw/limits.hpp"
#include "models/op_cost.hpp"

namespace ridge::models {

std::string unsupported_reason(const hw::GpuSpec& gpu, const OpSpec& op) {
  const OpCost c = op_cost(op);
  if (!c.tensor) return {};
  // A custom kernel with no tensor FLOPs names a tensor dtype by default only.
  if (op.kind() == "custom" && op.f("flops_tensor") <= 0) return {};
  const auto it = gpu.compute.tensor_dense.find(c.precision);
  if (it != gpu.compute.tensor_dense.end() && it->second > 0) return {};
  std::vector<std::string> have;
  for (const auto& [p, v] : gpu.compute.tensor_dense)
    if (v > 0) have.emplace_back(hw::precision_name(p));
  return fmt::format("{}: {} has no {} tensor cores (its tensor precisions: {})", op.str(),
                     gpu.name, hw::precision_name(c.precision), fmt::join(have, ", "));
}

double simulated_blocks(const KernelPrediction& p) {
  double blocks = 0;
  if (p.detail.is_object() && p.detail.contains("kernels"))
    for (const auto& k : p.detail["kernels"])
      blocks += k.value("grid", 0.0) * k.value("count", 0.0);
  return blocks;
}

void require_detailed_budget(const hw::GpuSpec& gpu, const OpSpec& op, Mode mode, Timing timing) {
  if (mode != Mode::kDetailed) return;
  const KernelPrediction fast = predict_kernel(gpu, op, Mode::kFast, timing);
  const double blocks = simulated_blocks(fast);
  if (blocks > hw::kMaxDetailedBlocks)
    throw std::invalid_argument(fmt::format(
        "{}: detailed mode would simulate {:.3g} thread blocks, over the budget of {:g} (~30 s; "
        "see `ridge describe limits`); the fast-mode answer is {:.6g} s ({} bound): use --mode "
        "fast",
        op.str(), blocks, hw::kMaxDetailedBlocks, fast.time_s, fast.bound));
}

void require_supported(const hw::GpuSpec& gpu, const OpSpec& op) {
  if (std::string why = unsupported_reason(gpu, op); !why.empty()) throw std::invalid_argument(why);
}

}  // namespace ridge::models
