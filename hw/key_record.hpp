// Key recording, for the tests that hold `ridge describe` tables to their loaders (kept out of
// hw/config.hpp, which every file includes).
#pragma once

#include <set>
#include <string>

namespace ridge::hw {

/// While `into` is set, every key a MapReader is asked for (present in the file or not) is added
/// to it as its dotted path, list indices written as [] ("study.workloads[].kind"). nullptr stops
/// recording. Not thread-safe; tests only.
void record_config_keys(std::set<std::string>* into);

/// Adds `path` to the recording, if one is on (for readers of JSON inputs, which have no
/// MapReader: records, cases).
void note_config_key(const std::string& path);

}  // namespace ridge::hw
