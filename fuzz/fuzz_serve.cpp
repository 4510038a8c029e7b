// Fuzzes the loader of `kind: serve` studies (workloads/serving_config.cpp: model, GPU or system,
// arrivals, scheduler, engine, SLO, capacity, disaggregation): YAML text written to a study file
// (fuzz/study_file.hpp), then loaded as `ridge serve` loads it. Any input must end in a loaded
// study, hw::ConfigException or std::invalid_argument (file:line:col and the key), never a crash.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "fuzz/study_file.hpp"
#include "hw/config.hpp"
#include "workloads/serving_config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const ridge::fuzz::StudyDir dir;
  const std::string path = dir.write(data, size);
  try {
    (void)ridge::workloads::load_serve_study(path);
  } catch (const ridge::hw::ConfigException&) {
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
