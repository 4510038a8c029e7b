// A sweep: one study run at many points, each point setting hardware figures (what-if names:
// hbm_bandwidth, nvlink_bandwidth, ...) and workload parameters (batch, seq, tp, ...) to values
// from a grid (cartesian product of value lists and ranges) or an explicit list of points.
//
// The study file carries a top-level `sweep:` block beside `study:`:
//   sweep:
//     grid:                                   # or `points: [{key: value, ...}, ...]`
//       hbm_bandwidth: {from: 2 TB/s, to: 8 TB/s, steps: 4, scale: log}
//       batch: [1, 8, 64]                     # shorthand for {values: [1, 8, 64]}
// Workload parameters are written into the study's own tree (every workload that takes the key,
// or the parallel block) and the study is read again per point, so each point is checked exactly
// as `ridge run` checks a study, and an error points at the sweep value that caused it. Figures
// are applied to the loaded GPU or system spec: an absolute value (`hbm_bandwidth: 4.8 TB/s`)
// becomes the what-if factor value / base, applied by the what-if code (so clock and sm_count
// scale the chip-wide rates as the what-ifs do); `NAME*` takes the factor itself.
//
// Every point has a key: SHA-256 of the study without its sweep block, of every file it reads
// (model, GPU, system) and of the point's values. Equal keys mean equal results, which is what
// makes a sweep resumable and its points shareable between processes.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "hw/config.hpp"
#include "hw/gpu_spec.hpp"
#include "hw/system_spec.hpp"
#include "workloads/model_config.hpp"
#include "workloads/study.hpp"

namespace ridge::workloads {

/// One key a sweep may set, for loading and `ridge describe sweep`.
struct SweepKeySpec {
  const char* key;
  const char* unit;     ///< "B/s", "count", "factor", "as in the study"
  const char* applies;  ///< "gpu", "system", "workload", "parallel"
  const char* meaning;
};
const std::vector<SweepKeySpec>& sweep_keys();

/// One value of one key at one point.
struct SweepValue {
  std::string text;     ///< canonical: figures in base units ("4.8e+12"), parameters as written
  double number = 0;    ///< figures: base units or factor
  hw::ConfigNode node;  ///< parameters: the scalar put into the study (with its sweep position)
};

struct SweepPoint {
  std::vector<SweepValue> values;  ///< one per Sweep::keys entry
  std::string key;                 ///< SHA-256 hex of the study hash and the values
  std::size_t study = 0;           ///< Sweep::studies index: the study read at this point
};

struct Sweep {
  std::string path;
  std::vector<std::string> keys;        ///< in file order (grid: the first varies slowest)
  std::vector<std::size_t> grid_shape;  ///< values per key for a grid; empty for a point list
  std::vector<SweepPoint> points;
  std::string study_hash;
  std::vector<std::pair<std::string, std::string>> files;  ///< every file read, with SHA-256
  Study study;                       ///< the study without the sweep (its base point)
  std::vector<Study> studies;        ///< one per distinct set of parameter values; [0] is `study`
  ModelConfig model;                 ///< loaded once for every point
  hw::GpuSpec gpu;                   ///< single-GPU studies
  hw::SystemSpec system;             ///< parallel studies
  std::vector<std::string> columns;  ///< result columns, the same for every point
};

/// Loads a study file with a sweep block and reads every point's study. Throws
/// hw::ConfigException with every problem (file:line:col: key: message). `salt` enters the point
/// keys (the tool's version: results of another version are not reused).
Sweep load_sweep(const std::string& path, const std::string& salt);

/// Simulates one point; the values follow Sweep::columns. Thread-safe for distinct calls.
std::vector<double> evaluate_point(const Sweep& s, std::size_t index);

/// A value as people read it: figures with their unit ("4.80 TB/s"), factors as "x2",
/// parameters as written.
std::string sweep_value_text(const Sweep& s, std::size_t key, const SweepValue& v);

/// A line plot of the step times against the one swept key, or a heatmap over a two-key grid;
/// "" for other shapes. `results` is per point, in Sweep::columns order.
std::string sweep_svg(const Sweep& s, const std::vector<std::vector<double>>& results);

/// Upper bound on the points of one sweep.
inline constexpr std::size_t kMaxSweepPoints = 1'000'000;

}  // namespace ridge::workloads
