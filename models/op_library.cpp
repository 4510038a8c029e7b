#include "models/op_library.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <iterator>
#include <limits>
#include <queue>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "models/op_cost.hpp"

namespace ridge::models {

long long OpPlan::launches() const {
  if (kind == Kind::kCopy) return 1;
  if (kind == Kind::kLaunch) return launch_count;
  long long n = 0;
  for (const auto& k : kernels) n += k.count;
  return n;
}

namespace {

// L2 keeps data in 128-byte lines of four 32-byte sectors (CUDA C++ Best Practices Guide,
// "Coalesced Access to Global Memory"; the same on every NVIDIA GPU since Maxwell).
constexpr double kL2LineBytes = 128;

long long cdiv(long long a, long long b) {
  return (a + b - 1) / b;
}
double cdivf(double a, double b) {
  return std::ceil(a / b);
}

// Resident blocks per SM for a simple kernel shape, for sizing grid-stride grids.
long long resident_slots(const hw::GpuSpec& gpu, int threads, int regs, double smem) {
  const Occupancy o = occupancy(gpu.sm, {threads, regs, smem, -1});
  return static_cast<long long>(std::max(1, o.blocks_per_sm)) * gpu.sm.count;
}

double kernel_time(const hw::GpuSpec& gpu, const KernelParams& kp, const KernelDesc& d) {
  return estimate_kernel(kernel_setup(gpu, kp, d)).time_s;
}

// ---- streaming kernels -------------------------------------------------------------------------

// A grid-stride streaming kernel (PyTorch's vectorized elementwise loop, 16-byte vector loads;
// strided inputs cannot vectorise and load one element per thread). 256 threads, 32 registers.
// Unnamed (a search times it without formatting a name); `vec_bytes` gets the vector width.
KernelDesc streaming_desc(const hw::GpuSpec& gpu, double elems, double read_per_elem,
                          double write_per_elem, double fp32_per_elem, double sfu_per_elem,
                          int elem, int stride, int& vec_bytes) {
  KernelDesc d;
  d.block = 256;
  d.registers = 32;
  const int vec = stride == 1 ? std::max(1, 16 / std::max(1, elem)) : 1;
  const long long per_pass = static_cast<long long>(d.block) * vec;
  const long long want = std::max<long long>(1, cdiv(static_cast<long long>(elems), per_pass));
  d.grid = std::min(want, resident_slots(gpu, d.block, d.registers, 0));
  const double per_block = elems / static_cast<double>(d.grid);
  d.bytes_read = read_per_elem * per_block;
  d.bytes_written = write_per_elem * per_block;
  d.flops_fp32 = fp32_per_elem * per_block;
  d.sfu_ops = sfu_per_elem * per_block;
  d.elem_bytes = elem;
  d.stride = stride;
  // Contiguous streams pay the cold read ramp; strided reads keep their per-atom costs, fitted
  // without it (docs/accuracy.md).
  d.read_ramp = stride == 1;
  vec_bytes = vec * elem;
  return d;
}

KernelDesc streaming(const hw::GpuSpec& gpu, std::string name, double elems, double read_per_elem,
                     double write_per_elem, double fp32_per_elem, double sfu_per_elem, int elem,
                     int stride) {
  int vec_bytes = 0;
  KernelDesc d = streaming_desc(gpu, elems, read_per_elem, write_per_elem, fp32_per_elem,
                                sfu_per_elem, elem, stride, vec_bytes);
  d.name = fmt::format("{} vec{}", name, vec_bytes);
  return d;
}

// ---- GEMM -------------------------------------------------------------------------------------

struct Tile {
  int m, n, threads, regs, stages;
  int cluster;  // CTAs sharing each A tile by TMA multicast (Hopper thread-block clusters)
};

struct GemmShape {
  double m, n, k, batch;
  double in_bytes, out_bytes;
  hw::Precision precision;
  bool tensor;
  double unique_read;  // distinct bytes of A and B (implicit GEMM: input + filter)
  // Persistent tile loop: cuBLAS's tensor-core GEMMs on sm_90 and later (nvjet kernels launch one
  // CTA per SM, grid [2, 66] on the H200's 132 SMs in the e2e timelines, and overlap each tile's
  // epilogue with the next tile's main loop). Not cuDNN's implicit-GEMM convolutions.
  bool persistent = false;
  // Factor on the tensor-core efficiency: 1, or below it for the pre-Hopper kernels cuBLASLt falls
  // back to when a leading dimension is not a multiple of 16 bytes (unaligned_tensor_scale).
  double tensor_scale = 1.0;
  // SIMT (fp32) GEMMs: the rate at which a wave of CTAs writes its output tiles after its k loop
  // (simt_epilogue_bandwidth; 0: not charged). Set by plan_gemm.
  double simt_epilogue_bw = 0;
  // A cuBLAS(Lt) GEMM (the gemm op), whose tf32 kernels have their own tile set (plan_gemm); not
  // cuDNN's implicit GEMMs, whose tiles no record shows.
  bool cublas = false;
  // Per output element, the part of a persistent tile's epilogue that its SM's tensor cores wait
  // for (fp8 GEMMs only: gemm_fp8_tile_epilogue); 0: the epilogue overlaps the next tile.
  double epilogue_s_per_elem = 0;
};

// SIMT (fp32) GEMM tiles' FFMA issue rate relative to the 128x128 tile, whose rate is
// simt_efficiency_fp32. Each k step of 8 a block stages its A and B panels, (m + n) x 8 floats,
// through shared memory and waits at a barrier before its m x n x 8 FFMAs: a cost per k step that
// grows with the panel (m + n) while the work grows with the area m n, so the FFMA share of the
// issue slots falls as (m + n) / (m n) rises. Rate(t) = 1 / (1 + a (m + n) / (m n)), normalised
// to 128x128. a is simt_tile_staging (hw/model_params.cpp), 25: a FIT (issue 18) to the records of
// validate/data/h200 (own-set1..7, gemm.json): per-SM FFMA rate over whole waves of the tile
// cuBLAS recorded, about 0.77 of the SIMT peak at the record's clock for 128x128 (e.g. own-set3
// 6144x6144x1024, own-set2 4096x6144x1536) against about 0.60 for 64x64 (own-set4 700x2100x1400,
// 1800x3600x1200; own-set7 2048x2304x768). The form then gives 0.68 for 64x128, where those
// records (own-set2 7168x2048x2048, own-set4 4608x2304x2304, own-set7 2048x3072x768) ran
// 0.60-0.67. Least squares in log over the model's predictions of all 96 fp32 records gives a
// flat optimum at 20-25; leaving one set out gives 15-25 (docs/accuracy.md).
double simt_tile_factor(const Tile& t, double a) {
  const double x = (t.m + t.n) / (static_cast<double>(t.m) * t.n);
  return (1.0 + a * (2.0 / 128.0)) / (1.0 + a * x);
}

// A GEMM tile's arithmetic (the FLOPs of its k extent, quantised to the k step) set on `d`; returns
// the quantised k. Shared by gemm_desc and the tile search's floor, so the two agree.
double gemm_work(const GemmShape& g, const Tile& t, int tk, int splits, const KernelParams& kp,
                 KernelDesc& d) {
  const double k_split = std::ceil(g.k / splits);
  const double k_tile = cdivf(k_split, tk) * tk;  // k quantised to the k step
  const double flops = 2.0 * t.m * t.n * k_tile;
  if (g.tensor) {
    d.flops_tensor = flops;
    d.tensor_precision = g.precision;
    if (g.tensor_scale != 1.0) {
      const double eff = g.precision == hw::Precision::kTf32   ? kp.tensor_tf32
                         : g.precision == hw::Precision::kFp16 ? kp.tensor_fp16
                         : g.precision == hw::Precision::kBf16 ? kp.tensor_bf16
                                                               : kp.tensor_fp8;
      d.tensor_efficiency = eff * g.tensor_scale;
    }
  } else {
    d.flops_fp32 = flops;
    // Only for GEMMs that fill the tile: the fit saw no record of fewer rows or columns than the
    // tile (cuBLAS runs 64x8, 128x32-class and gemv kernels there, memory bound).
    const bool full = g.m >= t.m && g.n >= t.n;
    d.simt_efficiency =
        kp.simt_efficiency_fp32 * (full ? simt_tile_factor(t, kp.simt_tile_staging) : 1.0);
  }
  return k_tile;
}

// A GEMM tile's L2 traffic per block set on `d` (k_tile from gemm_work): its A and B panels' k
// extent read, its output (or fp32 partials) written. Shared by gemm_desc and the tile search's
// floor, so the two agree.
void gemm_traffic(const GemmShape& g, const Tile& t, int splits, double k_tile, KernelDesc& d) {
  // With a 2-CTA cluster along n, each A tile is fetched from L2 once for the pair (TMA multicast).
  d.bytes_read = (t.m / static_cast<double>(t.cluster) + t.n) * k_tile * g.in_bytes;
  d.bytes_written = t.m * t.n * (splits > 1 ? 4.0 : g.out_bytes);
  d.elem_bytes = static_cast<int>(g.in_bytes);
}

// One GEMM kernel with a tile and a split-K factor; the fp32 partials of a split go to a workspace.
// Unnamed: the tile search times candidates without formatting names (gemm_kernel names one).
KernelDesc gemm_desc(const GemmShape& g, const Tile& t, int tk, int splits, const KernelParams& kp,
                     long long slots_hint, double l2_size) {
  KernelDesc d;
  const long long tm = cdiv(static_cast<long long>(g.m), t.m);
  const long long tn = cdiv(static_cast<long long>(g.n), t.n);
  const double k_split = std::ceil(g.k / splits);
  const double k_tile = gemm_work(g, t, tk, splits, kp, d);
  d.grid = tm * tn * splits * static_cast<long long>(g.batch);
  d.block = t.threads;
  d.registers = t.regs;
  d.shared_bytes = static_cast<double>(t.stages) * (t.m + t.n) * tk * g.in_bytes;
  gemm_traffic(g, t, splits, k_tile, d);
  // cuBLAS rasters the tiles in near-square groups, so a wave of B tiles spans about sqrt(B) rows
  // and columns. The tiles of one wave start together and march along k at the same pace, so they
  // share each k-slice of their A and B panels while it is in L2: within a wave only the panels'
  // distinct bytes come from HBM, and the working set of those re-reads is the k-window the
  // pipelines have in flight. Across waves a panel is re-read only if all of its k stayed in L2:
  // a capacity hit min(1, L2 / panels of one wave).
  const long long wave = std::max<long long>(1, std::min<long long>(d.grid, slots_hint));
  const double rows = std::min<double>(tm, std::ceil(std::sqrt(static_cast<double>(wave))));
  const double cols = std::min<double>(tn, std::ceil(static_cast<double>(wave) / rows));
  const double panel_rows = rows * t.m + cols * t.n;
  const double panels = panel_rows * k_split * g.in_bytes;
  const double waves = std::ceil(static_cast<double>(d.grid) / static_cast<double>(wave));
  const double cross_hit = panels > 0 ? std::min(1.0, l2_size / panels) : 1.0;
  const double total_reads = static_cast<double>(d.grid) * d.bytes_read;
  d.unique_read_bytes =
      std::min(total_reads,
               g.unique_read + std::max(0.0, waves * panels - g.unique_read) * (1.0 - cross_hit));
  d.reuse_working_set = std::min(d.unique_read_bytes, panel_rows * tk * t.stages * g.in_bytes);
  // TMA / cp.async pipelines keep all stages in flight.
  d.inflight_bytes_per_block = d.shared_bytes;
  d.overhead_s = kp.gemm_tile_overhead;
  // SIMT GEMMs (cuBLAS's sm80 ffma kernels, one output tile per CTA, not persistent) write their
  // fp32 accumulators (or split-K partials) only after the whole k loop, and the CTAs of a wave
  // run that loop in step, so the wave's output store is not hidden under any arithmetic: each
  // wave pays its blocks' m x n x 4 bytes at simt_epilogue_bandwidth (hw/model_params.cpp).
  if (!g.tensor && g.simt_epilogue_bw > 0)
    d.overhead_s += static_cast<double>(wave) * t.m * t.n * 4.0 / g.simt_epilogue_bw;
  d.persistent = g.persistent;
  d.tile_epilogue_s = g.persistent ? g.epilogue_s_per_elem * t.m * t.n : 0.0;
  // The sm_80-class kernels (misaligned rows: kSm80) issue mma.sync from every warp and hide its
  // latency and their shared-memory loads with a second warp on each of the SM's four schedulers:
  // eight warps per SM. The 4-warp 128x128 tile gets them only from two resident CTAs, so a wave
  // that leaves one CTA on an SM (a partial last wave) runs it at about half the SM's rate and
  // lasts as long as a full wave. No parameter: 8 warps per SM is the 8-warp 128x256 tile's count.
  if (g.cublas && g.tensor && g.tensor_scale != 1.0)
    d.full_rate_blocks = std::max(1, 8 / std::max(1, t.threads / 32));
  return d;
}

KernelDesc gemm_kernel(const GemmShape& g, const Tile& t, int tk, int splits,
                       const KernelParams& kp, long long slots_hint, double l2_size) {
  KernelDesc d = gemm_desc(g, t, tk, splits, kp, slots_hint, l2_size);
  d.name = fmt::format("gemm {}x{}x{} splitk={}{}", t.m, t.n, tk, splits, g.tensor ? "" : " simt");
  return d;
}

// Whether the GPU's tensor-core GEMM kernels run a persistent, warp-specialised tile loop
// (compute capability 9.0 and later: TMA and warpgroup MMA).
bool persistent_gemms(const hw::GpuSpec& gpu) {
  const std::string& cc = gpu.compute_capability;
  const std::size_t dot = cc.find('.');
  int major = 0;
  for (std::size_t i = 0; i < (dot == std::string::npos ? cc.size() : dot); ++i) {
    if (cc[i] < '0' || cc[i] > '9') return false;
    major = major * 10 + (cc[i] - '0');
  }
  return major >= 9;
}

std::atomic<bool>& gemm_pruning() {
  static std::atomic<bool> on{true};
  return on;
}

// The occupancy of every tile of a list on one GPU's SM at one k step and input width: computed
// once per (SM, list, k step, input width) and kept per thread (a few entries, the most recent
// first), as the tile search asks for the same table on every call.
struct TileOccupancy {
  Occupancy occ;
  long long slots = 0;  // resident blocks on the whole GPU; 0: the tile does not fit
  std::string name1;    // gemm_kernel's name for the tile without split-K
};
const std::vector<TileOccupancy>& tile_occupancy(const hw::GpuSpec& gpu,
                                                 const std::vector<Tile>& tiles, int tk,
                                                 double in_bytes, bool tensor) {
  // Keyed by the SM (occupancy() reads only it), the list, the k step, the input width and
  // tensor cores; compared whole, so no other SM's table is ever served.
  struct Entry {
    hw::SmSpec sm;
    int tk = 0;
    double in_bytes = 0;
    bool tensor = false;
    const std::vector<Tile>* tiles = nullptr;
    std::vector<TileOccupancy> table;
  };
  thread_local std::vector<Entry> cache;
  const hw::SmSpec& sm = gpu.sm;
  for (std::size_t i = 0; i < cache.size(); ++i) {
    const Entry& c = cache[i];
    if (c.tiles != &tiles || c.tk != tk || c.in_bytes != in_bytes || c.tensor != tensor ||
        !(c.sm == sm))
      continue;
    if (i > 0) std::swap(cache[i], cache[0]);
    return cache[0].table;
  }
  Entry e;
  e.sm = sm, e.tk = tk, e.in_bytes = in_bytes, e.tiles = &tiles, e.tensor = tensor;
  for (const Tile& t : tiles) {
    const double smem = static_cast<double>(t.stages) * (t.m + t.n) * tk * in_bytes;
    TileOccupancy to;
    to.occ = occupancy(sm, {t.threads, t.regs, smem, -1});
    if (to.occ.error.empty() && to.occ.blocks_per_sm >= 1)
      to.slots = static_cast<long long>(to.occ.blocks_per_sm) * sm.count;
    to.name1 = fmt::format("gemm {}x{}x{} splitk=1{}", t.m, t.n, tk, tensor ? "" : " simt");
    e.table.push_back(std::move(to));
  }
  constexpr std::size_t kEntries = 8;
  if (cache.size() >= kEntries) cache.pop_back();
  cache.insert(cache.begin(), std::move(e));
  return cache[0].table;
}

OpPlan plan_gemm(const hw::GpuSpec& gpu, const KernelParams& kp, const GemmShape& shape,
                 bool with_detail = true) {
  GemmShape g = shape;
  if (!g.tensor) {
    g.simt_epilogue_bw = gpu.param("simt_epilogue_bandwidth");
  }
  // Hopper warp-specialised kernels: 2 consumer warpgroups + 1 producer for 128-row-pair tiles;
  // register counts from CUTLASS 3 sm90 collectives (setmaxnreg 232/40 averaged to <= 168).
  // The large tiles run in 2x1 clusters (cuBLAS's default cluster shape for them on sm90).
  // 192-wide tiles: cuBLAS 13 picks 192x192 and 192x128 on the H200 (library.tile in
  // validate/data/h200/gemm.json; nvjet_sm90_tst_192x192_64x4 / 192x128_64x5 kernels in the e2e
  // GPT-2 timelines), which fit k=768 GEMMs' tile counts to whole waves better than 256x128.
  // Skinny tiles 16x64 and 64x16 for a few rows or columns (decode): cuBLAS runs 64x8, 64x16 and
  // 8x64-class tiles there (gemm.json library.tile; nvjet_sm90_tst_8x64 / 64x8 in the Llama decode
  // timelines) rather than split-K over 64x64 tiles.
  static const std::vector<Tile> kTensor = {
      {128, 256, 384, 168, 4, 2},
      {256, 128, 384, 168, 4, 2},
      {192, 192, 384, 168, 4, 2},
      {192, 128, 384, 168, 5, 2},
      {128, 192, 384, 168, 5, 2},
      {128, 128, 256, 168, 4, 2},
      {64, 128, 128, 168, 4, 1},
      {128, 64, 128, 168, 4, 1},
      {64, 64, 128, 128, 4, 1},
      {16, 64, 128, 128, 4, 1},
      {64, 16, 128, 128, 4, 1},
      // The large nvjet tiles cuBLAS runs whose n side is not a power of two (row-major m x n:
      // cuBLAS's column-major tile read transposed). Each recurs in 5-7 of the 7 GEMM data sets
      // (validate/data/h200 gemm.json, own-set1..4, 7, 8; library.tile, algo 66): 128x320 in 34
      // records, 160x128 in 22, 128x144 in 19, 128x112 in 7. cuBLAS picks them so the tile count
      // falls just under a whole number of waves (waves_count 0.97, 1.94, 2.91, 3.88 on 132 SMs:
      // fp8 2048 x 3584 x 14336 ran 364 tiles of 160x128 in 2.76 waves where 128x256 needs 224
      // tiles, 1.7 waves priced as 2 full ones). 128x320 gets three stages of its 64-deep
      // (16-bit) or 128-deep (fp8) k slices: four (224 KiB) would leave no room under the 227 KiB
      // per-block limit for the epilogue's staging buffer, which CUTLASS's automatic stage count
      // sets aside (cuBLAS reports the stages as AUTO). No parameter is fitted: on cuBLAS's own
      // tile the model prices these records at the tensor efficiencies fitted before (median
      // signed error of the 25 records where the model now picks cuBLAS's tile among the four:
      // -0.6% to +0.6% per tile).
      {128, 320, 384, 168, 3, 2},
      {160, 128, 384, 168, 4, 2},
      {128, 144, 384, 168, 4, 2},
      {128, 112, 384, 168, 4, 2}};
  // cuBLAS's tf32 GEMMs: the same tiles less the 192-wide ones. Those (and 112-, 144-, 152-,
  // 168-, 216-, 320-wide ones) are nvjet kernels (cuBLASLt algo 66: all 19 records with a
  // 192-wide tile), which cuBLASLt runs for fp8, fp16 and bf16 only. The 82 tf32 records
  // (validate/data/h200 gemm.json and own-set1..3) ran algo 43 (73), algo 23 where rows are not
  // 16-byte aligned (2), algo 21 at 256^3 (1) and the gemv algo 13 at m = 1 (6), every tile 64,
  // 128 or 256 on each side (library.tile). With 192 allowed, the search priced small tf32 GEMMs
  // on tiles that fit their shape into one wave where cuBLAS runs more waves of 128-wide tiles
  // (own-set2 896 x 4864 x 896: 130 tiles of 192x192 against cuBLAS's 266 of 128x128).
  static const std::vector<Tile> kTensorTf32 = [] {
    std::vector<Tile> t;
    std::ranges::copy_if(kTensor, std::back_inserter(t), [](const Tile& x) {
      return std::has_single_bit(static_cast<unsigned>(x.m)) &&
             std::has_single_bit(static_cast<unsigned>(x.n));
    });
    return t;
  }();
  // SIMT SGEMM (cuBLAS sgemm 128x128x8 and 64x64x8 kernels), double-buffered.
  // cuBLASLt's SIMT kernel (algo 55) also runs a four-warp tile of 128 by 64 for mid-sized shapes:
  // library.tile "64x128" is column-major (n side first), so as a row-major m x n tile it is
  // 128x64 (11 of the 104 fp32 records of own-set1..4, 7-9 and gemm.json). 64x128 (m side 64) is
  // kept for outputs of fewer than 128 rows, where cuBLAS runs 32x128 and 64x256 tiles.
  static const std::vector<Tile> kSimt = {{128, 128, 256, 128, 2, 1},
                                          {64, 128, 128, 128, 2, 1},
                                          {128, 64, 128, 128, 2, 1},
                                          {64, 64, 64, 128, 2, 1}};
  // The sm_80-class kernels cuBLASLt runs for rows that are not 16-byte aligned (algo 23, and 24
  // for 2-byte rows; unaligned_tensor_scale): every one of the 21 such records (own-set1..4)
  // (and own-set7's 9 of 10; its fp16 16x32001x4096 ran a 32x32 tile, which kSm80 lacks)
  // ran a 128x256, 256x128 or 128x128 tile, 3 stages (64x3 for 16-bit inputs, 32x3 for tf32),
  // no cluster (library.tile, stages, cluster_shape). CUTLASS's sm_80 tensor-op GEMMs of those
  // tiles use 8 warps (128x256, 64x64 per warp) and 4 warps (128x128); 232 registers. Their
  // `waves_count` (128x256 at 1 CTA per SM: 384 CTAs = 2.91; 128x128 at 2: 256 CTAs = 0.97)
  // agrees with the occupancy those give.
  static const std::vector<Tile> kSm80 = {
      {128, 256, 256, 232, 3, 1}, {256, 128, 256, 232, 3, 1}, {128, 128, 128, 232, 3, 1}};
  const auto& tiles = !g.tensor                                         ? kSimt
                      : g.cublas && g.tensor_scale != 1.0               ? kSm80
                      : g.cublas && g.precision == hw::Precision::kTf32 ? kTensorTf32
                                                                        : kTensor;
  const int tk = g.tensor ? std::max(8, static_cast<int>(128 / g.in_bytes)) : 8;
  const int sms = gpu.sm.count;
  const bool sm80 = &tiles == &kSm80;
  constexpr long long kSm80SplitWaves = 8;

  // The search times unnamed candidates (no strings, no JSON, no allocation); the winner's kernels
  // and description are built once after it. Each tile's occupancy comes from a per-thread table
  // (tile_occupancy), and each split's reduction kernel is timed once for all tiles (it depends
  // only on the split and the output), so every candidate's time is the one a full evaluation
  // gives. The candidates are then timed in the order of a floor under their time from their
  // arithmetic alone (no memory model), and the search stops at the first floor above the best
  // time so far. The winner is the candidate of the smallest time, ties to the first in (tile,
  // split) order: the one the plain loop over tiles and splits picks.
  constexpr int kSplits[] = {2, 3, 4, 6, 8, 12, 16};
  double reduce_s[17];  // indexed by split
  std::fill(std::begin(reduce_s), std::end(reduce_s), -1.0);
  const double out_elems = g.m * g.n * g.batch;
  // The split-K reduction after a split-s kernel, with its launch (0 for s = 1), priced once per
  // split. cuBLAS's split-K reduction reads s fp32 partials and writes the output. Its SIMT
  // kernels instead accumulate the splits into one fp32 workspace of the output's size
  // (reduction_scheme 2, workspace_bytes m n 4 in the fp32 records of own-set1..7 and gemm.json),
  // so the pass after them reads it once.
  auto split_cost = [&](int s) {
    if (s <= 1) return 0.0;
    if (reduce_s[s] < 0) {
      const double partial_bytes = g.tensor ? 4.0 * s : 4.0;
      int vec_bytes = 0;
      reduce_s[s] = kernel_time(
          gpu, kp,
          streaming_desc(gpu, out_elems, partial_bytes, g.out_bytes, s, 0, 4, 1, vec_bytes));
    }
    return reduce_s[s] + kp.kernel_startup + kp.kernel_gap;
  };
  // A candidate plan's time: its GEMM kernel on tile t split s ways, then its reduction.
  auto plan_time = [&](const Tile& t, int s, const TileOccupancy& to) {
    const KernelDesc d = gemm_desc(g, t, tk, s, kp, to.slots, gpu.memory.l2_size);
    return estimate_kernel(kernel_setup(gpu, kp, d, to.occ)).time_s + split_cost(s);
  };
  const std::vector<TileOccupancy>& occs = tile_occupancy(gpu, tiles, tk, g.in_bytes, g.tensor);
  // A floor under a candidate's time (estimate_kernel's): each wave's time max(busy, dispatch) >=
  // max(compute, mem) and mem = max(cap, port, l2, hbm) + latency >= l2 + the L2 latency, with l2
  // the wave's blocks' L2 bytes over the L2 bandwidth (a contiguous GEMM's L2 bytes per block are
  // its read plus written bytes: no sector amplification at stride 1), taken 1e-9 lower so that
  // rounding cannot lift it over the estimate; plus the per-tile overheads as estimate_kernel
  // charges them.
  const double l2_bw = gpu.memory.l2_bandwidth * kp.l2_efficiency;
  auto gemm_time_floor = [&](long long grid, long long slots, double compute_s, double l2_block) {
    double t = 0;
    auto wave = [&](long long blocks, double count) {
      const int n = static_cast<int>((blocks + sms - 1) / sms);
      const double compute = n * compute_s;
      const double l2 = static_cast<double>(blocks) * l2_block / l2_bw * (1 - 1e-9) + kp.l2_latency;
      t += count * std::max(compute, l2) + (g.persistent ? 0.0 : count * kp.gemm_tile_overhead);
    };
    const long long full = grid / slots;
    if (full > 0) wave(slots, static_cast<double>(full));
    if (grid - full * slots > 0) wave(grid - full * slots, 1.0);
    if (g.persistent && grid > 0) t += kp.gemm_tile_overhead;
    return t;
  };
  struct Candidate {
    double floor;
    int order;  // position in (tile, split) order
    int tile, split;
    long long tiles_mn;
  };
  thread_local std::vector<Candidate> cands;  // reused: no allocation per call
  cands.clear();
  // Output tiles of the whole batch on tile t.
  auto tile_count = [&](const Tile& t) {
    return cdiv(static_cast<long long>(g.m), t.m) * cdiv(static_cast<long long>(g.n), t.n) *
           static_cast<long long>(g.batch);
  };
  for (std::size_t ti = 0; ti < tiles.size(); ++ti) {
    const Tile& t = tiles[ti];
    const long long slots = occs[ti].slots;
    if (slots < 1) continue;
    const long long tiles_mn = tile_count(t);
    int splits[1 + 16] = {1};
    int n_splits = 1;
    if (sm80) {
      // cuBLASLt's sm_80-class kernels split k whatever the output tile count: 17 of the 31
      // such records (own-set1..7) ran split-K 2-11, at 0.97 to 8.00 waves (4096x768x50257:
      // 96 tiles of 256x128 split 11 ways, 1056 CTAs, 8 waves on 132 SMs). Any split up to 8
      // waves of CTAs with >= 4 k steps each; the search keeps the fastest.
      for (int s = 2; s <= 16; ++s)
        if (tiles_mn * s <= kSm80SplitWaves * slots && g.k / s >= 4.0 * tk) splits[n_splits++] = s;
    } else if (tiles_mn < sms) {
      // Split-K when the output tiles leave SMs idle and each split keeps >= 4 k steps.
      for (int s : kSplits) {
        if (tiles_mn * s <= 2 * slots && g.k / s >= 4.0 * tk) splits[n_splits++] = s;
      }
    } else if (!g.tensor) {
      // cuBLAS's SIMT kernels also split k over a wave or more of tiles, to even out the last
      // wave: 22 fp32 records of 132 tiles or more ran split-K 2-8 (3072^3: 576 tiles of 128x128,
      // split 5), every one with 300 or more k per split. Offered here down to 256 k per split
      // (32 k steps) and up to 16 waves of CTAs.
      for (int s : kSplits) {
        if (g.k / s >= 32.0 * tk && tiles_mn * s <= 16 * slots) splits[n_splits++] = s;
      }
    }
    for (int i = 0; i < n_splits; ++i) {
      const int s = splits[i];
      KernelDesc work;
      const double k_tile = gemm_work(g, t, tk, s, kp, work);
      gemm_traffic(g, t, s, k_tile, work);
      double t_floor = gemm_time_floor(tiles_mn * s, slots, block_compute_s(gpu, kp, work),
                                       work.bytes_read + work.bytes_written);
      t_floor += split_cost(s);
      cands.push_back({t_floor, static_cast<int>(cands.size()), static_cast<int>(ti), s, tiles_mn});
    }
  }
  const int n_cands = static_cast<int>(cands.size());
  std::sort(cands.begin(), cands.end(), [](const Candidate& a, const Candidate& b) {
    return a.floor != b.floor ? a.floor < b.floor : a.order < b.order;
  });
  double best_t = std::numeric_limits<double>::infinity();
  int best_order = n_cands;
  const Tile* best_tile = nullptr;
  int best_split = 1;
  long long best_tiles = 0, best_slots = 0;
  // cuBLAS's choice among its nvjet tiles (kTensor) for 16-bit inputs: the largest tile (m x n
  // area) that fits inside the output, among those priced within kTilePreference of the fastest,
  // ties to the faster. cuBLAS's heuristic keeps a large tile (128x256, 128x320, 192x192) where
  // the model prices a narrower one 1-3% faster: without the rule the model's tile agreed with the
  // one cuBLAS ran (library.tile) in 65 of the 148 aligned fp16/bf16 records of m, n >= 128 of
  // validate/data/h200 gemm.json and own-set1..4, 7, 8. 0.03 is a FIT to those recorded CHOICES,
  // not to timings: agreement 65 (no margin), 82 (0.01), 95 (0.02), 97 (0.03), 98 (0.04), 86
  // (0.05); leaving one data set out, the other six pick 0.02-0.04 (docs/accuracy.md). For fp8 the
  // same rule agreed less (17 of 74 without it, 12 at 0.03: cuBLAS runs 160x128 and 128x144 for
  // fp8 where the rule takes 128x256 or 128x320), so fp8, tf32, SIMT and sm_80-class kernels keep
  // the fastest tile.
  constexpr double kTilePreference = 0.03;
  const double pref = (&tiles == &kTensor && g.in_bytes == 2) ? kTilePreference : 0.0;
  struct Timed {  // a priced candidate: its time, its place in cands, its occupancy
    double time;
    int cand;
    long long slots;
  };
  thread_local std::vector<Timed> timed;
  timed.clear();
  for (int c = 0; c < n_cands; ++c) {
    const Candidate& cd = cands[c];
    // A floor above the best time (or equal to it, later in order) cannot win, nor can any
    // candidate after it in floor order.
    if (gemm_pruning().load(std::memory_order_relaxed) &&
        (cd.floor > best_t * (1 + pref) ||
         (pref == 0 && cd.floor == best_t && cd.order > best_order)))
      break;
    const Tile& t = tiles[cd.tile];
    const int s = cd.split;
    const TileOccupancy& to = occs[cd.tile];
    // gemm_desc's shared memory is the table's, so `to.occ` is this candidate's occupancy.
    const double time = plan_time(t, s, to);
    if (pref > 0) timed.push_back({time, c, to.slots});
    if (time < best_t || (time == best_t && cd.order < best_order)) {
      best_t = time;
      best_order = cd.order;
      best_tile = &t;
      best_split = s;
      best_tiles = cd.tiles_mn * s;
      best_slots = to.slots;
    }
  }
  if (pref > 0 && best_tile) {
    auto score = [](const Tile& t) { return static_cast<long long>(t.m) * t.n; };
    long long area = score(*best_tile);
    double chosen_t = best_t;
    int chosen_order = best_order;
    for (const Timed& tc : timed) {
      const Candidate& c = cands[tc.cand];
      const Tile& t = tiles[c.tile];
      const long long a = score(t);
      if (tc.time > best_t * (1 + pref) || a < area || t.m > g.m || t.n > g.n) continue;
      if (a == area && (tc.time > chosen_t || (tc.time == chosen_t && c.order > chosen_order)))
        continue;
      area = a, chosen_t = tc.time, chosen_order = c.order;
      best_tile = &t;
      best_split = c.split;
      best_tiles = c.tiles_mn * c.split;
      best_slots = tc.slots;
    }
  }
  if (!best_tile) throw std::invalid_argument("gemm: no tile fits this GPU's SM");
  // cuBLAS's choice among its SIMT tiles: for small GEMMs it runs the 128x64 tile (no split-K)
  // where the model's rates price 128x128 about 14% faster. Where the fastest plan has no split-K,
  // the output fills a 128x64 tile and m n k is below kSimtSmallMacs, the plan is 128x64 without
  // split-K. 5e9 is a FIT to the recorded CHOICES (library.tile, splitk) of the 78 fp32 records
  // of gemm.json and own-set1..4, 7-9 whose cuBLAS tile is one the model has, not to timings:
  // exact (tile, split) agreement 29 without the rule, 33 at 2e9-4e9, 35 at 5e9-8e9, 31 at 1e10;
  // leaving one set out, each other seven pick 5e9 (docs/accuracy.md). cuBLAS's 64x64 choices
  // (7 records without split-K) follow no rule found here and stay unmatched.
  constexpr double kSimtSmallMacs = 5e9;
  if (&tiles == &kSimt && best_split == 1 && g.m >= 128 && g.n >= 64 &&
      g.m * g.n * g.k < kSimtSmallMacs) {
    const auto it =
        std::ranges::find_if(tiles, [](const Tile& t) { return t.m == 128 && t.n == 64; });
    const auto ti = it - tiles.begin();
    if (occs[ti].slots >= 1) {
      best_tile = &*it;
      best_tiles = tile_count(*it);
      best_slots = occs[ti].slots;
      // With fewer 128x64 tiles than SMs cuBLAS splits k on that tile (own-set12 640^3: 100
      // tiles, split 5; own-set7 1024x768x768 and gemm.json 512^3 split 64x64 tiles): the plan
      // is 128x64 at its fastest split among those the search offers a tile short of a wave
      // (without it, the wave's output store above leaves 640^3 on 100 lone 128x64 CTAs, +46%).
      if (best_tiles < sms) {
        const long long tiles_mn = best_tiles;
        double t1 = plan_time(*it, 1, occs[ti]);
        for (int s : kSplits) {
          if (tiles_mn * s > 2 * best_slots || g.k / s < 4.0 * tk) continue;
          const double ts = plan_time(*it, s, occs[ti]);
          if (ts < t1) t1 = ts, best_split = s, best_tiles = tiles_mn * s;
        }
      }
    }
  }
  OpPlan best;
  best.kernels.reserve(best_split > 1 ? 2 : 1);
  if (best_split == 1) {
    // gemm_kernel's kernel, its name from the tile table.
    best.kernels.push_back(
        {gemm_desc(g, *best_tile, tk, 1, kp, best_slots, gpu.memory.l2_size), 1});
    best.kernels.back().desc.name = occs[best_tile - tiles.data()].name1;
  } else {
    best.kernels.push_back(
        {gemm_kernel(g, *best_tile, tk, best_split, kp, best_slots, gpu.memory.l2_size), 1});
  }
  if (best_split > 1) {
    best.kernels.push_back({streaming(gpu, "splitk_reduce", out_elems, 4.0 * best_split,
                                      g.out_bytes, best_split, 0, 4, 1),
                            1});
  }
  if (!with_detail) return best;
  // Keys appended in sorted order, each at the end of the map without a search (a JSON
  // initializer list builds a two-element array per entry first).
  auto& dt = best.detail.get_ref<nlohmann::json::object_t&>();
  dt.emplace_hint(dt.end(), "cluster", best_tile->cluster);
  dt.emplace_hint(dt.end(), "split_k", best_split);
  dt.emplace_hint(dt.end(), "stages", best_tile->stages);
  dt.emplace_hint(dt.end(), "tile_k", tk);
  dt.emplace_hint(dt.end(), "tile_m", best_tile->m);
  dt.emplace_hint(dt.end(), "tile_n", best_tile->n);
  dt.emplace_hint(dt.end(), "tiles", best_tiles);
  return best;
}

// The widest load (bytes, a power of two up to 16) that a row of `elems` elements of `bytes` each
// keeps aligned: the largest power of two dividing the row's bytes.
double row_alignment(double elems, double bytes) {
  const auto row = static_cast<long long>(elems * bytes);
  long long a = 1;
  while (a < 16 && row % (2 * a) == 0) a *= 2;
  return static_cast<double>(a);
}

// GEMMs whose leading dimensions (k of A and B, n of C: the row-major activation times transposed
// weight layout of validate/gemm.cu and of framework linear layers) are not multiples of 16 bytes:
// the TMA loads of cuBLASLt's sm_90 kernels need 16-byte-aligned rows, so it runs its sm_80-class
// kernels instead (cuBLASLt algo 23, a 128x256 or 256x128 tile, 3 stages, no cluster, split-K 1-3,
// in all three such records: own-set1 fp16 2500x3500x4500, own-set2 fp16 3000x2000x4100 and bf16
// 2048x4100x4100, where the aligned shapes run algo 66 nvjet kernels). Those issue mma.sync from
// every warp, without warpgroup MMA or a producer warp, and copy their tiles with cp.async at the
// rows' alignment: a fraction gemm_unaligned_tensor_fraction of the sm_90 kernels' tensor
// efficiency at 8- and 4-byte rows alike. Own-set3 measured 4-byte rows (fp16, bf16, tf32) at
// about the 8-byte rows' rate (-23% to +14% of it), refuting the earlier guess that the rate falls
// in proportion to the load width below 8 bytes (+40% to +123% over): cp.async copies 4 or 8 bytes
// at the same pipeline depth (algo 23, 3 stages, in all of them). 2-byte rows cannot use cp.async
// (its smallest copy is 4 bytes): cuBLASLt runs algo 24 without the multistage pipeline, at
// gemm_unaligned_2byte_ratio of that rate (hw/model_params.cpp). Non-persistent grids, on the
// sm_80 kernels' own tiles (plan_gemm's kSm80).
//
// Which operand is 2-byte aligned matters (own-set7): rows of k (A and B) at 2 bytes run algo 24
// at gemm_unaligned_2byte_ratio; rows of C alone at 2 bytes (A and B 16-byte aligned) run the
// same algo 24 but ran slower still in all three records, at gemm_unaligned_2byte_c_ratio.
double unaligned_tensor_scale(const hw::GpuSpec& gpu, const KernelParams& kp, double align_k,
                              double align_c) {
  const double align_bytes = std::min(align_k, align_c);
  if (align_bytes >= 16) return 1.0;
  const double f = kp.gemm_unaligned_tensor_fraction;
  if (align_bytes >= 4) return f;
  return f *
         gpu.param(align_k >= 4 ? "gemm_unaligned_2byte_c_ratio" : "gemm_unaligned_2byte_ratio");
}

GemmShape gemm_shape(const OpSpec& op) {
  const std::string& dt = op.s("dtype");
  GemmShape g{op.f("m"),          op.f("n"),    op.f("k"), op.f("batch"), dtype_bytes(dt), 0,
              gemm_precision(dt), dt != "fp32", 0};
  g.out_bytes = (dt == "fp8_e4m3" || dt == "fp8_e5m2") ? 2.0 : g.in_bytes;
  g.unique_read = g.batch * (g.m * g.k + g.k * g.n) * g.in_bytes;
  return g;
}

// ---- row reductions ---------------------------------------------------------------------------

// Row kernels (softmax / layer_norm / rms_norm / cross-entropy, Apex/Liger-style fused rows, and
// validate/suite_rows.cu, whose kernels the H200 records time): one block per row, 16-byte vector
// loads, threads = ceil(vectors / 4) rounded to warps (32..1024), each thread loading its up to
// 4 vectors (8 when 1024 threads do not suffice) together into registers, so a block's bytes in
// flight are its whole row. A row larger than 1024 threads x 8 vectors cannot stay in registers
// and is read twice.
PlannedKernel row_kernel(const hw::GpuSpec& gpu, std::string name, double rows, double cols,
                         int elem, double weights, double read_per_row, double write_per_row,
                         double fp32_per_elem, double sfu_per_elem, int reductions) {
  KernelDesc d;
  const double row_bytes = cols * elem;
  const double vectors = std::ceil(row_bytes / 16);
  d.block = static_cast<int>(std::clamp(std::ceil(vectors / 4 / 32) * 32, 32.0, 1024.0));
  const double vpt = std::ceil(vectors / d.block);
  const int passes = vpt > 8 ? 2 : 1;
  // Registers per thread, which set how many blocks share an SM: the row is held as fp32 values,
  // vpt vectors of 16 / elem each, in an array sized to the next power of two (the kernel is a
  // template on 1, 2, 4 or 8 vectors), plus about 16 registers of addresses, indices and
  // reduction state, 22 with the weights' loads of the norms. ptxas -v (CUDA 13.0, sm_90) on
  // validate/suite_rows.cu gives 22-95 registers over the 24 variants; this count is within 2 of
  // 18 of them, 9 under (bf16 rmsnorm, 8 vectors: 95) to 5 over. The compiler keeps a block
  // within the register file (a 1024-thread block gets at most 64).
  const double held_vectors = std::exp2(std::ceil(std::log2(std::clamp(vpt, 1.0, 8.0))));
  const double held_values = held_vectors * 16.0 / std::max(1, elem);
  const double regs = (weights > 0 ? 22.0 : 16.0) + held_values;
  const double reg_cap = std::floor(65536.0 / d.block / 8) * 8;
  d.registers = static_cast<int>(std::min({regs, reg_cap, 255.0}));
  d.grid = std::max<long long>(1, static_cast<long long>(std::ceil(rows)));
  const double rpb = rows / static_cast<double>(d.grid);
  d.bytes_read = rpb * (row_bytes * passes + read_per_row) + weights;
  d.bytes_written = rpb * write_per_row;
  d.flops_fp32 = rpb * cols * fp32_per_elem;
  d.sfu_ops = rpb * cols * sfu_per_elem;
  d.elem_bytes = elem;
  d.unique_read_bytes = rows * (row_bytes + read_per_row) + weights;
  d.inflight_bytes_per_block = std::min(row_bytes, d.block * 16.0 * std::min(vpt, 8.0));
  const double in_flight =
      std::min(static_cast<double>(d.grid),
               static_cast<double>(resident_slots(gpu, d.block, d.registers, 0)));
  d.reuse_working_set = weights + in_flight * rpb * row_bytes;
  d.overlapped_waves = true;
  d.read_ramp = true;
  // The block's serial chain besides its arithmetic: the first bytes' HBM latency, each block
  // reduction (a shuffle tree, a __syncthreads through shared memory and a second tree:
  // row_reduction_sync, a FIT) and, for the norms, the weights' L2 round trip before the stores.
  d.row_chain_s = gpu.param("hbm_latency") + reductions * gpu.param("row_reduction_sync") +
                  (weights > 0 ? gpu.param("l2_latency") : 0.0);
  d.name = fmt::format("{} block-per-row {}x{} {}pass", name, d.block, vpt, passes);
  return {d, 1};
}

// ---- attention --------------------------------------------------------------------------------

OpPlan plan_attention(const hw::GpuSpec& gpu, const KernelParams& kp, const OpSpec& op) {
  const double b = op.f("batch"), h = op.f("heads"), kvh = op.f("kv_heads");
  const double sq = op.f("seq_q"), skv = op.f("seq_kv"), dh = op.f("head_dim");
  const std::string& dt = op.s("dtype");
  const double e = dtype_bytes(dt);
  const hw::Precision prec = dt == "fp8_e4m3" ? hw::Precision::kFp8
                             : dt == "fp16"   ? hw::Precision::kFp16
                                              : hw::Precision::kBf16;
  const bool causal = op.b("causal");
  const double frac = causal ? causal_fraction(op.i("seq_q"), op.i("seq_kv")) : 1.0;
  const std::string& pass = op.s("pass");
  const double kv_bytes = b * kvh * skv * dh * e;  // K or V
  const double q_bytes = b * h * sq * dh * e;
  OpPlan p;

  if (pass == "fwd" && sq <= 1) {
    // Flash-decoding (Dao et al. 2023): a block per (batch, kv head, key split) handles the
    // group's query rows (padded to 16, the mma M) against a chunk of keys; a combine kernel
    // merges the splits' partial outputs by their log-sum-exp. Only for one query: from two on,
    // cuDNN (what PyTorch's SDPA runs on Hopper) runs its prefill kernel, the queries padded to
    // its 128-query CTA (validate/data/h200/attention_sweep1: 16 and 64 queries over 4096 keys
    // cost the same, each on the sm90 forward kernel).
    const double group = h / kvh;
    const double rows = std::ceil(group * sq / 16) * 16;
    const long long groups = static_cast<long long>(b * kvh);
    const long long max_splits = std::max<long long>(1, cdiv(static_cast<long long>(skv), 256));
    const long long splits = std::clamp<long long>(cdiv(2LL * gpu.sm.count, groups), 1, max_splits);
    const double chunk = std::ceil(skv / static_cast<double>(splits));
    KernelDesc d;
    d.block = 128;
    d.registers = 128;
    const int tkv = 64;
    d.shared_bytes = 2.0 * 2 * tkv * dh * e + rows * dh * e;
    d.grid = groups * splits;
    d.flops_tensor = 4.0 * rows * chunk * dh;
    d.tensor_precision = prec;
    d.flops_fp32 = 4.0 * group * sq * chunk;
    d.sfu_ops = group * sq * chunk;
    d.bytes_read = 2.0 * chunk * dh * e + group * sq * dh * e;
    d.bytes_written = splits > 1 ? group * sq * (dh + 1) * 4.0 : group * sq * dh * e;
    d.elem_bytes = static_cast<int>(e);
    d.inflight_bytes_per_block = 2.0 * 2 * tkv * dh * e;
    // The K/V stream is read once, contiguous per head: HBM's read-stream rate, like a membw
    // read (validate/data/h200/attention_sweep1: batch 64 over 64K keys reads 17 GB at 4.53 TB/s,
    // membw reads of 1-3 GB 4.5).
    d.direction_rates = true;
    d.name = fmt::format("flash_decode splitkv={}", splits);
    p.kernels.push_back({d, 1});
    if (splits > 1) {
      // The combine reads every split's fp32 partial in parallel (a thread per partial element,
      // then a reduction across the splits), not a loop over the splits per output element.
      const double partials = b * h * sq * dh * static_cast<double>(splits);
      p.kernels.push_back({streaming(gpu, "flash_decode_combine", partials, 4.0,
                                     e / static_cast<double>(splits), 3.0, 1.0, 4, 1),
                           1});
    }
    p.detail["split_kv"] = splits;
    p.detail["rows_padded"] = rows;
    p.detail["chunk"] = chunk;
    return p;
  }

  // The forward kernel as cuDNN runs it on Hopper (PyTorch's SDPA; the kernel names of
  // validate/data/h200/attention_sweep1 give its warpgroup tile, 64 queries x 128 keys x the head
  // dimension padded to 64, 128 or 256): a CTA of two consumer warpgroups takes 128 queries of
  // one (batch, head) and walks their keys a 128-key tile at a time, one CTA per SM (its shared
  // memory). The exponentials of a tile's scores wait for its QK^T MMAs and the PV MMAs for the
  // exponentials, and the two warpgroups do not hide one's behind the other's, so a tile costs
  // its MMAs plus its exponentials on the SFU (KernelDesc::sfu_serial): why head_dim 64 reaches
  // ~75% of head_dim 128's FLOP rate and 256 ~110%. head_dim 80 and 96 pay for 128; 2-64 queries
  // pay for 128 (a 16-query chunk over 4096 keys takes what a 128-query one does).
  const int tq = 128;
  const int tkv = 128;
  const double dpad = dh <= 64 ? 64.0 : dh <= 128 ? 128.0 : std::ceil(dh / 128.0) * 128.0;
  const double q_tiles = std::ceil(sq / tq);
  const double heads_per_kv = h / kvh;
  // The GEMM's large-tile tensor efficiency at this precision, times the attention factor.
  const double gemm_eff = prec == hw::Precision::kFp8    ? kp.tensor_fp8
                          : prec == hw::Precision::kFp16 ? kp.tensor_fp16
                                                         : kp.tensor_bf16;
  auto fwd = [&] {
    KernelDesc d;
    d.block = 384;
    d.registers = 168;
    // K and V tiles double-buffered; one stage of each at head_dim 256 (the shared memory).
    const double stages = dpad > 128 ? 1.0 : 2.0;
    d.shared_bytes = tq * dpad * e + stages * 2 * tkv * dpad * e;
    // Key tiles each query tile walks: all of them, or under a causal mask those up to its last
    // query (the mask aligned to the end of the keys, as SDPA's is_causal for seq_q <= seq_kv).
    const long long nq = static_cast<long long>(q_tiles);
    const long long kt_all = cdiv(static_cast<long long>(skv), tkv);
    auto tiles_of = [&](long long i) {
      if (!causal) return kt_all;
      const long long last = std::min<long long>(static_cast<long long>(skv),
                                                 (i + 1) * tq + static_cast<long long>(skv - sq));
      return std::max<long long>(1, cdiv(std::max<long long>(last, 1), tkv));
    };
    // The SMs take the CTAs in launch order, each the next as it frees (one CTA per SM): the
    // kernel lasts as long as its busiest SM, which in a causal kernel of few waves is well past
    // the average (a wave of 128 CTAs of 1-16 tiles lasts 16 tiles, not 8.5). Priced as one
    // block per SM carrying the busiest SM's tiles.
    const long long ctas = static_cast<long long>(b * h) * nq;
    const long long sms = gpu.sm.count;
    std::vector<long long> tiles(static_cast<size_t>(nq));
    double total = 0;
    for (long long i = 0; i < nq; ++i) total += static_cast<double>(tiles[i] = tiles_of(i));
    total *= b * h;
    const long long longest = tiles.empty() ? 0 : tiles.back();  // the last query tile sees most
    double busiest = 0;
    if (!causal) {
      busiest = static_cast<double>(cdiv(ctas, sms) * kt_all);
    } else if (ctas <= 64 * sms) {
      std::priority_queue<long long, std::vector<long long>, std::greater<>> free_at(
          std::greater<>{}, std::vector<long long>(static_cast<size_t>(sms), 0));
      long long end = 0;
      for (long long c = 0; c < ctas; ++c) {
        const long long t = free_at.top() + tiles[c % nq];
        free_at.pop();
        free_at.push(t);
        end = std::max(end, t);
      }
      busiest = static_cast<double>(end);
    } else {
      // Many CTAs a SM: the average plus half the longest CTA (within Graham's bound).
      busiest = total / static_cast<double>(sms) + 0.5 * static_cast<double>(longest);
    }
    const double keys = busiest * tkv;  // per SM
    // The busiest SM's CTAs each pay their start and finish (attention_cta_overhead).
    d.overhead_s = static_cast<double>(cdiv(ctas, sms)) * gpu.param("attention_cta_overhead");
    d.grid = std::min<long long>(ctas, sms);
    d.flops_tensor = 4.0 * tq * keys * dpad;
    d.tensor_precision = prec;
    d.tensor_efficiency = gemm_eff * kp.attention_fwd_efficiency;
    d.flops_fp32 = 4.0 * tq * keys;  // scale, running max, subtract, sum
    d.sfu_ops = tq * keys;           // exp
    d.sfu_serial = true;
    d.tma_loads = true;
    const double ctas_per_sm = static_cast<double>(ctas) / static_cast<double>(d.grid);
    d.bytes_read = ctas_per_sm * tq * dh * e + 2.0 * keys * dh * e;
    d.bytes_written = ctas_per_sm * (tq * dh * e + tq * 4.0);  // O and the log-sum-exp
    d.elem_bytes = static_cast<int>(e);
    d.unique_read_bytes = q_bytes + 2 * kv_bytes;
    const double slots = static_cast<double>(sms);
    const double kv_groups_in_flight = std::ceil(slots / (q_tiles * heads_per_kv));
    d.reuse_working_set = std::min(d.unique_read_bytes, kv_groups_in_flight * 2.0 * skv * dh * e);
    d.inflight_bytes_per_block = 2.0 * 2 * tkv * dh * e;
    d.name = fmt::format("flash_fwd {}x{} hd{}{}", tq, tkv, static_cast<int>(dpad),
                         causal ? " causal" : "");
    p.detail["fwd_tiles_busiest_sm"] = busiest;
    p.detail["fwd_tiles_average_sm"] = total / static_cast<double>(sms);
    return d;
  };
  auto bwd = [&] {
    // Preprocess: D = rowsum(dO * O); then a block per (batch, head, key tile) walking the queries,
    // dQ accumulated in fp32 with atomics (FA2 sec. 3.2).
    const double rows = b * h * sq;
    p.kernels.push_back({streaming(gpu, "flash_bwd_preprocess", rows * dh, 2 * e, 4.0 / dh, 2, 0,
                                   static_cast<int>(e), 1),
                         1});
    KernelDesc d;
    const int tk = 128;
    d.block = 256;
    d.registers = 168;
    d.shared_bytes = std::min(gpu.sm.max_shared_memory_per_block - 1024,
                              2.0 * tk * dh * e + 2.0 * 2 * 64 * dh * e + 64 * dh * 4.0);
    const double k_tiles = std::ceil(skv / tk);
    d.grid = static_cast<long long>(b * h * k_tiles);
    const double queries = std::max(1.0, std::ceil(sq * frac / 64) * 64);
    // The head dimension padded as the forward's (cuDNN's backward tiles are 64 x 64 x 64, 128
    // or 256), and the recomputed exponentials serial with the MMAs as there.
    d.flops_tensor = 2.5 * 4.0 * tk * queries * dpad;
    d.tensor_precision = prec;
    d.tensor_efficiency = gemm_eff * kp.attention_bwd_efficiency;
    d.flops_fp32 = 6.0 * tk * queries;
    d.sfu_ops = tk * queries;
    d.sfu_serial = true;
    d.tma_loads = true;
    d.bytes_read = 2.0 * tk * dh * e + queries * (3.0 * dh * e + 8.0);  // K, V; Q, dO, O, lse, D
    d.bytes_written = 2.0 * tk * dh * e + queries * dh * 4.0;           // dK, dV; dQ atomics
    d.elem_bytes = static_cast<int>(e);
    d.unique_read_bytes = 3 * q_bytes + 2 * kv_bytes;
    d.reuse_working_set = std::min(d.unique_read_bytes,
                                   3 * q_bytes / std::max(1.0, b * h) * std::ceil(132.0 / k_tiles));
    d.inflight_bytes_per_block = 2.0 * 2 * 64 * dh * e;
    d.name = fmt::format("flash_bwd {}x64 hd{}{}", tk, dh, causal ? " causal" : "");
    p.kernels.push_back({d, 1});
    // dQ, accumulated in fp32, converted to the input's type (cuDNN convert_dq_to_16bits); with
    // grouped K/V heads, each query head's fp32 dK and dV summed over its group (fmha_reduce_head).
    p.kernels.push_back({streaming(gpu, "flash_bwd_convert_dq", rows * dh, 4, e, 1, 0, 4, 1), 1});
    if (kvh < h) {
      const double kv_elems = b * h * skv * dh;
      for (const char* which : {"flash_bwd_reduce_dk", "flash_bwd_reduce_dv"})
        p.kernels.push_back({streaming(gpu, which, kv_elems, 4, e * kvh / h, 1, 0, 4, 1), 1});
    }
  };
  if (pass == "fwd" || pass == "fwd_bwd") p.kernels.push_back({fwd(), 1});
  if (pass == "bwd" || pass == "fwd_bwd") bwd();
  p.detail["tile_q"] = tq;
  p.detail["tile_kv"] = tkv;
  p.detail["causal_fraction"] = frac;
  return p;
}

}  // namespace

void set_gemm_search_pruning(bool enabled) {
  gemm_pruning().store(enabled, std::memory_order_relaxed);
}

OpPlan plan_op(const hw::GpuSpec& gpu, const KernelParams& kp, const OpSpec& op, bool with_detail) {
  // Compared as string_view: lengths first, so the kinds before this op's cost no memcmp.
  const std::string_view k = op.kind();
  if (k == "gemm") {
    GemmShape g = gemm_shape(op);
    g.persistent = g.tensor && persistent_gemms(gpu);
    g.cublas = true;
    if (g.persistent && g.precision == hw::Precision::kFp8)
      g.epilogue_s_per_elem = gpu.param("gemm_fp8_tile_epilogue") / (128.0 * 128.0);
    // cuBLAS runs a gemv kernel (cuBLASLt algo 13) only for fp32 and tf32 at m = 1; m = 2..8 run
    // tiled kernels (algos 10, 11, 43) like m = 16, and the tensor-core precisions use tiles
    // (64x8, 128x8) at every m (validate/data/h200/gemm.json, library.algo_id and tile).
    if (g.in_bytes >= 4 && std::min(g.m, g.n) <= 1) {
      // A matrix-vector product, streaming the matrix once with vector loads.
      const double rows = std::min(g.m, g.n), big = std::max(g.m, g.n) * g.k * g.batch;
      OpPlan p;
      p.kernels.push_back({streaming(gpu, "gemv", big, g.in_bytes, g.out_bytes * rows / g.k,
                                     2 * rows, 0, static_cast<int>(g.in_bytes), 1),
                           1});
      p.detail["gemv"] = true;
      return p;
    }
    const double align_k = row_alignment(g.k, g.in_bytes),
                 align_c = row_alignment(g.n, g.out_bytes);
    const double align = std::min(align_k, align_c);
    if (g.persistent && align < 16) {
      g.persistent = false;
      g.tensor_scale = unaligned_tensor_scale(gpu, kp, align_k, align_c);
      if (with_detail) {
        OpPlan p = plan_gemm(gpu, kp, g, with_detail);
        p.detail["row_alignment_bytes"] = align;
        return p;
      }
    }
    return plan_gemm(gpu, kp, g, with_detail);
  }
  if (k == "conv2d") {
    const double nb = op.f("batch"), h = op.f("h"), w = op.f("w"), ci = op.f("c_in");
    const double co = op.f("c_out"), r = op.f("r"), s = op.f("s"), st = op.f("stride");
    const double pad = op.f("pad");
    const double ho = std::floor((h + 2 * pad - r) / st) + 1,
                 wo = std::floor((w + 2 * pad - s) / st) + 1;
    const std::string& dt = op.s("dtype");
    const double e = dtype_bytes(dt);
    // cuDNN runs fp32 convolutions as TF32 by default (PyTorch allow_tf32 for cuDNN is on).
    GemmShape g{nb * ho * wo,
                co,
                ci * r * s,
                1,
                e,
                e,
                dt == "fp32" ? hw::Precision::kTf32 : gemm_precision(dt),
                true,
                0};
    g.unique_read = (nb * h * w * ci + co * r * s * ci) * e;
    OpPlan p = plan_gemm(gpu, kp, g);
    for (auto& pk : p.kernels) pk.desc.name = "implicit_" + pk.desc.name;
    p.detail["gemm_m"] = g.m;
    p.detail["gemm_n"] = g.n;
    p.detail["gemm_k"] = g.k;
    return p;
  }
  if (k == "elementwise") {
    const std::string& f = op.s("op");
    const int e = static_cast<int>(dtype_bytes(op.s("dtype")));
    const double inputs = (f == "add" || f == "mul") ? 2 : 1;
    // FP32 instructions per element, each one issue slot (two FLOPs of the vector peak, which
    // counts an FMA as two): exact GELU 0.5 a (1 + erff(a / sqrt 2)) about 20 (erff's polynomial
    // and its exp branch, 3 multiplies and an add), SiLU a / (1 + expf(-a)) about 17 (expf's range
    // reduction, the add, IEEE division's reciprocal and Newton step), add / mul / relu 1, copy 0;
    // plus the MUFU exponential (sfu) of both. 16-bit types convert each input element to fp32
    // (1 instruction) and pack two results per instruction (0.5). The counts are the line through
    // kernels.json's bf16 gelu and silu at 2^28 elements, the two elementwise records that the
    // issue rate rather than HBM bounds (335.8 and 301.6 us against relu's 276.9): own-set2's bf16
    // gelu and silu ran 19-23% slower than the 4 and 2 instructions the model counted before.
    const double instr = f == "copy" ? 0 : f == "gelu" ? 20 : f == "silu" ? 17 : 1;
    const double convert = (f == "copy" || e >= 4) ? 0 : inputs + 0.5;
    const double flops = 2 * (instr + convert);
    const double sfu = (f == "gelu" || f == "silu") ? 1 : 0;  // erff's / expf's exponential
    const int stride = static_cast<int>(op.i("stride"));
    KernelDesc d =
        streaming(gpu, "elementwise " + f, op.f("n"), inputs * e, e, flops, sfu, e, stride);
    // Repeated runs over the same buffer sets (`buffers` > 0, as validate/ times a case) find the
    // inputs in L2 when the lines they touch fit, with the output's: L2 keeps 128-byte lines, so
    // a read whose elements lie a line or more apart holds one line per element, however far
    // apart they are (and a footprint larger than L2 read cyclically misses throughout, as for
    // membw). Strided elements 2-4 KiB apart, 131072-262144 of them (16-32 MiB of lines in one
    // 512 MiB-1 GiB buffer), ran 2.3-2.6x faster than HBM allows (validate/data/h200/own-set4);
    // the same gaps over 524288 elements (64 MiB of lines: own-set3, own-set4 768 B) ran from HBM.
    // Strided reads keep a fraction of their lines, l2_sweep_hit_fraction (models/kernel.cpp):
    // own-set5 measured the capacity as a slope from ~25 MiB to ~60 MiB, not a cliff at L2's
    // size. Contiguous reads keep the cliff: membw's 32 MiB single-buffer read runs at the L2 rate
    // (validate/data/h200/memory.json) and no contiguous record lies between 32 and 64 MiB.
    const long long buffers = op.i("buffers");
    if (buffers > 0) {
      const double gap = static_cast<double>(e) * stride, n = op.f("n");
      const double lines = n * std::min(gap, kL2LineBytes) * inputs;
      const double footprint = static_cast<double>(buffers) * (lines + n * e);
      const double l2 = gpu.memory.l2_size;
      const double hit =
          stride > 1 ? l2_sweep_hit_fraction(footprint, l2) : (footprint <= l2 ? 1.0 : 0.0);
      if (hit >= 1.0) {
        d.unique_read_bytes = 0;
        d.reuse_working_set = 0;
        d.name += " l2-resident";
      } else if (hit >= 1e-3) {  // below a thousandth: from HBM, as before (none measurable)
        // Every read a re-read, with the L2 hit rate the kernel model takes from working set
        // against L2 size (models/kernel.cpp kernel_setup) set to `hit`.
        d.unique_read_bytes = 0;
        d.reuse_working_set = l2 / (hit * sector_amplification(e, stride));
        d.name += fmt::format(" l2-hit{:.2f}", hit);
      }
    }
    // ew_strided_kernel (validate/suite_elementwise.cu) loads one element per thread per
    // grid-stride iteration and its loop is not unrolled: a thread's next load waits for its last,
    // so the kernel takes at least its iteration count times serial_load_latency (a FIT,
    // hw/model_params.cpp), which binds where few bytes move per load (gaps under a sector). Cold
    // reads only: the L2-resident cases above keep their fitted L2 costs.
    if (stride > 1 && d.unique_read_bytes != 0) {
      const double iters = std::ceil(op.f("n") / (static_cast<double>(d.grid) * d.block));
      d.serial_chain_s = iters * gpu.param("serial_load_latency");
    }
    OpPlan p;
    p.kernels.push_back({d, 1});
    return p;
  }
  if (k == "membw") {
    const std::string& kind = op.s("kind");
    const double words = op.f("bytes") / 4;
    KernelDesc d = streaming(gpu, "membw " + kind, words, kind == "write" ? 0 : 4,
                             kind == "read" ? 0 : 4, 0, 0, 4, 1);
    d.direction_rates = true;  // reads and writes alone run faster than mixed (hw/model_params.cpp)
    // Repetitions over one buffer (or a few) find it in L2 when the whole footprint, written lines
    // included, fits: the reads are all hits. A footprint larger than L2 read cyclically misses
    // throughout (LRU evicts each line before its reuse): 64 MiB single-buffer reads run at the
    // rotated rate (validate/data/h200/memory.json). Writes are written back to HBM either way
    // (warm 16 and 32 MiB writes run at the rotated rate, within 10%).
    const double footprint = op.f("bytes") * (kind == "copy" ? 2.0 : 1.0) * op.f("buffers");
    const bool warm = kind != "write" && footprint <= gpu.memory.l2_size;
    if (warm) {
      d.unique_read_bytes = 0;
      d.reuse_working_set = footprint;
      d.name += " l2-resident";
    }
    OpPlan p;
    p.kernels.push_back({d, 1});
    p.detail["l2_resident"] = warm;
    return p;
  }
  if (k == "adamw") {
    // multi_tensor_apply (PyTorch/Apex): 65536-element chunks, one 512-thread block per chunk,
    // at most 320 chunks per launch. ~12 FLOPs and one sqrt per parameter (op_cost).
    const double params = op.f("params"), g = dtype_bytes(op.s("grad_dtype"));
    const long long chunks = std::max<long long>(1, cdiv(op.i("params"), 65536));
    const long long per_launch = 320;
    auto launch_of = [&](long long blocks, double elems) {
      KernelDesc d;
      d.block = 512;
      d.registers = 64;
      d.grid = blocks;
      const double per = elems / static_cast<double>(blocks);
      d.bytes_read = per * (12 + g);
      d.bytes_written = per * 12;
      d.flops_fp32 = per * 12;
      d.sfu_ops = per;
      d.elem_bytes = 4;
      d.name = "multi_tensor_apply adamw";
      return d;
    };
    OpPlan p;
    const long long full = chunks / per_launch, rest = chunks % per_launch;
    const double elems_full = 65536.0 * per_launch;
    if (full > 0) p.kernels.push_back({launch_of(per_launch, elems_full), full});
    if (rest > 0) {
      const double left = std::max(1.0, params - elems_full * static_cast<double>(full));
      p.kernels.push_back({launch_of(rest, left), 1});
    }
    p.detail["chunks"] = chunks;
    p.detail["launches"] = full + (rest > 0);
    return p;
  }
  if (k == "softmax" || k == "layernorm" || k == "rmsnorm") {
    const double rows = op.f("rows"), cols = op.f("cols");
    const int e = static_cast<int>(dtype_bytes(op.s("dtype")));
    const double per = k == "softmax" ? 5 : (k == "layernorm" ? 8 : 4);
    const double weights = (k == "softmax" ? 0 : (k == "layernorm" ? 2 : 1)) * cols * e;
    const double sfu = k == "softmax" ? 1 : 1.0 / cols;
    // Block reductions (validate/suite_rows.cu): softmax's max and sum, layernorm's mean and
    // variance, rmsnorm's sum of squares.
    const int reductions = k == "rmsnorm" ? 1 : 2;
    OpPlan p;
    p.kernels.push_back(
        row_kernel(gpu, std::string(k), rows, cols, e, weights, 0, cols * e, per, sfu, reductions));
    return p;
  }
  if (k == "cross_entropy") {
    const double rows = op.f("rows"), v = op.f("vocab");
    const int e = static_cast<int>(dtype_bytes(op.s("dtype")));
    const bool fwd = op.s("pass") == "fwd";
    OpPlan p;
    p.kernels.push_back(row_kernel(gpu, std::string("cross_entropy ") + (fwd ? "fwd" : "bwd"), rows,
                                   v, e, 0, 8, fwd ? 4.0 : v * e, 5, 1, 2));
    return p;
  }
  if (k == "embedding") {
    const double t = op.f("tokens"), dim = op.f("dim"), vocab = op.f("vocab");
    const int e = static_cast<int>(dtype_bytes(op.s("dtype")));
    OpPlan p;
    if (op.s("pass") == "fwd") {
      // index_select: rows gathered whole (coalesced); repeated tokens hit in L2.
      KernelDesc d = streaming(gpu, "embedding gather", t * dim, e + 8.0 / dim, e, 0, 0, e, 1);
      d.unique_read_bytes = std::min(t, vocab) * dim * e + t * 8;
      d.reuse_working_set = vocab * dim * e;
      p.kernels.push_back({d, 1});
    } else {
      // embedding_dense_backward: zero the fp32 table gradient, then scatter-add the rows.
      p.kernels.push_back(
          {streaming(gpu, "embedding grad zero", vocab * dim, 0, 4, 0, 0, 4, 1), 1});
      KernelDesc d =
          streaming(gpu, "embedding scatter_add", t * dim, e + 4 + 8.0 / dim, 4, 1, 0, 4, 1);
      p.kernels.push_back({d, 1});
    }
    return p;
  }
  if (k == "attention") return plan_attention(gpu, kp, op);
  if (k == "custom") {
    KernelDesc d;
    d.grid = op.i("grid");
    d.block = static_cast<int>(op.i("block"));
    d.registers = static_cast<int>(op.i("registers"));
    d.shared_bytes = op.f("shared_bytes");
    const double g = static_cast<double>(d.grid);
    d.flops_tensor = op.f("flops_tensor") / g;
    d.tensor_precision = gemm_precision(op.s("tensor_dtype"));
    d.flops_fp32 = op.f("flops_fp32") / g;
    d.flops_fp64 = op.f("flops_fp64") / g;
    d.sfu_ops = op.f("sfu_ops") / g;
    d.bytes_read = op.f("bytes_read") / g;
    d.bytes_written = op.f("bytes_written") / g;
    d.elem_bytes = 4;
    d.stride = static_cast<int>(op.i("stride"));
    d.unique_read_bytes = op.f("bytes_read") / op.f("reuse");
    // A tensor the kernel before wrote is still in L2 when it fits there (a sequential re-read of
    // a larger one finds its start evicted: no hits, as LRU gives a scan larger than the cache).
    if (op.f("just_written") <= gpu.memory.l2_size) d.l2_resident_read_bytes = op.f("just_written");
    d.ilp = static_cast<int>(op.i("ilp"));
    // In flight per block: each warp's `ilp` requests of 32 x load_bytes (the default, 16-byte
    // vector loads, is the model's 512 bytes per request).
    const long long load_bytes = op.i("load_bytes");
    if (load_bytes != 16) {
      d.inflight_bytes_per_block =
          static_cast<double>((d.block + 31) / 32) * d.ilp * 32.0 * static_cast<double>(load_bytes);
    }
    d.name = "custom";
    OpPlan p;
    p.kernels.push_back({d, 1});
    return p;
  }
  if (k == "copy") {
    OpPlan p;
    p.kind = OpPlan::Kind::kCopy;
    p.copy_bytes = op.f("bytes");
    const std::string& dir = op.s("direction");
    if (dir == "d2d") {
      // A device copy reads and writes every byte through HBM, at the driver copy's own rate
      // (copy_d2d_gain, hw/model_params.cpp).
      p.copy_bytes *= 2;
      p.copy_bandwidth = gpu.memory.hbm_bandwidth * kp.hbm_efficiency * gpu.param("copy_d2d_gain");
    } else {
      p.copy_pcie = true;
      const double link = gpu.interconnect.pcie_bandwidth;
      const double pinned = link * kp.pcie_efficiency_pinned;
      // Pageable copies run at the fitted pageable efficiencies. A staging copy priced from a
      // probe of the host's one-thread memcpy, in series with the pinned DMA, was refuted by
      // own-set3 (validate/data/h200/own-set3: the probe's memcpy ran at about 6 GB/s while the
      // driver's pageable d2h copies reached 15.5 GB/s; the fitted rates were within 2% on both
      // directions' medians): the driver's staging is not one thread's memcpy.
      if (op.s("memory") == "pinned") {
        p.copy_bandwidth = pinned;
      } else if (dir == "d2h") {
        // Pageable d2h: the host copies each staged chunk out only once its DMA has completed, so
        // the first chunk's transfer and that wait come before any host copy (a start-up, FIT;
        // hw/model_params.cpp pageable_d2h_startup).
        const double bytes = op.f("bytes"), rate = link * kp.pcie_efficiency_pageable_d2h;
        const double t = gpu.param("pageable_d2h_startup") + bytes / rate;
        p.copy_bandwidth = bytes > 0 ? bytes / t : rate;
      } else {
        // Pageable h2d: staged by a host copy that reads the source. A benchmark (or a loop)
        // copies the same buffer again and again: a cyclic sweep, which an LRU-like host cache
        // keeps whole while it fits (host_cache_bytes) and loses whole once it does not (each
        // line is evicted before its next use). So the whole copy runs at the cached rate or the
        // whole copy at the DRAM rate, never a cached prefix (hw/model_params.cpp).
        const double bytes = op.f("bytes");
        p.copy_bandwidth = link * (bytes <= gpu.param("host_cache_bytes")
                                       ? gpu.param("pcie_efficiency_pageable_cached")
                                       : gpu.param("pcie_efficiency_pageable_uncached"));
      }
    }
    p.detail["engine"] = "copy";
    p.detail["direction"] = dir;
    return p;
  }
  if (k == "launch") {
    OpPlan p;
    p.kind = OpPlan::Kind::kLaunch;
    p.launch_kind = op.s("kind");
    p.launch_count = op.i("kernels");
    return p;
  }
  throw std::invalid_argument("op library: no kernels for op '" + std::string(k) + "'");
}

}  // namespace ridge::models
