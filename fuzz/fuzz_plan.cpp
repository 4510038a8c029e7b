// Fuzzes the loader of plan studies (workloads/plan_config.cpp: the model, the system, the search
// space; a serving plan also its serve study): YAML text written to a study file
// (fuzz/study_file.hpp), then loaded as `ridge plan` loads it. Any input must end in a loaded
// study, hw::ConfigException or std::invalid_argument (file:line:col and the key), never a crash.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz/study_file.hpp"
#include "workloads/plan_config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return ridge::fuzz::fuzz_study_file(
      data, size, [](const std::string& path) { return ridge::workloads::load_plan_study(path); });
}
