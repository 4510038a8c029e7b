#include "models/interval.hpp"

#include <algorithm>
#include <cmath>

#include "models/kernel_sim.hpp"
#include "sim/simulator.hpp"

namespace ridge::models {

namespace {

double tensor_peak_at(const hw::GpuSpec& gpu, hw::Precision p) {
  auto it = gpu.compute.tensor_dense.find(p);
  if (it != gpu.compute.tensor_dense.end() && it->second > 0) return it->second;
  return gpu.matmul_peak(hw::Precision::kFp16);  // the next wider unit, as models/kernel does
}

double vector_peak_at(const hw::GpuSpec& gpu, hw::Precision p) {
  auto it = gpu.compute.vector.find(p);
  return it != gpu.compute.vector.end() ? it->second : 0.0;
}

// Bytes one warp request moves between the SM and L2: a coalesced 16-byte vector load of 32 lanes
// is 512 B (16 sectors); a strided one touches sectors_per_request sectors of 32 B.
double request_bytes(const KernelDesc& d) {
  return d.stride <= 1 ? 512.0 : 32.0 * sectors_per_request(d.elem_bytes, d.stride);
}

}  // namespace

IntervalHw interval_hw(const hw::GpuSpec& gpu, const KernelParams& k) {
  IntervalHw h;
  h.clock_hz = gpu.clocks.boost_hz;
  h.sms = std::max(1, gpu.sm.count);
  h.schedulers = std::max(1, gpu.sm.schedulers_per_sm);
  const double per_sm_cycle = h.sms * h.clock_hz;  // datasheet peaks are at the boost clock
  const double fp32 = vector_peak_at(gpu, hw::Precision::kFp32);
  h.fp32_lanes = gpu.sm.fp32_lanes_per_sm > 0 ? gpu.sm.fp32_lanes_per_sm : fp32 / 2 / per_sm_cycle;
  const double fp64 = vector_peak_at(gpu, hw::Precision::kFp64);
  h.fp64_lanes = fp64 > 0 ? fp64 / 2 / per_sm_cycle : h.fp32_lanes / 64;  // no FP64: 1/64 rate
  h.sfu_lanes = gpu.compute.special_function > 0 ? gpu.compute.special_function / per_sm_cycle
                                                 : h.fp32_lanes / 8;
  for (hw::Precision p : hw::kAllPrecisions)
    h.tensor_flops_per_cycle[static_cast<size_t>(p)] = tensor_peak_at(gpu, p) / per_sm_cycle;
  h.l2_latency_s = k.l2_latency;
  h.hbm_latency_s = std::max(k.hbm_latency, k.l2_latency);
  h.l2_size = gpu.memory.l2_size;
  h.l2_bandwidth = gpu.memory.l2_bandwidth;
  h.hbm_bandwidth = gpu.memory.hbm_bandwidth;
  h.sm_l2_bytes_per_cycle = k.sm_l2_bytes_per_cycle;
  h.hbm_access_bytes = k.hbm_access_bytes;
  return h;
}

IntervalBlock interval_block(const IntervalHw& h, const KernelDesc& d, int warps_per_block) {
  IntervalBlock b;
  b.warps = std::max(1, warps_per_block);
  const double w = b.warps;
  // Warp-instructions per warp.
  b.fp32_insts = d.flops_fp32 / 64.0 / w;
  b.fp64_insts = d.flops_fp64 / 64.0 / w;
  b.sfu_insts = d.sfu_ops / 32.0 / w;
  const double width = d.stride <= 1 ? 16.0 : std::max(1, d.elem_bytes);
  b.load_insts = d.bytes_read / (32.0 * width) / w;
  b.store_insts = d.bytes_written / (32.0 * 16.0) / w;
  b.int_insts = b.load_insts + b.store_insts;
  const double per_warp =
      b.fp32_insts + b.fp64_insts + b.sfu_insts + b.load_insts + b.store_insts + b.int_insts;
  // SM cycles of the block's warps, the SM's schedulers and pipes shared with its other warps.
  const double issue = w * per_warp / h.schedulers;
  const double fp32_pipe = w * b.fp32_insts * 32.0 / h.fp32_lanes;
  const double fp64_pipe = w * b.fp64_insts * 32.0 / h.fp64_lanes;
  const double sfu_pipe = w * b.sfu_insts * 32.0 / h.sfu_lanes;
  b.issue_cycles = std::max({issue, fp32_pipe, fp64_pipe, sfu_pipe});
  const double sectors =
      (d.bytes_read * sector_amplification(d.elem_bytes, d.stride) + d.bytes_written) / 32.0;
  b.l1_cycles = sectors / h.l1_sectors_per_cycle;
  const double mma = h.tensor_flops_per_cycle[static_cast<size_t>(d.tensor_precision)];
  b.tensor_cycles = d.flops_tensor > 0 && mma > 0 ? d.flops_tensor / mma : 0.0;
  b.compute_s = std::max({b.issue_cycles, b.l1_cycles, b.tensor_cycles}) / h.clock_hz;
  const double ilp = d.ilp > 0 ? d.ilp : h.default_ilp;
  b.inflight_bytes =
      d.inflight_bytes_per_block > 0 ? d.inflight_bytes_per_block : w * ilp * request_bytes(d);
  return b;
}

nlohmann::json IntervalBlock::to_json() const {
  return {{"warps_per_block", warps},
          {"fp32_insts_per_warp", fp32_insts},
          {"fp64_insts_per_warp", fp64_insts},
          {"sfu_insts_per_warp", sfu_insts},
          {"load_insts_per_warp", load_insts},
          {"store_insts_per_warp", store_insts},
          {"int_insts_per_warp", int_insts},
          {"issue_cycles_per_block", issue_cycles},
          {"l1_cycles_per_block", l1_cycles},
          {"tensor_cycles_per_block", tensor_cycles},
          {"bytes_in_flight_per_block", inflight_bytes}};
}

KernelSetup interval_setup(const hw::GpuSpec& gpu, const KernelParams& k, const KernelDesc& desc,
                           const IntervalHw& hw_in) {
  // Occupancy, traffic (sectors, atoms) and the L2 capacity hit rate as models/kernel derives them
  // (no efficiency enters those); everything timed is replaced below.
  KernelSetup s = kernel_setup(gpu, k, desc);
  const IntervalHw& h = hw_in;
  const IntervalBlock b = interval_block(h, desc, s.occupancy.warps_per_block);
  s.desc.overhead_s = 0;  // the fast mode's fitted per-tile cost does not apply
  s.tensor_s = b.tensor_cycles / h.clock_hz;
  s.simt_s = std::max(b.issue_cycles, b.l1_cycles) / h.clock_hz;
  s.compute_s = b.compute_s;
  s.l2_latency_s = h.l2_latency_s;
  s.hbm_latency_s = std::max(h.hbm_latency_s, h.l2_latency_s);
  const double fl = s.l2_bytes > 0 ? std::min(1.0, s.hbm_bytes / s.l2_bytes) : 0.0;
  s.latency_s = fl * s.hbm_latency_s + (1 - fl) * s.l2_latency_s;
  s.inflight_per_block = b.inflight_bytes;
  s.max_inflight_per_sm = h.mshr_lines * 128.0;
  s.sm_port_bw = h.sm_l2_bytes_per_cycle * h.clock_hz;
  s.l2_bw = h.l2_bandwidth;
  s.hbm_bw = h.hbm_bandwidth;
  return s;
}

KernelSetup interval_setup(const hw::GpuSpec& gpu, const KernelParams& k, const KernelDesc& desc) {
  return interval_setup(gpu, k, desc, interval_hw(gpu, k));
}

GpuSimLinks interval_links(const IntervalHw& h) {
  GpuSimLinks links;
  links.l2_bandwidth = h.l2_bandwidth;
  links.hbm_bandwidth = h.hbm_bandwidth;
  links.sm_port_bandwidth = h.sm_l2_bytes_per_cycle * h.clock_hz;
  links.l2_latency_s = h.l2_latency_s;
  links.hbm_latency_s = std::max(h.hbm_latency_s, h.l2_latency_s);
  return links;
}

double simulate_kernel_interval(const hw::GpuSpec& gpu, const KernelParams& params,
                                const KernelSetup& kernel, const IntervalHw& h) {
  sim::Simulator sim;
  KernelParams p = params;
  p.kernel_startup = 0;
  p.kernel_gap = 0;
  GpuSim g(sim, gpu, p, interval_links(h));
  double t = 0;
  g.launch(0, kernel, [&](sim::Time start, sim::Time end) { t = (end - start).seconds(); });
  sim.run();
  return t;
}

}  // namespace ridge::models
