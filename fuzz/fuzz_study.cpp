// Fuzzes the study reader: YAML text -> config tree -> Study, which also loads the model and GPU
// it names (shipped ones, or files that must be regular and small). Any input must end in a
// Study or a ConfigException (std::invalid_argument for a bad what-if), never a crash.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "hw/config.hpp"
#include "workloads/study.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    ridge::hw::LoadedConfig c;
    c.root = ridge::hw::parse_yaml(text, "fuzz.yaml");
    c.files.emplace_back("fuzz.yaml", ridge::hw::sha256_hex(text));
    (void)ridge::workloads::read_study(c, "fuzz.yaml");
  } catch (const ridge::hw::ConfigException&) {
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
