#include "models/clock_model.hpp"

#include <algorithm>

namespace ridge::models {

ClockLimit power_limit(const hw::GpuSpec& gpu, const PowerDemand& d, double boost_time_s) {
  ClockLimit c;
  c.time_s = boost_time_s;
  c.sm_clock_hz = gpu.clocks.boost_hz;
  const double cap = gpu.param("power_cap_w");
  if (cap <= 0 || boost_time_s <= 0) return c;
  const double p_static = gpu.param("power_static_w");
  double e_tensor = gpu.param("energy_tensor_16bit_pj");
  switch (d.tensor_precision) {
    case hw::Precision::kFp8:
    case hw::Precision::kFp4:
    case hw::Precision::kInt8:
      e_tensor = gpu.param("energy_tensor_fp8_pj");
      break;
    case hw::Precision::kTf32:
    case hw::Precision::kFp32:
    case hw::Precision::kFp64:
      e_tensor = gpu.param("energy_tensor_tf32_pj");
      break;
    default:
      break;
  }
  const double energy_j =
      1e-12 * (e_tensor * d.tensor_flops + gpu.param("energy_simt_pj") * d.simt_ops +
               gpu.param("energy_hbm_pj_per_byte") * d.hbm_bytes);
  const double headroom = std::max(cap - p_static, 1.0);
  const double t_power = energy_j / headroom;
  if (t_power > boost_time_s) {
    c.time_s = t_power;
    c.power_bound = true;
    c.sm_clock_hz = gpu.clocks.boost_hz * boost_time_s / t_power;
  }
  c.power_w = p_static + energy_j / c.time_s;
  return c;
}

}  // namespace ridge::models
