// Loading GPU specs from configs/hw/*.yaml (with overlays), and finding shipped configs by name.
#pragma once

#include <string>
#include <vector>

#include "hw/config.hpp"
#include "hw/gpu_spec.hpp"

namespace ridge::hw {

/// Reads a merged config tree into a GpuSpec. Throws ConfigException listing every problem.
GpuSpec read_gpu_spec(const LoadedConfig& config);

/// Loads a GPU config file (and its bases). Throws ConfigException.
GpuSpec load_gpu_spec(const std::string& path);

/// The folder holding Ridge's shipped configs: $RIDGE_CONFIG_DIR, else the source tree's configs/.
std::string config_dir();

/// Shipped config files of a configs/ subfolder ("hw", "systems"), sorted.
std::vector<std::string> list_config_files(const std::string& subdir);

/// A shipped config by file path, file stem, or the `name`/`aliases` under `top_key`
/// (case-insensitive). Throws ConfigException for `option` naming the shipped ones and the
/// nearest ("no such <what>").
std::string resolve_named_config(const std::string& name_or_path, const std::string& subdir,
                                 const std::string& top_key, const std::string& option,
                                 const std::string& what);

/// Shipped GPU config files (configs/hw/*.yaml), sorted; calibrated overlays included.
std::vector<std::string> list_gpu_config_files();

/// A GPU by file path, file stem ("h200-sxm-141gb"), spec name or alias ("h200"), case-insensitive.
/// Throws ConfigException naming the known GPUs when nothing matches.
std::string resolve_gpu_config(const std::string& name_or_path);

/// resolve_gpu_config + load_gpu_spec.
GpuSpec find_gpu(const std::string& name_or_path);

}  // namespace ridge::hw
