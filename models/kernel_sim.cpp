#include "models/kernel_sim.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <deque>

namespace ridge::models {

namespace {
// Compute flows are measured in picoseconds of one SM's work, on a link of 1e12 ps/s.
constexpr double kPsPerSecond = 1e12;
}  // namespace

struct GpuSim::Kernel {
  KernelSetup setup;
  std::function<void(sim::Time, sim::Time)> done;
  sim::Time start;
  long long next_block = 0;
  long long finished = 0;
  double slot_fraction = 1;  ///< of an SM, per block
  std::vector<int> on_sm;    ///< resident blocks of this kernel per SM
  int stream = 0;
};

struct GpuSim::Stream {
  std::deque<Kernel*> queue;
  bool busy = false;
  bool ran_before = false;
};

GpuSimLinks fitted_links(const hw::GpuSpec& gpu, const KernelParams& params) {
  GpuSimLinks l;
  l.sm_port_bandwidth = params.sm_l2_bytes_per_cycle * gpu.clocks.boost_hz;
  l.l2_latency_s = params.l2_latency;
  l.hbm_latency_s = std::max(params.hbm_latency, l.l2_latency_s);
  l.l2_bandwidth = gpu.memory.l2_bandwidth * params.l2_efficiency;
  l.hbm_bandwidth = gpu.memory.hbm_bandwidth * params.hbm_efficiency;
  return l;
}

GpuSim::GpuSim(sim::Simulator& sim, const hw::GpuSpec& gpu, const KernelParams& params)
    : GpuSim(sim, gpu, params, fitted_links(gpu, params)) {}

GpuSim::GpuSim(sim::Simulator& sim, const hw::GpuSpec& gpu, const KernelParams& params,
               const GpuSimLinks& links)
    : sim_(sim), net_(sim), params_(params) {
  const double port = links.sm_port_bandwidth;
  const double l2_lat = links.l2_latency_s;
  const double hbm_lat = std::max(links.hbm_latency_s, l2_lat);
  l2_ = net_.add_link("L2", links.l2_bandwidth, sim::Time::from_seconds(l2_lat));
  hbm_ = net_.add_link("HBM", links.hbm_bandwidth, sim::Time::from_seconds(hbm_lat - l2_lat));
  sms_.resize(static_cast<size_t>(gpu.sm.count));
  for (size_t i = 0; i < sms_.size(); ++i) {
    sms_[i].compute = net_.add_link(fmt::format("SM{} compute", i), kPsPerSecond);
    sms_[i].port = net_.add_link(fmt::format("SM{} port", i), port);
  }
}

GpuSim::~GpuSim() = default;

void GpuSim::launch(int stream, const KernelSetup& kernel,
                    std::function<void(sim::Time, sim::Time)> done) {
  if (stream < 0) throw std::invalid_argument("GpuSim::launch: stream must be >= 0");
  while (streams_.size() <= static_cast<size_t>(stream))
    streams_.push_back(std::make_unique<Stream>());
  auto k = std::make_unique<Kernel>();
  k->setup = kernel;
  k->done = std::move(done);
  k->slot_fraction = 1.0 / std::max(1, kernel.blocks_per_sm);
  k->on_sm.assign(sms_.size(), 0);
  k->stream = stream;
  Stream& s = *streams_[static_cast<size_t>(stream)];
  s.queue.push_back(k.get());
  kernels_.push_back(std::move(k));
  if (!s.busy) start_kernel(stream);
}

void GpuSim::start_kernel(int stream) {
  Stream& s = *streams_[static_cast<size_t>(stream)];
  if (s.queue.empty()) return;
  s.busy = true;
  Kernel* k = s.queue.front();
  const sim::Time gap = s.ran_before ? sim::Time::from_seconds(params_.kernel_gap) : sim::Time{};
  s.ran_before = true;
  sim_.schedule_after(gap, [this, k] {
    k->start = sim_.now();
    sim_.schedule_after(sim::Time::from_seconds(params_.kernel_startup), [this, k] {
      active_.push_back(k);
      request_dispatch();
    });
  });
}

void GpuSim::request_dispatch() {
  if (dispatch_pending_) return;
  dispatch_pending_ = true;
  // After everything else at this instant, so blocks ending together free their slots first and
  // the next ones spread breadth-first over the SMs.
  sim_.schedule_after(
      sim::Time{},
      [this] {
        dispatch_pending_ = false;
        dispatch();
      },
      sim::Priority::kLate);
}

void GpuSim::dispatch() {
  struct Placed {
    Kernel* k;
    int sm;
    bool overhead;  // pays desc.overhead_s (a persistent kernel: only its last wave's blocks)
  };
  std::vector<Placed> placed;
  for (Kernel* k : active_) {
    const long long grid = k->setup.desc.grid;
    while (k->next_block < grid) {
      // The least-loaded SM with room for one more block of this kernel.
      int best = -1;
      for (size_t i = 0; i < sms_.size(); ++i) {
        if (sms_[i].used + k->slot_fraction > 1.0 + 1e-9) continue;
        if (best < 0 || sms_[i].used < sms_[static_cast<size_t>(best)].used - 1e-12)
          best = static_cast<int>(i);
      }
      if (best < 0) break;
      sms_[static_cast<size_t>(best)].used += k->slot_fraction;
      ++sms_[static_cast<size_t>(best)].resident;
      ++k->on_sm[static_cast<size_t>(best)];
      const bool overhead = !k->setup.desc.persistent || k->next_block >= grid - k->setup.slots;
      ++k->next_block;
      placed.push_back({k, best, overhead});
    }
  }
  std::erase_if(active_, [](Kernel* k) { return k->next_block >= k->setup.desc.grid; });
  for (const Placed& p : placed)
    start_block(*p.k, p.sm, p.k->on_sm[static_cast<size_t>(p.sm)], p.overhead);
}

void GpuSim::start_block(Kernel& k, int sm, int n_on_sm, bool overhead) {
  const KernelSetup& s = k.setup;
  Sm& m = sms_[static_cast<size_t>(sm)];
  struct Pending {
    int left = 0;
  };
  auto pending = std::make_shared<Pending>();
  Kernel* kp = &k;
  auto part_done = [this, pending, kp, sm, overhead] {
    if (--pending->left > 0) return;
    const sim::Time over = sim::Time::from_seconds(overhead ? kp->setup.desc.overhead_s : 0.0);
    if (over.ps > 0) {
      sim_.schedule_after(over, [this, kp, sm] { end_block(*kp, sm); });
    } else {
      end_block(*kp, sm);
    }
  };
  const double cap = s.block_cap(n_on_sm);
  const double fh = s.l2_bytes > 0 ? s.hbm_bytes / s.l2_bytes : 0.0;
  const double l2_part = s.l2_bytes - s.hbm_bytes;
  // The SM launches one block per block_dispatch: n resident blocks last at least n of them.
  const sim::Time dispatch = sim::Time::from_seconds(n_on_sm * s.block_dispatch_s);
  pending->left = (s.compute_s > 0) + (l2_part > 0) + (s.hbm_bytes > 0) + (dispatch.ps > 0);
  if (pending->left == 0) {
    pending->left = 1;
    part_done();
    return;
  }
  if (dispatch.ps > 0) sim_.schedule_after(dispatch, part_done);
  if (s.compute_s > 0) {
    net_.start_flow({m.compute}, s.compute_s * kPsPerSecond, part_done, kPsPerSecond);
  }
  if (l2_part > 0) net_.start_flow({m.port, l2_}, l2_part, part_done, cap * (1 - fh));
  if (s.hbm_bytes > 0) net_.start_flow({m.port, l2_, hbm_}, s.hbm_bytes, part_done, cap * fh);
}

void GpuSim::end_block(Kernel& k, int sm) {
  Sm& m = sms_[static_cast<size_t>(sm)];
  m.used = std::max(0.0, m.used - k.slot_fraction);
  --m.resident;
  --k.on_sm[static_cast<size_t>(sm)];
  ++blocks_done_;
  if (++k.finished == k.setup.desc.grid) {
    if (k.done) k.done(k.start, sim_.now());
    Stream& s = *streams_[static_cast<size_t>(k.stream)];
    s.queue.pop_front();
    s.busy = false;
    start_kernel(k.stream);
  }
  request_dispatch();
}

double simulate_kernel_work(const hw::GpuSpec& gpu, const KernelParams& params,
                            const KernelSetup& kernel) {
  sim::Simulator sim;
  KernelParams p = params;
  p.kernel_startup = 0;
  p.kernel_gap = 0;
  GpuSim g(sim, gpu, p);
  double t = 0;
  g.launch(0, kernel, [&](sim::Time start, sim::Time end) { t = (end - start).seconds(); });
  sim.run();
  return t;
}

}  // namespace ridge::models
