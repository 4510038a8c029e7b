// Fuzzes `ridge predict`'s input: the first byte picks YAML cases or JSON (a records file or a
// list of cases), the rest is the text. Any input must end in cases (each predicted in fast mode
// on the H200 when the GPU supports it) or in a reported problem, never a crash.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "hw/config.hpp"
#include "hw/gpu_loader.hpp"
#include "models/cases.hpp"
#include "models/op_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  static const ridge::hw::GpuSpec gpu = ridge::hw::find_gpu("h200");
  const std::string path = (data[0] & 1) ? "fuzz.json" : "fuzz.yaml";
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    std::vector<std::string> errors;
    const auto cases = ridge::models::parse_cases(text, path, errors);
    for (const auto& c : cases) {
      if (!ridge::models::unsupported_reason(gpu, c.op).empty()) continue;
      (void)ridge::models::predict_kernel(gpu, c.op, ridge::models::Mode::kFast, c.timing);
    }
  } catch (const ridge::hw::ConfigException&) {
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
