#include "models/occupancy.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace ridge::models {

std::string_view limiter_name(Limiter l) {
  switch (l) {
    case Limiter::kWarps:
      return "warps";
    case Limiter::kRegisters:
      return "registers";
    case Limiter::kSharedMemory:
      return "shared memory";
    case Limiter::kBlocks:
      return "blocks per SM";
    case Limiter::kNone:
      return "none";
  }
  return "?";
}

namespace {
long long round_up(long long v, long long unit) {
  return unit > 0 ? (v + unit - 1) / unit * unit : v;
}
}  // namespace

Occupancy occupancy(const hw::SmSpec& sm, const KernelResources& k) {
  Occupancy o;
  if (k.threads_per_block <= 0 || k.threads_per_block > sm.max_threads_per_block) {
    o.error = fmt::format("{} threads per block: the limit is 1..{}", k.threads_per_block,
                          sm.max_threads_per_block);
    return o;
  }
  if (k.registers_per_thread < 0 || k.registers_per_thread > sm.max_registers_per_thread) {
    o.error = fmt::format("{} registers per thread: the limit is {}", k.registers_per_thread,
                          sm.max_registers_per_thread);
    return o;
  }
  o.warps_per_block = (k.threads_per_block + sm.warp_size - 1) / sm.warp_size;

  o.by_warps = sm.max_warps_per_sm / o.warps_per_block;
  o.by_blocks = sm.max_blocks_per_sm;

  o.registers_per_warp = static_cast<int>(round_up(
      static_cast<long long>(k.registers_per_thread) * sm.warp_size, sm.register_allocation_unit));
  if (o.registers_per_warp == 0) {
    o.by_registers = std::numeric_limits<int>::max();
  } else {
    const int parts = std::max(1, sm.schedulers_per_sm);
    // The launch check assumes a block's warps are spread over all sub-partitions, so it counts
    // warps rounded up to a multiple of the partition count (cuda_occupancy.h, "Hardware check").
    const long long assumed =
        static_cast<long long>(o.registers_per_warp) * round_up(o.warps_per_block, parts);
    if (assumed > sm.max_registers_per_block) {
      o.error = fmt::format(
          "{} registers per block (counting warps in multiples of {}) exceed the limit of {}",
          assumed, parts, sm.max_registers_per_block);
      return o;
    }
    const int warps_per_part = (sm.registers_per_sm / parts) / o.registers_per_warp;
    o.by_registers = (warps_per_part * parts) / o.warps_per_block;
  }

  if (k.shared_bytes_per_block > sm.max_shared_memory_per_block) {
    o.error = fmt::format("{:.0f} B of shared memory per block exceed the limit of {:.0f} B",
                          k.shared_bytes_per_block, sm.max_shared_memory_per_block);
    return o;
  }
  o.shared_per_block = static_cast<double>(
      round_up(static_cast<long long>(
                   std::ceil(k.shared_bytes_per_block + sm.reserved_shared_memory_per_block)),
               static_cast<long long>(sm.shared_memory_allocation_unit)));
  o.shared_per_sm = sm.shared_memory_per_sm;
  if (k.carveout_bytes >= 0) {
    // The smallest supported carveout that holds what was asked for.
    for (double c : sm.shared_memory_carveouts) {
      if (c >= k.carveout_bytes) {
        o.shared_per_sm = c;
        break;
      }
    }
  }
  o.by_shared = o.shared_per_block > 0
                    ? static_cast<int>(std::floor(o.shared_per_sm / o.shared_per_block))
                    : std::numeric_limits<int>::max();

  o.blocks_per_sm = std::min({o.by_warps, o.by_registers, o.by_shared, o.by_blocks});
  // Report the binding limit; ties go to the first in this order, the order CUDA's calculator
  // lists.
  if (o.blocks_per_sm == o.by_warps)
    o.limiter = Limiter::kWarps;
  else if (o.blocks_per_sm == o.by_registers)
    o.limiter = Limiter::kRegisters;
  else if (o.blocks_per_sm == o.by_shared)
    o.limiter = Limiter::kSharedMemory;
  else
    o.limiter = Limiter::kBlocks;
  if (o.blocks_per_sm == o.by_blocks && o.by_blocks < o.by_warps && o.by_blocks < o.by_registers &&
      o.by_blocks < o.by_shared)
    o.limiter = Limiter::kBlocks;
  if (o.blocks_per_sm == 0 && o.error.empty()) {
    o.error = fmt::format("no block fits on an SM (limited by {})", limiter_name(o.limiter));
  }
  o.warps_per_sm = o.blocks_per_sm * o.warps_per_block;
  o.fraction = static_cast<double>(o.warps_per_sm) / sm.max_warps_per_sm;
  return o;
}

}  // namespace ridge::models
