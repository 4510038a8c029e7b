// Linked into every fuzz target: the shipped config files (under config_dir(): configs/hw,
// configs/models, configs/systems, ...) are parsed once per process, not at every execution.
// A study names its model and GPU, a system its GPU, a graph its GPU; an unknown name makes the
// resolver load every file of the folder to compare names and aliases. Those files are not the
// input under test and do not change during a run, yet re-reading them was most of each
// execution (fuzz_study: find_gpu was 89% of the callback's time under perf). The input itself
// always goes the whole way (parse_yaml in the harness), and so does every file it names outside
// config_dir() (the bombs' /dev/zero, a missing file, a directory): only regular files inside
// config_dir() are cached, and a load that throws is not.
//
// RIDGE_FUZZ_NO_CACHE=1 in the environment turns the cache off (to measure what it saves).
//
// How: the targets link with -Wl,--wrap=<ridge::hw::load_config_file>, so every call from another
// object file (the GPU, system, model, study and graph loaders) comes here first.
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>

#include "hw/config.hpp"
#include "hw/gpu_loader.hpp"

ridge::hw::LoadedConfig real_load_config_file(const std::string& path) __asm__(
    "__real__ZN5ridge2hw16load_config_fileERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE");
ridge::hw::LoadedConfig cached_load_config_file(const std::string& path) __asm__(
    "__wrap__ZN5ridge2hw16load_config_fileERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE");

namespace {

bool shipped(const std::string& path) {
  namespace fs = std::filesystem;
  static const std::string dir = [] {
    std::error_code ec;
    return fs::weakly_canonical(ridge::hw::config_dir(), ec).string() + "/";
  }();
  std::error_code ec;
  if (!fs::is_regular_file(fs::symlink_status(path, ec))) return false;  // no link, device, dir
  const std::string full = fs::weakly_canonical(path, ec).string();
  return !ec && full.compare(0, dir.size(), dir) == 0;
}

}  // namespace

ridge::hw::LoadedConfig cached_load_config_file(const std::string& path) {
  static std::map<std::string, ridge::hw::LoadedConfig> cache;
  static const bool off = std::getenv("RIDGE_FUZZ_NO_CACHE") != nullptr;
  if (off) return real_load_config_file(path);
  if (auto it = cache.find(path); it != cache.end()) return it->second;
  ridge::hw::LoadedConfig c = real_load_config_file(path);
  if (shipped(path)) cache.emplace(path, c);
  return c;
}
