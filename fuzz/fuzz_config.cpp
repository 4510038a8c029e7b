// Fuzzes the strict config path: YAML text -> config tree -> GpuSpec, and the same tree as a
// system (SystemSpec). Any input must end in a spec or a ConfigException, never a crash, hang or
// sanitizer report.
#include <cstddef>
#include <cstdint>
#include <string>

#include "hw/config.hpp"
#include "hw/gpu_loader.hpp"
#include "hw/system_loader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    ridge::hw::LoadedConfig c;
    c.root = ridge::hw::parse_yaml(text, "fuzz.yaml");
    c.files.emplace_back("fuzz.yaml", ridge::hw::sha256_hex(text));
    try {
      (void)ridge::hw::read_gpu_spec(c);
    } catch (const ridge::hw::ConfigException&) {
    }
    (void)ridge::hw::read_system_spec(c);
  } catch (const ridge::hw::ConfigException&) {
  }
  return 0;
}
