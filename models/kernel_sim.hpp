// The detailed kernel model: kernels on the sim/ engine, block by block.
//
// Captures: thread blocks dispatched to SMs as events, as many resident per SM as occupancy
// allows (a block of a kernel takes 1/blocks_per_sm of an SM, so kernels from several streams
// share SMs), placed breadth-first on the least-loaded SM so waves and the tail of the last wave
// emerge; each block's work as flows on a sim::FlowNetwork: its compute on its SM's compute link
// (processor sharing among the SM's resident blocks), its L2-served bytes over SM port -> L2, its
// HBM bytes over SM port -> L2 -> HBM (capacity hbm_bandwidth x hbm_efficiency), each memory flow
// capped by Little's law (models/kernel: KernelSetup::block_cap with the number of the kernel's
// blocks resident on that SM) and split between L2 and HBM in proportion to their bytes; a block
// ends when its compute and memory flows are done, plus its fixed overhead. Kernels on a stream
// run in order, kernel_gap apart, their blocks dispatched kernel_startup after they start; an SM
// launches one block per block_dispatch, so n blocks resident on an SM last at least n of them.
// Sources: as models/kernel; max-min sharing of links as sim/flow.
// The link figures are an argument: fitted_links() (the fast mode's efficiencies) or the interval
// model's datasheet peaks (models/interval, the detailed mode's physics, whose KernelSetup
// carries its own per-block compute time and bytes in flight).
// Ignores: what models/kernel ignores; block scheduling policy details (the hardware's GPC-level
// dispatcher), preemption, priorities between streams.
// Validation: validate/README.md, "Detailed mode (interval model) against the fast mode".
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "hw/gpu_spec.hpp"
#include "models/kernel.hpp"
#include "sim/flow.hpp"
#include "sim/simulator.hpp"

namespace ridge::models {

/// The capacities and latencies of a GpuSim's memory links (B/s, seconds).
struct GpuSimLinks {
  double l2_bandwidth = 0, hbm_bandwidth = 0, sm_port_bandwidth = 0;
  double l2_latency_s = 0, hbm_latency_s = 0;
};

/// The links the fast mode's physics uses: L2 and HBM at their figures x l2_efficiency and
/// hbm_efficiency, the SM port at sm_l2_bytes_per_cycle x boost clock.
GpuSimLinks fitted_links(const hw::GpuSpec& gpu, const KernelParams& params);

/// A GPU on the engine: SMs, an L2 and HBM, accepting kernel launches on streams.
class GpuSim {
 public:
  /// Builds the GPU's links on `sim` (which must outlive this), with fitted_links().
  GpuSim(sim::Simulator& sim, const hw::GpuSpec& gpu, const KernelParams& params);
  /// The same with the given memory links (the interval model: datasheet peaks).
  GpuSim(sim::Simulator& sim, const hw::GpuSpec& gpu, const KernelParams& params,
         const GpuSimLinks& links);
  ~GpuSim();
  GpuSim(const GpuSim&) = delete;
  GpuSim& operator=(const GpuSim&) = delete;

  /// Launches `kernel` on `stream` (>= 0) now; it starts after the stream's previous kernel plus
  /// kernel_gap. `done(start, end)` runs when its last block ends.
  void launch(int stream, const KernelSetup& kernel,
              std::function<void(sim::Time start, sim::Time end)> done = {});

  /// Blocks finished so far, over all kernels.
  long long blocks_done() const { return blocks_done_; }
  sim::FlowNetwork& network() { return net_; }

 private:
  struct Kernel;
  struct Stream;
  struct Sm {
    sim::LinkId compute, port;
    double used = 0;  ///< fraction of the SM's block slots taken
    int resident = 0;
  };
  void start_kernel(int stream);
  void request_dispatch();
  void dispatch();
  void start_block(Kernel& k, int sm, int n_on_sm, bool overhead);
  void end_block(Kernel& k, int sm);

  sim::Simulator& sim_;
  sim::FlowNetwork net_;
  KernelParams params_;
  std::vector<Sm> sms_;
  sim::LinkId l2_, hbm_;
  std::vector<std::unique_ptr<Stream>> streams_;
  std::vector<Kernel*> active_;  ///< kernels with blocks left to dispatch, in start order
  std::vector<std::unique_ptr<Kernel>> kernels_;
  bool dispatch_pending_ = false;
  long long blocks_done_ = 0;
};

/// One kernel alone on an idle GPU: its GPU work time (no start-up), by the detailed model.
double simulate_kernel_work(const hw::GpuSpec& gpu, const KernelParams& params,
                            const KernelSetup& kernel);

}  // namespace ridge::models
