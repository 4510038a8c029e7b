#include "models/roofline.hpp"

#include <algorithm>

namespace ridge::models {

Roofline roofline(const hw::GpuSpec& gpu, const OpCost& cost) {
  Roofline r;
  r.flops = cost.flops;
  r.bytes = cost.min_bytes;
  if (cost.tensor) {
    auto it = gpu.compute.tensor_dense.find(cost.precision);
    r.peak_flops = it != gpu.compute.tensor_dense.end() ? it->second : 0.0;
    r.unit = std::string(hw::precision_name(cost.precision)) + " tensor";
    if (r.peak_flops <= 0) {
      // Chips without this tensor precision (fp8 on an A100) run it at the next wider one.
      r.peak_flops = gpu.matmul_peak(hw::Precision::kFp16);
      r.unit = "fp16 tensor (no " + std::string(hw::precision_name(cost.precision)) + " units)";
    }
  } else {
    auto it = gpu.compute.vector.find(cost.precision);
    r.peak_flops =
        it != gpu.compute.vector.end() ? it->second : gpu.compute.vector.at(hw::Precision::kFp32);
    r.unit = std::string(hw::precision_name(cost.precision)) + " vector";
  }
  if (cost.memory == MemoryLevel::kPcie) {
    r.bandwidth = gpu.interconnect.pcie_bandwidth;
    r.memory = "PCIe";
  } else {
    r.bandwidth = gpu.memory.hbm_bandwidth;
    r.memory = "HBM";
  }
  r.ridge_point = r.peak_flops / r.bandwidth;
  r.intensity = r.bytes > 0 ? r.flops / r.bytes : 0.0;
  r.attainable_flops =
      r.bytes > 0 ? std::min(r.peak_flops, r.intensity * r.bandwidth) : r.peak_flops;
  const double t_compute = r.flops / r.peak_flops;
  const double t_memory = r.bytes / r.bandwidth;
  r.time_s = std::max(t_compute, t_memory);
  r.compute_bound = r.bytes == 0 || r.intensity >= r.ridge_point;
  return r;
}

}  // namespace ridge::models
