// `ridge run GRAPH.json`: an imported run (workloads/import_kineto.hpp) replayed and predicted.
//
// Measured replay: every op at its measured duration, host time between launches as measured
// (host nodes), back-to-back kernels on a stream separated by the trace's own median gap (the
// median of start - previous end over kernels launched before their predecessor ended), each
// op starting no sooner than its measured launch latency after its launch call, on the
// executor (workloads/executor.hpp). It checks that the graph holds the run: the replayed GPU
// span matches the trace's (docs/import.md, "Validation").
// Predicted: mapped ops timed by the kernel model on the chosen GPU, unmapped (custom) ops at
// their measured duration, host gaps as measured, the GPU's kernel_gap parameter; per kernel
// class, the model's time of the mapped ops against their measured time.
// Retargeting (--gpu B): the same prediction on another GPU beside the base GPU's: speed-up per
// class and end to end. Unmapped ops keep their measured (base GPU) time on the target: the
// speed-up says so by counting them at 1x.
// Ignores: what the trace cannot say: a different host on the target, kernels of one stream
// sharing SMs with another's (executor.hpp).
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "hw/gpu_spec.hpp"
#include "workloads/analysis.hpp"
#include "workloads/executor.hpp"
#include "workloads/import_kineto.hpp"

namespace ridge::workloads {

/// The executor's graph of an imported run: a host node before each op that has a host gap, the
/// op's kernel or copy node on its stream with its dependencies. `measured`: every op at its
/// measured duration; else mapped ops carry no time (the model times them).
Graph imported_graph(const ImportedRun& r, bool measured);

/// Median gap between back-to-back kernels of one stream where the later was launched before
/// the earlier ended (queued), in seconds; 0 when no kernel was queued.
double measured_kernel_gap_s(const ImportedRun& r);

/// Median time from a launch call's start to the op's start on an idle stream, in seconds.
double measured_launch_latency_s(const ImportedRun& r);
/// Per node of imported_graph(r): an op launched onto an idle stream starts no sooner than its own
/// measured latency after its launch call; a queued op no sooner than `median_s`.
std::vector<double> node_launch_latency_s(const ImportedRun& r, double median_s);

struct ClassRow {
  std::string cls;
  long long ops = 0, mapped = 0;
  double measured_s = 0;          ///< all ops of the class
  double mapped_measured_s = 0;   ///< mapped ops only
  double mapped_predicted_s = 0;  ///< the model's time of the same ops (base GPU)
  double median_abs_error = 0;    ///< per mapped op |predicted / measured - 1|
  double target_s = 0;            ///< the class on the target GPU (unmapped at measured)
  double base_s = 0;              ///< the class on the base GPU, same rule
};

struct ImportedReport {
  std::string source, device;
  std::string gpu, target_gpu;  ///< target empty unless retargeting
  double trace_span_s = 0;      ///< the trace's GPU span
  double replay_span_s = 0;     ///< measured replay's GPU span
  double kernel_gap_s = 0;      ///< measured gap used by the replay
  double launch_latency_s = 0;  ///< measured launch latency used by the replay
  double predicted_span_s = 0;  ///< predicted on the base GPU
  double target_span_s = 0;     ///< predicted on the target GPU
  std::vector<ClassRow> classes;
  Execution replay, predicted;
  std::vector<WhatIfResult> what_ifs;  ///< on the predicted run (base GPU)
};

/// Replays and predicts `r` on `gpu` (and `target` when given); each what-if (NAME*FACTOR, as
/// workloads/analysis.hpp) re-simulates the predicted run beside Amdahl's closed form.
ImportedReport run_imported(const ImportedRun& r, const hw::GpuSpec& gpu, const hw::GpuSpec* target,
                            TimingMode mode, const std::vector<std::string>& what_ifs = {});

/// GPU span of an execution: first device start to last device end.
double device_span_s(const Graph& g, const Execution& e);

std::string imported_report_text(const ImportedReport& rep);
nlohmann::json imported_report_json(const ImportedReport& rep);

}  // namespace ridge::workloads
