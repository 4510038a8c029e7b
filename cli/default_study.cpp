// `ridge` with no arguments: the README's default study, configs/studies/default.yaml (Llama-3 8B
// decode at batch 1 on an H200, eager against a CUDA graph: what bounds it, what would help).
#include "cli/commands.hpp"
#include "hw/gpu_loader.hpp"

namespace ridge::cli {

int run_default_study() {
  return run_study_path(hw::config_dir() + "/studies/default.yaml");
}

}  // namespace ridge::cli
