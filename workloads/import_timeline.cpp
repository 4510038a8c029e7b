#include "workloads/import_timeline.hpp"

#include <fmt/format.h>

#include <cmath>

#include "hw/config.hpp"
#include "hw/json_number.hpp"
#include "hw/limits.hpp"
#include "workloads/kernel_classify.hpp"

namespace ridge::workloads {

ImportedRun import_e2e_timeline(const std::string& path, const std::string& part) {
  return parse_e2e_timeline(read_maybe_gzip(path), path, part);
}

ImportedRun parse_e2e_timeline(const std::string& text, const std::string& path,
                               const std::string& part) {
  if (const std::string deep = hw::json_depth_error(text); !deep.empty())
    throw TraceError(fmt::format("{}: {}", path, deep));
  const nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
  if (doc.is_discarded()) throw TraceError(path + ": not JSON");
  if (!doc.is_object() || doc.value("schema", "") != "ridge.e2e_timeline/1")
    throw TraceError(path + ": schema: expected \"ridge.e2e_timeline/1\"");
  if (!doc.contains(part) || !doc.at(part).is_object())
    throw TraceError(fmt::format("{}: no '{}' timeline (expected full or light)", path, part));
  const auto& t = doc.at(part);
  TraceEvents ev;
  ev.device = "NVIDIA H200";  // validate/e2e records only the H200 (validate/data/h200/)
  std::size_t i = 0;          // the row being read, for nlohmann's errors
  bool in_rows = false;
  try {
    const auto& names = t.at("names");
    const auto& rows = t.at("kernels");
    ev.events = rows.size();
    in_rows = true;
    for (; i < rows.size(); ++i) {
      const auto& k = rows[i];
      // [name, gpu_ts_us, gpu_dur_us, launch_ts_us, launch_dur_us, op, grid, block]
      if (!k.is_array() || k.size() < 8)
        throw TraceError(fmt::format("{}: {}.kernels[{}]: expected 8 columns", path, part, i));
      GpuActivity a;
      a.name = names.at(hw::json_integer_at<std::size_t>(k.at(0))).get<std::string>();
      a.kind = a.name.rfind("Memcpy", 0) == 0   ? GpuActivityKind::kMemcpy
               : a.name.rfind("Memset", 0) == 0 ? GpuActivityKind::kMemset
                                                : GpuActivityKind::kKernel;
      const double ts = k.at(1).get<double>(), dur = k.at(2).get<double>();
      if (std::abs(ts) > 1e15 || dur < 0 || dur > 1e15)
        throw TraceError(fmt::format("{}: {}.kernels[{}]: time out of range", path, part, i));
      a.ts_ns = std::llround(ts * 1000);
      a.dur_ns = std::llround(dur * 1000);
      a.correlation = static_cast<int64_t>(i);
      a.event_index = i;
      for (std::size_t d = 0; d < 3; ++d) {
        if (k.at(6).is_array() && d < k.at(6).size())
          a.grid[d] = hw::json_integer_at<int64_t>(k.at(6)[d]);
        if (k.at(7).is_array() && d < k.at(7).size())
          a.block[d] = hw::json_integer_at<int64_t>(k.at(7)[d]);
      }
      const double launch = k.at(3).get<double>(), launch_dur = k.at(4).get<double>();
      if (launch_dur >= 0 && std::abs(launch) <= 1e15 && launch_dur <= 1e15)
        ev.api.push_back({"launch", std::llround(launch * 1000), std::llround(launch_dur * 1000), 0,
                          a.correlation, -1});
      ev.gpu.push_back(std::move(a));
    }
  } catch (const nlohmann::json::exception& e) {
    if (in_rows) throw TraceError(fmt::format("{}: {}.kernels[{}]: {}", path, part, i, e.what()));
    throw TraceError(fmt::format("{}: {}: {}", path, part, e.what()));
  }
  ImportedRun r = import_events(ev, path + ":" + part);
  r.sha256 = hw::sha256_hex(text);
  return r;
}

}  // namespace ridge::workloads
