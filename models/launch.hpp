// Launch overhead and the host: how the kernels of one op line up in time on one stream.
//
// Captures: the host cost of issuing each launch (an eager framework op: host_launch_eager for the
// first kernel, host_launch_cuda for each further one; a CUDA graph replay: graph_launch_per_kernel
// per node, all issued at once), the GPU-side start-up of each kernel (kernel_startup) and the gap
// between dependent kernels (kernel_gap); inside a CUDA-graph replay a start before the first node
// (graph_replay_first) and a period per node (graph_node_period) instead. A kernel starts when it
// has been issued and its predecessor has finished plus the gap, so a run of small kernels is
// host-bound and a run of large ones is GPU-bound. Two timings: `kernel` (the GPU duration, first
// kernel start to last kernel end) and `per_call` (CUDA events around one call, as a user measures
// it: from the call's start on the host to the last kernel's end).
// Sources: CUDA C++ Best Practices Guide ("Asynchronous and Overlapping Transfers", launch
// latency); the parameter defaults' reasons are in hw/model_params.cpp.
// Kernels already queued (queued_launches_s): the GPU's front end drains a stream's queue at its
// own period (queued_kernel_period), and past the queue's depth (1024 pending launches) the host
// refills it one launch per host_launch_cuda while the GPU drains it, until the queue runs dry and
// the host sets the pace.
// Ignores: the queue depth anywhere but queued_launches_s, CPU jitter, event resolution (0.5
// us). Validation: validate/README.md, "Own programs" (launch class).
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

/// Pending launches a stream's queue holds before cudaLaunchKernel blocks (CUDA's launch queue:
/// ridge-bench's dependent launches run at the GPU's period up to 1000 kernels and slower from
/// 2000, validate/prereg/own-set1 and own-set2).
inline constexpr long long kLaunchQueueDepth = 1024;

/// GPU time of `n` empty kernels on one stream whose first kernels were queued while the GPU was
/// busy (ridge-bench's launch/dependent), from the event before them to the last one's end: up to
/// the queue's depth all are queued and drain at queued_kernel_period; past it the host refills the
/// queue at host_launch_cuda per launch while the GPU drains it, and once it is empty every
/// further kernel waits for the host.
double queued_launches_s(const KernelParams& params, long long n);

/// Lines up `work` on one stream as issued by `issue`.
LaunchTiming line_up(const KernelParams& params, std::span<const LaunchedWork> work, Issue issue);

}  // namespace ridge::models
