// The roofline bound (Williams, Waterman and Patterson, "Roofline: an insightful visual performance
// model for multicore architectures", CACM 2009): attainable = min(peak, intensity x bandwidth),
// with datasheet peaks and no efficiencies. It is a bound, not a prediction: `ridge kernel`
// predicts.
#pragma once

#include <string>

#include "hw/gpu_spec.hpp"
#include "models/op_cost.hpp"

namespace ridge::models {

struct Roofline {
  double flops = 0;
  double bytes = 0;
  double intensity = 0;         ///< FLOP per byte
  double peak_flops = 0;        ///< FLOP/s of the unit the op runs on
  double bandwidth = 0;         ///< B/s of the memory it must cross
  double ridge_point = 0;       ///< FLOP per byte where the roofs meet
  double attainable_flops = 0;  ///< FLOP/s
  double time_s = 0;            ///< max(flops / peak, bytes / bandwidth)
  bool compute_bound = false;
  std::string unit;    ///< "bf16 tensor", "fp32 vector"
  std::string memory;  ///< "HBM", "PCIe"
};

Roofline roofline(const hw::GpuSpec& gpu, const OpCost& cost);

}  // namespace ridge::models
