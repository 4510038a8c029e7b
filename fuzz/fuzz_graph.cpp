// Fuzzes `kind: graph` files: YAML text -> config tree -> GraphFile -> a fast-mode run on the H200
// (the file's mode is forced to fast: detailed mode is bounded by its own budget, ~30 s). Any
// input must end in a run or a ConfigException / std::invalid_argument, never a crash.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "hw/config.hpp"
#include "hw/gpu_loader.hpp"
#include "workloads/graph_yaml.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const ridge::hw::GpuSpec gpu = ridge::hw::find_gpu("h200");
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    auto f = ridge::workloads::read_graph_yaml(ridge::hw::parse_yaml(text, "fuzz.yaml"));
    f.mode = ridge::workloads::TimingMode::kFast;
    (void)ridge::workloads::run_graph(f, gpu);
  } catch (const ridge::hw::ConfigException&) {
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
