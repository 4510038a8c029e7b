// Writes `text` to `path`, loads it with `load`, removes the file, and returns the loader's
// ConfigException message ("" when it loaded): the config-error tests of the workloads.
#pragma once

#include <cstdio>
#include <fstream>
#include <string>

#include "hw/config.hpp"

namespace ridge::test {

template <typename Load>
std::string load_error(const std::string& path, const std::string& text, Load load) {
  {
    std::ofstream f(path);
    f << text;
  }
  std::string message;
  try {
    load(path);
  } catch (const hw::ConfigException& e) {
    message = e.what();
  }
  std::remove(path.c_str());
  return message;
}

}  // namespace ridge::test
