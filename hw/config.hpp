// The strict config reader: YAML files become a tree that remembers, for every value, the file,
// line and column it came from; readers consume keys and report every problem at once as
// `file:line:col: key.path: message`, with "did you mean" for near-miss keys.
//
// Overlays: a file whose top level has `base: other.yaml` is merged over that file (maps merge key
// by key, anything else replaces), so a variant states only what differs. Each value keeps the
// position of the file it came from.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "hw/units.hpp"

namespace ridge::hw {

/// One problem in a config, with the position it was found at (line and column 1-based).
struct ConfigError {
  std::string file;
  int line = 0;
  int column = 0;
  std::string path;  ///< dotted key path, e.g. gpu.memory.l2_size
  std::string message;
  std::string str() const;
};

/// Thrown when a config has problems; holds all of them, in file order.
class ConfigException : public std::runtime_error {
 public:
  explicit ConfigException(std::vector<ConfigError> errors);
  const std::vector<ConfigError>& errors() const { return errors_; }

 private:
  std::vector<ConfigError> errors_;
};

struct ConfigEntry;

/// A YAML value with its position.
struct ConfigNode {
  enum class Kind { kNull, kScalar, kMap, kSequence };
  Kind kind = Kind::kNull;
  std::string scalar;
  std::vector<ConfigEntry> entries;  ///< map entries, in file order
  std::vector<ConfigNode> items;     ///< sequence items
  std::string file;
  int line = 0;
  int column = 0;
  int key_line = 0;  ///< where this value's key stands, for map entries
  int key_column = 0;

  const ConfigNode* find(std::string_view key) const;
  ConfigNode* find(std::string_view key);
};

/// One key and its value in a map.
struct ConfigEntry {
  std::string first;
  ConfigNode second;
};

/// A config file as loaded: the merged tree and every file that went into it with its SHA-256.
struct LoadedConfig {
  ConfigNode root;
  std::vector<std::pair<std::string, std::string>> files;  ///< (path, sha256 hex), base first
};

/// Parses YAML text; `file` names it in messages. Syntax errors throw ConfigException.
ConfigNode parse_yaml(const std::string& text, const std::string& file);

/// Loads a file and, recursively, the `base:` it names (relative to the file). Throws
/// ConfigException for unreadable files, syntax errors, and base cycles.
LoadedConfig load_config_file(const std::string& path);

/// Deep-merges `overlay` over `base`: maps merge key by key; other values replace.
void merge_config(ConfigNode& base, const ConfigNode& overlay);

/// Collects errors while a config is read, so that all are reported at once.
class ErrorSink {
 public:
  void add(const ConfigNode& at, const std::string& path, std::string message);
  /// An error found elsewhere (another file of the same run), reported with these.
  void add(ConfigError error) { errors_.push_back(std::move(error)); }
  bool empty() const { return errors_.empty(); }
  /// Throws ConfigException with everything collected, sorted by file position, if any.
  void throw_if_any() const;
  const std::vector<ConfigError>& errors() const { return errors_; }

 private:
  std::vector<ConfigError> errors_;
};

/// Reads one map strictly: every key must be consumed; `finish()` reports the rest as unknown.
class MapReader {
 public:
  /// `sources`, when given, collects (key path, source) for every figure read; a figure's source
  /// is its own `{value: ..., source: ...}` or the nearest enclosing map's `source:` key, and a
  /// figure with neither is an error.
  MapReader(const ConfigNode& node, std::string path, ErrorSink& sink,
            std::vector<std::pair<std::string, std::string>>* sources = nullptr,
            std::string inherited_source = {});

  bool has(std::string_view key) const;
  /// The child node (marked used), or nullptr; a missing required key is reported.
  const ConfigNode* child(std::string_view key, bool required);
  /// A quantity in base units; `lo`/`hi` bound it inclusively. Missing and no default: error.
  double quantity(std::string_view key, Dimension dim,
                  std::optional<double> fallback = std::nullopt, double lo = 0.0, double hi = 1e30);
  /// An integer in [lo, hi].
  long long integer(std::string_view key, std::optional<long long> fallback = std::nullopt,
                    long long lo = 0, long long hi = (1LL << 53));
  std::string text(std::string_view key, std::optional<std::string> fallback = std::nullopt);
  /// One of `choices`; anything else is reported at the value ("expected a, b or c", with "did
  /// you mean" for a near miss) and gives an empty string. Missing and no fallback: error, "".
  std::string choice(std::string_view key, std::optional<std::string> fallback,
                     const std::vector<std::string_view>& choices);
  bool boolean(std::string_view key, std::optional<bool> fallback = std::nullopt);
  /// A sequence of plain strings.
  std::vector<std::string> text_list(std::string_view key, bool required = false);
  /// A sequence of quantities.
  std::vector<double> quantity_list(std::string_view key, Dimension dim, bool required = false);
  /// A nested map (reported if missing and required, or not a map).
  std::optional<MapReader> map(std::string_view key, bool required = true);
  /// Marks a key as known without reading it (e.g. `source`, documentation keys).
  void ignore(std::string_view key);
  /// Reports every key not consumed as unknown, with the nearest valid key when one is close.
  void finish();

  const std::string& path() const { return path_; }
  const ConfigNode& node() const { return node_; }
  ErrorSink& sink() { return sink_; }
  std::string key_path(std::string_view key) const;

 private:
  const ConfigNode& node_;
  std::string path_;
  ErrorSink& sink_;
  std::vector<std::string> used_;
  std::vector<std::string> known_;  // asked for, even if absent: the valid keys for suggestions
  std::vector<std::pair<std::string, std::string>>* sources_;
  std::string source_;
  void note(std::string_view key);
  // The scalar behind a figure (unwrapping {value, source}), recording its source.
  const ConfigNode* figure(std::string_view key, bool required);
};

/// Levenshtein distance, for "did you mean".
int edit_distance(std::string_view a, std::string_view b);

/// The candidate nearest to `word` when close enough to be a typo (at most a third of the longer
/// length, at least 1 edit), else empty.
std::string nearest_word(std::string_view word, const std::vector<std::string_view>& candidates);

/// "expected a, b or c" (with " (did you mean 'b'?)" when `got` is a near miss).
std::string expected_one_of(std::string_view got, const std::vector<std::string_view>& choices);

/// SHA-256 of a byte string, lowercase hex (for recording which inputs a run used).
std::string sha256_hex(const std::string& bytes);

}  // namespace ridge::hw
