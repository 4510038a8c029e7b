#include "models/launch.hpp"

#include <algorithm>

namespace ridge::models {

double queued_launches_s(const KernelParams& k, long long n) {
  const double d = k.queued_kernel_period, h = k.host_launch_cuda;
  const double count = static_cast<double>(std::max<long long>(n, 0));
  if (n <= kLaunchQueueDepth || h <= d) return k.queued_first_kernel + count * d;
  // The queue holds Q kernels when the GPU starts on them; it loses one per d and gains one per h,
  // so it runs dry at t = Q d h / (h - d), when t / d kernels have run. The rest wait for the host.
  const double q = static_cast<double>(kLaunchQueueDepth);
  const double dry = q * d * h / (h - d);
  const double done = dry / d;
  if (done >= count) return k.queued_first_kernel + count * d;
  return k.queued_first_kernel + dry + (count - done) * h;
}

LaunchTiming line_up(const KernelParams& k, std::span<const LaunchedWork> work, Issue issue) {
  LaunchTiming t;
  long long total = 0;
  double summed = 0;
  for (const auto& w : work) {
    total += w.count;
    summed += w.work_s * static_cast<double>(w.count);
  }
  if (total == 0) return t;
  // Host clock: when launch i has been issued.
  double host = 0, per_launch = 0;
  switch (issue) {
    case Issue::kEager:
      host = k.host_launch_eager;
      per_launch = k.host_launch_cuda;
      break;
    case Issue::kBareCuda:
      host = k.host_launch_cuda;
      per_launch = k.host_launch_cuda;
      break;
    case Issue::kGraph:
      // A graph launch submits every node at once; the host pays per node up front.
      host = k.graph_launch_per_kernel * static_cast<double>(total);
      per_launch = 0;
      break;
  }
  // Inside a graph replay the GPU front end has every node at hand: each node costs a period of
  // its own (graph_node_period, 0.50 us per empty kernel against 1.36 us on a stream), its
  // start-up overlapping the kernel before it, and the replay a fixed start (graph_replay_first)
  // before its first node: first + n x period for n empty kernels (hw/model_params.cpp).
  const bool graph = issue == Issue::kGraph;
  const double gap = graph ? k.graph_node_period : k.kernel_gap;
  const double startup = graph ? 0.0 : k.kernel_startup;
  double gpu_end = graph ? host + k.graph_replay_first : -1, first_start = -1;
  for (const auto& w : work) {
    // Step the first launches of a run one by one; past that the run is in steady state, each
    // further kernel adding the larger of the host's and the GPU's period.
    const long long stepped = std::min<long long>(w.count, 64);
    for (long long i = 0; i < stepped; ++i) {
      const double start = gpu_end < 0 ? host : std::max(host, gpu_end + gap);
      if (first_start < 0) first_start = start;
      gpu_end = start + startup + w.work_s;
      host += per_launch;
    }
    const double rest = static_cast<double>(w.count - stepped);
    if (rest > 0) {
      const double period = std::max(per_launch, gap + startup + w.work_s);
      gpu_end += rest * period;
      host += rest * per_launch;
    }
  }
  (void)first_start;
  t.per_call_s = gpu_end;
  // The GPU duration when the host keeps ahead: start-ups, work and the gaps between kernels.
  t.kernel_s =
      graph ? k.graph_replay_first + summed + static_cast<double>(total) * gap
            : summed + static_cast<double>(total) * startup + static_cast<double>(total - 1) * gap;
  t.overhead_s = t.per_call_s - summed;
  return t;
}

}  // namespace ridge::models
