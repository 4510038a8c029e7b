#include "models/records.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "hw/config.hpp"
#include "hw/json_number.hpp"
#include "hw/key_record.hpp"
#include "hw/limits.hpp"

namespace ridge::models {

const std::vector<RecordKey>& record_keys() {
  static const std::vector<RecordKey> keys = {
      {"schema", "text", "", "must be \"ridge.records/1\""},
      {"device", "map", "{}", "the device measured (name, driver, clocks, ...), kept as written"},
      {"records", "list", "", "the measurements"},
      {"records[].id", "text", "",
       "unique name of the measurement (its hash picks the held-out third)"},
      {"records[].op", "text", "",
       "op kind (ridge describe ops); an op outside the vocabulary is kept but not predicted"},
      {"records[].params", "map", "",
       "the op's parameters (ridge describe ops); other keys (library, algorithm) kept, unused"},
      {"records[].buffers", "integer", "(none)",
       "buffer sets the repetitions rotated over, as validate/ writes it beside the params of "
       "elementwise records; taken as params.buffers by ops that have that parameter when "
       "params does not set it"},
      {"records[].timing", "map", "(none: not compared)", "the measured time"},
      {"records[].timing.median_us", "number (us)", "", "median time of one repetition, > 0"},
      {"records[].timing.method", "kernel|per_call|host", "kernel",
       "kernel: device time of the kernels alone; per_call: one call with its launch, from the "
       "host; host: the CPU cost of issuing it (not a kernel prediction)"},
  };
  return keys;
}

namespace {
// A key the reader reads, looked up in record_keys() (a key missing there is a programming error
// any test reading records finds); returns its last component.
std::string key(std::string_view path) {
  for (const auto& k : record_keys()) {
    if (k.path == path) {
      hw::note_config_key(std::string(path));
      const auto dot = path.rfind('.');
      return std::string(dot == std::string_view::npos ? path : path.substr(dot + 1));
    }
  }
  throw std::logic_error(fmt::format("records key '{}' is not in record_keys()", path));
}
}  // namespace

nlohmann::json params_with_record_buffers(const nlohmann::json& record, const std::string& op,
                                          nlohmann::json params) {
  const std::string kBuffers = key("records[].buffers");
  const OpDecl* kind = find_op(op);
  if (kind == nullptr || !record.is_object() || !record.contains(kBuffers) || !params.is_object() ||
      params.contains(kBuffers))
    return params;
  for (const auto& decl : kind->params) {
    if (decl.name == kBuffers) params[kBuffers] = record[kBuffers];
  }
  return params;
}

RecordFile read_records(const std::string& path) {
  return parse_records(hw::read_input_file(path), path);
}

namespace {
RecordFile parse_records_json(const std::string& text, const std::string& path);
}  // namespace

RecordFile parse_records(const std::string& text, const std::string& path) {
  // Every type check below is explicit; a value of an unexpected type that one of them misses
  // ({"schema": 0}: nlohmann's value() throws type_error) must still be a clear error, not a crash.
  try {
    return parse_records_json(text, path);
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(fmt::format("{}: unexpected JSON: {}", path, e.what()));
  }
}

namespace {
RecordFile parse_records_json(const std::string& text, const std::string& path) {
  if (const std::string deep = hw::json_depth_error(text); !deep.empty())
    throw std::invalid_argument(fmt::format("{}: {}", path, deep));
  RecordFile out;
  out.path = path;
  out.sha256 = hw::sha256_hex(text);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {  // parse_error, or out_of_range for 1e400
    throw std::invalid_argument(fmt::format("{}: not JSON: {}", path, e.what()));
  }
  const std::string kSchema = key("schema"), kDevice = key("device"), kRecords = key("records"),
                    kId = key("records[].id"), kOp = key("records[].op"),
                    kParams = key("records[].params"), kTiming = key("records[].timing"),
                    kMedian = key("records[].timing.median_us"),
                    kMethod = key("records[].timing.method"), kBuffers = key("records[].buffers");
  if (!j.is_object() || !j.contains(kSchema) || j[kSchema] != "ridge.records/1") {
    throw std::invalid_argument(
        fmt::format("{}: expected an object with \"schema\": \"ridge.records/1\"", path));
  }
  if (!j.contains(kRecords) || !j[kRecords].is_array()) {
    throw std::invalid_argument(fmt::format("{}: expected a \"records\" array", path));
  }
  out.device = j.value(kDevice, nlohmann::json::object());
  const auto& recs = j[kRecords];
  for (size_t i = 0; i < recs.size(); ++i) {
    const auto& r = recs[i];
    auto bad = [&](const std::string& what) {
      return std::invalid_argument(fmt::format("{}: records[{}]: {}", path, i, what));
    };
    if (!r.is_object()) throw bad("expected an object");
    Record rec;
    rec.file = path;
    rec.index = i;
    if (!r.contains(kId) || !r[kId].is_string()) throw bad("expected a string \"id\"");
    if (!r.contains(kOp) || !r[kOp].is_string()) throw bad("expected a string \"op\"");
    if (!r.contains(kParams) || !r[kParams].is_object()) throw bad("expected an object \"params\"");
    rec.id = r[kId];
    rec.op = r[kOp];
    rec.params = r[kParams];
    rec.raw = r;
    if (r.contains(kTiming)) {
      const auto& t = r[kTiming];
      if (!t.is_object() || !t.contains(kMedian) || !t[kMedian].is_number()) {
        throw bad("timing: expected an object with a number \"median_us\"");
      }
      rec.median_s = t[kMedian].get<double>() * 1e-6;
      rec.method = t.contains(kMethod) && t[kMethod].is_string() ? t[kMethod].get<std::string>()
                   : t.contains(kMethod)                         ? std::string("?")
                                                                 : std::string("kernel");
      if (rec.method != "kernel" && rec.method != "per_call" && rec.method != "host") {
        throw bad("timing.method: expected kernel, per_call or host");
      }
      if (!(rec.median_s > 0) || !std::isfinite(rec.median_s))
        throw bad("timing.median_us: expected a positive number");
    }
    // Host-side timings (the CPU cost of issuing a launch) are not kernel predictions.
    if (find_op(rec.op) && rec.method != "host") {
      // Keep only the vocabulary's parameters; measurement-side extras (library, algorithm) stay in
      // raw.
      nlohmann::json p = nlohmann::json::object();
      for (const auto& decl : find_op(rec.op)->params) {
        const std::string k(decl.name);
        if (rec.params.contains(k)) p[k] = rec.params[k];
      }
      if (r.contains(kBuffers)) {
        const auto b = hw::json_integer<long long>(r[kBuffers]);
        if (!b || *b < 0) throw bad("buffers: expected a non-negative integer");
      }
      p = params_with_record_buffers(r, rec.op, std::move(p));
      try {
        rec.spec = OpSpec::from_json(rec.op, p);
      } catch (const std::invalid_argument& e) {
        throw bad(fmt::format("params: {}", e.what()));
      }
    }
    out.records.push_back(std::move(rec));
  }
  return out;
}
}  // namespace

bool is_held_out(const std::string& id) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : id) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h % 3 == 2;
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const double pos = p / 100.0 * static_cast<double>(v.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

}  // namespace ridge::models
