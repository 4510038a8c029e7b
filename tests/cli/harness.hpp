// Runs the `ridge` binary in a scratch directory and collects its exit status and output.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

namespace ridge::test {

struct Run {
  int status = -1;  ///< exit status; -1 when killed by a signal (a crash)
  std::string output;
};

/// `ridge ARGS` in `dir`, stderr merged into the output.
inline Run run_ridge(const std::string& args, const std::string& dir = ".") {
  const std::string cmd = "cd '" + dir + "' && " + std::string(RIDGE_BIN) + " " + args + " 2>&1";
  Run r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf{};
  while (fgets(buf.data(), buf.size(), p)) r.output += buf.data();
  const int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

inline bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

/// A fresh scratch directory, removed when the object goes.
struct Scratch {
  std::filesystem::path dir;
  Scratch() {
    static int n = 0;
    dir = std::filesystem::temp_directory_path() /
          ("ridge-test-" + std::to_string(::getpid()) + "-" + std::to_string(n++));
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
  }
  ~Scratch() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  std::string path(const std::string& name) const { return (dir / name).string(); }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(dir / name, std::ios::binary) << text;
    return path(name);
  }
  std::string read(const std::string& name) const {
    std::ifstream in(dir / name, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }
  bool exists(const std::string& name) const { return std::filesystem::exists(dir / name); }
};

inline const std::string kDefaultStudy =
    std::string(RIDGE_SOURCE_DIR) + "/configs/studies/default.yaml";

}  // namespace ridge::test
