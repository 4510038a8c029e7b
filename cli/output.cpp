#include "cli/output.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "hw/units.hpp"

#ifndef RIDGE_VERSION
#define RIDGE_VERSION "0.0.0"
#endif

namespace ridge::cli {

std::string Table::str() const {
  std::vector<size_t> width(header_.size(), 0);
  auto measure = [&](const std::vector<std::string>& r) {
    for (size_t i = 0; i < r.size() && i < width.size(); ++i)
      width[i] = std::max(width[i], r[i].size());
  };
  measure(header_);
  for (const auto& r : rows_) measure(r);
  // Right-align cells that are plain numbers (digits, sign, point, exponent, percent).
  auto numeric = [](const std::string& s) {
    if (s.empty() ||
        !(std::isdigit(static_cast<unsigned char>(s[0])) || s[0] == '-' || s[0] == '+'))
      return false;
    return s.find_first_not_of("0123456789.-+eE%x") == std::string::npos;
  };
  std::string out;
  auto emit = [&](const std::vector<std::string>& r, bool head) {
    std::string line;
    for (size_t i = 0; i < width.size(); ++i) {
      const std::string cell = i < r.size() ? r[i] : "";
      const bool right = !head && numeric(cell) && i > 0;
      line += right ? fmt::format("{:>{}}", cell, width[i]) : fmt::format("{:<{}}", cell, width[i]);
      if (i + 1 < width.size()) line += "  ";
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  };
  emit(header_, true);
  size_t total = 0;
  for (size_t w : width) total += w + 2;
  out += std::string(total >= 2 ? total - 2 : 0, '-') + "\n";
  for (const auto& r : rows_) emit(r, false);
  return out;
}

nlohmann::json provenance(const std::vector<std::pair<std::string, std::string>>& files) {
  nlohmann::json j;
  j["tool"] = "ridge";
  j["version"] = RIDGE_VERSION;
  j["configs"] = nlohmann::json::array();
  for (const auto& [path, sha] : files) j["configs"].push_back({{"path", path}, {"sha256", sha}});
  return j;
}

std::string provenance_text(const std::vector<std::pair<std::string, std::string>>& files) {
  std::string out;
  for (const auto& [path, sha] : files)
    out += fmt::format("config: {} (sha256 {})\n", path, sha.substr(0, 16));
  return out;
}

void write_file_atomically(const std::string& path, const std::string& content) {
  const std::string tmp = path + ".tmp-ridge";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error(fmt::format("{}: cannot open for writing", path));
    out << content;
    out.flush();
    if (!out) {
      std::remove(tmp.c_str());
      throw std::runtime_error(fmt::format("{}: write failed", path));
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::remove(tmp.c_str());
    throw std::runtime_error(fmt::format("{}: {}", path, ec.message()));
  }
}

std::string fmt_rate(double v) {
  return hw::format_quantity(v, hw::Dimension::kFlopRate);
}
std::string fmt_bw(double v) {
  return hw::format_quantity(v, hw::Dimension::kBandwidth);
}
std::string fmt_time(double v) {
  return hw::format_quantity(v, hw::Dimension::kTime);
}
std::string fmt_bytes(double v) {
  if (v >= 1e9) return fmt::format("{:.2f} GB", v / 1e9);
  if (v >= 1e6) return fmt::format("{:.2f} MB", v / 1e6);
  if (v >= 1e3) return fmt::format("{:.2f} kB", v / 1e3);
  return fmt::format("{:.0f} B", v);
}

}  // namespace ridge::cli
