// Occupancy by CUDA's rules, hand-derived. H100 and H200 share the GH100 SM: 64 warps, 32 blocks,
// 65536 registers in 4 sub-partitions of 16384, allocated per warp in units of 256, 228 KiB of
// shared memory per SM (233472 B), 1 KiB reserved per block, 128 B allocation unit. The A100 has
// the same register file and 164 KiB (167936 B) of shared memory per SM.
#include <catch2/catch.hpp>

#include "hw/gpu_loader.hpp"
#include "models/occupancy.hpp"

using namespace ridge;
using models::Limiter;

namespace {
models::Occupancy occ(const char* gpu, int threads, int regs, double smem) {
  return models::occupancy(hw::find_gpu(gpu).sm, {threads, regs, smem});
}
}  // namespace

TEST_CASE("occupancy: 256 threads, 32 registers, no shared memory (H100)",
          "[analytic][occupancy]") {
  // 8 warps per block. Warps: 64/8 = 8 blocks. Registers: 32*32 = 1024 per warp; 16384/1024 = 16
  // warps per partition, 64 per SM -> 8 blocks. Shared: 1 KiB reserved -> 228 blocks. Cap 32.
  // -> 8 blocks, 64 warps, 100%; warps bind first.
  auto o = occ("h100", 256, 32, 0);
  CHECK(o.blocks_per_sm == 8);
  CHECK(o.warps_per_sm == 64);
  CHECK(o.limiter == Limiter::kWarps);
}

TEST_CASE("occupancy: 256 threads, 64 registers, 48 KiB (H200)", "[analytic][occupancy]") {
  // Registers: 2048 per warp; 16384/2048 = 8 per partition -> 32 warps -> 4 blocks.
  // Shared: 49152 + 1024 = 50176 -> 233472/50176 = 4.65 -> 4 blocks. Tie: registers reported first.
  auto o = occ("h200", 256, 64, 49152);
  CHECK(o.blocks_per_sm == 4);
  CHECK(o.by_shared == 4);
  CHECK(o.by_registers == 4);
  CHECK(o.limiter == Limiter::kRegisters);
}

TEST_CASE("occupancy: 128 threads, 255 registers (H100)", "[analytic][occupancy]") {
  // 255*32 = 8160 -> rounded to 8192 per warp; 16384/8192 = 2 warps per partition -> 8 warps ->
  // 2 blocks of 4 warps; 12.5%.
  auto o = occ("h100", 128, 255, 0);
  CHECK(o.registers_per_warp == 8192);
  CHECK(o.blocks_per_sm == 2);
  CHECK(o.fraction == Approx(8.0 / 64));
  CHECK(o.limiter == Limiter::kRegisters);
}

TEST_CASE("occupancy: 1024 threads, 64 registers (H200)", "[analytic][occupancy]") {
  // 32 warps of 2048 registers = 65536: exactly the per-block limit; 8 warps per partition -> 32
  // warps -> 1 block (warps alone would allow 2).
  auto o = occ("h200", 1024, 64, 0);
  CHECK(o.error.empty());
  CHECK(o.blocks_per_sm == 1);
  CHECK(o.by_warps == 2);
  CHECK(o.limiter == Limiter::kRegisters);
}

TEST_CASE("occupancy: 1024 threads, 72 registers cannot launch (H100)", "[analytic][occupancy]") {
  // 72*32 = 2304 per warp x 32 warps = 73728 > 65536 registers per block.
  auto o = occ("h100", 1024, 72, 0);
  CHECK(o.blocks_per_sm == 0);
  CHECK_FALSE(o.error.empty());
}

TEST_CASE("occupancy: 32 threads, 16 registers hits the block cap (H100)",
          "[analytic][occupancy]") {
  // 1 warp per block: warps allow 64, registers (512 per warp, 32 per partition) 128, shared 228;
  // the cap of 32 blocks per SM binds -> 32 warps, 50%.
  auto o = occ("h100", 32, 16, 0);
  CHECK(o.blocks_per_sm == 32);
  CHECK(o.fraction == Approx(0.5));
  CHECK(o.limiter == Limiter::kBlocks);
}

TEST_CASE("occupancy: 128 threads, 100 KiB shared memory (H200)", "[analytic][occupancy]") {
  // 102400 + 1024 = 103424 per block; 233472/103424 = 2.26 -> 2 blocks (warps allow 16).
  auto o = occ("h200", 128, 32, 102400);
  CHECK(o.shared_per_block == 103424);
  CHECK(o.blocks_per_sm == 2);
  CHECK(o.limiter == Limiter::kSharedMemory);
}

TEST_CASE("occupancy: 96 threads, 40 registers uses per-partition allocation (H100)",
          "[analytic][occupancy]") {
  // 3 warps per block. 40*32 = 1280 per warp (a multiple of 256). Per partition 16384/1280 = 12.8
  // -> 12 warps; 48 per SM -> 16 blocks. (The whole file would give 65536/1280 = 51 warps -> 17
  // blocks: the sub-partition rule is what makes it 16.) Warps alone allow 21.
  auto o = occ("h100", 96, 40, 0);
  CHECK(o.blocks_per_sm == 16);
  CHECK(o.limiter == Limiter::kRegisters);
}

TEST_CASE("occupancy: 256 threads, 32 registers, 64 KiB (A100)", "[analytic][occupancy]") {
  // 65536 + 1024 = 66560 per block; 167936/66560 = 2.52 -> 2 blocks.
  auto o = occ("a100", 256, 32, 65536);
  CHECK(o.blocks_per_sm == 2);
  CHECK(o.limiter == Limiter::kSharedMemory);
}

TEST_CASE("occupancy: 512 threads, 128 registers (A100)", "[analytic][occupancy]") {
  // 4096 per warp; 16384/4096 = 4 per partition -> 16 warps -> 1 block of 16 warps (warps allow 4).
  auto o = occ("a100", 512, 128, 0);
  CHECK(o.blocks_per_sm == 1);
  CHECK(o.warps_per_sm == 16);
  CHECK(o.limiter == Limiter::kRegisters);
}

TEST_CASE("occupancy: the largest opt-in block, 227 KiB (H200)", "[analytic][occupancy]") {
  // 232448 + 1024 = 233472 = all of the SM's 228 KiB -> exactly 1 block; 1 byte more cannot launch.
  CHECK(occ("h200", 64, 32, 232448).blocks_per_sm == 1);
  CHECK_FALSE(occ("h200", 64, 32, 232449).error.empty());
}

TEST_CASE("occupancy: 128 threads, 168 registers (H100)", "[analytic][occupancy]") {
  // 168*32 = 5376 = 21 x 256; 16384/5376 = 3.05 -> 3 warps per partition -> 12 warps -> 3 blocks.
  auto o = occ("h100", 128, 168, 0);
  CHECK(o.blocks_per_sm == 3);
  CHECK(o.limiter == Limiter::kRegisters);
}

TEST_CASE("occupancy: a smaller carveout limits shared memory (H100)", "[analytic][occupancy]") {
  // Asking for 100 KiB per SM: 102400 / (16384 + 1024) = 5.88 -> 5 blocks instead of 13.
  auto sm = hw::find_gpu("h100").sm;
  auto o = models::occupancy(sm, {128, 32, 16384, 100 * 1024});
  CHECK(o.shared_per_sm == 102400);
  CHECK(o.blocks_per_sm == 5);
  CHECK(models::occupancy(sm, {128, 32, 16384}).blocks_per_sm == 13);
}
