// The keys users write in study files (`study:` with workloads) and model files (`model:`), one
// table each: type, default, range and meaning. The loaders take their ranges from these tables
// (file_key(...).lo/.hi) and `ridge describe study|model` prints them; a test loads every shipped
// file with key recording on and checks that the keys the loaders ask for are exactly the table's.
#pragma once

#include <string_view>
#include <vector>

namespace ridge::workloads {

/// One key of a file. Paths are dotted, list items written [] ("study.workloads[].kind").
struct FileKey {
  const char* path;
  const char* type;      ///< "integer", "text", "bool", "a|b|c" (a choice), "map", "list", "time"
  const char* fallback;  ///< the default as written in a file, "" when required
  long long lo = 0, hi = 0;  ///< inclusive range of an integer (lo > hi: not an integer)
  const char* meaning = "";
};

/// Keys of a study file with workloads on one GPU (`ridge describe study`). A parallel study's
/// `parallel:` block is `ridge describe parallel`; serving studies are `ridge describe serve`.
const std::vector<FileKey>& study_keys();
/// Keys of a model file (`ridge describe model`), transformer and diffusion.
const std::vector<FileKey>& model_keys();

/// The entry of `path` in `table`; a path missing there is a programming error (std::logic_error),
/// found by any test that loads such a file.
const FileKey& file_key(const std::vector<FileKey>& table, std::string_view path);

}  // namespace ridge::workloads
