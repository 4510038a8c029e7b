#include "hw/config.hpp"

#include "hw/key_record.hpp"
#include "hw/limits.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unordered_map>
#include <utility>
#include <vector>

namespace ridge::hw {

std::string ConfigError::str() const {
  return fmt::format("{}:{}:{}: {}: {}", file, line, column, path.empty() ? "(top)" : path,
                     message);
}

namespace {
std::string join_errors(const std::vector<ConfigError>& errors) {
  std::string out;
  for (const auto& e : errors) {
    if (!out.empty()) out += '\n';
    out += e.str();
  }
  return out;
}

// Bounds the tree a YAML document expands to: yaml-cpp shares an aliased node, but converting
// copies it at every use, so a few hundred bytes of nested aliases (billion laughs) would expand
// to gigabytes. Counting nodes as they are made stops that at kMaxYamlNodes.
struct Budget {
  const std::string& file;
  long long nodes = 0;
};

[[noreturn]] void throw_too_many_nodes(const std::string& file, const YAML::Mark& mark) {
  throw ConfigException(
      {{file, mark.line + 1, mark.column + 1, "",
        fmt::format("more than {} YAML nodes with aliases expanded (the limit; an alias bomb?)",
                    kMaxYamlNodes)}});
}
[[noreturn]] void throw_too_deep(const std::string& file, const YAML::Mark& mark) {
  throw ConfigException(
      {{file, mark.line + 1, mark.column + 1, "",
        fmt::format("nested more than {} levels deep (the limit)", kMaxYamlDepth)}});
}
std::string key_text(const YAML::Node& key) {
  return key.IsScalar() ? key.Scalar() : std::string("<non-scalar key>");
}
// Where convert() takes a map value's mark from: the value's, or the key's for a null value.
YAML::Mark value_mark(const YAML::Node& key, const YAML::Node& value) {
  return value.IsNull() ? key.Mark() : value.Mark();
}

// The same refusals as convert() (node count, depth, duplicate key), found without building the
// tree. An alias bomb expands to the node limit in convert(), seconds of work for a few hundred
// bytes; here each yaml-cpp node is measured once (an alias shares its anchor's node), so a bomb
// is refused in time proportional to its text. The walk then finds the error convert() would
// throw first, at the same place, skipping the subtrees that cannot hold it.
class Precheck {
 public:
  explicit Precheck(const std::string& file) : file_(file) {}

  /// Throws what convert(y, ..., mark, 0) would throw, if anything.
  void run(const YAML::Node& y, const YAML::Mark& mark) {
    const Size s = size(y, 0);
    if (s.known && s.nodes <= kMaxYamlNodes && s.height <= kMaxYamlDepth && !s.duplicate) return;
    long long nodes = 0;
    walk(y, mark, 0, nodes);
  }

 private:
  // A subtree as convert() would make it: nodes (map values and sequence items; saturated just
  // above the limit), height below its root, and whether a map inside repeats a key. Unknown
  // when the measuring went deeper than the depth limit (a cycle, or just deep): then the walk
  // goes through it as convert() does.
  struct Size {
    long long nodes = 1;
    int height = 0;
    bool duplicate = false;
    bool known = true;
  };
  const std::string& file_;
  // Measured nodes by byte offset, told apart by identity (YAML::Node::is) where offsets repeat.
  std::unordered_map<std::size_t, std::vector<std::pair<YAML::Node, Size>>> memo_;

  Size size(const YAML::Node& y, int depth) {
    if (!y.IsSequence() && !y.IsMap()) return {};
    if (depth > kMaxYamlDepth) return {1, 0, false, false};
    auto& bucket = memo_[y.Mark().pos];
    for (const auto& [n, s] : bucket)
      if (n.is(y)) return s;
    Size s;
    std::vector<std::string> keys;
    auto add = [&](const Size& c) {
      s.nodes = std::min(s.nodes + c.nodes, kMaxYamlNodes + 1);
      s.height = std::max(s.height, c.height + 1);
      s.duplicate = s.duplicate || c.duplicate;
      s.known = s.known && c.known;
    };
    if (y.IsSequence()) {
      for (const auto& item : y) add(size(item, depth + 1));
    } else {
      for (const auto& kv : y) {
        add(size(kv.second, depth + 1));
        std::string key = key_text(kv.first);
        if (std::find(keys.begin(), keys.end(), key) != keys.end()) s.duplicate = true;
        keys.push_back(std::move(key));
      }
    }
    bucket.emplace_back(y, s);
    return s;
  }

  // convert()'s order: count the node, check its depth, then its children in order (a map's
  // duplicate key after its value's subtree). A child whose whole subtree fits in the count
  // left, within the depth and without duplicates is added without going in.
  void walk(const YAML::Node& y, const YAML::Mark& mark, int depth, long long& nodes) {
    if (++nodes > kMaxYamlNodes) throw_too_many_nodes(file_, mark);
    if (depth > kMaxYamlDepth) throw_too_deep(file_, mark);
    auto child = [&](const YAML::Node& c, const YAML::Mark& m) {
      const Size s = size(c, depth + 1);
      if (s.known && nodes + s.nodes <= kMaxYamlNodes && depth + 1 + s.height <= kMaxYamlDepth &&
          !s.duplicate) {
        nodes += s.nodes;
        return;
      }
      walk(c, m, depth + 1, nodes);
    };
    if (y.IsSequence()) {
      for (const auto& item : y) child(item, item.Mark());
    } else if (y.IsMap()) {
      std::vector<std::string> keys;
      for (const auto& kv : y) {
        child(kv.second, value_mark(kv.first, kv.second));
        std::string key = key_text(kv.first);
        if (std::find(keys.begin(), keys.end(), key) != keys.end()) {
          throw ConfigException({{file_, kv.first.Mark().line + 1, kv.first.Mark().column + 1, key,
                                  "duplicate key"}});
        }
        keys.push_back(std::move(key));
      }
    }
  }
};

ConfigNode convert(const YAML::Node& y, Budget& budget, const YAML::Mark& mark, int depth) {
  const std::string& file = budget.file;
  if (++budget.nodes > kMaxYamlNodes) throw_too_many_nodes(file, mark);
  if (depth > kMaxYamlDepth) throw_too_deep(file, mark);
  ConfigNode n;
  n.file = file;
  n.line = mark.line + 1;
  n.column = mark.column + 1;
  switch (y.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      n.kind = ConfigNode::Kind::kNull;
      break;
    case YAML::NodeType::Scalar:
      n.kind = ConfigNode::Kind::kScalar;
      n.scalar = y.Scalar();
      break;
    case YAML::NodeType::Sequence:
      n.kind = ConfigNode::Kind::kSequence;
      for (const auto& item : y) n.items.push_back(convert(item, budget, item.Mark(), depth + 1));
      break;
    case YAML::NodeType::Map:
      n.kind = ConfigNode::Kind::kMap;
      for (const auto& kv : y) {
        std::string key = kv.first.IsScalar() ? kv.first.Scalar() : std::string("<non-scalar key>");
        // A value's own mark points at the value; a null value has no useful mark, so use the
        // key's.
        const YAML::Mark m = kv.second.IsNull() ? kv.first.Mark() : kv.second.Mark();
        ConfigNode child = convert(kv.second, budget, m, depth + 1);
        if (kv.second.IsNull()) {
          child.line = kv.first.Mark().line + 1;
          child.column = kv.first.Mark().column + 1;
        }
        child.key_line = kv.first.Mark().line + 1;
        child.key_column = kv.first.Mark().column + 1;
        auto dup = std::find_if(n.entries.begin(), n.entries.end(),
                                [&](const auto& e) { return e.first == key; });
        if (dup != n.entries.end()) {
          throw ConfigException(
              {{file, kv.first.Mark().line + 1, kv.first.Mark().column + 1, key, "duplicate key"}});
        }
        n.entries.push_back(ConfigEntry{std::move(key), std::move(child)});
      }
      break;
  }
  return n;
}
}  // namespace

ConfigException::ConfigException(std::vector<ConfigError> errors)
    : std::runtime_error(join_errors(errors)), errors_(std::move(errors)) {}

const ConfigNode* ConfigNode::find(std::string_view key) const {
  for (const auto& [k, v] : entries)
    if (k == key) return &v;
  return nullptr;
}
ConfigNode* ConfigNode::find(std::string_view key) {
  for (auto& [k, v] : entries)
    if (k == key) return &v;
  return nullptr;
}

ConfigNode parse_yaml(const std::string& text, const std::string& file) {
  try {
    YAML::Node y = YAML::Load(text);
    Precheck(file).run(y, y.Mark());
    Budget budget{file};
    return convert(y, budget, y.Mark(), 0);
  } catch (const YAML::Exception& e) {
    throw ConfigException(
        {{file, e.mark.line + 1, e.mark.column + 1, "", "YAML syntax: " + e.msg}});
  }
}

void merge_config(ConfigNode& base, const ConfigNode& overlay) {
  if (base.kind != ConfigNode::Kind::kMap || overlay.kind != ConfigNode::Kind::kMap) {
    base = overlay;
    return;
  }
  for (const auto& [key, value] : overlay.entries) {
    ConfigNode* existing = base.find(key);
    if (existing) {
      merge_config(*existing, value);
    } else {
      base.entries.push_back(ConfigEntry{key, value});
    }
  }
}

namespace {
// A Ridge config is a map whose top-level keys are plain names (gpu, model, study, base, ...).
bool looks_like_config(const ConfigNode& node) {
  if (node.kind == ConfigNode::Kind::kNull) return true;  // empty: reported as missing keys
  if (node.kind != ConfigNode::Kind::kMap) return false;
  for (const auto& [key, value] : node.entries) {
    if (key.empty() || key.size() > 64) return false;
    for (char c : key)
      if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-')) return false;
  }
  return true;
}

void load_recursive(const std::filesystem::path& path, std::vector<std::string>& chain,
                    LoadedConfig& out, const ConfigNode* from) {
  const std::string shown = path.lexically_normal().string();
  std::error_code ec;
  const std::string canon = std::filesystem::weakly_canonical(path, ec).string();
  if (std::find(chain.begin(), chain.end(), canon) != chain.end()) {
    throw ConfigException(
        {{from ? from->file : shown, from ? from->line : 1, from ? from->column : 1, "base",
          fmt::format("base cycle: '{}' is already being loaded", shown)}});
  }
  std::string text;
  try {
    text = read_input_file(shown);
  } catch (const std::invalid_argument& e) {
    // The message names the file and why (unreadable, not a regular file, over the size limit).
    if (from)
      throw ConfigException({{from->file, from->line, from->column, "base",
                              fmt::format("cannot read base file: {}", e.what())}});
    std::string why = e.what();
    if (why.starts_with(shown + ": ")) why = why.substr(shown.size() + 2);
    throw ConfigException({{shown, 0, 0, "", why}});
  }
  // A syntax error is reported at its line and column; yaml-cpp's messages quote no text.
  ConfigNode node = parse_yaml(text, shown);
  if (!looks_like_config(node)) {
    // Never echo a file that is not a Ridge config (`base: /etc/shadow` parses as a map whose keys
    // are the file's lines): say so once, at the base key or the file's start.
    const std::string msg =
        fmt::format("'{}' is not a valid config (expected a YAML map of Ridge keys)", shown);
    if (from) throw ConfigException({{from->file, from->line, from->column, "base", msg}});
    throw ConfigException({{shown, 1, 1, "", msg}});
  }
  chain.push_back(canon);
  ConfigNode merged;
  if (node.kind == ConfigNode::Kind::kMap) {
    if (const ConfigNode* base = node.find("base")) {
      if (base->kind != ConfigNode::Kind::kScalar) {
        throw ConfigException(
            {{base->file, base->line, base->column, "base", "expected a file name"}});
      }
      load_recursive(path.parent_path() / base->scalar, chain, out, base);
      merged = std::move(out.root);
      node.entries.erase(std::remove_if(node.entries.begin(), node.entries.end(),
                                        [](const auto& e) { return e.first == "base"; }),
                         node.entries.end());
      merge_config(merged, node);
    } else {
      merged = std::move(node);
    }
  } else {
    merged = std::move(node);
  }
  out.files.emplace_back(shown, sha256_hex(text));
  out.root = std::move(merged);
  chain.pop_back();
}
}  // namespace

LoadedConfig load_config_file(const std::string& path) {
  LoadedConfig out;
  std::vector<std::string> chain;
  load_recursive(std::filesystem::path(path), chain, out, nullptr);
  return out;
}

void ErrorSink::add(const ConfigNode& at, const std::string& path, std::string message) {
  errors_.push_back({at.file, at.line, at.column, path, std::move(message)});
}

void ErrorSink::throw_if_any() const {
  if (errors_.empty()) return;
  std::vector<ConfigError> sorted = errors_;
  std::stable_sort(sorted.begin(), sorted.end(), [](const ConfigError& a, const ConfigError& b) {
    return std::tie(a.file, a.line, a.column) < std::tie(b.file, b.line, b.column);
  });
  throw ConfigException(std::move(sorted));
}

MapReader::MapReader(const ConfigNode& node, std::string path, ErrorSink& sink,
                     std::vector<std::pair<std::string, std::string>>* sources,
                     std::string inherited_source)
    : node_(node),
      path_(std::move(path)),
      sink_(sink),
      sources_(sources),
      source_(std::move(inherited_source)) {
  if (node_.kind != ConfigNode::Kind::kMap && node_.kind != ConfigNode::Kind::kNull) {
    sink_.add(node_, path_, "expected a map of keys");
  }
  if (const ConfigNode* s = node_.find("source"); s && s->kind == ConfigNode::Kind::kScalar) {
    source_ = s->scalar;
    note("source");
    used_.emplace_back("source");
  }
}

std::string MapReader::key_path(std::string_view key) const {
  return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
}

namespace {
std::set<std::string>* g_key_recorder = nullptr;
}  // namespace

void record_config_keys(std::set<std::string>* into) {
  g_key_recorder = into;
}

void note_config_key(const std::string& path) {
  if (g_key_recorder) g_key_recorder->insert(path);
}

void MapReader::note(std::string_view key) {
  if (g_key_recorder) {
    // study.workloads[3].kind -> study.workloads[].kind
    std::string p, full = key_path(key);
    for (std::size_t i = 0; i < full.size(); ++i) {
      p += full[i];
      if (full[i] == '[') {
        while (i + 1 < full.size() && full[i + 1] != ']') ++i;
      }
    }
    g_key_recorder->insert(p);
  }
  if (std::find(known_.begin(), known_.end(), key) == known_.end()) known_.emplace_back(key);
}

bool MapReader::has(std::string_view key) const {
  return node_.find(key) != nullptr;
}

const ConfigNode* MapReader::child(std::string_view key, bool required) {
  note(key);
  const ConfigNode* c = node_.find(key);
  if (!c) {
    if (required) sink_.add(node_, key_path(key), "missing required key");
    return nullptr;
  }
  used_.emplace_back(key);
  return c;
}

const ConfigNode* MapReader::figure(std::string_view key, bool required) {
  const ConfigNode* c = child(key, required);
  if (!c) return nullptr;
  std::string src = source_;
  if (c->kind == ConfigNode::Kind::kMap) {
    const ConfigNode* v = c->find("value");
    const ConfigNode* s = c->find("source");
    for (const auto& [k, sub] : c->entries) {
      if (k != "value" && k != "source" && k != "note") {
        sink_.add(sub, key_path(key) + "." + k,
                  "unknown key (a figure is a value or {value, source, note})");
      }
    }
    if (!v) {
      sink_.add(*c, key_path(key), "expected a value, or a map with 'value' and 'source'");
      return nullptr;
    }
    if (s && s->kind == ConfigNode::Kind::kScalar) src = s->scalar;
    c = v;
  }
  if (sources_) {
    if (src.empty()) {
      sink_.add(*c, key_path(key),
                "no source for this figure (give 'source:' beside it or in its map)");
    } else {
      sources_->emplace_back(key_path(key), src);
    }
  }
  if (c->kind != ConfigNode::Kind::kScalar) {
    sink_.add(*c, key_path(key), "wrong type: expected a single value");
    return nullptr;
  }
  return c;
}

double MapReader::quantity(std::string_view key, Dimension dim, std::optional<double> fallback,
                           double lo, double hi) {
  const ConfigNode* c = figure(key, !fallback.has_value());
  if (!c) return fallback.value_or(0.0);
  ParsedQuantity q = parse_quantity(c->scalar, dim);
  if (!q.error.empty()) {
    sink_.add(*c, key_path(key), q.error);
    return fallback.value_or(0.0);
  }
  if (q.value < lo || q.value > hi) {
    sink_.add(*c, key_path(key),
              fmt::format("value out of range: {} is not in [{}, {}]", c->scalar,
                          format_quantity(lo, dim), format_quantity(hi, dim)));
  }
  return q.value;
}

long long MapReader::integer(std::string_view key, std::optional<long long> fallback, long long lo,
                             long long hi) {
  const ConfigNode* c = figure(key, !fallback.has_value());
  if (!c) return fallback.value_or(0);
  ParsedQuantity q = parse_quantity(c->scalar, Dimension::kCount);
  if (!q.error.empty() || q.value != std::floor(q.value) || std::fabs(q.value) > 9e15) {
    sink_.add(*c, key_path(key),
              fmt::format("wrong type: expected an integer, got '{}'", c->scalar));
    return fallback.value_or(0);
  }
  const auto v = static_cast<long long>(q.value);
  if (v < lo || v > hi) {
    sink_.add(*c, key_path(key),
              fmt::format("value out of range: {} is not in [{}, {}]", v, lo, hi));
  }
  return v;
}

std::string MapReader::text(std::string_view key, std::optional<std::string> fallback) {
  const ConfigNode* c = child(key, !fallback.has_value());
  if (!c) return fallback.value_or("");
  if (c->kind != ConfigNode::Kind::kScalar) {
    sink_.add(*c, key_path(key), "wrong type: expected a string");
    return fallback.value_or("");
  }
  return c->scalar;
}

std::string MapReader::choice(std::string_view key, std::optional<std::string> fallback,
                              const std::vector<std::string_view>& choices) {
  const bool present = node_.find(key) != nullptr;
  const std::string v = text(key, std::move(fallback));
  if (!present) return v;
  const ConfigNode* c = node_.find(key);
  if (c->kind != ConfigNode::Kind::kScalar) return {};  // reported by text()
  if (std::find(choices.begin(), choices.end(), v) != choices.end()) return v;
  sink_.add(*c, key_path(key), expected_one_of(v, choices));
  return {};
}

bool MapReader::boolean(std::string_view key, std::optional<bool> fallback) {
  const ConfigNode* c = child(key, !fallback.has_value());
  if (!c) return fallback.value_or(false);
  if (c->kind == ConfigNode::Kind::kScalar) {
    if (c->scalar == "true") return true;
    if (c->scalar == "false") return false;
  }
  sink_.add(*c, key_path(key), "wrong type: expected true or false");
  return fallback.value_or(false);
}

std::vector<std::string> MapReader::text_list(std::string_view key, bool required) {
  std::vector<std::string> out;
  const ConfigNode* c = child(key, required);
  if (!c) return out;
  if (c->kind != ConfigNode::Kind::kSequence) {
    sink_.add(*c, key_path(key), "wrong type: expected a list");
    return out;
  }
  for (size_t i = 0; i < c->items.size(); ++i) {
    const ConfigNode& item = c->items[i];
    if (item.kind != ConfigNode::Kind::kScalar) {
      sink_.add(item, fmt::format("{}[{}]", key_path(key), i), "wrong type: expected a string");
    } else {
      out.push_back(item.scalar);
    }
  }
  return out;
}

std::vector<double> MapReader::quantity_list(std::string_view key, Dimension dim, bool required) {
  std::vector<double> out;
  const ConfigNode* c = child(key, required);
  if (!c) return out;
  if (c->kind != ConfigNode::Kind::kSequence) {
    sink_.add(*c, key_path(key), "wrong type: expected a list");
    return out;
  }
  if (sources_) {
    if (source_.empty()) {
      sink_.add(*c, key_path(key), "no source for this figure (give 'source:' in its map)");
    } else {
      sources_->emplace_back(key_path(key), source_);
    }
  }
  for (size_t i = 0; i < c->items.size(); ++i) {
    const ConfigNode& item = c->items[i];
    const std::string where = fmt::format("{}[{}]", key_path(key), i);
    if (item.kind != ConfigNode::Kind::kScalar) {
      sink_.add(item, where, "wrong type: expected a single value");
      continue;
    }
    ParsedQuantity q = parse_quantity(item.scalar, dim);
    if (!q.error.empty()) {
      sink_.add(item, where, q.error);
    } else {
      out.push_back(q.value);
    }
  }
  return out;
}

std::optional<MapReader> MapReader::map(std::string_view key, bool required) {
  const ConfigNode* c = child(key, required);
  if (!c) return std::nullopt;
  if (c->kind != ConfigNode::Kind::kMap) {
    sink_.add(*c, key_path(key), "wrong type: expected a map of keys");
    return std::nullopt;
  }
  return MapReader(*c, key_path(key), sink_, sources_, source_);
}

void MapReader::ignore(std::string_view key) {
  note(key);
  if (node_.find(key)) used_.emplace_back(key);
}

void MapReader::finish() {
  if (node_.kind != ConfigNode::Kind::kMap) return;
  for (const auto& [key, value] : node_.entries) {
    if (std::find(used_.begin(), used_.end(), key) != used_.end()) continue;
    std::string best;
    int best_d = 1 << 30;
    for (const auto& k : known_) {
      const int d = edit_distance(key, k);
      if (d < best_d) {
        best_d = d;
        best = k;
      }
    }
    // Close enough to be a typo: at most a third of the key's length, and at least 1 edit.
    const int limit = std::max<int>(1, static_cast<int>(std::max(key.size(), best.size()) / 3));
    std::string msg = "unknown key";
    if (!best.empty() && best_d <= limit) {
      msg += fmt::format(" (did you mean '{}'?)", best);
    } else if (!known_.empty()) {
      std::vector<std::string> sorted = known_;
      std::sort(sorted.begin(), sorted.end());
      msg += fmt::format(" (valid keys: {})", fmt::join(sorted, ", "));
    }
    // Point at the key itself.
    ConfigNode at = value;
    if (value.key_line > 0) {
      at.line = value.key_line;
      at.column = value.key_column;
    }
    sink_.add(at, key_path(key), msg);
  }
}

std::string nearest_word(std::string_view word, const std::vector<std::string_view>& candidates) {
  std::string_view best;
  int best_d = 1 << 30;
  for (const auto& k : candidates) {
    const int d = edit_distance(word, k);
    if (d < best_d) {
      best_d = d;
      best = k;
    }
  }
  const int limit = std::max<int>(1, static_cast<int>(std::max(word.size(), best.size()) / 3));
  return !best.empty() && best_d <= limit ? std::string(best) : std::string();
}

std::string expected_one_of(std::string_view got, const std::vector<std::string_view>& choices) {
  std::string list;
  for (std::size_t i = 0; i < choices.size(); ++i) {
    if (i > 0) list += i + 1 == choices.size() ? " or " : ", ";
    list += choices[i];
  }
  std::string msg = fmt::format("expected {}, got '{}'", list, got);
  const std::string near = nearest_word(got, choices);
  if (!near.empty()) msg += fmt::format(" (did you mean '{}'?)", near);
  return msg;
}

int edit_distance(std::string_view a, std::string_view b) {
  // Levenshtein with adjacent transpositions counted as one edit (optimal string alignment):
  // "fsat" is one slip from "fast".
  std::vector<int> prev2(b.size() + 1), prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = static_cast<int>(j);
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = static_cast<int>(i);
    for (size_t j = 1; j <= b.size(); ++j) {
      const int sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        cur[j] = std::min(cur[j], prev2[j - 2] + 1);
    }
    std::swap(prev2, prev);
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

// SHA-256 (FIPS 180-4), written from the standard's description.
std::string sha256_hex(const std::string& bytes) {
  static constexpr std::array<uint32_t, 64> k = {
      0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
      0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
      0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
      0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
      0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
      0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
      0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
      0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
      0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
      0xc67178f2};
  std::array<uint32_t, 8> h = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                               0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  std::string msg = bytes;
  const uint64_t bit_len = static_cast<uint64_t>(bytes.size()) * 8;
  msg.push_back(static_cast<char>(0x80));
  while (msg.size() % 64 != 56) msg.push_back('\0');
  for (int i = 7; i >= 0; --i) msg.push_back(static_cast<char>((bit_len >> (i * 8)) & 0xff));
  auto rotr = [](uint32_t x, int n) { return (x >> n) | (x << (32 - n)); };
  for (size_t off = 0; off < msg.size(); off += 64) {
    std::array<uint32_t, 64> w{};
    for (int i = 0; i < 16; ++i) {
      const auto* p = reinterpret_cast<const unsigned char*>(msg.data() + off + 4 * i);
      w[i] = (uint32_t(p[0]) << 24) | (uint32_t(p[1]) << 16) | (uint32_t(p[2]) << 8) | p[3];
    }
    for (int i = 16; i < 64; ++i) {
      const uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
      const uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    auto [a, b, c, d, e, f, g, hh] = h;
    for (int i = 0; i < 64; ++i) {
      const uint32_t S1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25);
      const uint32_t ch = (e & f) ^ (~e & g);
      const uint32_t t1 = hh + S1 + ch + k[i] + w[i];
      const uint32_t S0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22);
      const uint32_t maj = (a & b) ^ (a & c) ^ (b & c);
      const uint32_t t2 = S0 + maj;
      hh = g;
      g = f;
      f = e;
      e = d + t1;
      d = c;
      c = b;
      b = a;
      a = t1 + t2;
    }
    h[0] += a;
    h[1] += b;
    h[2] += c;
    h[3] += d;
    h[4] += e;
    h[5] += f;
    h[6] += g;
    h[7] += hh;
  }
  std::string out;
  for (uint32_t v : h) out += fmt::format("{:08x}", v);
  return out;
}

}  // namespace ridge::hw
