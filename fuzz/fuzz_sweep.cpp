// Fuzzes the loader of sweep studies (workloads/sweep.cpp: the study and every point's study, each
// point's parameters checked): YAML text written to a study file (fuzz/study_file.hpp), then loaded
// as `ridge sweep` loads it.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz/study_file.hpp"
#include "workloads/sweep.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return ridge::fuzz::fuzz_study_file(data, size, [](const std::string& path) {
    return ridge::workloads::load_sweep(path, "fuzz");
  });
}
