#include "models/op_framework.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "models/kernel.hpp"
#include "models/launch.hpp"
#include "models/occupancy.hpp"

namespace ridge::models {
namespace {

using P = ParamType;
constexpr double kBig = 9.007199254740992e15;
const std::vector<std::string_view> kDtypes = {"fp32", "fp16", "bf16"};

constexpr double kRefHbm = 4.8e12;            // H200 datasheet HBM bandwidth
constexpr double kRefSmClock = 132 * 1.98e9;  // H200 SMs x boost clock

struct Ctx {
  const hw::GpuSpec& gpu;
  FwParams p;
  double bw_scale = 1, rate_scale = 1;
  double sms = 132;
  double sm_clock_hz = 1.98e9;
};

Ctx make_ctx(const hw::GpuSpec& gpu, const FwParams& params) {
  Ctx c{gpu, params};
  c.sms = gpu.sm.count;
  if (gpu.memory.hbm_bandwidth > 0) c.bw_scale = gpu.memory.hbm_bandwidth / kRefHbm;
  const double clock = gpu.clocks.boost_hz > 0 ? gpu.clocks.boost_hz : 1.98e9;
  c.sm_clock_hz = clock;
  c.rate_scale = gpu.sm.count * clock / kRefSmClock;
  return c;
}

int blocks_per_sm(const Ctx& c, int threads, int regs, double smem) {
  const Occupancy o = occupancy(c.gpu.sm, {threads, regs, smem, -1});
  return std::max(1, o.blocks_per_sm);
}

// ---- kernel builders ----------------------------------------------------------------------------

// A vectorised streaming kernel (vectorized_elementwise_kernel, FillFunctor, casts, cat): the
// larger of its bytes at `bw` and its arithmetic at `cpe` issue cycles per element per SM.
FrameworkKernel stream(const Ctx& c, std::string name, double elems, double bytes, double bw,
                       double cpe = 0) {
  FrameworkKernel k;
  k.name = std::move(name);
  k.block = 128;
  k.grid = std::max(1.0, std::ceil(elems / 512));
  k.hbm_bytes = bytes;
  k.fp32_instr = elems * cpe * 128;  // thread-instructions: 128 lanes issue per SM cycle
  const double t_mem = bytes / (bw * c.bw_scale);
  const double active_sms = std::min(c.sms, k.grid);
  const double t_alu = elems * cpe / (c.sm_clock_hz * active_sms);
  k.time_s = c.p.t0_s + std::max(t_mem, t_alu);
  k.bound = t_alu > t_mem ? "compute" : "hbm";
  return k;
}

// A non-vectorised loop (unrolled_elementwise_kernel or elementwise_kernel<128, n> with offset
// calculators): elements at unrolled_rate, scattered 32-byte sectors at sector_bw, bytes at the
// streaming bandwidth; the largest sets the time.
FrameworkKernel unrolled(const Ctx& c, std::string name, double elems, double bytes,
                         double sector_bytes = 0) {
  FrameworkKernel k;
  k.name = std::move(name);
  k.block = 128;
  k.grid = std::max(1.0, std::ceil(elems / 512));
  k.hbm_bytes = bytes;
  k.l2_bytes = sector_bytes;
  const double t_el = elems / (c.p.unrolled_rate * c.rate_scale);
  const double t_mem = bytes / (c.p.stream_bw * c.bw_scale);
  const double t_sec = sector_bytes / (c.p.sector_bw * c.bw_scale);
  k.time_s = c.p.t0_s + std::max({t_el, t_mem, t_sec});
  k.bound = t_sec >= std::max(t_el, t_mem) ? "l2" : (t_el >= t_mem ? "compute" : "hbm");
  return k;
}

// (v3) elementwise_kernel<128, vt> copying through offset calculators (gpu_kernel_impl_nocast,
// direct_copy_kernel): each of elems / vt threads (vt = 4 elements of 2 bytes, 2 of 4 bytes)
// computes its offsets and copies its elements (v4: one cost an element); sectors and bytes at
// their bandwidths; the largest sets the time.
FrameworkKernel direct_copy(const Ctx& c, std::string name, double elems, double e, double bytes,
                            double sector_bytes) {
  FrameworkKernel k;
  k.name = std::move(name);
  k.block = 128;
  const double vt = e >= 4 ? 2 : 4;
  k.grid = std::max(1.0, std::ceil(elems / (128 * vt)));
  k.hbm_bytes = bytes;
  k.l2_bytes = sector_bytes;
  const double t_el = elems * c.p.copy_elem_s / c.rate_scale;
  const double t_mem = bytes / (c.p.stream_bw * c.bw_scale);
  const double t_sec = sector_bytes / (c.p.sector_bw * c.bw_scale);
  k.time_s = c.p.t0_s + std::max({t_el, t_mem, t_sec});
  k.bound = t_sec >= std::max(t_el, t_mem) ? "l2" : (t_el >= t_mem ? "compute" : "hbm");
  return k;
}

FrameworkKernel tiny(const Ctx& c, std::string name, double elems, double elem_bytes) {
  return stream(c, std::move(name), elems, 2 * elems * elem_bytes, c.p.stream_bw);
}

// A block-per-row kernel walking its row in rounds: time = waves x (base + rounds x latency), with
// the latency of a round from Little's law over the bytes all resident blocks keep in flight.
FrameworkKernel row_chain(const Ctx& c, std::string name, double rows, int block, int regs,
                          double smem, double row_bytes, int passes, double arrays_in_flight,
                          double traffic) {
  FrameworkKernel k;
  k.name = std::move(name);
  k.grid = std::max(1.0, rows);
  k.block = block;
  k.blocks_per_sm = blocks_per_sm(c, block, regs, smem);
  k.hbm_bytes = traffic;
  const double slots = c.sms * k.blocks_per_sm;
  const double concurrent = std::min(k.grid, slots);
  const double round_bytes = block * 16.0;
  k.inflight_bytes = round_bytes * arrays_in_flight;
  const double latency = std::max(
      c.p.row_latency_min_s, concurrent * k.inflight_bytes / (c.p.row_latency_bw * c.bw_scale));
  const double rounds = passes * std::ceil(row_bytes / round_bytes);
  const double per_block = c.p.row_block_base_s / c.rate_scale + rounds * latency;
  const double waves = std::max(1.0, k.grid / slots);
  k.time_s = c.p.t0_s + waves * per_block;
  k.bound = "latency";
  return k;
}

double clock_scale(const Ctx& c) {
  return c.sm_clock_hz / 1.98e9;
}

// Warps resident on an SM for a kernel of `threads`-thread blocks (models/occupancy).
double warps_resident(const Ctx& c, int threads, int regs, double smem) {
  return blocks_per_sm(c, threads, regs, smem) * std::ceil(threads / 32.0);
}

// Registers per thread of softmax_warp_forward and _backward by next_pow2(cols), as the profiler
// recorded them on the H200 (sets 1-3; 128 columns was not measured: between 64 and 256).
int warp_regs(bool fwd, double np2) {
  if (!fwd) return np2 <= 256 ? 32 : (np2 <= 512 ? 55 : 96);
  if (np2 <= 32) return 19;
  if (np2 <= 64) return 23;
  if (np2 <= 128) return 26;
  if (np2 <= 256) return 30;
  if (np2 <= 512) return 32;
  return np2 <= 1024 ? 48 : 80;
}

// softmax_warp_forward / _backward (SoftMax.cu dispatch_softmax_forward): 128-thread blocks; a
// logical warp of min(next_pow2(cols), 32) lanes handles WARP_BATCH rows (2 when next_pow2(cols)
// <= 128), the row in registers. (v3) Issue-bound: each hardware warp costs its SM a task cost
// plus, per element a lane walks, an issue cost and the latency the SM's resident warps leave
// exposed (latency / W); never faster than its bytes at the streaming bandwidth.
FrameworkKernel warp_softmax(const Ctx& c, bool fwd, double rows, double cols, double bytes) {
  FrameworkKernel k;
  k.name = fwd ? "softmax_warp_forward" : "softmax_warp_backward";
  k.block = 128;
  const double np2 = std::exp2(std::ceil(std::log2(std::max(1.0, cols))));
  const double lanes = std::min(np2, 32.0);
  const double batch = np2 <= 128 ? 2 : 1;
  const double hw_warps = std::ceil(rows / (batch * 32 / lanes));
  k.grid = std::max(1.0, std::ceil(hw_warps / 4));
  k.hbm_bytes = bytes;
  const double w = warps_resident(c, 128, warp_regs(fwd, np2), 0);
  k.blocks_per_sm = static_cast<int>(w / 4);
  const double w_eff = std::clamp(hw_warps / c.sms, 1.0, w);
  const double n = batch * cols / lanes;  // elements a lane walks
  const double per_warp =
      fwd ? c.p.warp_fwd_task_s + n * (c.p.warp_fwd_issue_s + c.p.warp_fwd_latency_s / w_eff)
          : n * (c.p.warp_bwd_issue_s + c.p.warp_bwd_latency_s / w_eff);
  const double t_el = hw_warps / c.sms * per_warp / clock_scale(c);
  const double t_mem = bytes / (c.p.stream_bw * c.bw_scale);
  k.time_s = c.p.t0_s + std::max(t_el, t_mem);
  k.bound = t_el > t_mem ? "compute" : "hbm";
  return k;
}

// (v3) A 1024-thread block-per-row softmax forward kernel bound by its SM's issue: each SM walks
// its share of the rows (one row at least: rows below the SM count leave SMs idle) at
// issue + latency / W per element, W = the block's warps x resident blocks; never faster than
// `traffic` at `bw`.
FrameworkKernel row_issue(const Ctx& c, std::string name, double rows, double cols, int regs,
                          double smem, double issue_s, double latency_s, double traffic,
                          double bw) {
  FrameworkKernel k;
  k.name = std::move(name);
  k.grid = std::max(1.0, rows);
  k.block = 1024;
  k.blocks_per_sm = blocks_per_sm(c, 1024, regs, smem);
  k.hbm_bytes = traffic;
  const double w = k.blocks_per_sm * 32.0;
  const double per_sm_rows = std::max(1.0, rows / c.sms);
  const double t_el = per_sm_rows * cols * (issue_s + latency_s / w) / clock_scale(c);
  const double t_mem = traffic / (bw * c.bw_scale);
  k.time_s = c.p.t0_s + std::max(t_el, t_mem);
  k.bound = t_el > t_mem ? "compute" : "hbm";
  return k;
}

FrameworkKernel single_block(const Ctx& c, std::string name, double rows, double iter_s,
                             double sm_bytes_per_s = 0) {
  FrameworkKernel k;
  k.name = std::move(name);
  k.grid = 1;
  // nll_loss launches rows/16 threads, clamped to [32, 1024] (64, 128, 256 threads at 1024, 2048,
  // 4096 rows in the traces); each thread walks its rows one dependent gather at a time.
  const double threads =
      std::clamp(std::exp2(std::ceil(std::log2(std::max(1.0, rows / 16)))), 32.0, 1024.0);
  k.block = static_cast<int>(threads);
  k.hbm_bytes = rows * 12;  // int64 target + fp32 value
  const double iters = std::ceil(rows / threads);
  // (v2) One SM serves the whole block: an iteration's requests (per warp 8 sectors of int64
  // targets and 32 scattered sectors of values: 40 B a thread) drain at the SM's own rate.
  const double drain = sm_bytes_per_s > 0 ? threads * 40.0 / (sm_bytes_per_s * c.rate_scale) : 0;
  k.time_s = c.p.t0_s + iters * std::max(iter_s, drain);
  k.bound = "latency";
  return k;
}

// ---- op kernel lists ----------------------------------------------------------------------------

int ilp_of(double e) {
  return static_cast<int>(16 / e);
}

// Softmax or log_softmax forward over the last dimension (SoftMax.cu host_softmax): a warp per row
// up to 2048 columns (and 8 KiB); above, a 1024-thread block per row: the row in registers up to
// 8192 columns (cunn_SoftMaxForwardReg), in shared memory when it fits the default 48 KiB
// (cunn_SoftMaxForwardSmem), else three passes over global memory (cunn_SoftMaxForward: max,
// sum of exp, normalise and write).
void softmax_fwd(const Ctx& c, std::vector<FrameworkKernel>& out, double rows, double cols,
                 double e) {
  const double row = cols * e, n = rows * cols;
  if (cols <= 2048 && row <= 8192) {
    out.push_back(warp_softmax(c, true, rows, cols, 2 * n * e));
  } else if (cols <= 8192) {
    // 29-30 registers up to 6144 columns (two blocks an SM), 37 at 8192 (one): the profiler.
    const int regs = cols <= 6144 ? 30 : 37;
    out.push_back(row_issue(c, "cunn_SoftMaxForwardReg", rows, cols, regs, 128, c.p.reg_issue_s,
                            c.p.reg_latency_s, 2 * n * e, c.p.stream_bw));
  } else if (row <= 48 * 1024 - 128 && std::fmod(cols, ilp_of(e)) == 0) {
    out.push_back(row_issue(c, "cunn_SoftMaxForwardSmem", rows, cols, 32, row + 128,
                            c.p.smem_issue_s, 0.0, 2 * n * e, c.p.stream_bw));
  } else {
    // Max, sum of exp, then normalise and write: the two re-reads hit L2 for the fraction of
    // the rows in flight that l2_reread_fraction of L2 holds, and come from HBM otherwise.
    const int bps = blocks_per_sm(c, 1024, 32, 128);
    const double in_flight = std::min(rows, c.sms * bps) * row;
    const double hit = std::min(1.0, c.p.l2_reread_fraction * c.gpu.memory.l2_size / in_flight);
    const double traffic = (2 + 2 * (1 - hit)) * n * e;
    out.push_back(row_issue(c, "cunn_SoftMaxForward", rows, cols, 32, 128, c.p.plain_issue_s, 0.0,
                            traffic, c.p.plain_hbm_bw));
  }
}

// Backward (host_softmax_backward): a warp per row up to 1024 columns; else a block per row of
// min(512, cols / (2 x 16 B / elem)) threads, from shared memory when the row fits (two passes:
// the sum, then the gradient), else cunn_SoftMaxBackward reading grad and output (two arrays in
// flight) in two passes. Softmax (not log) first multiplies grad by the output (an elementwise
// kernel).
void softmax_bwd(const Ctx& c, std::vector<FrameworkKernel>& out, double rows, double cols,
                 double e, bool log) {
  const double row = cols * e, n = rows * cols;
  if (!log)
    out.push_back(stream(c, "vectorized_elementwise_kernel mul", n, 3 * n * e, c.p.stream_bw));
  if (cols <= 1024 && row <= 4096) {
    out.push_back(warp_softmax(c, false, rows, cols, 3 * n * e));
    return;
  }
  const int ilp = ilp_of(e);
  const int block = static_cast<int>(
      std::clamp(std::exp2(std::ceil(std::log2(std::max(1.0, cols / (2.0 * ilp))))), 32.0, 512.0));
  if (row <= 48 * 1024 - 64 && std::fmod(cols, ilp) == 0) {
    out.push_back(
        row_chain(c, "cunn_SoftMaxBackwardSmem", rows, block, 29, row + 64, row, 2, 1, 3 * n * e));
  } else {
    out.push_back(
        row_chain(c, "cunn_SoftMaxBackward", rows, block, 56, 2048, row, 2, 2, 4 * n * e));
  }
}

void nll_fwd(const Ctx& c, std::vector<FrameworkKernel>& out, double rows, bool after_softmax) {
  out.push_back(single_block(c, "nll_loss_forward_reduce_cuda_kernel_2d", rows,
                             after_softmax ? c.p.nll_fwd_iter_s : c.p.nll_fwd_alone_iter_s,
                             c.p.nll_sm_bytes_per_s));
}

void nll_bwd(const Ctx& c, std::vector<FrameworkKernel>& out, double rows, double vocab, double e) {
  out.push_back(stream(c, "vectorized_elementwise_kernel FillFunctor (zero grad)", rows * vocab,
                       rows * vocab * e, c.p.write_bw));
  out.push_back(
      single_block(c, "nll_loss_backward_reduce_cuda_kernel_2d", rows, c.p.nll_bwd_iter_s));
}

// LayerNorm / fused RMSNorm (layer_norm_kernel.cu; nn.RMSNorm runs the same kernels with the
// rms flag in torch >= 2.8): forward vectorized_layer_norm_kernel, a 128-thread block per row;
// backward layer_norm_grad_input_kernel_vectorized (a block per row) and
// GammaBetaBackwardCUDAKernelTemplate (a 32x32 block per 32 columns).
// (v3) A 128-thread block-per-row kernel in two passes over its row, each in rounds of 128
// threads x 4 elements: a block costs `base` plus, per round, the loaded latency l0 + bytes in
// flight on the GPU / bw (+ `extra` a round); the blocks run in waves of the resident slots.
// When the rows in flight exceed keep x L2, the second pass re-reads from HBM: the kernel then
// also needs `spill_passes` x the tensor at spill_bw.
FrameworkKernel two_pass_rows(const Ctx& c, std::string name, double rows, double cols, double e,
                              int regs, double smem, double arrays, double base_s, double l0_s,
                              double bw, double extra_s, double keep, double spill_passes,
                              double spill_bw, double traffic) {
  FrameworkKernel k;
  k.name = std::move(name);
  k.grid = std::max(1.0, rows);
  k.block = 128;
  k.blocks_per_sm = blocks_per_sm(c, 128, regs, smem);
  k.hbm_bytes = traffic;
  const double slots = c.sms * k.blocks_per_sm;
  const double concurrent = std::min(k.grid, slots);
  k.inflight_bytes = 128 * 4 * e * arrays;
  const double latency = l0_s + concurrent * k.inflight_bytes / (bw * c.bw_scale) + extra_s;
  const double rounds = 2 * cols / 512;
  const double waves = std::max(1.0, k.grid / slots);
  k.time_s = c.p.t0_s + waves * (base_s / clock_scale(c) + rounds * latency);
  k.bound = "latency";
  if (concurrent * cols * e * arrays > keep * c.gpu.memory.l2_size) {
    const double t_spill = c.p.t0_s + spill_passes * rows * cols * e / (spill_bw * c.bw_scale);
    if (t_spill > k.time_s) {
      k.time_s = t_spill;
      k.hbm_bytes = spill_passes * rows * cols * e;
      k.bound = "hbm";
    }
  }
  return k;
}

void norm_kernels(const Ctx& c, std::vector<FrameworkKernel>& out, double rows, double cols,
                  double e, bool rms, bool fwd) {
  const double n = rows * cols;
  const auto& p = c.p;
  if (fwd) {
    // 32 registers in bf16 (16 blocks an SM), 39 in fp32 (12): the profiler.
    out.push_back(two_pass_rows(
        c, rms ? "vectorized_layer_norm_kernel<rms>" : "vectorized_layer_norm_kernel", rows, cols,
        e, e == 4 ? 39 : 32, 24, 1, rms ? 0.0 : p.ln_fwd_base_s, p.ln_l0_s, p.ln_bw,
        rms ? 0.0 : p.ln_welford_s, p.l2_keep_fraction, 3, p.ln_spill_bw, 2 * n * e));
    return;
  }
  out.push_back(two_pass_rows(c, "layer_norm_grad_input_kernel_vectorized", rows, cols, e, 32, 16,
                              2, p.lngi_base_s, p.lngi_l0_s, p.lngi_bw, 0, p.lngi_keep_fraction, 5,
                              p.lngi_spill_bw, 3 * n * e));
  FrameworkKernel k;
  k.name = "GammaBetaBackwardCUDAKernelTemplate";
  k.grid = std::max(1.0, std::ceil(cols / 32));
  k.block = 1024;
  k.hbm_bytes = 2 * n * e;
  // (v3) Each block walks all rows, 256 an iteration (8 per thread), for its 32 columns; an
  // iteration waits the loaded latency of the bytes all progressing blocks (one an SM) keep in
  // flight; SMs holding several blocks take them in turn.
  const double progressing = std::min(k.grid, c.sms);
  const double turns = k.grid > c.sms ? k.grid / c.sms : 1.0;
  const double in_flight = progressing * 1024 * 8 * 2 * e;
  const double iter =
      (p.gb_l0_s + in_flight / (p.gb_bw * c.bw_scale)) * (rms ? 1.0 : p.gb_ln_factor);
  k.time_s = p.t0_s + turns * std::ceil(rows / 256) * iter;
  k.bound = "latency";
  out.push_back(k);
}

FrameworkKernel row_reduce(const Ctx& c, double rows, double cols) {
  auto k = stream(c, "reduce_kernel<512,1> (row sum/mean, fp32)", rows * cols, rows * cols * 4,
                  c.p.row_reduce_bw);
  return k;
}

FrameworkKernel column_reduce(const Ctx& c, double rows, double cols, double e) {
  FrameworkKernel k;
  k.name = "reduce_kernel<128,4> (column sum)";
  k.grid = std::ceil(cols / 128);
  k.block = 128;
  k.hbm_bytes = rows * cols * e;
  k.time_s =
      c.p.t0_s + (c.p.column_reduce_base_s + rows * c.p.column_reduce_per_row_s) / c.rate_scale;
  k.bound = "latency";
  return k;
}

// The Hugging Face Llama RMSNorm (x.float(); pow(2).mean(-1); x * rsqrt(var + eps); .to(dtype);
// weight * x) as eager kernels, and its autograd backward (17 kernels in the traces, in order).
void composed_rmsnorm(const Ctx& c, std::vector<FrameworkKernel>& out, double rows, double cols,
                      double e, bool fwd) {
  const double n = rows * cols;
  const bool cast = e != 4;  // fp32 inputs skip the casts
  if (fwd) {
    if (cast)
      out.push_back(unrolled(c, "unrolled_elementwise_kernel copy (to fp32)", n, n * (e + 4)));
    out.push_back(stream(c, "vectorized_elementwise_kernel pow", n, 8 * n, c.p.stream_bw));
    out.push_back(row_reduce(c, rows, cols));
    out.push_back(tiny(c, "vectorized_elementwise_kernel add eps", rows, 4));
    out.push_back(tiny(c, "vectorized_elementwise_kernel rsqrt", rows, 4));
    out.push_back(unrolled(c, "elementwise_kernel<128,2> mul (broadcast)", n, 8 * n));
    if (cast)
      out.push_back(
          stream(c, "vectorized_elementwise_kernel copy (to bf16)", n, n * (4 + e), c.p.stream_bw));
    out.push_back(unrolled(c, "elementwise_kernel<128,4> mul (weight)", n, 2 * n * e));
    return;
  }
  out.push_back(unrolled(c, "elementwise_kernel<128,4> mul (grad x weight)", n, 2 * n * e));
  out.push_back(
      stream(c, "vectorized_elementwise_kernel mul (grad x h)", n, 3 * n * e, c.p.stream_bw));
  FrameworkKernel ms;
  ms.name = "Memset";
  ms.time_s = c.p.memset_s;
  ms.bound = "launch";
  out.push_back(ms);
  out.push_back(column_reduce(c, rows, cols, e));
  if (cast)
    out.push_back(unrolled(c, "unrolled_elementwise_kernel copy (to fp32)", n, n * (e + 4)));
  out.push_back(stream(c, "vectorized_elementwise_kernel mul", n, 12 * n, c.p.stream_bw));
  out.push_back(unrolled(c, "elementwise_kernel<128,2> mul (broadcast)", n, 8 * n));
  out.push_back(row_reduce(c, rows, cols));
  for (const char* nm : {"pow backward", "mul", "mul"}) out.push_back(tiny(c, nm, rows, 4));
  out.push_back(unrolled(c, "elementwise_kernel<128,2> mul (expand)", n, 8 * n));
  FrameworkKernel cp;
  cp.name = "Memcpy DtoD";
  cp.hbm_bytes = 8 * n;
  cp.time_s = c.p.t0_s + 8 * n / (c.p.memcpy_bw * c.bw_scale);
  cp.bound = "hbm";
  out.push_back(cp);
  out.push_back(stream(c, "vectorized_elementwise_kernel mul (2x)", n, 8 * n, c.p.stream_bw));
  out.push_back(stream(c, "vectorized_elementwise_kernel mul", n, 12 * n, c.p.stream_bw));
  out.push_back(stream(c, "vectorized_elementwise_kernel add", n, 12 * n, c.p.stream_bw));
  if (cast)
    out.push_back(
        stream(c, "vectorized_elementwise_kernel copy (to bf16)", n, n * (4 + e), c.p.stream_bw));
}

}  // namespace

// ---- vocabulary ---------------------------------------------------------------------------------

bool is_framework_op(std::string_view kind) {
  return kind.starts_with("torch_");
}

void append_framework_ops(std::vector<OpDecl>& t) {
  const std::vector<std::string_view> pass = {"fwd", "bwd"};
  t.push_back({"torch_softmax",
               "PyTorch softmax or log_softmax over the last dimension (F.softmax, F.log_softmax)",
               {{"rows", P::kInt, "", {}, 1, kBig, ""},
                {"cols", P::kInt, "", {}, 1, kBig, "the reduced dimension"},
                {"dtype", P::kEnum, "bf16", kDtypes, 0, 0, ""},
                {"log", P::kBool, "false", {}, 0, 1, "log_softmax"},
                {"pass", P::kEnum, "fwd", pass, 0, 0, "bwd: the autograd backward alone"}}});
  t.push_back({"torch_nll_loss",
               "PyTorch F.nll_loss over log-probabilities (mean reduction)",
               {{"rows", P::kInt, "", {}, 1, kBig, ""},
                {"vocab", P::kInt, "", {}, 1, kBig, "classes"},
                {"dtype", P::kEnum, "fp32", kDtypes, 0, 0, "log-probability type"},
                {"pass", P::kEnum, "fwd", pass, 0, 0, "bwd: zero the gradient, then scatter"}}});
  t.push_back({"torch_cross_entropy",
               "PyTorch F.cross_entropy(logits.to(loss_dtype), targets): log_softmax + nll_loss",
               {{"rows", P::kInt, "", {}, 1, kBig, ""},
                {"vocab", P::kInt, "", {}, 1, kBig, ""},
                {"logits_dtype", P::kEnum, "fp32", kDtypes, 0, 0, "dtype the logits arrive in"},
                {"loss_dtype", P::kEnum, "fp32", kDtypes, 0, 0,
                 "dtype the loss is computed in (a cast kernel each way when it differs)"},
                {"pass", P::kEnum, "fwd", pass, 0, 0, ""}}});
  t.push_back({"torch_layernorm",
               "PyTorch F.layer_norm over the last dimension with weight and bias",
               {{"rows", P::kInt, "", {}, 1, kBig, ""},
                {"cols", P::kInt, "", {}, 1, kBig, ""},
                {"dtype", P::kEnum, "bf16", kDtypes, 0, 0, ""},
                {"pass", P::kEnum, "fwd", pass, 0, 0, "bwd: input, weight and bias gradients"}}});
  t.push_back(
      {"torch_rmsnorm",
       "RMSNorm: nn.RMSNorm (fused kernels, torch >= 2.8) or the composed Hugging Face form",
       {{"rows", P::kInt, "", {}, 1, kBig, ""},
        {"cols", P::kInt, "", {}, 1, kBig, ""},
        {"dtype", P::kEnum, "bf16", kDtypes, 0, 0, ""},
        {"impl",
         P::kEnum,
         "fused",
         {"fused", "composed"},
         0,
         0,
         "fused: nn.RMSNorm; composed: x.float(), pow, mean, rsqrt, mul, cast, weight"},
        {"pass", P::kEnum, "fwd", pass, 0, 0, "bwd: input and weight gradients"}}});
  t.push_back({"torch_gelu",
               "PyTorch F.gelu over n elements",
               {{"n", P::kInt, "", {}, 1, kBig, "elements"},
                {"dtype", P::kEnum, "bf16", kDtypes, 0, 0, ""},
                {"approximate", P::kEnum, "none", {"none", "tanh"}, 0, 0, "none: exact (erf)"},
                {"pass", P::kEnum, "fwd", pass, 0, 0, ""}}});
  t.push_back(
      {"torch_transpose_copy",
       "x.view(outer, a, b, inner).transpose(1, 2).contiguous() (e.g. [B,S,H,D] -> [B,H,S,D])",
       {{"outer", P::kInt, "1", {}, 1, kBig, ""},
        {"a", P::kInt, "", {}, 1, kBig, ""},
        {"b", P::kInt, "", {}, 1, kBig, ""},
        {"inner", P::kInt, "1", {}, 1, kBig, "contiguous run kept together"},
        {"dtype", P::kEnum, "bf16", kDtypes, 0, 0, ""}}});
  t.push_back({"torch_cat",
               "torch.cat of equal rows x cols pieces, or split's backward (the same kernel)",
               {{"pieces", P::kInt, "", {}, 1, 1 << 20, ""},
                {"rows", P::kInt, "", {}, 1, kBig, "rows of each piece"},
                {"cols", P::kInt, "", {}, 1, kBig, "columns of each piece"},
                {"dim", P::kEnum, "rows", {"rows", "cols"}, 0, 0, "the dimension joined"},
                {"dtype", P::kEnum, "bf16", kDtypes, 0, 0, ""},
                {"via",
                 P::kEnum,
                 "cat",
                 {"cat", "split_bwd"},
                 0,
                 0,
                 "split_bwd: the gradient of torch.split (a cat of the pieces' gradients)"}}});
  t.push_back({"torch_strided_copy",
               "x[::stride].contiguous(): a copy reading every stride-th element",
               {{"n", P::kInt, "", {}, 1, kBig, "elements written"},
                {"stride", P::kInt, "2", {}, 1, 1 << 20, "element stride of the reads"},
                {"dtype", P::kEnum, "fp32", kDtypes, 0, 0, ""}}});
}

OpCost framework_op_cost(const OpSpec& op) {
  OpCost c;
  const std::string_view k = op.kind();
  auto bwd = [&] { return op.s("pass") == "bwd"; };
  if (k == "torch_softmax") {
    const double n = op.f("rows") * op.f("cols"), e = dtype_bytes(op.s("dtype"));
    c.flops = 5 * n;
    c.bytes_read = (bwd() ? 2 : 1) * n * e;
    c.bytes_written = n * e;
  } else if (k == "torch_nll_loss") {
    const double r = op.f("rows"), e = dtype_bytes(op.s("dtype"));
    c.flops = r;
    c.bytes_read = r * (8 + e);
    c.bytes_written = bwd() ? r * op.f("vocab") * e : 4;
  } else if (k == "torch_cross_entropy") {
    const double n = op.f("rows") * op.f("vocab"), e = dtype_bytes(op.s("logits_dtype"));
    c.flops = 5 * n;
    c.bytes_read = n * e + op.f("rows") * 8;
    c.bytes_written = bwd() ? n * e : 4;
  } else if (k == "torch_layernorm" || k == "torch_rmsnorm") {
    const double n = op.f("rows") * op.f("cols"), e = dtype_bytes(op.s("dtype"));
    c.flops = (k == "torch_layernorm" ? 8 : 4) * n * (bwd() ? 2 : 1);
    c.bytes_read = (bwd() ? 2 : 1) * n * e;
    c.bytes_written = n * e;
  } else if (k == "torch_gelu") {
    const double n = op.f("n"), e = dtype_bytes(op.s("dtype"));
    c.flops = (bwd() ? 16 : 8) * n;
    c.bytes_read = (bwd() ? 2 : 1) * n * e;
    c.bytes_written = n * e;
  } else if (k == "torch_transpose_copy") {
    const double n = op.f("outer") * op.f("a") * op.f("b") * op.f("inner");
    c.bytes_read = c.bytes_written = n * dtype_bytes(op.s("dtype"));
  } else if (k == "torch_cat") {
    const double n = op.f("pieces") * op.f("rows") * op.f("cols");
    c.bytes_read = c.bytes_written = n * dtype_bytes(op.s("dtype"));
  } else if (k == "torch_strided_copy") {
    const double n = op.f("n");
    c.bytes_read = c.bytes_written = n * dtype_bytes(op.s("dtype"));
  } else {
    throw std::invalid_argument("framework op cost: unknown op '" + std::string(k) + "'");
  }
  c.min_bytes = c.bytes_read + c.bytes_written;
  return c;
}

std::vector<FrameworkKernel> framework_kernels(const hw::GpuSpec& gpu, const OpSpec& op) {
  return framework_kernels(gpu, op, FwParams{});
}

std::vector<FrameworkKernel> framework_kernels(const hw::GpuSpec& gpu, const OpSpec& op,
                                               const FwParams& params) {
  const Ctx c = make_ctx(gpu, params);
  std::vector<FrameworkKernel> out;
  const std::string_view k = op.kind();
  if (k == "torch_softmax") {
    const double rows = op.f("rows"), cols = op.f("cols"), e = dtype_bytes(op.s("dtype"));
    if (op.s("pass") == "fwd")
      softmax_fwd(c, out, rows, cols, e);
    else
      softmax_bwd(c, out, rows, cols, e, op.b("log"));
  } else if (k == "torch_nll_loss") {
    if (op.s("pass") == "fwd")
      nll_fwd(c, out, op.f("rows"), false);
    else
      nll_bwd(c, out, op.f("rows"), op.f("vocab"), dtype_bytes(op.s("dtype")));
  } else if (k == "torch_cross_entropy") {
    const double rows = op.f("rows"), v = op.f("vocab"), n = rows * v;
    const double el = dtype_bytes(op.s("logits_dtype")), es = dtype_bytes(op.s("loss_dtype"));
    const bool cast = op.s("logits_dtype") != op.s("loss_dtype");
    if (op.s("pass") == "fwd") {
      // A widening cast runs the non-vectorised direct copy; a narrowing one the vectorised copy.
      if (cast) {
        if (es > el)
          out.push_back(
              unrolled(c, "unrolled_elementwise_kernel copy (logits cast)", n, n * (el + es)));
        else
          out.push_back(stream(c, "vectorized_elementwise_kernel copy (logits cast)", n,
                               n * (el + es), c.p.stream_bw));
      }
      softmax_fwd(c, out, rows, v, es);
      nll_fwd(c, out, rows, true);
    } else {
      nll_bwd(c, out, rows, v, es);
      softmax_bwd(c, out, rows, v, es, true);
      if (cast) {
        if (el > es)
          out.push_back(
              unrolled(c, "unrolled_elementwise_kernel copy (grad cast)", n, n * (el + es)));
        else
          out.push_back(stream(c, "vectorized_elementwise_kernel copy (grad cast)", n,
                               n * (el + es), c.p.stream_bw));
      }
    }
  } else if (k == "torch_layernorm") {
    norm_kernels(c, out, op.f("rows"), op.f("cols"), dtype_bytes(op.s("dtype")), false,
                 op.s("pass") == "fwd");
  } else if (k == "torch_rmsnorm") {
    const double e = dtype_bytes(op.s("dtype"));
    if (op.s("impl") == "fused")
      norm_kernels(c, out, op.f("rows"), op.f("cols"), e, true, op.s("pass") == "fwd");
    else
      composed_rmsnorm(c, out, op.f("rows"), op.f("cols"), e, op.s("pass") == "fwd");
  } else if (k == "torch_gelu") {
    const double n = op.f("n"), e = dtype_bytes(op.s("dtype"));
    const bool fwd = op.s("pass") == "fwd", exact = op.s("approximate") == "none";
    const double cpe = fwd ? (exact ? c.p.gelu_exact_fwd_cpe : c.p.gelu_tanh_fwd_cpe)
                           : (exact ? c.p.gelu_exact_bwd_cpe : c.p.gelu_tanh_bwd_cpe);
    out.push_back(stream(c,
                         fwd ? "vectorized_elementwise_kernel GeluCUDAKernelImpl"
                             : "vectorized_elementwise_kernel GeluBackwardCUDAKernelImpl",
                         n, (fwd ? 2 : 3) * n * e, c.p.stream_bw, cpe));
  } else if (k == "torch_transpose_copy") {
    const double inner = op.f("inner"), e = dtype_bytes(op.s("dtype"));
    const double n = op.f("outer") * op.f("a") * op.f("b") * inner;
    // Each contiguous run of `inner` elements is read in whole 32-byte sectors; runs shorter
    // than a sector waste the rest of it (the L2 keeps the sector for the neighbouring output
    // rows, so HBM sees the bytes once).
    const double run = inner * e;
    const double sectors = n / inner * std::ceil(run / 32) * 32;
    out.push_back(direct_copy(c, "elementwise_kernel<128,vt> direct_copy (transpose)", n, e,
                              2 * n * e, sectors + n * e));
  } else if (k == "torch_cat") {
    const double n = op.f("pieces") * op.f("rows") * op.f("cols"), e = dtype_bytes(op.s("dtype"));
    out.push_back(stream(c, "CatArrayBatchedCopy_vectorized", n, 2 * n * e, c.p.cat_bw));
  } else if (k == "torch_strided_copy") {
    const double n = op.f("n"), s = op.f("stride"), e = dtype_bytes(op.s("dtype"));
    // Per element read: a 32-byte sector between L2 and the SM at most, and (v2) up to a 64-byte
    // DRAM access from HBM (fp32 stride 16, set 2: 513 us for 32 Mi elements, half the rate of a
    // 32-byte sector).
    const double sector = std::min(32.0, s * e), dram = std::min(64.0, s * e);
    // (v3) TensorIterator halves a copy until every piece's largest input offset fits 32-bit
    // indexing (<= 2^31 - 1 bytes), one kernel a piece (set 3: fp32 stride 32 over 32 Mi elements
    // ran as two kernels of 301 us).
    int pieces = 1;
    while ((n / pieces - 1) * s * e > 2147483647.0 && pieces < (1 << 20)) pieces *= 2;
    for (int i = 0; i < pieces; ++i) {
      const double m = n / pieces;
      out.push_back(direct_copy(c, "elementwise_kernel<128,vt> direct_copy (strided)", m, e,
                                m * (e + dram), m * (sector + e)));
    }
  } else {
    throw std::invalid_argument("framework ops: unknown op '" + std::string(k) + "'");
  }
  return out;
}

// ---- parameter table ----------------------------------------------------------------------------

const std::vector<FwParamDecl>& framework_param_table() {
  using F = FwParams;
  static const std::vector<FwParamDecl> t = {
      {"t0_s", &F::t0_s, "every kernel (fixed duration)"},
      {"stream_bw", &F::stream_bw, "vectorised elementwise, casts, floors of the SIMT kernels"},
      {"write_bw", &F::write_bw, "FillFunctor (nll_loss backward)"},
      {"cat_bw", &F::cat_bw, "CatArrayBatchedCopy_vectorized"},
      {"row_reduce_bw", &F::row_reduce_bw, "reduce_kernel<512,1> (composed RMSNorm)"},
      {"memcpy_bw", &F::memcpy_bw, "Memcpy DtoD (composed RMSNorm backward)"},
      {"sector_bw", &F::sector_bw, "unrolled / direct copies (sectors)"},
      {"unrolled_rate", &F::unrolled_rate,
       "unrolled_elementwise_kernel, elementwise_kernel<128,2>"},
      {"row_latency_min_s", &F::row_latency_min_s, "cunn_SoftMaxBackward{,Smem}", false},
      {"row_latency_bw", &F::row_latency_bw, "cunn_SoftMaxBackward{,Smem}"},
      {"row_block_base_s", &F::row_block_base_s, "cunn_SoftMaxBackward{,Smem}"},
      {"warp_fwd_task_s", &F::warp_fwd_task_s, "softmax_warp_forward"},
      {"warp_fwd_issue_s", &F::warp_fwd_issue_s, "softmax_warp_forward"},
      {"warp_fwd_latency_s", &F::warp_fwd_latency_s, "softmax_warp_forward"},
      {"warp_bwd_issue_s", &F::warp_bwd_issue_s, "softmax_warp_backward"},
      {"warp_bwd_latency_s", &F::warp_bwd_latency_s, "softmax_warp_backward"},
      {"reg_issue_s", &F::reg_issue_s, "cunn_SoftMaxForwardReg"},
      {"reg_latency_s", &F::reg_latency_s, "cunn_SoftMaxForwardReg"},
      {"smem_issue_s", &F::smem_issue_s, "cunn_SoftMaxForwardSmem"},
      {"plain_issue_s", &F::plain_issue_s, "cunn_SoftMaxForward"},
      {"l2_reread_fraction", &F::l2_reread_fraction, "cunn_SoftMaxForward (fp32)"},
      {"plain_hbm_bw", &F::plain_hbm_bw, "cunn_SoftMaxForward (fp32)"},
      {"ln_fwd_base_s", &F::ln_fwd_base_s, "vectorized_layer_norm_kernel (LayerNorm)"},
      {"ln_l0_s", &F::ln_l0_s, "vectorized_layer_norm_kernel"},
      {"ln_bw", &F::ln_bw, "vectorized_layer_norm_kernel"},
      {"ln_welford_s", &F::ln_welford_s, "vectorized_layer_norm_kernel (LayerNorm)"},
      {"ln_spill_bw", &F::ln_spill_bw, "vectorized_layer_norm_kernel (rows past L2)"},
      {"l2_keep_fraction", &F::l2_keep_fraction, "vectorized_layer_norm_kernel (spill threshold)"},
      {"lngi_base_s", &F::lngi_base_s, "layer_norm_grad_input_kernel_vectorized"},
      {"lngi_l0_s", &F::lngi_l0_s, "layer_norm_grad_input_kernel_vectorized"},
      {"lngi_bw", &F::lngi_bw, "layer_norm_grad_input_kernel_vectorized"},
      {"lngi_spill_bw", &F::lngi_spill_bw, "layer_norm_grad_input_kernel_vectorized (past L2)"},
      {"lngi_keep_fraction", &F::lngi_keep_fraction,
       "layer_norm_grad_input_kernel_vectorized (spill threshold)"},
      {"gb_l0_s", &F::gb_l0_s, "GammaBetaBackwardCUDAKernelTemplate"},
      {"gb_bw", &F::gb_bw, "GammaBetaBackwardCUDAKernelTemplate"},
      {"gb_ln_factor", &F::gb_ln_factor, "GammaBetaBackwardCUDAKernelTemplate (LayerNorm)"},
      {"copy_elem_s", &F::copy_elem_s, "elementwise_kernel<128,vt> direct copies"},
      {"column_reduce_base_s", &F::column_reduce_base_s, "reduce_kernel<128,4> (column sum)"},
      {"column_reduce_per_row_s", &F::column_reduce_per_row_s, "reduce_kernel<128,4> (column sum)"},
      {"nll_fwd_iter_s", &F::nll_fwd_iter_s, "nll_loss forward (after log_softmax)"},
      {"nll_fwd_alone_iter_s", &F::nll_fwd_alone_iter_s, "nll_loss forward (alone)"},
      {"nll_bwd_iter_s", &F::nll_bwd_iter_s, "nll_loss backward"},
      {"nll_sm_bytes_per_s", &F::nll_sm_bytes_per_s, "nll_loss forward (1024 threads)"},
      {"gelu_exact_fwd_cpe", &F::gelu_exact_fwd_cpe, "GELU exact forward"},
      {"gelu_tanh_fwd_cpe", &F::gelu_tanh_fwd_cpe, "GELU tanh forward"},
      {"gelu_exact_bwd_cpe", &F::gelu_exact_bwd_cpe, "GELU exact backward"},
      {"gelu_tanh_bwd_cpe", &F::gelu_tanh_bwd_cpe, "GELU tanh backward"},
      {"memset_s", &F::memset_s, "Memset (composed RMSNorm backward)"},
  };
  return t;
}

KernelPrediction predict_framework_op(const hw::GpuSpec& gpu, const OpSpec& op, Mode mode,
                                      Timing timing) {
  const std::vector<FrameworkKernel> ks = framework_kernels(gpu, op);
  const OpCost cost = framework_op_cost(op);
  const KernelParams kp = kernel_params(gpu);
  KernelPrediction p;
  p.flops = cost.flops;
  std::vector<LaunchedWork> work;
  nlohmann::json kernels = nlohmann::json::array();
  double sum = 0, longest = -1;
  for (const auto& k : ks) {
    sum += k.time_s;
    p.hbm_bytes += k.hbm_bytes;
    p.l2_bytes += k.l2_bytes;
    work.push_back({k.time_s, 1});
    kernels.push_back({{"name", k.name},
                       {"grid", k.grid},
                       {"block", k.block},
                       {"time_s", k.time_s},
                       {"bound", k.bound}});
    if (k.time_s > longest) {
      longest = k.time_s;
      p.kernel_name = k.name;
      p.grid = static_cast<long long>(k.grid);
      p.block = k.block;
      p.bound = k.bound;
    }
  }
  // `kernel` timing is the sum of the kernels' durations (what the profiler reports per call,
  // validate/torch); `per_call` lines them up behind the host's eager issue (models/launch).
  const LaunchTiming lt = line_up(kp, work, Issue::kEager);
  p.kernels = static_cast<int>(ks.size());
  p.kernel_time_s = sum;
  p.per_call_time_s = std::max(sum, lt.per_call_s);
  p.time_s = timing == Timing::kKernel ? p.kernel_time_s : p.per_call_time_s;
  p.waves = 1;
  if (p.time_s > 0) {
    p.achieved_flops_per_s = p.flops / p.time_s;
    p.achieved_bytes_per_s = p.hbm_bytes / p.time_s;
  }
  p.roof_fraction = p.achieved_bytes_per_s / gpu.memory.hbm_bandwidth;
  p.detail["kernels"] = std::move(kernels);
  p.detail["mode"] = mode_name(mode);
  p.detail["model"] = "framework ops (models/op_framework): one closed form in both modes";
  return p;
}

}  // namespace ridge::models
