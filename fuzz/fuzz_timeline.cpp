// Fuzzes imported e2e timelines (schema ridge.e2e_timeline/1, `ridge import timeline`): JSON
// text -> imported run ("full" part) -> graph file JSON -> read back. Any input must end in an
// imported run or a TraceError, never a crash.
#include <cstddef>
#include <cstdint>
#include <string>

#include "workloads/import_timeline.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const auto run = ridge::workloads::parse_e2e_timeline(text, "fuzz.json", "full");
    (void)ridge::workloads::imported_from_json(ridge::workloads::imported_json(run), "g.json");
  } catch (const ridge::workloads::TraceError&) {
  }
  return 0;
}
