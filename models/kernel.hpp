// Kernel descriptors and the per-kernel quantities both kernel models (fast closed form and
// detailed event simulation) start from, computed once here so that the two agree by design.
//
// Captures: a launch (grid, block, registers, shared memory) and per block its work: FLOPs by unit
// (tensor cores at one precision, FP32/FP64 pipes, SFU), bytes read and written with the access
// pattern (coalesced, or strided: 32-byte sectors per warp request), reuse (re-read bytes that
// L2 serves when the working set fits), and memory parallelism (loads in flight per thread).
// Formulas and sources:
//  - sectors per warp request = min(32, ceil(32 * elem * stride / 32)), aligned loads, 32 active
//    lanes (CUDA C++ Best Practices Guide, "Coalesced Access to Global Memory"; seed 003
//    "Coalescing": 32 fp32 contiguous = 4 sectors, stride 8 = 32 sectors). Traffic = useful bytes
//    x sectors(stride) / sectors(1).
//  - resident blocks per SM: models/occupancy (CUDA occupancy rules).
//  - L2 hit of re-read bytes: min(1, L2 size / working set), a capacity model with no
//    associativity or replacement effects. HBM bytes = unique + re-reads x (1 - hit).
//  - per-block memory rate cap by Little's law: bytes in flight / latency, with bytes in flight
//    per SM = min(max_inflight_bytes_per_sm, resident warps x loads in flight x 512 B) shared
//    among the SM's resident blocks (Little, Oper. Res. 1961; Volkov, "Understanding Latency
//    Hiding on GPUs", PhD thesis, UC Berkeley 2016, ch. 4). Latency is the byte-weighted mix of
//    hbm_latency and l2_latency.
//  - block dispatch: an SM launches its blocks one after another, block_dispatch apart, so a wave
//    of n blocks per SM takes at least n x block_dispatch (small one-warp blocks: softmax with
//    16384 one-warp blocks takes the same 14 us at 128 and 512 columns,
//    validate/data/h200/kernels.json).
//  - compute per block: tensor FLOPs at (tensor peak / SMs) x tensor efficiency, overlapped with
//    the SIMT work (FP32 + FP64 + SFU, which share issue slots and add up): wgmma runs
//    asynchronously beside the CUDA cores on Hopper (FA3, Shah et al. 2024, sec. 3.1).
// Ignores: instruction issue limits other than these pipes, bank conflicts, L1 hits, TLB misses,
// DRAM page effects, power/clock throttling.
// Validation: not yet validated (H200 measurements pending in validate/data/h200).
#pragma once

#include <string>

#include "hw/gpu_spec.hpp"
#include "models/occupancy.hpp"

namespace ridge::models {

/// One kernel launch and the work of each of its blocks.
struct KernelDesc {
  std::string name;         ///< "gemm 128x256x64 splitk=1"
  long long grid = 1;       ///< blocks
  int block = 256;          ///< threads per block
  int registers = 32;       ///< per thread
  double shared_bytes = 0;  ///< per block
  // Work per block.
  double flops_tensor = 0;
  hw::Precision tensor_precision = hw::Precision::kBf16;
  double tensor_efficiency = -1;  ///< < 0: the tensor_efficiency_<dtype> parameter
  double flops_fp32 = 0;          ///< FP32 pipe (FMA = 2)
  double flops_fp64 = 0;
  double sfu_ops = 0;
  /// The SFU work (sfu_ops) waits for the tensor work and the tensor work for it, as in a
  /// flash-attention CTA with one consumer warpgroup: the block's compute is their sum, not the
  /// larger of the two (models/op_library.cpp plan_attention).
  bool sfu_serial = false;
  /// Its tiles reach shared memory by TMA bulk copies from L2 (flash attention's K and V): L2
  /// serves them at its bandwidth, not at the l2_efficiency share that the load/store path of
  /// validate/'s GEMM and memory records was fitted to (models/op_library.cpp plan_attention).
  bool tma_loads = false;
  double simt_efficiency = -1;  ///< < 0: vector_efficiency
  double bytes_read = 0;        ///< useful bytes per block
  double bytes_written = 0;     ///< always coalesced
  int elem_bytes = 4;           ///< bytes per element of the strided accesses
  int stride = 1;               ///< element stride of the reads (1 = coalesced)
  /// Distinct bytes read by the whole kernel (<= grid x bytes_read); < 0: no reuse (all distinct).
  double unique_read_bytes = -1;
  /// Bytes that must stay in L2 for the re-reads to hit; < 0: unique_read_bytes.
  double reuse_working_set = -1;
  /// Distinct bytes (whole kernel) that the kernel before wrote and L2 still holds: read from L2,
  /// not HBM. The caller decides they fit (models/op_library.cpp, custom's just_written).
  double l2_resident_read_bytes = 0;
  int ilp = 0;                          ///< memory requests in flight per warp; 0: the parameter
  double inflight_bytes_per_block = 0;  ///< > 0 overrides warps x ilp x 512 (TMA pipelines)
  double overhead_s = 0;                ///< fixed time per block (GEMM prologue/epilogue)
  /// A persistent kernel (Hopper warp-specialised GEMMs): each SM's CTA loops over tiles and
  /// overlaps one tile's epilogue with the next one's main loop, so overhead_s is paid once per
  /// SM (the last wave), not once per wave.
  bool persistent = false;
  /// A persistent tile's epilogue time that the SM's arithmetic waits for (fp8 GEMMs,
  /// models/op_library.cpp): added to each block's compute time. 0: fully overlapped.
  double tile_epilogue_s = 0;
  /// Waves of independent blocks that overlap (row kernels, validate/suite_rows.cu): a block that
  /// ends frees its slot to the next block while the SM's other blocks still have loads in
  /// flight, so the memory latency is exposed once (the first wave's fill), not once per wave.
  bool overlapped_waves = false;
  /// A contiguous stream (membw, flash-decoding's K/V): if it only reads or only writes HBM
  /// (within 1% of its bytes), it runs at that direction's rate (hbm_read_stream_gain,
  /// hbm_write_stream_gain), not the mixed one.
  bool direction_rates = false;
  /// A stream that reads HBM from a cold start (contiguous streaming and row kernels): its first
  /// reads come while the memory pipeline fills, at less than the full rate (hbm_read_ramp).
  bool read_ramp = false;
  /// A loop whose every thread issues its next load only once its last one has returned (one
  /// element per thread per iteration, not unrolled: validate/'s strided elementwise kernel):
  /// the length of that chain, iterations x serial_load_latency. Each wave's memory time is the
  /// serial_load_blend-norm of it and the bandwidth/in-flight time (kernel.cpp). 0: none.
  double serial_chain_s = 0;
  /// Blocks an SM must hold to run its arithmetic at the full rate: a wave that leaves fewer on
  /// its busiest SM lasts as long as one with this many (1: a lone block runs at the SM's rate).
  /// The 4-warp sm_80-class GEMM tile (models/op_library.cpp kSm80) needs 2.
  int full_rate_blocks = 1;
  /// A row block's serial chain besides its arithmetic (overlapped_waves kernels only): its first
  /// load's HBM latency, its block reductions (row_reduction_sync each) and, for the norms, the
  /// weights' L2 round trip before the stores. Paid once by the first wave, whose blocks start
  /// together, and part of every block's cycle on its SM (kernel.cpp). 0: none.
  double row_chain_s = 0;
};

/// Time a cold HBM read stream of `hbm_read_bytes` loses while the memory pipeline fills
/// (hbm_read_ramp x min(1, bytes / hbm_read_ramp_bytes); hw/model_params.cpp).
double hbm_read_ramp_s(const hw::GpuSpec& gpu, double hbm_read_bytes);

/// Sectors (32 B) one warp request of 32 lanes touches: min(32, ceil(32 * elem * stride / 32)).
int sectors_per_request(int elem_bytes, int stride);
/// Traffic per useful byte: sectors_per_request(elem, stride) / sectors_per_request(elem, 1).
double sector_amplification(int elem_bytes, int stride);
/// Extra HBM traffic of a strided warp request: HBM atoms fetched over the sectors' bytes (>= 1).
double hbm_atom_amplification(int elem_bytes, int stride, double atom_bytes);
/// HBM cost per atom of elements an atom or more apart, over a 64-byte gap's (>= 1): rises as
/// (gap / atom)^0.22 up to 16 atoms apart (1 KiB, an HBM3 page; models/kernel.cpp).
double hbm_row_spread(int elem_bytes, int stride, double atom_bytes);
/// Fraction of the lines of a footprint read over and over (each run sweeps it once) that L2
/// still holds at the next run: P(Poisson(lambda) <= ways - 1), lambda = lines per set, for an
/// L2 of `l2_bytes` with a hashed set index (models/kernel.cpp). 1 for an empty footprint.
double l2_sweep_hit_fraction(double footprint_bytes, double l2_bytes);

/// The model parameters the kernel model reads, resolved once per prediction by one walk over the
/// GPU's overlay (gpu.param per name is a map lookup; a GEMM's tile search evaluates dozens of
/// candidate kernels).
struct KernelParams {
  double hbm_efficiency, l2_efficiency, hbm_latency, l2_latency, max_inflight_bytes_per_sm;
  double loads_in_flight_per_warp, sm_l2_bytes_per_cycle, vector_efficiency, simt_efficiency_fp32,
      simt_tile_staging;
  double tensor_fp16, tensor_bf16, tensor_tf32, tensor_fp8, gemm_tile_overhead,
      gemm_unaligned_tensor_fraction;
  double hbm_access_bytes;
  double kernel_startup, kernel_gap, graph_kernel_gap, host_launch_cuda, host_launch_eager,
      graph_launch_per_kernel, queued_kernel_period, queued_first_kernel, graph_node_period,
      graph_replay_first;
  double pcie_efficiency_pinned, pcie_efficiency_pageable_d2h, copy_latency;
  double block_dispatch;
  double attention_fwd_efficiency, attention_bwd_efficiency;
};
KernelParams kernel_params(const hw::GpuSpec& gpu);

/// Everything both kernel models need, derived once from a GPU and a descriptor.
struct KernelSetup {
  KernelDesc desc;
  Occupancy occupancy;
  int sms = 0;
  int blocks_per_sm = 0;  ///< resident, from occupancy (>= 1)
  long long slots = 0;    ///< sms x blocks_per_sm
  double compute_s = 0;   ///< one block alone on an SM
  double tensor_s = 0, simt_s = 0;
  double l2_bytes = 0;             ///< per block, sector traffic between SM and L2 (reads + writes)
  double hbm_bytes = 0;            ///< per block, the share of that which reaches HBM
  double l2_hit = 0;               ///< hit rate of re-read bytes
  double latency_s = 0;            ///< byte-weighted load latency
  double inflight_per_block = 0;   ///< bytes, before the per-SM limit
  double max_inflight_per_sm = 0;  ///< bytes
  double sm_port_bw = 0;           ///< B/s one SM moves to/from L2
  double l2_bw = 0;                ///< B/s, all SMs, after l2_efficiency
  double hbm_bw = 0;               ///< B/s after hbm_efficiency
  double l2_latency_s = 0, hbm_latency_s = 0;
  double block_dispatch_s = 0;  ///< an SM launches one block per this (block_dispatch)
  double read_ramp_s = 0;       ///< once per kernel: the cold HBM read stream's ramp
  double serial_blend = 3;      ///< exponent joining desc.serial_chain_s to the memory time
  double row_sm_rate = 0;       ///< B/s one SM streams a row block's HBM bytes at, at the most
  /// Per-block memory rate cap (B/s) when `n` blocks of this kernel share an SM.
  double block_cap(int n) const;
};

/// Derives the setup. Throws std::invalid_argument when the kernel cannot launch (occupancy 0).
KernelSetup kernel_setup(const hw::GpuSpec& gpu, const KernelParams& params,
                         const KernelDesc& desc);
/// The same with `occ` already computed for desc's block, registers and shared memory (a tile
/// search computes it once per tile for all its split-K candidates).
KernelSetup kernel_setup(const hw::GpuSpec& gpu, const KernelParams& params, const KernelDesc& desc,
                         const Occupancy& occ);

/// One block's compute time alone on an SM (KernelSetup::compute_s), from the descriptor's work.
double block_compute_s(const hw::GpuSpec& gpu, const KernelParams& params, const KernelDesc& desc);
/// The closed form of one kernel's GPU time (no launch overhead): waves x per-wave time.
struct KernelEstimate {
  double time_s = 0;
  int waves = 0;
  std::string bound;                   ///< "compute", "hbm", "l2", "latency"
  double compute_s = 0, memory_s = 0;  ///< summed over waves
};
KernelEstimate estimate_kernel(const KernelSetup& s);

}  // namespace ridge::models
