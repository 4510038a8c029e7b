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

namespace {

// Large but valid workloads only repeat the same ops: a 768-layer GPT-2 training step takes ~40 s
// to build under the sanitizers and coverage (0.5 s with its simulation in a normal build), a
// diffusion pipeline of the default 20 steps ~8 s. Inputs asking for more than 48 layers, 8
// accumulation steps or 4 diffusion steps (the default counting as 20) are skipped, so that
// libFuzzer's time goes to the reader (the ranges themselves are tested in test_workloads).
bool too_big(const nlohmann::json& doc) {
  const nlohmann::json& recs = doc.is_object() && doc.contains("records") ? doc["records"] : doc;
  if (!recs.is_array()) return false;
  static const nlohmann::json kNone = nlohmann::json::object();
  for (const auto& r : recs) {
    if (!r.is_object()) continue;
    const auto& p = r.contains("params") && r["params"].is_object() ? r["params"] : kNone;
    auto above = [&](const char* key, double fallback, double most) {
      const double v = p.contains(key) && p[key].is_number() ? p[key].get<double>() : fallback;
      return v > most;
    };
    if (above("layers", 0, 48) || above("grad_accum", 0, 8)) return true;
    if (r.contains("op") && r["op"] == "e2e_diffusion" && above("K", 20, 4)) return true;
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const ridge::hw::GpuSpec gpu = ridge::hw::find_gpu("h200-sxm-141gb-calibrated");
  const std::string text(reinterpret_cast<const char*>(data), size);
  if (!ridge::hw::json_depth_error(text).empty()) return 0;
  const nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
  if (doc.is_discarded() || too_big(doc)) return 0;
  try {
    std::size_t ops = 0;
    for (const auto& g : ridge::workloads::e2e_graphs(doc)) ops += g.size();
    if (ops <= 500) (void)ridge::workloads::compare_e2e(doc, gpu);
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
