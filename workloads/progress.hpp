// Progress of long runs (detailed mode simulates every thread block: up to ~30 s per workload
// execution). The workloads layer reports; the command line decides how to show it (a line
// rewritten in place on a terminal, plain lines otherwise) and installs the reporter.
#pragma once

#include <functional>
#include <string>

namespace ridge::workloads {

struct Progress {
  std::string what;   ///< "detailed mode"
  double done = 0;    ///< thread blocks simulated so far in this execution
  double budget = 0;  ///< the most there can be (the detailed_blocks limit)
  int shapes = 0;     ///< distinct op shapes simulated so far
};

/// Installs `f` (empty: none). Not thread-safe: set once at start-up.
void set_progress_reporter(std::function<void(const Progress&)> f);
/// Calls the reporter, if any.
void report_progress(const Progress& p);

}  // namespace ridge::workloads
