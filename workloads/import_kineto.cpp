#include "workloads/import_kineto.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <limits>
#include <map>
#include <numeric>
#include <unordered_map>

#include "hw/config.hpp"
#include "hw/json_number.hpp"
#include "workloads/kernel_classify.hpp"

namespace ridge::workloads {

std::map<std::string, ClassCount> ImportedRun::classes() const {
  std::map<std::string, ClassCount> m;
  for (const auto& o : ops) {
    auto& c = m[o.cls];
    ++c.ops;
    c.mapped += o.mapped ? 1 : 0;
    c.measured_s += static_cast<double>(o.dur_ns) * 1e-9;
  }
  return m;
}

ImportedRun import_events(const TraceEvents& ev, const std::string& source) {
  ImportedRun r;
  r.source = source;
  r.device = ev.device;
  r.events = ev.events;
  r.skipped = ev.skipped;
  std::unordered_map<int64_t, const ApiCall*> api;
  api.reserve(ev.api.size());
  for (const auto& a : ev.api) api[a.correlation] = &a;
  std::unordered_map<int64_t, const CpuOp*> cpu;
  cpu.reserve(ev.cpu.size());
  for (const auto& c : ev.cpu)
    if (c.external_id >= 0) cpu.emplace(c.external_id, &c);

  // GPU start order first: which kernel of a CPU op comes first decides the mapped one.
  std::vector<std::size_t> order(ev.gpu.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return ev.gpu[a].ts_ns < ev.gpu[b].ts_ns; });
  std::map<std::pair<int64_t, std::string>, int> seen;  // (CPU op, class) -> kernels mapped
  bool graphs = false;  // any CUDA graph launch: then eager kernels' ops are kept for its kernels
  for (const auto& a : ev.api) graphs = graphs || a.name.find("GraphLaunch") != std::string::npos;
  // Eager kernels' ops by (name, grid, block): a CUDA graph's kernels carry no CPU op.
  std::map<std::string, models::OpSpec> by_launch;
  auto launch_key = [](const GpuActivity& a) {
    return fmt::format("{}|{},{},{}|{},{},{}", a.name, a.grid[0], a.grid[1], a.grid[2], a.block[0],
                       a.block[1], a.block[2]);
  };
  r.ops.reserve(ev.gpu.size());
  for (std::size_t gi : order) {
    const GpuActivity& a = ev.gpu[gi];
    ImportedOp o;
    o.name = a.name;
    o.cls = classify_kernel(a);
    o.kind = a.kind == GpuActivityKind::kMemcpy ? NodeKind::kCopy : NodeKind::kKernel;
    o.stream = a.stream;
    o.start_ns = a.ts_ns;
    o.dur_ns = a.dur_ns;
    o.grid = a.grid, o.block = a.block, o.registers = a.registers;
    o.shared_bytes = a.shared_bytes;
    const ApiCall* call = nullptr;
    if (auto it = api.find(a.correlation); it != api.end()) call = it->second;
    if (call) {
      o.issue_ns = call->ts_ns;
      o.launch_api = call->name;
      o.graph = call->name.find("GraphLaunch") != std::string::npos;
    }
    int64_t ext = a.external_id >= 0 ? a.external_id : (call ? call->external_id : -1);
    const CpuOp* op = nullptr;
    if (ext >= 0)
      if (auto it = cpu.find(ext); it != cpu.end()) op = it->second;
    if (op) o.cpu_op = op->name;
    // The first kernel of the class that maps is the op's main kernel (cuDNN's attention
    // backward launches a helper first).
    const bool first = !op || seen[{ext, o.cls}] == 0;
    auto spec = map_kernel(a, o.cls, op, first);
    if (spec && op) ++seen[{ext, o.cls}];
    if (!spec && o.graph && o.cls != "copy" && o.cls != "memset") {
      if (auto it = by_launch.find(launch_key(a)); it != by_launch.end()) spec = it->second;
    }
    if (spec) {
      o.mapped = true;
      o.op = *spec;
      if (graphs && !o.graph && o.kind == NodeKind::kKernel)
        by_launch.emplace(launch_key(a), *spec);
    } else {
      o.op = custom_op(a);
    }
    if (a.bytes > 0) o.detail["bytes"] = a.bytes;
    if (!a.collective.empty()) {
      o.detail["collective"] = a.collective;
      o.detail["in_nelems"] = a.in_nelems;
      o.detail["out_nelems"] = a.out_nelems;
      o.detail["group_size"] = a.group_size;
      o.detail["dtype"] = a.collective_dtype;
    }
    o.detail["trace_event"] = a.event_index;
    r.ops.push_back(std::move(o));
  }
  // A CUDA graph replay maps its kernels from eager ones issued later in the trace too.
  for (auto& o : r.ops) {
    if (o.mapped || !o.graph || o.cls == "copy" || o.cls == "memset") continue;
    GpuActivity a;
    a.name = o.name, a.grid = o.grid, a.block = o.block;
    if (auto it = by_launch.find(launch_key(a)); it != by_launch.end()) {
      o.mapped = true;
      o.op = it->second;
    }
  }
  // Host issue order: the launch call's start; GPU start breaks ties (a graph's kernels).
  std::stable_sort(r.ops.begin(), r.ops.end(), [](const ImportedOp& a, const ImportedOp& b) {
    const int64_t ia = a.issue_ns >= 0 ? a.issue_ns : a.start_ns;
    const int64_t ib = b.issue_ns >= 0 ? b.issue_ns : b.start_ns;
    return ia != ib ? ia < ib : a.start_ns < b.start_ns;
  });
  if (r.ops.empty()) return r;
  int64_t t0 = r.ops.front().start_ns, gpu0 = t0, gpu1 = t0;
  for (const auto& o : r.ops) {
    t0 = std::min(t0, o.issue_ns >= 0 ? std::min(o.issue_ns, o.start_ns) : o.start_ns);
    gpu0 = std::min(gpu0, o.start_ns);
    gpu1 = std::max(gpu1, o.start_ns + o.dur_ns);
  }
  r.span_ns = gpu1 - gpu0;
  int64_t prev_issue = 0;
  for (auto& o : r.ops) {
    o.start_ns -= t0;
    if (o.issue_ns >= 0) o.issue_ns -= t0;
    // The readers bound each time to 1e18 ns, so these differences and sums do not overflow; a
    // run whose times spread further is damage, and its graph file could not be read back.
    if (o.start_ns + o.dur_ns > kMaxImportedNs || o.issue_ns > kMaxImportedNs)
      throw TraceError(
          fmt::format("{}: event {}: times span more than 2^60 ns (36 years) from the "
                      "trace's first event",
                      source, o.detail.value("trace_event", std::size_t{0})));
    const int64_t issue = o.issue_ns >= 0 ? o.issue_ns : o.start_ns;
    o.host_gap_ns = std::max<int64_t>(0, issue - prev_issue);
    prev_issue = std::max(prev_issue, issue);
  }
  // Streams in first-use order; cross-stream dependencies as observed.
  std::map<int64_t, std::size_t> stream_ix;
  std::vector<std::vector<int>> on_stream;
  for (std::size_t i = 0; i < r.ops.size(); ++i) {
    auto [it, added] = stream_ix.emplace(r.ops[i].stream, r.streams.size());
    if (added) r.streams.push_back(r.ops[i].stream), on_stream.emplace_back();
    on_stream[it->second].push_back(static_cast<int>(i));
  }
  if (r.streams.size() > 1) {
    // For op i, on every other stream the latest op (issued before i) that ended before i
    // started; kept only when it is newer than the one i's stream predecessor already waited for.
    std::vector<std::vector<int>> last_dep(r.streams.size(),
                                           std::vector<int>(r.streams.size(), -1));
    for (std::size_t s = 0; s < r.streams.size(); ++s) {
      for (int i : on_stream[s]) {
        auto& o = r.ops[static_cast<std::size_t>(i)];
        for (std::size_t t = 0; t < r.streams.size(); ++t) {
          if (t == s) continue;
          const auto& list = on_stream[t];
          // list is in issue order; ends grow along it (stream order).
          int best = -1;
          auto hi = std::lower_bound(list.begin(), list.end(), i);
          for (auto it = hi; it != list.begin();) {
            --it;
            const auto& p = r.ops[static_cast<std::size_t>(*it)];
            if (p.start_ns + p.dur_ns <= o.start_ns) {
              best = *it;
              break;
            }
          }
          if (best >= 0 && best > last_dep[s][t]) {
            o.deps.push_back(best);
            last_dep[s][t] = best;
          }
        }
      }
    }
  }
  return r;
}

ImportedRun import_kineto(const std::string& path) {
  std::string sha;
  const TraceEvents ev = read_kineto(path, &sha);
  ImportedRun r = import_events(ev, path);
  r.sha256 = sha;
  return r;
}

nlohmann::json imported_json(const ImportedRun& r) {
  using nlohmann::json;
  json classes = json::object();
  for (const auto& [k, c] : r.classes())
    classes[k] = {{"ops", c.ops},
                  {"mapped", c.mapped},
                  {"unmapped", c.ops - c.mapped},
                  {"measured_ns", std::llround(c.measured_s * 1e9)}};
  json ops = json::array();
  for (const auto& o : r.ops) {
    const json op = {{"kind", o.op.kind()}, {"params", o.op.params()}};
    json j = {{"name", o.name},
              {"class", o.cls},
              {"mapped", o.mapped},
              {"node", o.kind == NodeKind::kCopy ? "copy" : "kernel"},
              {"op", op},
              {"stream", o.stream},
              {"start_ns", o.start_ns},
              {"dur_ns", o.dur_ns},
              {"issue_ns", o.issue_ns},
              {"host_gap_ns", o.host_gap_ns},
              {"deps", o.deps},
              {"cpu_op", o.cpu_op},
              {"launch", o.launch_api},
              {"graph", o.graph},
              {"grid", o.grid},
              {"block", o.block},
              {"registers", o.registers},
              {"shared_bytes", o.shared_bytes},
              {"detail", o.detail}};
    ops.push_back(std::move(j));
  }
  json skipped = json::object();
  for (const auto& [k, n] : r.skipped) skipped[k] = n;
  return {{"schema", "ridge.imported_graph/1"},
          {"source",
           {{"format", "kineto"},
            {"file", r.source},
            {"sha256", r.sha256},
            {"device", r.device},
            {"events", r.events},
            {"skipped_categories", skipped}}},
          {"span_ns", r.span_ns},
          {"streams", r.streams},
          {"classes", classes},
          {"ops", ops}};
}

ImportedRun imported_from_json(const nlohmann::json& j, const std::string& label) {
  ImportedRun r;
  auto bad = [&](const std::string& where, const std::string& what) {
    throw std::invalid_argument(fmt::format("{}: {}: {}", label, where, what));
  };
  if (!j.is_object() || j.value("schema", "") != "ridge.imported_graph/1")
    bad("schema", "expected \"ridge.imported_graph/1\" (a file written by `ridge import`)");
  // Integers through hw::json_integer_at: a float beyond the type is an error, not a wrapped or
  // undefined value.
  auto integer = [](const nlohmann::json& obj, const char* key) {
    return hw::json_integer_at<int64_t>(obj.at(key));
  };
  auto integer_or = [](const nlohmann::json& obj, const char* key, int64_t fallback) {
    return obj.contains(key) ? hw::json_integer_at<int64_t>(obj.at(key)) : fallback;
  };
  auto integers = [](const nlohmann::json& obj, const char* key, std::size_t size) {
    const auto& a = obj.at(key);
    if (!a.is_array() || (size > 0 && a.size() != size))
      throw nlohmann::json::type_error::create(
          302,
          size > 0 ? fmt::format("expected an array of {} integers", size)
                   : std::string("expected an array of integers"),
          &a);
    std::vector<int64_t> v;
    v.reserve(a.size());
    for (const auto& x : a) v.push_back(hw::json_integer_at<int64_t>(x));
    return v;
  };
  try {
    const auto& src = j.at("source");
    r.source = src.value("file", "");
    r.sha256 = src.value("sha256", "");
    r.device = src.value("device", "");
    r.events = src.contains("events") ? hw::json_integer_at<std::size_t>(src.at("events")) : 0;
    if (src.contains("skipped_categories")) {
      const auto& sk = src.at("skipped_categories");
      if (!sk.is_object())
        throw nlohmann::json::type_error::create(302, "expected an object of counts", &sk);
      for (const auto& [k, n] : sk.items()) r.skipped[k] = hw::json_integer_at<long long>(n);
    }
    r.span_ns = integer(j, "span_ns");
    r.streams = integers(j, "streams", 0);
  } catch (const nlohmann::json::exception& e) {
    bad("header", e.what());
  }
  const auto& ops = j.contains("ops") ? j.at("ops") : nlohmann::json();
  if (!ops.is_array()) bad("ops", "expected an array");
  r.ops.reserve(ops.size());
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const auto& oj = ops[i];
    const std::string where = fmt::format("ops[{}]", i);
    ImportedOp o;
    try {
      o.name = oj.at("name").get<std::string>();
      o.cls = oj.at("class").get<std::string>();
      o.mapped = oj.at("mapped").get<bool>();
      o.kind = oj.at("node").get<std::string>() == "copy" ? NodeKind::kCopy : NodeKind::kKernel;
      const auto& p = oj.at("op");
      o.op = models::OpSpec::from_json(p.at("kind").get<std::string>(), p.at("params"));
      if (oj.contains("grid")) std::ranges::copy(integers(oj, "grid", 3), o.grid.begin());
      if (oj.contains("block")) std::ranges::copy(integers(oj, "block", 3), o.block.begin());
      o.registers = integer_or(oj, "registers", 0);
      o.shared_bytes = integer_or(oj, "shared_bytes", 0);
      o.stream = integer(oj, "stream");
      o.start_ns = integer(oj, "start_ns");
      o.dur_ns = integer(oj, "dur_ns");
      o.issue_ns = integer_or(oj, "issue_ns", -1);
      o.host_gap_ns = integer(oj, "host_gap_ns");
      if (oj.contains("deps"))  // out of int's range: -1, which the check below refuses
        for (const int64_t d : integers(oj, "deps", 0))
          o.deps.push_back(d < 0 || d > std::numeric_limits<int>::max() ? -1 : static_cast<int>(d));
      o.cpu_op = oj.value("cpu_op", "");
      o.launch_api = oj.value("launch", "");
      o.graph = oj.value("graph", false);
      o.detail = oj.value("detail", nlohmann::json::object());
    } catch (const nlohmann::json::exception& e) {
      bad(where, e.what());
    } catch (const std::invalid_argument& e) {
      bad(where + ".op", e.what());
    }
    if (o.dur_ns < 0 || o.host_gap_ns < 0) bad(where, "negative time");
    if (o.dur_ns > kMaxImportedNs || o.host_gap_ns > kMaxImportedNs ||
        o.start_ns > kMaxImportedNs || o.start_ns < -kMaxImportedNs || o.issue_ns > kMaxImportedNs)
      bad(where, "time out of range");
    for (int d : o.deps)
      if (d < 0 || static_cast<std::size_t>(d) >= i) bad(where + ".deps", "must name earlier ops");
    if (std::find(r.streams.begin(), r.streams.end(), o.stream) == r.streams.end())
      bad(where + ".stream", "not listed in `streams`");
    r.ops.push_back(std::move(o));
  }
  return r;
}

std::string import_summary_text(const ImportedRun& r) {
  std::string s =
      fmt::format("Imported {} ({}): {} GPU activities on {} stream(s), GPU span {:.3f} ms\n\n",
                  r.source, r.device.empty() ? "device unknown" : r.device, r.ops.size(),
                  r.streams.size(), r.span_ns * 1e-6);
  s += "| class | ops | mapped | unmapped (custom) | measured time |\n|---|---:|---:|---:|---:|\n";
  long long n = 0, m = 0;
  double t = 0;
  const auto cls = r.classes();
  for (std::string_view k : kKernelClasses) {
    auto it = cls.find(std::string(k));
    if (it == cls.end()) continue;
    const auto& c = it->second;
    s += fmt::format("| {} | {} | {} | {} | {:.3f} ms |\n", k, c.ops, c.mapped, c.ops - c.mapped,
                     c.measured_s * 1e3);
    n += c.ops, m += c.mapped, t += c.measured_s;
  }
  s += fmt::format("| all | {} | {} | {} | {:.3f} ms |\n", n, m, n - m, t * 1e3);
  long long graph = 0;
  for (const auto& o : r.ops) graph += o.graph ? 1 : 0;
  if (graph > 0) s += fmt::format("\n{} op(s) replayed from CUDA graphs.\n", graph);
  if (!r.skipped.empty()) {
    s += "\nOther events (not GPU work; their host time is inside the host gaps):";
    for (const auto& [k, c] : r.skipped) s += fmt::format(" {} {}", k, c);
    s += "\n";
  }
  return s;
}

}  // namespace ridge::workloads
