// Fuzzes `ridge compare`'s collective readers: ridge.records JSON (validate/'s collective records)
// when the text starts with '{', else nccl-tests' text output as all_reduce (ranks from its
// "#  Rank" lines, else 8); then, as the command does, every measurement's GPU count checked on
// DGX H200 and the readable ones simulated there. Any input must end in a comparison,
// hw::ConfigException or std::invalid_argument (both name the file and place), never a crash.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "hw/config.hpp"
#include "hw/nccl_tuning.hpp"
#include "hw/system_loader.hpp"
#include "models/collective_compare.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const ridge::hw::SystemSpec sys = ridge::hw::find_system("dgx-h200");
  static const ridge::hw::NcclTuning tuning = ridge::hw::load_nccl_tuning(sys.nccl.version);
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const auto first = text.find_first_not_of(" \t\r\n");
    const auto got = first != std::string::npos && text[first] == '{'
                         ? ridge::models::read_collective_records("fuzz.json", text)
                         : ridge::models::read_nccl_tests_text(
                               "fuzz.txt", text, ridge::models::CollOp::kAllReduce, 8);
    for (const auto& m : got)
      if (!ridge::hw::check_gpu_count(sys, m.request.gpus).empty()) return 0;
    (void)ridge::models::compare_collectives(sys, tuning, got, true, 0.0);
  } catch (const ridge::hw::ConfigException&) {
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
