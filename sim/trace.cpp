#include "sim/trace.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <sstream>

namespace ridge::sim {

namespace {

// Picoseconds to nanoseconds, rounded half up (floor division, so negative times work too).
int64_t to_ns(Time t) {
  const int64_t x = t.ps + 500;
  return x >= 0 ? x / 1000 : -((-x + 999) / 1000);
}

std::string format_ns_as_us(int64_t ns) {
  const bool neg = ns < 0;
  const uint64_t a = neg ? 0 - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
  return fmt::format("{}{}.{:03d}", neg ? "-" : "", a / 1000, static_cast<int>(a % 1000));
}

}  // namespace

Tracer::Tracer() {
  metadata_["generator"] = "ridge::sim::Tracer";
  metadata_["time_resolution"] = "1 ns";
}

std::string Tracer::json_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (const char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += fmt::format("\\u{:04x}", static_cast<int>(c));
        } else {
          out += c;
        }
    }
  }
  return out;
}

std::string Tracer::json_number(double v) {
  if (!std::isfinite(v)) return "null";
  if (v == 0) return "0";  // also folds -0
  return fmt::format("{}", v);
}

std::string Tracer::format_us(Time t) {
  return format_ns_as_us(to_ns(t));
}

uint32_t Tracer::process_id(std::string_view name) {
  const auto it = process_ids_.find(name);
  if (it != process_ids_.end()) return it->second;
  const auto id = static_cast<uint32_t>(processes_.size());
  processes_.push_back(Process{std::string(name), {}, {}, {}, {}});
  process_ids_.emplace(std::string(name), id);
  return id;
}

void Tracer::slice(std::string_view process, std::string_view track, std::string_view name,
                   Time start, Time end, std::string_view args_json) {
  const uint32_t p = process_id(process);
  Process& proc = processes_[p];
  uint32_t t;
  const auto it = proc.track_ids.find(track);
  if (it != proc.track_ids.end()) {
    t = it->second;
  } else {
    t = static_cast<uint32_t>(proc.tracks.size());
    proc.tracks.emplace_back(track);
    proc.track_ids.emplace(std::string(track), t);
  }
  if (end < start) end = start;
  slices_.push_back(Slice{p, t, start, end, std::string(name), std::string(args_json)});
}

void Tracer::counter(std::string_view process, std::string_view name, Time t, double value) {
  const uint32_t p = process_id(process);
  Process& proc = processes_[p];
  uint32_t c;
  const auto it = proc.counter_ids.find(name);
  if (it != proc.counter_ids.end()) {
    c = it->second;
  } else {
    c = static_cast<uint32_t>(proc.counters.size());
    proc.counters.emplace_back(name);
    proc.counter_ids.emplace(std::string(name), c);
  }
  counters_.push_back(CounterSample{p, c, t, value});
}

void Tracer::set_metadata(std::string_view key, std::string_view value) {
  metadata_[std::string(key)] = std::string(value);
}

std::string Tracer::to_json() const {
  std::string out;
  out.reserve(256 + slices_.size() * 96 + counters_.size() * 80);
  out += "{\"traceEvents\":[\n";
  bool first = true;
  auto emit = [&](const std::string& ev) {
    if (!first) out += ",\n";
    first = false;
    out += ev;
  };

  // Slices grouped by (process, track), each group sorted by (start, end desc, record order) in
  // written (nanosecond) units, so nesting is decided on exactly the numbers that are written.
  std::vector<uint32_t> order(slices_.size());
  std::iota(order.begin(), order.end(), 0u);
  std::vector<int64_t> s_ns(slices_.size()), e_ns(slices_.size());
  for (std::size_t i = 0; i < slices_.size(); ++i) {
    s_ns[i] = to_ns(slices_[i].start);
    e_ns[i] = to_ns(slices_[i].end);
  }
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    const Slice& x = slices_[a];
    const Slice& y = slices_[b];
    if (x.process != y.process) return x.process < y.process;
    if (x.track != y.track) return x.track < y.track;
    if (s_ns[a] != s_ns[b]) return s_ns[a] < s_ns[b];
    if (e_ns[a] != e_ns[b]) return e_ns[a] > e_ns[b];
    return a < b;
  });

  std::size_t pos = 0;
  for (uint32_t p = 0; p < processes_.size(); ++p) {
    const Process& proc = processes_[p];
    const uint32_t pid = p + 1;
    emit(
        fmt::format(R"({{"ph":"M","pid":{},"tid":0,"name":"process_name","args":{{"name":"{}"}}}})",
                    pid, json_escape(proc.name)));
    emit(fmt::format(
        R"({{"ph":"M","pid":{},"tid":0,"name":"process_sort_index","args":{{"sort_index":{}}}}})",
        pid, pid));
    uint32_t next_tid = 1;
    for (uint32_t t = 0; t < proc.tracks.size(); ++t) {
      // Lane assignment: each lane keeps a stack of the ends of its open slices.
      std::vector<std::vector<int64_t>> lanes;
      std::vector<std::pair<uint32_t, uint32_t>> placed;  // (lane, slice)
      while (pos < order.size() && slices_[order[pos]].process == p &&
             slices_[order[pos]].track == t) {
        const uint32_t i = order[pos++];
        uint32_t lane = 0;
        for (;; ++lane) {
          if (lane == lanes.size()) lanes.emplace_back();
          std::vector<int64_t>& stack = lanes[lane];
          while (!stack.empty() && stack.back() <= s_ns[i]) stack.pop_back();
          if (stack.empty() || stack.back() >= e_ns[i]) {
            stack.push_back(e_ns[i]);
            break;
          }
        }
        placed.emplace_back(lane, i);
      }
      if (lanes.empty()) lanes.emplace_back();  // a track with no slices still gets its name
      const uint32_t base_tid = next_tid;
      for (uint32_t l = 0; l < lanes.size(); ++l) {
        const uint32_t tid = next_tid++;
        const std::string name =
            l == 0 ? proc.tracks[t] : fmt::format("{} #{}", proc.tracks[t], l + 1);
        emit(fmt::format(
            R"({{"ph":"M","pid":{},"tid":{},"name":"thread_name","args":{{"name":"{}"}}}})", pid,
            tid, json_escape(name)));
        emit(fmt::format(
            R"({{"ph":"M","pid":{},"tid":{},"name":"thread_sort_index","args":{{"sort_index":{}}}}})",
            pid, tid, tid));
      }
      std::stable_sort(placed.begin(), placed.end(),
                       [](const auto& a, const auto& b) { return a.first < b.first; });
      for (const auto& [lane, i] : placed) {
        const Slice& s = slices_[i];
        std::string ev = fmt::format(R"({{"ph":"X","pid":{},"tid":{},"ts":{},"dur":{},"name":"{}")",
                                     pid, base_tid + lane, format_ns_as_us(s_ns[i]),
                                     format_ns_as_us(e_ns[i] - s_ns[i]), json_escape(s.name));
        if (!s.args.empty()) {
          ev += ",\"args\":";
          ev += s.args;
        }
        ev += '}';
        emit(ev);
      }
    }
  }

  // Counters: per (process, counter) in time order; of several samples at one nanosecond the
  // last recorded wins, and repeats of the previous value are dropped.
  std::vector<uint32_t> corder(counters_.size());
  std::iota(corder.begin(), corder.end(), 0u);
  std::stable_sort(corder.begin(), corder.end(), [&](uint32_t a, uint32_t b) {
    const CounterSample& x = counters_[a];
    const CounterSample& y = counters_[b];
    if (x.process != y.process) return x.process < y.process;
    if (x.counter != y.counter) return x.counter < y.counter;
    return to_ns(x.t) < to_ns(y.t);
  });
  bool have_prev = false;
  double prev_value = 0;
  for (std::size_t k = 0; k < corder.size(); ++k) {
    const CounterSample& c = counters_[corder[k]];
    const bool same_series_next = k + 1 < corder.size() &&
                                  counters_[corder[k + 1]].process == c.process &&
                                  counters_[corder[k + 1]].counter == c.counter;
    if (same_series_next && to_ns(counters_[corder[k + 1]].t) == to_ns(c.t)) continue;
    if (!(have_prev && prev_value == c.value)) {
      emit(fmt::format(R"({{"ph":"C","pid":{},"name":"{}","ts":{},"args":{{"value":{}}}}})",
                       c.process + 1, json_escape(processes_[c.process].counters[c.counter]),
                       format_us(c.t), json_number(c.value)));
    }
    have_prev = same_series_next;
    prev_value = c.value;
  }

  out += "\n],\n\"displayTimeUnit\":\"ns\",\n\"metadata\":{";
  bool first_key = true;
  for (const auto& [k, v] : metadata_) {
    out += fmt::format("{}\"{}\":\"{}\"", first_key ? "" : ",", json_escape(k), json_escape(v));
    first_key = false;
  }
  out += "}}\n";
  return out;
}

void Tracer::write_json(std::ostream& out) const {
  out << to_json();
}

}  // namespace ridge::sim
