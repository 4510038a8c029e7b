// Shared output helpers for ridge's commands: aligned text tables, JSON with provenance (tool
// version and every config file with its SHA-256), and writing files whole or not at all.
#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <stdexcept>
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

/// An output file could not be written, or its target is refused. `ridge` exits 2 with it.
class OutputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The output files of one run, made visible together or not at all. Each target is checked (a
/// device node, FIFO, socket or directory is refused, and so is any file this run read as input,
/// compared by device and inode, links followed); each content goes to a temporary file created
/// exclusively beside its target (O_CREAT|O_EXCL|O_NOFOLLOW: a planted link is never followed)
/// and flushed to disk; only when every one is written are they renamed over their targets. On
/// failure the temporaries are removed and no target is touched. Throws OutputError naming the
/// path.
class OutputSet {
 public:
  OutputSet() = default;
  OutputSet(const OutputSet&) = delete;
  OutputSet& operator=(const OutputSet&) = delete;
  ~OutputSet();
  /// Stages `content` for `path` (checked at once, so a refused target fails before any work).
  void add(const std::string& path, std::string content);
  /// Writes every staged file; `check`, if given, runs on the written temporary paths (in add
  /// order) before anything is renamed and may throw to abandon them all.
  void commit(const std::function<void(const std::vector<std::string>&)>& check = {});

 private:
  struct Staged {
    std::string path, content, temp;
  };
  std::vector<Staged> staged_;
  void remove_temps();
};

/// Refuses an output target (OutputError) that is a device, FIFO, socket or directory, or an input
/// of this run.
void check_output_target(const std::string& path);

/// One file through an OutputSet.
void write_file_atomically(const std::string& path, const std::string& content);

/// Engineering formatting: "989.4 TFLOP/s", "3.35 TB/s", "12.3 us".
std::string fmt_rate(double flops_per_s);
std::string fmt_bw(double bytes_per_s);
std::string fmt_time(double seconds);
std::string fmt_bytes(double bytes);

}  // namespace ridge::cli
