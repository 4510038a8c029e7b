// Launch overhead and the host: how the kernels of one op line up in time on one stream.
//
// Captures: the host cost of issuing each launch (an eager framework op: host_launch_eager for the
// first kernel, host_launch_cuda for each further one; a CUDA graph replay: graph_launch_per_kernel
// per node, all issued at once), the GPU-side start-up of each kernel (kernel_startup) and the gap
// between dependent kernels (kernel_gap). A kernel starts when it has been issued and its
// predecessor has finished plus the gap, so a run of small kernels is host-bound and a run of
// large ones is GPU-bound. Two timings: `kernel` (the GPU duration, first kernel start to last
// kernel end) and `per_call` (CUDA events around one call, as a user measures it: from the call's
// start on the host to the last kernel's end).
// Sources: CUDA C++ Best Practices Guide ("Asynchronous and Overlapping Transfers", launch
// latency); the parameter defaults' reasons are in hw/model_params.cpp.
// Ignores: launch queue depth limits (1024 pending launches), CPU jitter, event resolution (0.5
// us). Validation: not yet validated (H200 launch measurements pending).
#pragma once

#include <span>

#include "models/kernel.hpp"

namespace ridge::models {

/// How the host issues the kernels of one call.
enum class Issue { kEager, kBareCuda, kGraph };

/// A kernel's GPU work time (without start-up) and how many times it runs back to back.
struct LaunchedWork {
  double work_s = 0;
  long long count = 1;
};

struct LaunchTiming {
  double kernel_s = 0;    ///< GPU duration: all kernels, start-ups and gaps
  double per_call_s = 0;  ///< host call start to last kernel end
  double overhead_s = 0;  ///< per_call_s minus the summed work: what launching costs
};

/// Lines up `work` on one stream as issued by `issue`.
LaunchTiming line_up(const KernelParams& params, std::span<const LaunchedWork> work, Issue issue);

}  // namespace ridge::models
