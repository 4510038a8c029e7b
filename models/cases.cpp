#include "models/cases.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "hw/config.hpp"
#include "hw/key_record.hpp"
#include "hw/limits.hpp"
#include "models/records.hpp"

namespace ridge::models {

const std::vector<CaseKey>& case_keys() {
  static const std::vector<CaseKey> keys = {
      {"id", "text", "case<index>", "name of the case in the output"},
      {"op", "text", "", "op kind from the vocabulary (ridge describe ops)"},
      {"params", "map", "{}",
       "the op's parameters (ridge describe ops); missing ones take their defaults"},
      {"timing", "kernel|per_call or {method: ...}", "kernel",
       "kernel: the kernel alone; per_call: one call with its launch. A record's timing.method "
       "per_call, events_per_call or wall means per_call, any other method kernel"},
  };
  return keys;
}

Timing timing_from_name(const std::string& s) {
  if (s == "kernel") return Timing::kKernel;
  if (s == "per_call") return Timing::kPerCall;
  throw std::invalid_argument(fmt::format("timing: expected kernel or per_call, got '{}'", s));
}

namespace {

// A YAML tree as JSON (scalars that read fully as integers or numbers become numbers).
nlohmann::json yaml_to_json(const hw::ConfigNode& n) {
  switch (n.kind) {
    case hw::ConfigNode::Kind::kMap: {
      nlohmann::json j = nlohmann::json::object();
      for (const auto& [k, v] : n.entries) j[k] = yaml_to_json(v);
      return j;
    }
    case hw::ConfigNode::Kind::kSequence: {
      nlohmann::json j = nlohmann::json::array();
      for (const auto& v : n.items) j.push_back(yaml_to_json(v));
      return j;
    }
    case hw::ConfigNode::Kind::kScalar: {
      const std::string& s = n.scalar;
      if (s == "true" || s == "false") return s == "true";
      try {
        size_t pos = 0;
        const long long v = std::stoll(s, &pos);
        if (pos == s.size()) return v;
        const double d = std::stod(s, &pos);
        if (pos == s.size()) return d;
      } catch (const std::exception&) {
      }
      return s;
    }
    default:
      return nullptr;
  }
}

// Measurement methods that time one call with events, launch included; anything else is kernel.
Timing timing_of_method(const std::string& m) {
  return (m == "per_call" || m == "events_per_call" || m == "wall") ? Timing::kPerCall
                                                                    : Timing::kKernel;
}

// A case key the reader reads, looked up in case_keys() (missing there: a programming error that
// any test reading cases finds).
std::string ck(std::string_view key) {
  for (const auto& k : case_keys()) {
    if (k.key == key) {
      hw::note_config_key(std::string(key));
      return std::string(key);
    }
  }
  throw std::logic_error(fmt::format("case key '{}' is not in case_keys()", key));
}

}  // namespace

std::vector<Case> parse_cases(const std::string& text, const std::string& path,
                              std::vector<std::string>& errors) {
  nlohmann::json doc;
  bool records = false;
  if (path.ends_with(".json")) {
    if (const std::string deep = hw::json_depth_error(text); !deep.empty())
      throw std::invalid_argument(fmt::format("{}: {}", path, deep));
    try {
      doc = nlohmann::json::parse(text);
    } catch (const std::exception& e) {
      throw std::invalid_argument(fmt::format("{}: not valid JSON: {}", path, e.what()));
    }
  } else {
    doc = yaml_to_json(hw::parse_yaml(text, path));  // ConfigException: file:line:col
  }
  nlohmann::json list;
  if (doc.is_object() && doc.contains("records")) {
    records = true;
    const auto schema = doc.find("schema");
    if (schema == doc.end() || !schema->is_string() || *schema != "ridge.records/1")
      errors.push_back(fmt::format("{}: schema: expected \"ridge.records/1\"", path));
    list = doc["records"];
  } else {
    list = doc;
  }
  if (!list.is_array()) {
    throw std::invalid_argument(fmt::format(
        "{}: expected a list of cases ({{op, params, timing}}) or a ridge.records/1 object", path));
  }
  std::vector<std::string_view> known;
  for (const auto& k : case_keys()) known.push_back(k.key);
  const std::string kId = ck("id"), kOp = ck("op"), kParams = ck("params"), kTiming = ck("timing");
  std::vector<Case> out;
  for (size_t i = 0; i < list.size(); ++i) {
    const auto& c = list[i];
    const std::string where = fmt::format("{}: {} {}", path, records ? "record" : "case", i);
    try {
      if (!c.is_object() || !c.contains(kOp) || !c[kOp].is_string()) {
        throw std::invalid_argument("expected an object with a string 'op'");
      }
      // A case's keys are the table's; a record's other keys (device, source, ...) are echoed.
      if (!records) {
        for (const auto& [k, v] : c.items()) {
          bool ok = false;
          for (const auto& n : known) ok = ok || n == k;
          if (ok) continue;
          const std::string near = hw::nearest_word(k, known);
          throw std::invalid_argument(
              fmt::format("unknown key '{}'{} (a case holds {})", k,
                          near.empty() ? "" : fmt::format(" (did you mean '{}'?)", near),
                          fmt::join(known, ", ")));
        }
      }
      Case k;
      k.id = c.contains(kId) && c[kId].is_string() ? c[kId].get<std::string>()
                                                   : fmt::format("case{}", i);
      nlohmann::json params = c.value(kParams, nlohmann::json::object());
      if (!params.is_object()) throw std::invalid_argument("params: expected a map");
      if (records) params = params_with_record_buffers(c, c[kOp].get<std::string>(), params);
      k.op = OpSpec::from_json(c[kOp].get<std::string>(), params);
      if (c.contains(kTiming)) {
        const auto& t = c[kTiming];
        if (t.is_string())
          k.timing = timing_from_name(t.get<std::string>());
        else if (t.is_object() && t.contains("method") && t["method"].is_string())
          k.timing = timing_of_method(t["method"].get<std::string>());
        else
          throw std::invalid_argument("timing: expected kernel|per_call or {method: ...}");
      }
      if (records) k.record = c;
      out.push_back(std::move(k));
    } catch (const std::exception& e) {
      errors.push_back(fmt::format("{}: {}", where, e.what()));
    }
  }
  return out;
}

}  // namespace ridge::models
