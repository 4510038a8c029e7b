// The detailed mode's per-block physics: a warp-level interval model (after GPUMech, Huang et al.,
// MICRO 2014, and GCoM, Lee et al., ISCA 2022; the code and its simplifications are Ridge's own).
//
// Captures, per block of a kernel (models/kernel: KernelDesc), from hardware figures only:
//  - an instruction mix per warp: FP32 FMA warp-instructions (flops_fp32 / 64: 32 lanes x 2 FLOP),
//    FP64 ones (flops_fp64 / 64), SFU ones (sfu_ops / 32), global loads (one per 32 lanes x access
//    width: 16 B vectors when coalesced, elem_bytes when strided), stores (16 B vectors) and one
//    integer/address instruction per memory instruction (loop and index arithmetic).
//  - issue intervals: one warp-instruction per scheduler per cycle (4 schedulers per SM on
//    Hopper), the SM's schedulers shared by its resident warps; pipes narrower than a warp (FP64,
//    SFU) hold their scheduler for 32 / lanes cycles per instruction; the L1 moves 4 sectors
//    (128 B) per cycle per SM.
//  - tensor-core MMAs at their per-SM rate per cycle (dense datasheet peak / SMs / boost clock),
//    at the clock: no efficiency; overlapped with the SIMT issue (wgmma is asynchronous).
//  - memory intervals: a warp keeps `ilp` requests in flight (the descriptor's, else 4: an unrolled
//    loop of four independent 16-byte loads per thread), each request its sectors x 32 B, and the
//    SM keeps at most kMshrLines x 128 B outstanding (an MSHR-like limit, shared by the SM's
//    resident blocks); by Little's law a block moves bytes_in_flight / latency per second, where
//    the latency is the hit-weighted L2 and HBM load latency. Bandwidth caps are the datasheet
//    peaks (HBM, L2) and the SM's L2 port (sm_l2_bytes_per_cycle x clock): no efficiencies.
//  - hit rates from the access pattern: L1 hit 0 (every op in the library streams its global reads
//    through L1 once or stages reuse in shared memory); L2 hits only on re-read bytes, at
//    min(1, L2 size / reuse working set) (capacity, no associativity); strided reads move whole
//    32-B sectors and, an HBM atom or more apart, whole atoms (models/kernel).
// Sources: Hopper SM layout (4 sub-partitions, 32 FP32 lanes each): NVIDIA H100 Tensor Core GPU
// Architecture whitepaper (2022); L1 128 B/clk: Jia et al., "Dissecting the NVIDIA Volta GPU
// Architecture via Microbenchmarking" (2018); Little's law and latency hiding: Volkov, PhD thesis,
// UC Berkeley 2016. The MSHR figure (256 lines of 128 B) is an assumption of this model of the
// order of Accel-Sim's Volta/Ampere L1 configurations; NVIDIA publishes none for Hopper. Ignores:
// dependent-instruction latency inside a warp (a lone warp issues back to back), branch divergence,
// bank conflicts, TLB misses, DRAM page effects, the fast mode's fitted efficiencies and GEMM tile
// overhead (a GEMM's prologue is the first load's latency, which the memory flows carry). Shares
// with the fast mode: the op's plan (kernels, tiles, grids), occupancy, block_dispatch (a measured
// launch rate of the hardware), latencies, the power roof. Validation: validate/README.md,
// "Detailed mode (interval model) against the fast mode".
#pragma once

#include <nlohmann/json.hpp>

#include <array>

#include "hw/gpu_spec.hpp"
#include "models/kernel.hpp"
#include "models/kernel_sim.hpp"

namespace ridge::models {

/// The hardware figures the interval model reads, per SM and per cycle where they are rates.
struct IntervalHw {
  double clock_hz = 0;  ///< SM clock the kernel runs at
  int sms = 0;
  int schedulers = 4;               ///< per SM, one warp-instruction per cycle each
  double fp32_lanes = 128;          ///< per SM
  double fp64_lanes = 64;           ///< per SM (FP64 FMA lanes)
  double sfu_lanes = 16;            ///< per SM
  double l1_sectors_per_cycle = 4;  ///< 32-B sectors the L1 serves per cycle per SM
  /// Per SM per cycle, dense, indexed by hw::Precision (datasheet peak / SMs / boost clock).
  std::array<double, hw::kAllPrecisions.size()> tensor_flops_per_cycle{};
  double l2_latency_s = 0, hbm_latency_s = 0;
  double l2_size = 0;
  double l2_bandwidth = 0, hbm_bandwidth = 0;  ///< B/s, datasheet peaks
  double sm_l2_bytes_per_cycle = 64;
  double hbm_access_bytes = 64;
  double mshr_lines = 256;  ///< per SM, 128-B lines outstanding
  double default_ilp = 4;   ///< requests in flight per warp when the descriptor gives none
};

/// Hopper-style defaults from the spec: clock = boost, per-SM lanes from the datasheet peaks.
IntervalHw interval_hw(const hw::GpuSpec& gpu, const KernelParams& params);

/// Per-warp and per-block quantities of one kernel under the interval model.
struct IntervalBlock {
  int warps = 1;  ///< per block
  double fp32_insts = 0, fp64_insts = 0, sfu_insts = 0, load_insts = 0, store_insts = 0,
         int_insts = 0;      ///< warp-instructions per warp
  double issue_cycles = 0;   ///< per block, one SM: max over issue slots and narrow pipes
  double tensor_cycles = 0;  ///< per block, one SM
  double l1_cycles = 0;
  double compute_s = 0;       ///< per block alone on an SM: max(issue, pipes, L1, tensor) / clock
  double inflight_bytes = 0;  ///< per block, before the SM's MSHR limit
  double l2_hit = 0;
  nlohmann::json to_json() const;
};

/// The interval model's view of one block of `desc`.
IntervalBlock interval_block(const IntervalHw& hw, const KernelDesc& desc, int warps_per_block);

/// A KernelSetup whose per-block figures come from the interval model: compute_s from issue
/// intervals, latency and bytes in flight from the MLP limits, bandwidths at their peaks,
/// overhead_s 0. estimate_kernel() of it is the interval model's closed form; GpuSim with
/// Physics::kPeak runs it block by block.
KernelSetup interval_setup(const hw::GpuSpec& gpu, const KernelParams& params,
                           const KernelDesc& desc, const IntervalHw& hw);
KernelSetup interval_setup(const hw::GpuSpec& gpu, const KernelParams& params,
                           const KernelDesc& desc);

/// The GpuSim links of the interval model: L2 and HBM at their datasheet peaks, the SM port at
/// sm_l2_bytes_per_cycle x clock, the model's latencies. Kernels launched on a GpuSim built with
/// them (interval_setup kernels, on several streams) share SMs, the port, L2 and HBM.
GpuSimLinks interval_links(const IntervalHw& hw);

/// One kernel alone on an idle GPU under the interval model, on the sim/ engine (no start-up).
double simulate_kernel_interval(const hw::GpuSpec& gpu, const KernelParams& params,
                                const KernelSetup& interval_kernel, const IntervalHw& hw);

}  // namespace ridge::models
