// Fuzzes `ridge import kineto`'s path: JSON text -> trace events -> imported run -> graph file ->
// read back. Any input must end in an imported run or a TraceError, never a crash, hang or
// sanitizer report. Seeds: tests/workloads/data/kineto/*.json.gz, gunzipped.
#include <cstddef>
#include <cstdint>
#include <string>

#include "workloads/import_kineto.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const auto ev = ridge::workloads::parse_kineto(text, "fuzz.json");
    const auto run = ridge::workloads::import_events(ev, "fuzz.json");
    (void)ridge::workloads::imported_from_json(ridge::workloads::imported_json(run), "g.json");
  } catch (const ridge::workloads::TraceError&) {
  }
  return 0;
}
