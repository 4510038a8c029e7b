// Fuzzes the end-to-end records reader of `ridge run --e2e-table` (validate/e2e records, or a
// user's own in that schema): JSON text -> depth pre-scan -> nlohmann -> e2e_graphs, which
// rebuilds each record's workload from its params and checks its measurement fields; then, when
// the workloads are small (at most 500 ops in all: a simulation under the sanitizers takes
// ~0.5 s per 1,000 ops), compare_e2e simulates them on the H200 as the command does. Any input
// must end in rows or std::invalid_argument naming the record and the field, never a crash.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "hw/gpu_loader.hpp"
#include "hw/limits.hpp"
#include "workloads/e2e_compare.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const ridge::hw::GpuSpec gpu = ridge::hw::find_gpu("h200-sxm-141gb-calibrated");
  const std::string text(reinterpret_cast<const char*>(data), size);
  if (!ridge::hw::json_depth_error(text).empty()) return 0;
  const nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
  if (doc.is_discarded()) return 0;
  try {
    std::size_t ops = 0;
    for (const auto& g : ridge::workloads::e2e_graphs(doc)) ops += g.size();
    if (ops <= 500) (void)ridge::workloads::compare_e2e(doc, gpu);
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
