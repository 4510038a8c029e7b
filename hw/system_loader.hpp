// Loading systems from configs/systems/*.yaml (strictly, every problem at once, with overlays),
// finding shipped systems by name, and the table of keys a system file may hold (which drives
// both the loader's ranges and defaults and `ridge describe system`).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "hw/config.hpp"
#include "hw/system_spec.hpp"

namespace ridge::hw {

/// One key of a system file: where it sits, what it holds, its default and range, what it means.
struct SystemKey {
  const char* path;  ///< dotted path below `system:`, e.g. "node.nvlink.bandwidth"
  const char* type;  ///< "bandwidth", "time", "integer", "fraction", "text", "bool", "enum", "map"
  const char* fallback;  ///< default as written in a file, or "" when required
  double lo, hi;         ///< inclusive range in base units (for numbers)
  const char* meaning;
};

/// Every key a system file may hold, in file order.
const std::vector<SystemKey>& system_keys();

/// Reads a merged config tree into a SystemSpec (loading the GPU it names). Throws
/// ConfigException listing every problem.
SystemSpec read_system_spec(const LoadedConfig& config);

/// Loads a system config file (and its bases). Throws ConfigException.
SystemSpec load_system_spec(const std::string& path);

/// Shipped system files (configs/systems/*.yaml), sorted.
std::vector<std::string> list_system_config_files();

/// A system by file path, file stem, name or alias (case-insensitive). Throws ConfigException
/// naming the known systems (with the nearest as a suggestion) when nothing matches.
std::string resolve_system_config(const std::string& name_or_path);

/// resolve_system_config + load_system_spec.
SystemSpec find_system(const std::string& name_or_path);

/// Empty if `gpus` GPUs of `s` can run one job (at most the system's GPUs, and either within
/// one node or whole nodes), else what is wrong.
std::string check_gpu_count(const SystemSpec& s, long long gpus);

}  // namespace ridge::hw
