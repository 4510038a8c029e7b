// Shared output helpers for ridge's commands: aligned text tables, JSON with provenance (tool
// version and every config file with its SHA-256), and writing files whole or not at all.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <utility>
#include <vector>

#include "hw/gpu_spec.hpp"

namespace ridge::cli {

/// A text table: header row then rows, columns padded; numbers right-aligned.
class Table {
 public:
  explicit Table(std::vector<std::string> header) : header_(std::move(header)) {}
  void row(std::vector<std::string> cells) { rows_.push_back(std::move(cells)); }
  std::string str() const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

/// {"tool": "ridge", "version": ..., "configs": [{"path", "sha256"}...]}
nlohmann::json provenance(const std::vector<std::pair<std::string, std::string>>& files);
/// "configs: path (sha256 abcd1234...)" lines for the text form.
std::string provenance_text(const std::vector<std::pair<std::string, std::string>>& files);

/// Writes `content` to `path` through a temporary file and a rename, so a failed run leaves no
/// half-written file. Throws std::runtime_error naming the path on failure.
void write_file_atomically(const std::string& path, const std::string& content);

/// Engineering formatting: "989.4 TFLOP/s", "3.35 TB/s", "12.3 us".
std::string fmt_rate(double flops_per_s);
std::string fmt_bw(double bytes_per_s);
std::string fmt_time(double seconds);
std::string fmt_bytes(double bytes);

}  // namespace ridge::cli
