// Loader of a study's `parallel:` block (see workloads/parallel.hpp).
#pragma once

#include <string>
#include <vector>

#include "hw/config.hpp"
#include "workloads/parallel.hpp"

namespace ridge::workloads {

/// One key of the `parallel:` block, for `ridge describe parallel`.
struct ParallelKey {
  const char* key;
  const char* fallback;
  const char* meaning;
};
const std::vector<ParallelKey>& parallel_keys();

/// Reads and checks a `parallel:` map (errors go to the reader's sink, file:line:col: key: what).
/// `model_path` is the study's model, read to check tp against heads and pp against layers.
ParallelOptions read_parallel(hw::MapReader& p, const std::string& model_path);

}  // namespace ridge::workloads
