#include "workloads/kineto_reader.hpp"

#include <fmt/format.h>
#include <simdjson.h>
#include <zlib.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <future>
#include <memory>

#include "hw/config.hpp"

namespace ridge::workloads {
namespace {

namespace od = simdjson::ondemand;

[[noreturn]] void fail(const std::string& label, std::size_t offset, const std::string& what) {
  throw TraceError(fmt::format("{}: byte {}: {}", label, offset, what));
}

int64_t to_ns(double us) {
  return std::llround(us * 1000.0);
}

// One complete event's fields, as read (strings point into the parser's buffer).
struct RawEvent {
  std::string_view ph, cat, name;
  double ts = NAN, dur = NAN;
  int64_t tid = 0;
  bool has_tid = false;
  // args
  int64_t stream = -1, correlation = -1, external_id = -1, registers = 0, shared = 0, bytes = 0;
  bool has_stream = false, has_correlation = false;
  std::array<int64_t, 3> grid{0, 0, 0}, block{0, 0, 0};
  std::vector<std::vector<int64_t>> dims;
  std::vector<std::string> types, concrete;
  std::string_view collective, coll_dtype;
  int64_t in_nelems = 0, out_nelems = 0, group_size = 0;
};

int64_t get_int(od::value v) {
  switch (v.type()) {
    case od::json_type::number: {
      od::number n = v.get_number();
      if (n.is_int64()) return n.get_int64();
      if (n.is_uint64()) return static_cast<int64_t>(n.get_uint64());
      return static_cast<int64_t>(std::llround(n.get_double()));
    }
    case od::json_type::string: {
      // Some Kineto versions write ids as strings.
      const std::string_view s = v.get_string();
      int64_t x = 0;
      for (char c : s) {
        if (c < '0' || c > '9') return -1;
        x = x * 10 + (c - '0');
      }
      return s.empty() ? -1 : x;
    }
    default:
      return -1;
  }
}

std::array<int64_t, 3> get_dim3(od::value v) {
  std::array<int64_t, 3> d{0, 0, 0};
  if (v.type() != od::json_type::array) return d;
  std::size_t i = 0;
  for (auto e : v.get_array()) {
    if (i < 3) d[i] = get_int(e.value());
    ++i;
  }
  return d;
}

void read_args(od::object args, RawEvent& r) {
  for (auto field : args) {
    const std::string_view key = field.unescaped_key();
    od::value v = field.value();
    if (key == "stream") {
      r.stream = get_int(v), r.has_stream = true;
    } else if (key == "correlation") {
      r.correlation = get_int(v), r.has_correlation = true;
    } else if (key == "External id") {
      r.external_id = get_int(v);
    } else if (key == "registers per thread") {
      r.registers = get_int(v);
    } else if (key == "shared memory") {
      r.shared = get_int(v);
    } else if (key == "bytes") {
      r.bytes = get_int(v);
    } else if (key == "grid") {
      r.grid = get_dim3(v);
    } else if (key == "block") {
      r.block = get_dim3(v);
    } else if (key == "Input Dims") {
      if (v.type() != od::json_type::array) continue;
      for (auto e : v.get_array()) {
        std::vector<int64_t> dims;
        od::value ev = e.value();
        if (ev.type() == od::json_type::array)
          for (auto x : ev.get_array()) {
            od::value xv = x.value();
            if (xv.type() == od::json_type::number) dims.push_back(get_int(xv));
          }
        r.dims.push_back(std::move(dims));
      }
    } else if (key == "Input type" || key == "Concrete Inputs") {
      if (v.type() != od::json_type::array) continue;
      auto& out = key == "Input type" ? r.types : r.concrete;
      for (auto e : v.get_array()) {
        od::value ev = e.value();
        out.emplace_back(ev.type() == od::json_type::string ? std::string_view(ev.get_string())
                                                            : std::string_view());
      }
    } else if (key == "Collective name") {
      if (v.type() == od::json_type::string) r.collective = v.get_string();
    } else if (key == "dtype") {
      if (v.type() == od::json_type::string) r.coll_dtype = v.get_string();
    } else if (key == "In msg nelems") {
      r.in_nelems = get_int(v);
    } else if (key == "Out msg nelems") {
      r.out_nelems = get_int(v);
    } else if (key == "Group size") {
      r.group_size = get_int(v);
    }
  }
}

bool known_phase(std::string_view ph) {
  static constexpr std::string_view kPhases[] = {"X", "B", "E", "i", "I", "s", "t", "f", "M",
                                                 "C", "b", "e", "n", "P", "O", "N", "D", "R"};
  for (auto p : kPhases)
    if (ph == p) return true;
  return false;
}

class Reader {
 public:
  Reader(const std::string& label, TraceEvents& out) : label_(label), out_(out) {}

  void event(od::value v, std::size_t index, std::size_t offset) {
    if (v.type() != od::json_type::object)
      fail(label_, offset, fmt::format("traceEvents[{}]: expected an object", index));
    RawEvent r;
    for (auto field : v.get_object()) {
      const std::string_view key = field.unescaped_key();
      od::value fv = field.value();
      if (key == "ph") {
        r.ph = fv.get_string();
      } else if (key == "cat") {
        if (fv.type() == od::json_type::string) r.cat = fv.get_string();
      } else if (key == "name") {
        if (fv.type() == od::json_type::string) r.name = fv.get_string();
      } else if (key == "ts") {
        r.ts = fv.get_double();
      } else if (key == "dur") {
        r.dur = fv.get_double();
      } else if (key == "tid") {
        if (fv.type() == od::json_type::number) r.tid = get_int(fv), r.has_tid = true;
      } else if (key == "args") {
        if (fv.type() == od::json_type::object) read_args(fv.get_object(), r);
      }
    }
    auto missing = [&](std::string_view what) {
      fail(label_, offset,
           fmt::format("traceEvents[{}] ({} '{}'): missing '{}'", index, r.cat, r.name, what));
    };
    if (r.ph.empty()) missing("ph");
    if (!known_phase(r.ph))
      fail(label_, offset,
           fmt::format("traceEvents[{}]: unknown event kind ph='{}' (expected a Chrome trace "
                       "phase: X, B, E, i, s, f, M, C, ...)",
                       index, r.ph));
    if (r.ph != "X") return;
    const bool gpu = r.cat == "kernel" || r.cat == "gpu_memcpy" || r.cat == "gpu_memset";
    const bool api = r.cat == "cuda_runtime" || r.cat == "cuda_driver";
    const bool cpu = r.cat == "cpu_op" || r.cat == "user_annotation";
    if (!gpu && !api && !cpu) {
      ++out_.skipped[std::string(r.cat.empty() ? "(none)" : r.cat)];
      return;
    }
    if (r.name.empty()) missing("name");
    if (std::isnan(r.ts)) missing("ts");
    if (std::isnan(r.dur)) missing("dur");
    if (r.dur < 0)
      fail(label_, offset, fmt::format("traceEvents[{}]: negative 'dur' {}", index, r.dur));
    // 1e15 us is 31 years: beyond it a time is damage, and integer nanoseconds would overflow.
    if (std::abs(r.ts) > 1e15 || r.dur > 1e15)
      fail(label_, offset,
           fmt::format("traceEvents[{}]: 'ts' or 'dur' out of range ({}, {} us)", index, r.ts,
                       r.dur));
    if (gpu) {
      if (!r.has_stream && !r.has_tid) missing("args.stream");
      if (!r.has_correlation) missing("args.correlation");
      GpuActivity g;
      g.kind = r.cat == "kernel"       ? GpuActivityKind::kKernel
               : r.cat == "gpu_memcpy" ? GpuActivityKind::kMemcpy
                                       : GpuActivityKind::kMemset;
      g.name = r.name;
      g.ts_ns = to_ns(r.ts), g.dur_ns = to_ns(r.dur);
      g.stream = r.has_stream ? r.stream : r.tid;
      g.correlation = r.correlation, g.external_id = r.external_id;
      g.grid = r.grid, g.block = r.block, g.registers = r.registers, g.shared_bytes = r.shared;
      g.bytes = r.bytes;
      g.collective = r.collective, g.collective_dtype = r.coll_dtype;
      g.in_nelems = r.in_nelems, g.out_nelems = r.out_nelems, g.group_size = r.group_size;
      g.event_index = index;
      out_.gpu.push_back(std::move(g));
    } else if (api) {
      if (!r.has_correlation) return;  // calls that launch nothing (cudaGetErrorString) may lack it
      if (!r.has_tid) missing("tid");
      out_.api.push_back(
          {std::string(r.name), to_ns(r.ts), to_ns(r.dur), r.tid, r.correlation, r.external_id});
    } else {
      CpuOp c;
      c.name = r.name;
      c.ts_ns = to_ns(r.ts), c.dur_ns = to_ns(r.dur), c.tid = r.tid;
      c.external_id = r.external_id;
      c.input_dims = std::move(r.dims), c.input_types = std::move(r.types);
      c.concrete_inputs = std::move(r.concrete);
      out_.cpu.push_back(std::move(c));
    }
  }

 private:
  const std::string& label_;
  TraceEvents& out_;
};

void parse_padded(const char* data, std::size_t len, std::size_t capacity, const std::string& label,
                  TraceEvents& out) {
  out.json_bytes = len;
  od::parser parser;
  od::document doc;
  std::size_t index = 0;
  bool seen_events = false;
  bool started = false;
  auto where = [&]() -> std::size_t {
    if (!started) return 0;
    const char* p = nullptr;
    if (doc.current_location().get(p) == simdjson::SUCCESS && p >= data) {
      return static_cast<std::size_t>(p - data);
    }
    return len;  // past the end: the input stopped inside a value
  };
  try {
    if (const auto err = parser.iterate(data, len, capacity).get(doc); err) {
      const bool early =
          err == simdjson::INCOMPLETE_ARRAY_OR_OBJECT || err == simdjson::UNCLOSED_STRING;
      fail(
          label, early ? len : 0,
          fmt::format("{}: {}", early ? "the JSON ends early (truncated trace?)" : "not valid JSON",
                      simdjson::error_message(err)));
    }
    started = true;
    od::value root = doc.get_value();
    if (root.type() == od::json_type::array) {
      // The bare-array form of the Chrome trace format.
      seen_events = true;
      Reader rd(label, out);
      for (auto e : root.get_array()) {
        const std::size_t at = where();
        rd.event(e.value(), index++, at);
      }
    } else {
      for (auto field : root.get_object()) {
        const std::string_view key = field.unescaped_key();
        if (key == "traceEvents") {
          seen_events = true;
          Reader rd(label, out);
          for (auto e : field.value().get_array()) {
            const std::size_t at = where();
            rd.event(e.value(), index++, at);
          }
        } else if (key == "deviceProperties") {
          od::value v = field.value();
          if (v.type() != od::json_type::array) continue;
          for (auto d : v.get_array()) {
            od::value dv = d.value();
            if (dv.type() != od::json_type::object) continue;
            for (auto f : dv.get_object()) {
              if (std::string_view(f.unescaped_key()) == "name" && out.device.empty())
                out.device = std::string(std::string_view(f.value().get_string()));
            }
          }
        }
      }
    }
  } catch (const simdjson::simdjson_error& e) {
    const std::size_t at = where();
    const std::string ev = seen_events ? fmt::format(" (in traceEvents[{}])", index) : "";
    if (at >= len || e.error() == simdjson::INCOMPLETE_ARRAY_OR_OBJECT)
      fail(label, at, fmt::format("the JSON ends early (truncated trace?){}: {}", ev, e.what()));
    fail(label, at, fmt::format("not valid Kineto JSON{}: {}", ev, e.what()));
  }
  if (!seen_events) fail(label, 0, "no 'traceEvents' array: not a Chrome/Kineto trace");
  out.events = index;
}

}  // namespace

std::string read_maybe_gzip(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw TraceError(path + ": cannot open");
  unsigned char magic[2] = {0, 0};
  const std::size_t got = std::fread(magic, 1, 2, f);
  std::fclose(f);
  std::string s;
  if (got == 2 && magic[0] == 0x1f && magic[1] == 0x8b) {
    gzFile gz = gzopen(path.c_str(), "rb");
    if (!gz) throw TraceError(path + ": cannot open");
    gzbuffer(gz, 1 << 20);
    std::vector<char> block(1 << 20);
    for (;;) {
      const int n = gzread(gz, block.data(), static_cast<unsigned>(block.size()));
      if (n < 0) {
        int err = 0;
        const std::string msg = gzerror(gz, &err);
        gzclose(gz);
        throw TraceError(fmt::format("{}: byte {} of the decompressed data: gzip error: {}", path,
                                     s.size(), msg));
      }
      if (n == 0) break;
      s.append(block.data(), static_cast<std::size_t>(n));
    }
    int err = 0;
    const std::string msg = gzerror(gz, &err);
    gzclose(gz);
    if (err != Z_OK)
      throw TraceError(
          fmt::format("{}: byte {} of the decompressed data: gzip stream ends early "
                      "or is damaged: {}",
                      path, s.size(), msg));
  } else {
    std::ifstream in(path, std::ios::binary);
    in.seekg(0, std::ios::end);
    s.resize(static_cast<std::size_t>(in.tellg()));
    in.seekg(0);
    in.read(s.data(), static_cast<std::streamsize>(s.size()));
  }
  s.reserve(s.size() + simdjson::SIMDJSON_PADDING);
  return s;
}

TraceEvents read_kineto(const std::string& path, std::string* sha256) {
  const std::string s = read_maybe_gzip(path);
  // The provenance hash (a fifth of the work on a 100 MB trace) runs beside the parse.
  std::future<std::string> hash;
  if (sha256) hash = std::async(std::launch::async, [&s] { return hw::sha256_hex(s); });
  TraceEvents out;
  try {
    parse_padded(s.data(), s.size(), s.capacity(), path, out);
  } catch (...) {
    if (hash.valid()) hash.wait();  // `s` must outlive the hashing thread
    throw;
  }
  if (sha256) *sha256 = hash.get();
  return out;
}

TraceEvents parse_kineto(std::string_view json, const std::string& label) {
  const simdjson::padded_string p(json);
  TraceEvents out;
  parse_padded(p.data(), p.size(), p.size() + simdjson::SIMDJSON_PADDING, label, out);
  return out;
}

}  // namespace ridge::workloads
