// Fuzzes the loader of sweep studies (workloads/sweep.cpp: the study and every point's study, each
// point's parameters checked): YAML text written to a study file (fuzz/study_file.hpp), then loaded
// as `ridge sweep` loads it. Any input must end in a loaded study, hw::ConfigException or
// std::invalid_argument (file:line:col and the key), never a crash.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "fuzz/study_file.hpp"
#include "hw/config.hpp"
#include "workloads/sweep.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const ridge::fuzz::StudyDir dir;
  const std::string path = dir.write(data, size);
  try {
    (void)ridge::workloads::load_sweep(path, "fuzz");
  } catch (const ridge::hw::ConfigException&) {
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
