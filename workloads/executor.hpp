// Runs a workload graph on the discrete-event engine (sim/): one host thread issuing launches in
// program order, GPU streams executing them in order, copy engines beside the compute engine.
//
// Captures: host launch cost per eager dispatch by framework op class (host_launch_eager for
// elementwise and other ops, host_eager_gemm, _attention, _norm, _embedding, _loss, _conv; extra
// kernels of one dispatch cost host_launch_cuda each; x host_autograd_forward when a forward op
// records the autograd graph; host_autograd_kernel per kernel the autograd engine launches in
// backward; a fused optimizer host_optimizer_base + host_optimizer_tensor per tensor; all x
// host_python_scale, the in-model Python around the ops), CUDA graph replay (one host_launch_cuda
// for the graph, then graph_launch_per_kernel per kernel node), so a host-bound eager decode shows
// as host-bound; stream order with kernel_gap between back-to-back kernels on a stream; data
// dependencies and waits across streams; host synchronisation; copies on copy engines overlapping
// compute; communication kernels (category communication: NCCL) beside the compute kernels, as
// they run on a few SMs of their own. Ignores: concurrent kernels sharing SMs (kernels of different
// streams take the compute engine one at a time: each kernel's time assumes the whole GPU),
// allocator time, Python time not tied to an op (other than through host_python_scale), clock
// changes during the step.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "hw/gpu_spec.hpp"
#include "workloads/graph.hpp"
#include "workloads/op_timer.hpp"

namespace ridge::workloads {

/// What held an activity back until it could start (for the critical path).
enum class Binder {
  kNone,       ///< started at time zero
  kHostIssue,  ///< its launch was issued last (device activity waits on the host)
  kStream,     ///< the previous op on its stream ended last (plus kernel_gap)
  kData,       ///< a data dependency ended last
  kEngine,     ///< the compute or copy engine was busy with another stream's op
  kHostPrev,   ///< host activity: the previous host activity ended last
  kSync,       ///< host activity: a synchronisation waited for this GPU op
};

struct OpRecord {
  double host_begin_s = 0;  ///< host starts dispatching it
  double issue_s = 0;       ///< launch issued (host free again)
  double start_s = 0;       ///< device start (= host_begin_s for host work)
  double end_s = 0;
  double duration_s = 0;  ///< end - start (0 for waits and syncs)
  int stream = 0;
  Binder device_binder = Binder::kNone;
  int device_binder_op = -1;
  Binder host_binder = Binder::kNone;
  int host_binder_op = -1;
};

struct ExecOptions {
  TimingMode mode = TimingMode::kFast;
  std::map<Category, double> category_speedup;  ///< op classes sped up (what-if)
  std::map<std::string, double> kind_speedup;   ///< op kinds ("gemm", "attention") sped up
  int copy_engines = 2;
  /// Imported runs (workloads/imported_run.hpp): the graph's host nodes hold all host time, as
  /// measured, so launches cost the host nothing more.
  bool host_from_graph = false;
  /// Gap between back-to-back kernels on a stream; < 0: the GPU's kernel_gap parameter.
  double kernel_gap_s = -1;
  /// Least time from a launch's issue to its start on the device, per graph node (imported runs:
  /// as measured); empty: none.
  std::vector<double> launch_latency_s;
};

struct Execution {
  std::vector<OpRecord> ops;
  double step_time_s = 0;  ///< end of the last activity
  double host_busy_s = 0;  ///< host time spent issuing launches and host work
  double gpu_busy_s = 0;   ///< time the compute engine was running kernels
  long long kernels = 0;
};

/// Simulates `g` on `gpu`. Deterministic: same inputs, same records.
Execution execute(const Graph& g, const hw::GpuSpec& gpu, const ExecOptions& o = {});

}  // namespace ridge::workloads
