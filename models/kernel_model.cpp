#include "models/kernel_model.hpp"

#include "models/op_framework.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <functional>
#include <mutex>
#include <unordered_map>

#include "models/clock_model.hpp"
#include "models/interval.hpp"
#include "models/kernel.hpp"
#include "models/kernel_sim.hpp"
#include "models/launch.hpp"
#include "models/op_cost.hpp"
#include "models/op_library.hpp"
#include "models/roofline.hpp"

namespace ridge::models {

std::string_view mode_name(Mode m) {
  return m == Mode::kFast ? "fast" : "detailed";
}
std::string_view timing_name(Timing t) {
  return t == Timing::kKernel ? "kernel" : "per_call";
}

namespace {

// ---- memo --------------------------------------------------------------------------------------

struct Memo {
  std::mutex mu;
  std::unordered_map<uint64_t, KernelPrediction> map;
  bool enabled = true;
};
Memo& memo() {
  static Memo m;
  return m;
}

void mix(uint64_t& h, uint64_t v) {
  // splitmix64-style combination.
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
}
void mix(uint64_t& h, double v) {
  mix(h, std::bit_cast<uint64_t>(v));
}
void mix(uint64_t& h, std::string_view s) {
  mix(h, static_cast<uint64_t>(std::hash<std::string_view>{}(s)));
}

// Everything of the spec the model reads, so that a changed spec under the same name misses.
uint64_t memo_key(const hw::GpuSpec& g, const OpSpec& op, Timing timing, Detail detail) {
  uint64_t h = 0;
  mix(h, std::string_view(g.name));
  const auto& sm = g.sm;
  for (double v : {double(sm.count), double(sm.max_warps_per_sm), double(sm.max_blocks_per_sm),
                   double(sm.registers_per_sm), sm.shared_memory_per_sm, g.clocks.boost_hz,
                   g.memory.l2_size, g.memory.l2_bandwidth, g.memory.hbm_bandwidth,
                   g.compute.special_function, g.interconnect.pcie_bandwidth}) {
    mix(h, v);
  }
  for (const auto& [p, v] : g.compute.vector) mix(h, v + static_cast<double>(p));
  for (const auto& [p, v] : g.compute.tensor_dense) mix(h, v + static_cast<double>(p));
  for (const auto& [k, v] : g.model) {
    mix(h, std::string_view(k));
    mix(h, v);
  }
  mix(h, std::string_view(op.kind()));
  mix(h, std::string_view(op.params().dump()));
  mix(h, static_cast<uint64_t>(timing));
  // A prediction without detail is its own entry: one with detail is never served without it.
  mix(h, static_cast<uint64_t>(detail));
  return h;
}

double unit_peak(const hw::GpuSpec& gpu, const OpCost& c) {
  return roofline(gpu, c).peak_flops;
}

// Every write to `detail` is under `want` (Detail::kBuild); nothing else reads it, so the other
// fields do not depend on it.
KernelPrediction predict_uncached(const hw::GpuSpec& gpu, const OpSpec& op, Mode mode,
                                  Timing timing, Detail detail) {
  if (is_framework_op(op.kind())) {
    KernelPrediction p = predict_framework_op(gpu, op, mode, timing);
    if (detail == Detail::kSkip) p.detail = nullptr;
    return p;
  }
  const bool want = detail == Detail::kBuild;
  const KernelParams kp = kernel_params(gpu);
  OpPlan plan = plan_op(gpu, kp, op, want);
  const OpCost cost = op_cost(op);
  KernelPrediction p;
  p.flops = cost.flops;
  if (want) {
    p.detail = std::move(plan.detail);
    p.detail["mode"] = mode_name(mode);
  }

  std::vector<LaunchedWork> work;
  std::string work_bound;
  double work_sum = 0;
  Issue issue = Issue::kEager;

  if (plan.kind == OpPlan::Kind::kCopy) {
    // A copy engine: the transfer at the link's rate after copy_latency (per call; the kernel
    // timing of a copy is its transfer plus the engine's start-up, kernel_startup).
    // A device copy's reads ramp up as a kernel's do (hbm_read_ramp_s; half its bytes are reads).
    const double xfer = plan.copy_bytes / plan.copy_bandwidth +
                        (plan.copy_pcie ? 0.0 : hbm_read_ramp_s(gpu, plan.copy_bytes / 2));
    p.kernels = 1;
    p.kernel_time_s = kp.kernel_startup + xfer;
    p.per_call_time_s = kp.copy_latency + xfer;
    p.hbm_bytes = plan.copy_pcie ? op.f("bytes") : plan.copy_bytes;
    p.kernel_name = plan.copy_pcie ? "memcpy (copy engine, PCIe)" : "memcpy (copy engine, HBM)";
    p.time_s = timing == Timing::kKernel ? p.kernel_time_s : p.per_call_time_s;
    const double overhead = timing == Timing::kKernel ? kp.kernel_startup : kp.copy_latency;
    p.bound = overhead > xfer ? "launch" : (plan.copy_pcie ? "pcie" : "hbm");
    p.achieved_bytes_per_s = (plan.copy_pcie ? op.f("bytes") : plan.copy_bytes) / p.time_s;
    p.roof_fraction = p.achieved_bytes_per_s /
                      (plan.copy_pcie ? gpu.interconnect.pcie_bandwidth : gpu.memory.hbm_bandwidth);
    p.roof = plan.copy_pcie ? "PCIe" : "HBM";
    p.waves = 0;
    if (want) p.detail["transfer_s"] = xfer;
    return p;
  }
  if (plan.kind == OpPlan::Kind::kLaunch) {
    work.push_back({0.0, plan.launch_count});
    issue = plan.launch_kind == "graph" ? Issue::kGraph : Issue::kBareCuda;
    work_bound = "launch";
    p.kernel_name = fmt::format("empty kernel x{}", plan.launch_count);
    p.block = 32;
    p.grid = 1;
    p.waves = 1;
  } else {
    nlohmann::json kernels = want ? nlohmann::json::array() : nlohmann::json();
    double longest = -1;
    const IntervalHw ihw = mode == Mode::kFast ? IntervalHw{} : interval_hw(gpu, kp);
    for (const PlannedKernel& pk : plan.kernels) {
      // Fast: the fitted closed form. Detailed: the interval model (models/interval) on the
      // engine, its bound and waves from the interval model's closed form.
      const KernelSetup s = mode == Mode::kFast ? kernel_setup(gpu, kp, pk.desc)
                                                : interval_setup(gpu, kp, pk.desc, ihw);
      const KernelEstimate e = estimate_kernel(s);
      const double t_boost =
          mode == Mode::kFast ? e.time_s : simulate_kernel_interval(gpu, kp, s, ihw);
      // The power roof (models/clock_model.hpp): a kernel whose dynamic power at the boost clock
      // would exceed the board's cap runs at the clock that meets it, in both modes.
      const double grid = static_cast<double>(s.desc.grid);
      PowerDemand demand;
      demand.tensor_flops = grid * s.desc.flops_tensor;
      demand.tensor_precision = s.desc.tensor_precision;
      demand.simt_ops = grid * (s.desc.flops_fp32 + s.desc.flops_fp64 + s.desc.sfu_ops);
      demand.hbm_bytes = grid * s.hbm_bytes;
      const ClockLimit clk = power_limit(gpu, demand, t_boost);
      const double t = clk.time_s;
      work.push_back({t, pk.count});
      const double n = static_cast<double>(pk.count);
      work_sum += t * n;
      const double blocks = grid * n;
      p.hbm_bytes += blocks * s.hbm_bytes;
      p.l2_bytes += blocks * s.l2_bytes;
      if (want) {
        // Keys appended in sorted order, each at the end of the map without a search (a JSON
        // initializer list builds a two-element array per entry first).
        auto& k =
            kernels.emplace_back(nlohmann::json::object()).get_ref<nlohmann::json::object_t&>();
        k.emplace_hint(k.end(), "block", s.desc.block);
        k.emplace_hint(k.end(), "blocks_per_sm", s.blocks_per_sm);
        k.emplace_hint(k.end(), "bound", e.bound);
        k.emplace_hint(k.end(), "count", pk.count);
        k.emplace_hint(k.end(), "grid", s.desc.grid);
        k.emplace_hint(k.end(), "l2_hit_rate", s.l2_hit);
        k.emplace_hint(k.end(), "name", s.desc.name);
        k.emplace_hint(k.end(), "power_w", clk.power_w);
        k.emplace_hint(k.end(), "sm_clock_hz", clk.sm_clock_hz);
        k.emplace_hint(k.end(), "time_s", t);
        k.emplace_hint(k.end(), "waves", e.waves);
      }
      if (t * n > longest) {
        longest = t * n;
        work_bound = clk.power_bound ? "power" : e.bound;
        p.kernel_name = s.desc.name;
        p.grid = s.desc.grid;
        p.block = s.desc.block;
        p.waves = e.waves;
        p.occupancy = s.occupancy;
        if (want) {
          p.detail["sm_clock_hz"] = clk.sm_clock_hz;
          p.detail["power_w"] = clk.power_w;
          p.detail["l2_hit_rate"] = s.l2_hit;
          p.detail["compute_s"] = e.compute_s;
          p.detail["memory_s"] = e.memory_s;
          p.detail["bytes_in_flight_per_block"] = s.inflight_per_block;
          if (mode == Mode::kDetailed)
            p.detail["interval"] =
                interval_block(ihw, s.desc, s.occupancy.warps_per_block).to_json();
        }
      }
    }
    if (want) p.detail["kernels"] = std::move(kernels);
  }

  const LaunchTiming lt = line_up(kp, work, issue);
  p.kernels = static_cast<int>(std::min<long long>(plan.launches(), 1 << 30));
  p.kernel_time_s = lt.kernel_s;
  p.per_call_time_s = lt.per_call_s;
  if (plan.kind == OpPlan::Kind::kLaunch) {
    // The launch op reports the cost per kernel. Kernels issued live ("eager") or timed alone
    // ("per_call") wait on the host: their GPU-side time is the host-paced time.
    if (plan.launch_kind == "eager" || plan.launch_kind == "per_call")
      p.kernel_time_s = lt.per_call_s;
    // Kernels queued ahead ("dependent": the host filled the stream while the GPU was busy) drain
    // at the front end's own period, not at the start-up and gap a timed kernel pays.
    if (plan.launch_kind == "dependent") p.kernel_time_s = queued_launches_s(kp, plan.launch_count);
    const double n = static_cast<double>(std::max<long long>(plan.launch_count, 1));
    p.kernel_time_s /= n;
    p.per_call_time_s /= n;
  }
  p.time_s = timing == Timing::kKernel ? p.kernel_time_s : p.per_call_time_s;
  // Launching (start-ups, gaps, host issue) outweighing the work makes the op launch-bound.
  const double overhead = p.time_s - work_sum;
  p.bound = overhead > work_sum ? "launch" : work_bound;
  if (want) {
    p.detail["work_s"] = work_sum;
    p.detail["launch_overhead_s"] = overhead;
  }

  if (p.time_s > 0) {
    p.achieved_flops_per_s = p.flops / p.time_s;
    p.achieved_bytes_per_s = p.hbm_bytes / p.time_s;
  }
  const double peak = p.flops > 0 ? unit_peak(gpu, cost) : 0;
  const double f_compute = peak > 0 ? p.achieved_flops_per_s / peak : 0;
  const double f_hbm = p.achieved_bytes_per_s / gpu.memory.hbm_bandwidth;
  const double f_l2 = p.time_s > 0 ? p.l2_bytes / p.time_s / gpu.memory.l2_bandwidth : 0;
  if (p.bound == "compute") {
    p.roof_fraction = f_compute, p.roof = "compute";
  } else if (p.bound == "l2") {
    p.roof_fraction = f_l2, p.roof = "L2";
  } else if (p.bound == "hbm") {
    p.roof_fraction = f_hbm, p.roof = "HBM";
  } else if (p.bound == "power") {
    // On the power roof (models/clock_model).
    p.roof_fraction = std::max(f_compute, f_hbm) > 0 ? 1.0 : 0.0, p.roof = "power";
  } else {
    // Latency or launch bound: no roof binds, so the fraction is of the roof the kernel comes
    // nearest (a B200 8192-cubed GEMM, latency-bound in the model, reaches 72% of its tensor
    // peak and 7% of HBM: "7% of the memory roof" read as a kernel far from every limit).
    p.roof_fraction = f_compute, p.roof = "compute";
    if (f_hbm > p.roof_fraction) p.roof_fraction = f_hbm, p.roof = "HBM";
    if (p.bound == "latency" && f_l2 > p.roof_fraction) p.roof_fraction = f_l2, p.roof = "L2";
  }
  return p;
}

}  // namespace

void set_kernel_memo(bool enabled) {
  std::lock_guard lock(memo().mu);
  memo().enabled = enabled;
}

void clear_kernel_memo() {
  std::lock_guard lock(memo().mu);
  memo().map.clear();
}

KernelPrediction predict_kernel(const hw::GpuSpec& gpu, const OpSpec& op, Mode mode, Timing timing,
                                Detail detail) {
  Memo& m = memo();
  bool use_memo = false;
  uint64_t key = 0;
  if (mode == Mode::kFast) {
    std::lock_guard lock(m.mu);
    use_memo = m.enabled;
  }
  if (use_memo) {
    key = memo_key(gpu, op, timing, detail);
    std::lock_guard lock(m.mu);
    if (auto it = m.map.find(key); it != m.map.end()) return it->second;
  }
  KernelPrediction p = predict_uncached(gpu, op, mode, timing, detail);
  if (use_memo) {
    std::lock_guard lock(m.mu);
    m.map.emplace(key, p);
  }
  return p;
}

}  // namespace ridge::models
