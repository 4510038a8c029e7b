// Fuzzes the serving-trace reader (`arrivals: {process: trace}`): the first byte picks CSV or
// JSONL, the rest is the trace. Any input must end in requests or a ConfigException naming the
// line, never a crash.
#include <cstddef>
#include <cstdint>
#include <string>

#include "hw/config.hpp"
#include "workloads/serving_config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string path = (data[0] & 1) ? "fuzz.jsonl" : "fuzz.csv";
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    (void)ridge::workloads::parse_trace(text, path, (data[0] & 2) ? 4096 : 0);
  } catch (const ridge::hw::ConfigException&) {
  }
  return 0;
}
