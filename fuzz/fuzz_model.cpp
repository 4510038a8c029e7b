// Fuzzes the model-file reader: YAML text -> config tree (alias expansion and depth bounded) ->
// ModelConfig. Any input must end in a model or a ConfigException, never a crash, hang, runaway
// allocation or sanitizer report.
#include <cstddef>
#include <cstdint>
#include <string>

#include "hw/config.hpp"
#include "workloads/model_config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    ridge::hw::LoadedConfig c;
    c.root = ridge::hw::parse_yaml(text, "fuzz.yaml");
    c.files.emplace_back("fuzz.yaml", ridge::hw::sha256_hex(text));
    (void)ridge::workloads::read_model_config(c);
  } catch (const ridge::hw::ConfigException&) {
  }
  return 0;
}
