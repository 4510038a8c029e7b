// For the targets whose loaders take a path (serving, plan and sweep studies): fuzz_study_file
// writes the input to DIR/studies/fuzz.yaml, DIR a temporary folder made once per process holding
// copies of the shipped studies and traces (studies/, traces/), so that a seed's `trace:
// ../traces/chat.csv` or a plan's `serve: serve-llama3-8b-chat.yaml` resolves as it does in
// configs/. The folder is removed at exit.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "hw/config.hpp"
#include "hw/gpu_loader.hpp"

namespace ridge::fuzz {

class StudyDir {
 public:
  StudyDir() {
    namespace fs = std::filesystem;
    std::string tmpl = (fs::temp_directory_path() / "ridge-fuzz-XXXXXX").string();
    dir_ = mkdtemp(tmpl.data());
    fs::create_directories(dir_ + "/studies");
    fs::create_directories(dir_ + "/traces");
    for (const char* sub : {"studies", "traces"})
      for (const auto& e : fs::directory_iterator(hw::config_dir() + "/" + sub))
        if (e.is_regular_file())
          fs::copy_file(e.path(), dir_ + "/" + sub + "/" + e.path().filename().string());
  }
  ~StudyDir() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  StudyDir(const StudyDir&) = delete;
  StudyDir& operator=(const StudyDir&) = delete;

  /// Writes the input as the study file and returns its path.
  std::string write(const uint8_t* data, size_t size) const {
    const std::string path = dir_ + "/studies/fuzz.yaml";
    std::ofstream(path, std::ios::binary | std::ios::trunc)
        .write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    return path;
  }

 private:
  std::string dir_;
};

/// The body of a study-file target: the input written as the study file, then `load(path)`.
/// Any input must end in a loaded study, hw::ConfigException or std::invalid_argument
/// (file:line:col and the key), never a crash.
template <class Load>
int fuzz_study_file(const uint8_t* data, size_t size, Load load) {
  static const StudyDir dir;
  const std::string path = dir.write(data, size);
  try {
    (void)load(path);
  } catch (const hw::ConfigException&) {
  } catch (const std::invalid_argument&) {
  }
  return 0;
}

}  // namespace ridge::fuzz
