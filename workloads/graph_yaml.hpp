// User-defined op graphs in YAML (`kind: graph`): what the workload builders do not cover (a
// pipeline of the user's own, a CNN, an overlap question), as ops of the vocabulary with named
// dependencies, streams, repeats and host gaps, run on the executor (workloads/executor.hpp).
//
//   kind: graph
//   question: "..."            # optional, printed
//   gpu: h200                  # optional (default h200); `ridge run --gpu` overrides
//   mode: fast                 # optional: fast or detailed kernel model
//   kernel_gap: 1 us           # optional: between back-to-back kernels (default: the GPU's)
//   what_if: [gemm*3]          # optional: categories/op kinds/GPU figures sped up (analysis.hpp)
//   ops:                       # in host issue order
//     - name: step             # required, unique
//       op: gemm m=4096 n=4096 k=4096 dtype=bf16   # a vocabulary op, timed by the model
//       # or  time: 5 ms       # a kernel of stated duration
//       # or  host: 95 ms      # host work of stated duration
//       category: gemm         # optional: for what-ifs (default from the op kind)
//       stream: comm           # optional stream name (default: the default stream)
//       after: [load]          # optional: ops (earlier in the list) that must end first
//       repeat: 4              # optional: launched this many times back to back
//       gap: 10 us             # optional: host time before each launch
//
// Host time is what the file states (`host`, `gap`): launches cost the host nothing more, so a
// graph's arithmetic is exactly the file's. Errors: `file:line:col: ops[2].after: unknown op
// 'lod' (did you mean 'load'?)`, all at once, exit 2.
#pragma once

#include <string>
#include <vector>

#include "hw/config.hpp"
#include "workloads/analysis.hpp"
#include "workloads/executor.hpp"
#include "workloads/graph.hpp"

namespace ridge::workloads {

struct GraphFile {
  std::string question;
  std::string gpu = "h200";
  TimingMode mode = TimingMode::kFast;
  double kernel_gap_s = -1;  ///< < 0: the GPU's
  std::vector<std::string> what_ifs;
  Graph graph;
  std::vector<std::string> stream_names;  ///< index = graph stream
  std::vector<std::pair<std::string, std::string>> files;
};

/// Reads a `kind: graph` file. Throws hw::ConfigException listing every problem.
GraphFile load_graph_yaml(const std::string& path);
/// The same from a parsed tree (tests).
GraphFile read_graph_yaml(const hw::ConfigNode& root);

struct GraphRun {
  Execution exec;
  std::vector<WhatIfResult> what_ifs;
  double step_s = 0;
};

/// Runs the graph on `gpu` with its what-ifs.
GraphRun run_graph(const GraphFile& f, const hw::GpuSpec& gpu);
ExecOptions graph_exec_options(const GraphFile& f);

std::string graph_run_text(const GraphFile& f, const GraphRun& r, const std::string& gpu_name);
nlohmann::json graph_run_json(const GraphFile& f, const GraphRun& r);

}  // namespace ridge::workloads
