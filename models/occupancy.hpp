// Resident blocks per SM for a kernel, by CUDA's allocation rules as the CUDA Occupancy Calculator
// (cuda_occupancy.h) applies them:
//  - warps: a block takes ceil(threads / warp_size) warp slots;
//  - registers: each warp is allocated registers_per_thread x warp_size rounded up to the
//  allocation
//    unit (256), from one of the SM's sub-partitions (a quarter of the register file each), so a
//    sub-partition holds floor((registers_per_sm / partitions) / per_warp) warps;
//  - shared memory: per block, static + dynamic + the driver's reserved 1 KiB, rounded up to the
//    allocation unit (128 B), against the largest carveout unless a smaller one is asked for;
//  - a hard cap of max_blocks_per_sm.
// A block whose registers, counted with its warps rounded up to a multiple of the sub-partitions,
// exceed the per-block register limit cannot launch at all (cuda_occupancy.h's hardware check).
// Validated exactly against the CUDA occupancy API on the H200 (validate/data/h200/occupancy.json).
#pragma once

#include <string>

#include "hw/gpu_spec.hpp"

namespace ridge::models {

struct KernelResources {
  int threads_per_block = 0;
  int registers_per_thread = 0;
  double shared_bytes_per_block = 0;  ///< static + dynamic, as the kernel asks
  double carveout_bytes = -1;         ///< shared memory per SM asked for; < 0 = the largest
};

enum class Limiter { kWarps, kRegisters, kSharedMemory, kBlocks, kNone };
std::string_view limiter_name(Limiter l);

struct Occupancy {
  int blocks_per_sm = 0;
  int warps_per_block = 0;
  int warps_per_sm = 0;
  double fraction = 0;  ///< resident warps / max warps
  Limiter limiter = Limiter::kNone;
  int by_warps = 0, by_registers = 0, by_shared = 0, by_blocks = 0;  ///< each limit in blocks
  int registers_per_warp = 0;                                        ///< after rounding
  double shared_per_block = 0;  ///< bytes after reservation and rounding
  double shared_per_sm = 0;     ///< the carveout used
  std::string error;            ///< why the kernel cannot launch at all, if it cannot
};

Occupancy occupancy(const hw::SmSpec& sm, const KernelResources& k);

}  // namespace ridge::models
