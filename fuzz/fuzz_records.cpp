// Fuzzes the measurement-records reader (and, through it, the op vocabulary's parameter checks):
// JSON text -> depth pre-scan -> nlohmann -> RecordFile. Any input must end in records or
// std::invalid_argument naming the file, never a crash or a deep recursion.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "models/records.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    (void)ridge::models::parse_records(text, "fuzz.json");
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
