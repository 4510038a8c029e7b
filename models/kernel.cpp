#include "models/kernel.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <string_view>

#include "hw/model_params.hpp"

namespace ridge::models {

int sectors_per_request(int elem_bytes, int stride) {
  const long long span = 32LL * std::max(1, elem_bytes) * std::max(1, stride);
  return static_cast<int>(std::min<long long>(32, (span + 31) / 32));
}

double sector_amplification(int elem_bytes, int stride) {
  return static_cast<double>(sectors_per_request(elem_bytes, stride)) /
         sectors_per_request(elem_bytes, 1);
}

double hbm_atom_amplification(int elem_bytes, int stride, double atom_bytes) {
  // HBM bytes per element read, over the one 32-byte sector L2 asks for. Contiguous streams use
  // every byte of each atom (neighbouring requests take the rest). Elements an atom or more apart
  // each cost a whole atom. Elements between a sector and an atom apart touch every atom of the
  // span they cover, so HBM moves the whole span, the gap per element: 48-byte gaps (fp32 stride
  // 12, bf16 stride 24) move 1.5 sectors per element (own-set1: both ran 26-28% slower than the
  // one-sector-per-element figure).
  const double gap = static_cast<double>(std::max(1, elem_bytes)) * std::max(1, stride);
  if (gap <= 32.0) return 1.0;
  return std::max(1.0, std::min(gap, atom_bytes) / 32.0);
}

double hbm_row_spread(int elem_bytes, int stride, double atom_bytes) {
  // Elements further apart than an atom each cost a whole atom (hbm_atom_amplification), and
  // each atom costs more the further apart they lie: fewer of them share a DRAM row (one
  // activation serves fewer atoms) and, with gaps of a power of two, they fall on fewer of the
  // channels the address hash spreads a stream over. The records show the cost per atom rising
  // as (gap / atom)^0.22: against the 64-byte gap's, 1.10-1.18 at 128 bytes (kernels.json fp32
  // stride 32, own-set1 bf16 stride 64), 1.16 at 160, 1.23-1.25 at 192 (own-set1 fp32 stride 48,
  // own-set2 bf16 stride 96) and 1.58 at 512 (own-set2 fp32 stride 128: the case own-set2 missed
  // by 37%); the model gives 1.165, 1.22, 1.27 and 1.58. Past 16 atoms (1 KiB) it stops rising:
  // an HBM3 pseudo channel's page (row) is 1 KiB (JEDEC JESD238), so elements a page or more
  // apart take one activation each however far apart they are. The cap is a fit as well as a
  // page: 2 KiB (32 atoms) before own-set5, whose seven cold cases at 1.5-12 KiB gaps (66-130 MiB
  // of lines, validate/data/h200/own-set5) ran 10-12% faster than it, flat across the gaps; at 16
  // atoms they are within 3% (validate/prereg/own-set5/strided_table.py).
  constexpr double kExponent = 0.22;
  constexpr double kPageAtoms = 16;  // 1 KiB HBM3 page over 64-byte atoms
  const double gap = static_cast<double>(std::max(1, elem_bytes)) * std::max(1, stride);
  if (atom_bytes <= 0 || gap <= atom_bytes) return 1.0;
  return std::pow(std::min(gap, kPageAtoms * atom_bytes) / atom_bytes, kExponent);
}

double l2_sweep_hit_fraction(double footprint_bytes, double l2_bytes) {
  // Repeated runs sweep the same lines in the same order. L2 is set-associative with a hashed set
  // index, so the lines fall on sets as balls on bins: lambda = lines / sets per set on average,
  // Poisson-distributed. A set given more lines than it has ways, swept cyclically under LRU,
  // evicts each line before its next use and misses all of them; a set within its ways hits all
  // of them. The fraction of lines that hit is E[k; k <= W] / E[k] = P(Poisson(lambda) <= W - 1).
  // The two figures are fits, not sources: W = 8 ways and 74% of the reported L2 (44.4 MiB of
  // the H200's 60) as the capacity the sweep sees, least squares on log time over the 21
  // strided records with buffer sets and 16-132 MiB of touched lines (validate/data/h200
  // own-set3 5, own-set4 5, own-set5 11 records; validate/prereg/own-set5/README.md: W = 4, 16,
  // 32 fit worse, the one published figure, 16 ways for H100, is an estimate). The measured hit
  // fraction falls from 1 at 16 MiB through ~0.8 at 25-33 MiB and ~0.4 at 48-50 MiB to ~0.1 at
  // 58 MiB and none at 65 MiB and up; the capacity below the reported size is where the two L2
  // partitions' copies of far lines, reserved lines or a coarser hash would show, not separated
  // by these records.
  constexpr int kWays = 8;
  constexpr double kUsable = 0.74;
  if (footprint_bytes <= 0) return 1.0;
  if (l2_bytes <= 0) return 0.0;
  const double lambda = kWays * footprint_bytes / (kUsable * l2_bytes);
  double term = std::exp(-lambda), sum = term;
  for (int k = 1; k < kWays; ++k) {
    term *= lambda / k;
    sum += term;
  }
  return std::min(1.0, sum);
}

namespace {

double tensor_peak(const hw::GpuSpec& gpu, hw::Precision p) {
  auto it = gpu.compute.tensor_dense.find(p);
  if (it != gpu.compute.tensor_dense.end() && it->second > 0) return it->second;
  // Chips without this tensor precision run it at the next wider one (as models/roofline does).
  return gpu.matmul_peak(hw::Precision::kFp16);
}

double vector_peak(const hw::GpuSpec& gpu, hw::Precision p) {
  auto it = gpu.compute.vector.find(p);
  if (it != gpu.compute.vector.end() && it->second > 0) return it->second;
  return gpu.compute.vector.at(hw::Precision::kFp32);
}

double tensor_efficiency(const KernelParams& k, hw::Precision p) {
  switch (p) {
    case hw::Precision::kTf32:
      return k.tensor_tf32;
    case hw::Precision::kFp16:
      return k.tensor_fp16;
    case hw::Precision::kFp8:
    case hw::Precision::kFp4:
    case hw::Precision::kInt8:
      return k.tensor_fp8;
    default:
      return k.tensor_bf16;
  }
}

struct BlockCompute {
  double tensor_s, simt_s, compute_s;
};

// One block alone on an SM: tensor work overlaps the SIMT work; SIMT pipes share issue and add up.
BlockCompute block_compute(const hw::GpuSpec& gpu, const KernelParams& k, const KernelDesc& d) {
  BlockCompute c;
  const double sms = std::max(1, gpu.sm.count);
  const double t_eff =
      d.tensor_efficiency >= 0 ? d.tensor_efficiency : tensor_efficiency(k, d.tensor_precision);
  const double v_eff = d.simt_efficiency >= 0 ? d.simt_efficiency : k.vector_efficiency;
  c.tensor_s = d.flops_tensor > 0
                   ? d.flops_tensor / (tensor_peak(gpu, d.tensor_precision) / sms * t_eff)
                   : 0;
  double simt = 0;
  if (d.flops_fp32 > 0)
    simt += d.flops_fp32 / (vector_peak(gpu, hw::Precision::kFp32) / sms * v_eff);
  if (d.flops_fp64 > 0)
    simt += d.flops_fp64 / (vector_peak(gpu, hw::Precision::kFp64) / sms * v_eff);
  // The SFU's time at its issue rate (one result a lane a cycle per quarter-SM).
  const double sfu = d.sfu_ops > 0 && gpu.compute.special_function > 0
                         ? d.sfu_ops / (gpu.compute.special_function / sms)
                         : 0.0;
  simt += sfu / v_eff;
  c.simt_s = simt;
  // Serial SFU work (KernelDesc::sfu_serial) adds to the tensor work at that rate (no efficiency
  // factor); the FP32 pipe still overlaps.
  c.compute_s = std::max(d.sfu_serial ? c.tensor_s + sfu : c.tensor_s, c.simt_s);
  return c;
}

// Each KernelParams field and the model parameter it holds, sorted by name once so that one merge
// walk over the GPU's (sorted) overlay map resolves them all: gpu.param() per field cost a string,
// a map lookup and a linear search of the declarations, 26 times per prediction.
struct ParamSlot {
  std::string_view name;
  double KernelParams::*field;
};
using ParamSlots = std::array<ParamSlot, 33>;

const ParamSlots& param_slots() {
  static const ParamSlots slots = [] {
    ParamSlots t = {
        {{"hbm_efficiency", &KernelParams::hbm_efficiency},
         {"l2_efficiency", &KernelParams::l2_efficiency},
         {"hbm_latency", &KernelParams::hbm_latency},
         {"l2_latency", &KernelParams::l2_latency},
         {"max_inflight_bytes_per_sm", &KernelParams::max_inflight_bytes_per_sm},
         {"loads_in_flight_per_warp", &KernelParams::loads_in_flight_per_warp},
         {"sm_l2_bytes_per_cycle", &KernelParams::sm_l2_bytes_per_cycle},
         {"vector_efficiency", &KernelParams::vector_efficiency},
         {"simt_efficiency_fp32", &KernelParams::simt_efficiency_fp32},
         {"simt_tile_staging", &KernelParams::simt_tile_staging},
         {"tensor_efficiency_fp16", &KernelParams::tensor_fp16},
         {"tensor_efficiency_bf16", &KernelParams::tensor_bf16},
         {"tensor_efficiency_tf32", &KernelParams::tensor_tf32},
         {"tensor_efficiency_fp8", &KernelParams::tensor_fp8},
         {"gemm_tile_overhead", &KernelParams::gemm_tile_overhead},
         {"gemm_unaligned_tensor_fraction", &KernelParams::gemm_unaligned_tensor_fraction},
         {"kernel_startup", &KernelParams::kernel_startup},
         {"kernel_gap", &KernelParams::kernel_gap},
         {"graph_kernel_gap", &KernelParams::graph_kernel_gap},
         {"hbm_access_bytes", &KernelParams::hbm_access_bytes},
         {"host_launch_cuda", &KernelParams::host_launch_cuda},
         {"host_launch_eager", &KernelParams::host_launch_eager},
         {"graph_launch_per_kernel", &KernelParams::graph_launch_per_kernel},
         {"queued_kernel_period", &KernelParams::queued_kernel_period},
         {"queued_first_kernel", &KernelParams::queued_first_kernel},
         {"graph_node_period", &KernelParams::graph_node_period},
         {"graph_replay_first", &KernelParams::graph_replay_first},
         {"pcie_efficiency_pinned", &KernelParams::pcie_efficiency_pinned},
         {"pcie_efficiency_pageable_d2h", &KernelParams::pcie_efficiency_pageable_d2h},
         {"copy_latency", &KernelParams::copy_latency},
         {"block_dispatch", &KernelParams::block_dispatch},
         {"attention_fwd_efficiency", &KernelParams::attention_fwd_efficiency},
         {"attention_bwd_efficiency", &KernelParams::attention_bwd_efficiency}}};
    // std::map<std::string, ...> orders its keys as string_view's operator< does.
    std::sort(t.begin(), t.end(),
              [](const ParamSlot& a, const ParamSlot& b) { return a.name < b.name; });
    return t;
  }();
  return slots;
}

// The declared defaults (gpu.param's answer for a name the overlay lacks).
const KernelParams& param_defaults() {
  static const KernelParams defaults = [] {
    KernelParams k;
    for (const ParamSlot& p : param_slots()) {
      const hw::ModelParamDecl* d = hw::find_model_param(p.name);
      k.*p.field = d ? d->fallback : 0.0;
    }
    return k;
  }();
  return defaults;
}

}  // namespace

KernelParams kernel_params(const hw::GpuSpec& g) {
  // Equal to g.param(name) for every field: the overlay's value where it has the name, else the
  // declared default.
  KernelParams k = param_defaults();
  const ParamSlots& slots = param_slots();
  auto it = g.model.begin();
  size_t i = 0;
  while (it != g.model.end() && i < slots.size()) {
    const int c = std::string_view(it->first).compare(slots[i].name);
    if (c < 0) {
      ++it;
    } else if (c > 0) {
      ++i;
    } else {
      k.*slots[i].field = it->second;
      ++it;
      ++i;
    }
  }
  return k;
}

double hbm_read_ramp_s(const hw::GpuSpec& gpu, double hbm_read_bytes) {
  // A read stream that starts with the memory pipeline empty runs below the full rate until about
  // hbm_read_ramp_bytes have been requested; the time lost grows with the bytes read up to
  // hbm_read_ramp (both FITS, hw/model_params.cpp). Writes land in L2 and are written back behind
  // the kernel, so they pay no ramp.
  const double w = gpu.param("hbm_read_ramp_bytes");
  if (hbm_read_bytes <= 0 || w <= 0) return 0.0;
  return gpu.param("hbm_read_ramp") * std::min(1.0, hbm_read_bytes / w);
}

double block_compute_s(const hw::GpuSpec& gpu, const KernelParams& k, const KernelDesc& d) {
  return block_compute(gpu, k, d).compute_s;
}

double KernelSetup::block_cap(int n) const {
  n = std::max(1, n);
  const double inflight = std::min(inflight_per_block, max_inflight_per_sm / n);
  return inflight / latency_s;
}

KernelSetup kernel_setup(const hw::GpuSpec& gpu, const KernelParams& k, const KernelDesc& d) {
  return kernel_setup(gpu, k, d, occupancy(gpu.sm, {d.block, d.registers, d.shared_bytes, -1}));
}

KernelSetup kernel_setup(const hw::GpuSpec& gpu, const KernelParams& k, const KernelDesc& d,
                         const Occupancy& occ) {
  KernelSetup s;
  s.desc = d;
  s.sms = gpu.sm.count;
  s.occupancy = occ;
  if (!s.occupancy.error.empty() || s.occupancy.blocks_per_sm < 1) {
    throw std::invalid_argument(
        fmt::format("kernel '{}' cannot launch on {}: {}", d.name, gpu.name,
                    s.occupancy.error.empty() ? "0 blocks fit on an SM" : s.occupancy.error));
  }
  s.blocks_per_sm = s.occupancy.blocks_per_sm;
  s.slots = static_cast<long long>(s.sms) * s.blocks_per_sm;

  const BlockCompute c = block_compute(gpu, k, d);
  s.tensor_s = c.tensor_s;
  s.simt_s = c.simt_s;
  s.compute_s = c.compute_s + d.tile_epilogue_s;

  // Memory traffic per block, in sectors actually moved.
  const double amp = sector_amplification(d.elem_bytes, d.stride);
  const double reads = d.bytes_read * amp, writes = d.bytes_written;
  const double total_reads = static_cast<double>(d.grid) * d.bytes_read * amp;
  const double unique =
      d.unique_read_bytes < 0 ? total_reads : std::min(total_reads, d.unique_read_bytes * amp);
  const double ws = d.reuse_working_set < 0 ? unique : d.reuse_working_set * amp;
  s.l2_hit = ws > 0 ? std::min(1.0, gpu.memory.l2_size / ws) : 1.0;
  // Bytes the kernel before wrote and L2 still holds are first reads that hit.
  const double resident = std::min(unique, d.l2_resident_read_bytes * amp);
  const double hbm_reads_total = (unique - resident) + (total_reads - unique) * (1.0 - s.l2_hit);
  const double read_fraction = total_reads > 0 ? hbm_reads_total / total_reads : 0.0;
  s.l2_bytes = reads + writes;
  // HBM is read in atoms larger than an L2 sector: elements further apart than a sector each cost a
  // whole atom from HBM (twice the sector's bytes for 64-byte atoms).
  const double dram_amp = hbm_atom_amplification(d.elem_bytes, d.stride, k.hbm_access_bytes) *
                          hbm_row_spread(d.elem_bytes, d.stride, k.hbm_access_bytes);
  s.hbm_bytes = reads * read_fraction * dram_amp + writes;  // writes are written back to HBM

  s.l2_latency_s = k.l2_latency;
  s.hbm_latency_s = std::max(k.hbm_latency, s.l2_latency_s);
  // Latency seen by a block's bytes: HBM for misses and writes, L2 for hits (byte-weighted).
  const double fl = s.l2_bytes > 0 ? s.hbm_bytes / s.l2_bytes : 0.0;
  s.latency_s = fl * s.hbm_latency_s + (1 - fl) * s.l2_latency_s;

  const int warps = s.occupancy.warps_per_block;
  const double ilp = d.ilp > 0 ? d.ilp : k.loads_in_flight_per_warp;
  s.inflight_per_block =
      d.inflight_bytes_per_block > 0 ? d.inflight_bytes_per_block : warps * ilp * 512.0;
  s.max_inflight_per_sm = k.max_inflight_bytes_per_sm;
  s.sm_port_bw = k.sm_l2_bytes_per_cycle * gpu.clocks.boost_hz;
  s.l2_bw = gpu.memory.l2_bandwidth * (d.tma_loads ? 1.0 : k.l2_efficiency);
  s.hbm_bw = gpu.memory.hbm_bandwidth * k.hbm_efficiency;
  if (d.direction_rates && s.hbm_bytes > 0) {
    // A stream that only reads, or only writes, runs at its direction's rate; any mix of the two
    // runs at hbm_efficiency's (hw/model_params.cpp hbm_read_stream_gain). "Only" allows 1% of
    // the other direction: a flash-decoding kernel's partial outputs against its K/V stream.
    const double r = s.hbm_bytes - writes;
    if (writes <= 0.01 * s.hbm_bytes) s.hbm_bw *= gpu.param("hbm_read_stream_gain");
    if (r <= 0.01 * s.hbm_bytes) s.hbm_bw *= gpu.param("hbm_write_stream_gain");
  }
  // Row kernels (the only ones with overlapped_waves) start and retire their blocks at
  // row_block_dispatch per block (hw/model_params.cpp), the slope of their short-row records.
  s.block_dispatch_s = d.overlapped_waves ? gpu.param("row_block_dispatch") : k.block_dispatch;
  if (d.read_ramp)
    s.read_ramp_s = hbm_read_ramp_s(gpu, static_cast<double>(d.grid) * reads * read_fraction);
  if (d.serial_chain_s > 0) s.serial_blend = gpu.param("serial_load_blend");
  // The most one SM streams a row block's bytes at: row_sm_stream_share of its share of the
  // datasheet HBM bandwidth (a FIT, hw/model_params.cpp).
  if (d.overlapped_waves)
    s.row_sm_rate = gpu.param("row_sm_stream_share") * gpu.memory.hbm_bandwidth / s.sms;
  return s;
}

KernelEstimate estimate_kernel(const KernelSetup& s) {
  KernelEstimate e;
  const KernelDesc& d = s.desc;
  long long remaining = d.grid;
  // Time charged to each limit, summed over waves, to name the bound.
  double t_compute = 0, t_latency = 0, t_l2 = 0, t_hbm = 0;
  // The latency a wave's first loads wait: HBM's when the kernel reads HBM, else L2's.
  const double mem_latency = s.hbm_bytes > 0 ? s.hbm_latency_s : s.l2_latency_s;
  // A kernel of one wave starts all its blocks together (within n x block_dispatch per SM): they
  // load, reduce and store in step, so no block's transfers cover another's arithmetic.
  const bool lockstep = d.grid <= s.slots;
  auto wave = [&](long long blocks, double count) {
    const int n = static_cast<int>((blocks + s.sms - 1) / s.sms);  // busiest SM, breadth-first
    const double compute = std::max(n, d.full_rate_blocks) * s.compute_s;
    double mem = 0;
    if (s.l2_bytes > 0) {
      const double cap = s.l2_bytes / s.block_cap(n);
      const double port = n * s.l2_bytes / s.sm_port_bw;
      const double l2 = static_cast<double>(blocks) * s.l2_bytes / s.l2_bw;
      const double hbm = static_cast<double>(blocks) * s.hbm_bytes / s.hbm_bw;
      const double lat = d.overlapped_waves ? 0.0 : mem_latency;
      const double top = std::max({cap, port, l2, hbm});
      double busy_mem = top;
      // A chain of dependent loads per thread (serial_chain_s) and the bandwidth bound, each
      // alone a floor, overlap only in part near their crossing: a p-norm of the two (p =
      // serial_load_blend) rather than their max (see hw/model_params.cpp serial_load_latency).
      const bool chained = d.serial_chain_s > 0 && s.serial_blend > 0;
      if (chained) {
        const double p = s.serial_blend;
        busy_mem = std::pow(std::pow(top, p) + std::pow(d.serial_chain_s, p), 1.0 / p);
      }
      mem = busy_mem + lat;
      if (compute < mem) {
        if (chained && d.serial_chain_s >= top)
          t_latency += count * mem;
        else if (top == hbm)
          t_hbm += count * mem;
        else if (top == cap)
          t_latency += count * mem;
        else
          t_l2 += count * mem;
      }
    }
    if (compute >= mem) t_compute += count * compute;
    // The SM launches its n blocks block_dispatch apart: a wave lasts at least that long.
    // A row block loads its row, reduces it and then stores it: its own arithmetic cannot overlap
    // its own transfers. In a one-wave kernel every block does so in step with the others, so
    // the shorter of the two is exposed whole. Over several waves the SMs drift out of phase and
    // HBM is shared: while one SM's blocks reduce, the others' loads take the bandwidth, each SM
    // up to row_sm_rate. What stays exposed is how far the SM's own cycle exceeds the wave's
    // time: its n blocks' bytes at row_sm_rate, or one block's arithmetic and serial chain
    // (row_chain_s) plus its bytes at that rate, whichever is longer.
    double overlap_loss = 0;
    if (d.overlapped_waves && lockstep) {
      overlap_loss = std::min(compute, mem);
    } else if (d.overlapped_waves && s.row_sm_rate > 0) {
      const double own = s.hbm_bytes / s.row_sm_rate;
      const double cycle = std::max(n * own, s.compute_s + d.row_chain_s + own);
      overlap_loss = std::max(0.0, cycle - std::max(compute, mem));
    }
    const double busy = std::max(compute, mem) + overlap_loss, dispatch = n * s.block_dispatch_s;
    if (dispatch > busy) t_latency += count * (dispatch - busy);
    e.compute_s += count * compute;
    e.memory_s += count * mem;
    e.time_s += count * std::max(busy, dispatch) + (d.persistent ? 0.0 : count * d.overhead_s);
  };
  const long long full = remaining / s.slots;
  if (full > 0) wave(s.slots, static_cast<double>(full));
  remaining -= full * s.slots;
  if (remaining > 0) wave(remaining, 1.0);
  // A persistent kernel pays the per-tile overhead once, in its last wave (see KernelDesc).
  if (d.persistent && d.grid > 0) e.time_s += d.overhead_s;
  // Overlapped waves expose the memory latency once (see KernelDesc).
  if (d.overlapped_waves && d.grid > 0 && s.l2_bytes > 0) {
    e.time_s += mem_latency;
    e.memory_s += mem_latency;
  }
  // The first wave's blocks start together, so their serial chain (row_chain_s) runs in step on
  // every SM with nothing to cover it, except the SM's staggered start of its n blocks
  // (block_dispatch apart).
  if (d.overlapped_waves && d.grid > 0 && d.row_chain_s > 0) {
    const long long first = std::min<long long>(d.grid, s.slots);
    const double n = static_cast<double>((first + s.sms - 1) / s.sms);
    e.time_s += std::max(0.0, d.row_chain_s - (n - 1) * s.block_dispatch_s);
  }
  // A cold HBM read stream ramps up once per kernel (see hbm_read_ramp_s).
  if (d.grid > 0 && s.read_ramp_s > 0) {
    e.time_s += s.read_ramp_s;
    e.memory_s += s.read_ramp_s;
  }
  e.waves = static_cast<int>(std::min<long long>(full + (remaining > 0), 1 << 30));
  const double top = std::max({t_compute, t_latency, t_l2, t_hbm});
  e.bound = top == t_compute ? "compute" : top == t_hbm ? "hbm" : top == t_l2 ? "l2" : "latency";
  return e;
}

}  // namespace ridge::models
