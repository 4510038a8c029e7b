// A study: a question about one GPU answered by simulating workloads of one model on it.
// `ridge run STUDY.yaml` loads it (strictly), builds each workload's graph, executes it, analyses
// it (critical path, what-ifs, memory, roofline) and reports. Outputs: text, JSON, Perfetto trace,
// roofline SVG, timeline SVG.
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "hw/gpu_spec.hpp"
#include "workloads/analysis.hpp"
#include "workloads/diffusion.hpp"
#include "workloads/executor.hpp"
#include "workloads/model_config.hpp"
#include "workloads/parallel.hpp"
#include "workloads/transformer.hpp"

namespace ridge::workloads {

enum class WorkloadKind { kTrain, kPrefill, kDecode, kDiffusion };

/// Where a workload key stands in its study file, for errors found once the model is loaded.
struct KeyPosition {
  std::string file;
  int line = 0, column = 0;
  std::string path;   ///< study.workloads[1].context
  std::string value;  ///< the scalar as written
};

struct WorkloadSpec {
  std::string label;  ///< "decode eager"
  /// Positions of the workload's keys as written and of the workload itself (key ""), for checks
  /// against the model and for errors the kernel model raises on its ops.
  std::map<std::string, KeyPosition> at;
  WorkloadKind kind = WorkloadKind::kDecode;
  TrainOptions train;
  InferenceOptions infer;
  DiffusionOptions diffusion;
  PrecisionScheme precision = PrecisionScheme::kAutocast;
};

struct Study {
  std::string question;
  std::string model_path;
  std::string gpu_name;
  std::vector<WorkloadSpec> workloads;
  std::vector<std::string> what_ifs;
  TimingMode mode = TimingMode::kFast;
  std::vector<std::pair<std::string, std::string>> files;  ///< study file (path, sha256)
  /// A parallel training step on a system (`parallel:`), instead of workloads on one GPU.
  std::optional<ParallelOptions> parallel;
};

/// Loads a study file. Throws hw::ConfigException (file:line:col: key: message).
Study load_study(const std::string& path);
/// The files a study names, already loaded and checked (a sweep's base study): read_study checks
/// the workloads against `model` when the study names `model_path`, and does not load the GPU
/// again when it names `gpu_name`.
struct StudyFilesLoaded {
  std::string model_path;
  const ModelConfig* model = nullptr;
  std::string gpu_name;
};
/// The same from a loaded config tree (`path` locates the model file named relative to it).
Study read_study(const hw::LoadedConfig& config, const std::string& path,
                 const StudyFilesLoaded* loaded = nullptr);

/// One workload simulated and analysed.
struct WorkloadResult {
  WorkloadSpec spec;
  Graph graph;
  Execution exec;
  CriticalPath path;
  std::vector<WhatIfResult> what_ifs;
  MemoryReport memory;
  std::vector<RooflinePoint> roofline;
  double model_flops = 0;  ///< useful FLOPs of the step (for MFU)
};

struct StudyResult {
  Study study;
  ModelConfig model;
  hw::GpuSpec gpu;
  std::vector<WorkloadResult> results;
};

/// Builds the graph a workload spec describes.
Graph build_workload(const ModelConfig& m, const WorkloadSpec& w);
/// Simulates and analyses one workload.
WorkloadResult run_workload(const ModelConfig& m, const hw::GpuSpec& gpu, const WorkloadSpec& w,
                            const std::vector<std::string>& what_ifs, TimingMode mode);
StudyResult run_study(const Study& s);

/// The readable report.
std::string report_text(const StudyResult& r);
/// The same as JSON (with provenance added by the caller).
nlohmann::json report_json(const StudyResult& r);
/// Perfetto (Chrome trace event) JSON: per workload one process, tracks per stream and the host
/// thread, critical-path ops with args on_critical_path:true, a memory counter.
std::string trace_json(const StudyResult& r);
/// Roofline chart of every kernel (log-log, roofs, dots coloured by category).
std::string roofline_svg(const StudyResult& r);
/// Timeline: host and streams as lanes per workload, critical path highlighted.
std::string timeline_svg(const StudyResult& r);

}  // namespace ridge::workloads
