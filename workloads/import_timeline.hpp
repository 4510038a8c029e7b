// The compact per-kernel timelines validate/e2e writes (schema ridge.e2e_timeline/1,
// validate/e2e/e2e_common.py timeline_of; committed in validate/data/h200/e2e_run*/
// timelines.tar.gz) as imported runs, for measured replay.
//
// Captures: every GPU activity's name, GPU start and duration, the start of its launch call
// (the correlated runtime/driver call; -1 when absent), grid and block. Ignores what the format
// does not keep: streams (all ops go on one stream), registers, shared memory, input shapes
// (so nothing is mapped to a vocabulary op: every op is custom at its measured time; only the
// replay is meaningful, not the prediction).
#pragma once

#include <string>

#include "workloads/import_kineto.hpp"

namespace ridge::workloads {

/// Imports `part` ("full": CPU + CUDA profile, or "light": CUDA only) of a timeline file
/// (.json or .json.gz). Throws TraceError naming the file and the row.
ImportedRun import_e2e_timeline(const std::string& path, const std::string& part);
/// The same from the file's (decompressed) text; `path` names it in messages.
ImportedRun parse_e2e_timeline(const std::string& text, const std::string& path,
                               const std::string& part);

}  // namespace ridge::workloads
