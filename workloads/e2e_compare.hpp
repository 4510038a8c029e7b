// Predicted against measured end-to-end runs: reads validate/e2e records (ridge.records/1, ops
// e2e_train, e2e_prefill, e2e_decode, e2e_diffusion, e2e_stage), rebuilds each workload from the
// record's params with the builders that mirror the PyTorch programs, simulates it, and reports the
// error of the step time against the measured median and the kernel count against the profile's.
// The measured median: where the run recorded a CPU probe around every step (cpu_probe, a fixed
// piece of pure-Python work timed before and after each call by validate/e2e/e2e_common.py), over
// the steps issued at the host's nominal speed only (probe <= kNominalProbeRatio x the run's
// fastest probe), when at least 3 are; else timing.median_us. The lent machine's host CPU runs
// 1.5-2x slower in stretches of 0.1 s to several seconds (validate/e2e/README.md,
// host_stall_probe.py), and its speed at "nominal" differs between leases by up to 1.25x. Ridge
// prices the host at one speed, the one at which the probe takes the GPU spec's host_probe_us
// (the speed of the tight-loop measurements behind the host_* costs); for a case the simulation
// finds host-bound, each nominal step's time is scaled to that speed (x host_probe_us / its
// probe), which the interleaved runs (validate/e2e/host_interleave.py) show holds within about 4%
// across leases.
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

#include "hw/gpu_spec.hpp"
#include "workloads/graph.hpp"

namespace ridge::workloads {

struct E2eRow {
  std::string id, op;
  double measured_s = 0, predicted_s = 0;
  double error = 0;  ///< (predicted - measured) / measured
  long long measured_kernels = -1, predicted_kernels = 0;
  std::string bound;         ///< host-bound or GPU-bound, from the critical path
  long long dispatches = 0;  ///< eager host dispatches (0 when replayed as a CUDA graph)
  double host_busy_s = 0;    ///< predicted host time issuing the step
  int steps = 0;             ///< timed steps with a CPU probe (0: the run has no probes)
  int steps_kept = 0;        ///< of those, issued at nominal host speed (the measured median's)
  bool host_slowed = false;  ///< probes but fewer than 3 nominal steps: median of all steps
  /// Host-bound with probes: the median is of the nominal steps at the model's host speed, each
  /// step's time x host_probe_us / its probe.
  bool host_normalized = false;
};

/// A step counts as issued at nominal host speed when its CPU probe took at most this many times
/// the run's fastest probe. The probe's own jitter at nominal speed reaches 1.2x (CUDA-graph
/// decode steps, which no host speed affects, validate/data/h200/e2e_run6); slowed stretches run
/// at 1.5-2x.
inline constexpr double kNominalProbeRatio = 1.25;

/// Simulated results by case (op and params), for one GPU spec: runs that measured the same case
/// share one simulation. Pass the same cache only with the same GpuSpec.
struct E2eCache {
  struct Entry {
    double step_s = 0, host_busy_s = 0;
    long long kernels = 0, dispatches = 0;
    std::string bound;
  };
  std::map<std::string, Entry> entries;
};

/// Rows for every record it knows how to rebuild; others are left out. `config_dir` holds models/.
std::vector<E2eRow> compare_e2e(const nlohmann::json& records_doc, const hw::GpuSpec& gpu,
                                E2eCache* cache = nullptr);
/// The workload graph of every record compare_e2e would simulate, in order, built and its
/// measurement fields checked but not simulated (the records reader alone: fuzz/fuzz_e2e.cpp).
/// Throws as compare_e2e.
std::vector<Graph> e2e_graphs(const nlohmann::json& records_doc);
/// One measurement run (a records file) and its rows.
struct E2eRun {
  std::string source;  ///< the records file
  std::vector<E2eRow> rows;
};
/// Each case against the median of its measurements over the runs (one row per case, in the
/// first run's order; `measured_s` the median, `error` against it, `steps` the number of runs
/// pooled). The median is over the runs with CPU probes that measured the case at nominal host
/// speed (at least 3 such steps) where at least 3 runs did, else over every run: a run without
/// probes, or with too few nominal steps, cannot tell a step slowed by the host. The lent host's
/// speed differs between leases by more than the budget (host-bound steps at nominal speed: e.g.
/// Llama-3.2 1B decode 7.7-10.6 ms over eight runs): the median over leases is the estimate of
/// the step at the host's typical speed that a one-speed host model can be held to.
std::vector<E2eRow> pooled_rows(const std::vector<E2eRun>& runs);
/// A Markdown table of the runs (cases in the first run's order, one measured/error column pair
/// per run), each case's median over the runs and the error against it, the mean errors, each
/// case's run-to-run spread, and the command that made it.
std::string e2e_markdown(const std::vector<E2eRun>& runs, const std::string& gpu_name,
                         double host_python_scale = 1, double probe_ref_us = 0);

}  // namespace ridge::workloads
