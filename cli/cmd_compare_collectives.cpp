// `ridge compare FILE --system S`: measured collectives (validate/ records, or nccl-tests' text
// output with --op) against the same collectives simulated on a system.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include "cli/commands.hpp"
#include "cli/output.hpp"
#include "hw/system_loader.hpp"
#include "models/collective_compare.hpp"

namespace ridge::cli {

namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw hw::ConfigException({{path, 0, 0, "", "cannot read this file"}});
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

double median_abs(std::vector<double> v) {
  if (v.empty()) return NAN;
  for (double& x : v) x = std::fabs(x);
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

std::string pct_or_dash(double v) {
  return std::isnan(v) ? "-" : fmt::format("{:.1f}%", 100 * v);
}

}  // namespace

int compare_collectives_command(const CollectiveCompareArgs& a) {
  const hw::SystemSpec sys = hw::find_system(a.system);
  const hw::NcclTuning tuning = hw::load_nccl_tuning(sys.nccl.version);
  std::vector<std::pair<std::string, std::string>> files = sys.files;
  files.insert(files.end(), tuning.files.begin(), tuning.files.end());
  std::vector<models::CollectiveMeasurement> measured;
  for (const auto& f : a.files) {
    const std::string text = read_text(f);
    files.emplace_back(f, hw::sha256_hex(text));
    const auto first = text.find_first_not_of(" \t\r\n");
    std::vector<models::CollectiveMeasurement> got;
    if (first != std::string::npos && text[first] == '{') {
      got = models::read_collective_records(f, text);
    } else {
      models::CollOp op;
      if (a.op.empty() || !models::parse_coll_op(a.op, op))
        throw std::invalid_argument(fmt::format(
            "{}: nccl-tests output does not name its collective: give --op (all_reduce, "
            "all_gather, reduce_scatter, all_to_all, broadcast, reduce, send_recv)",
            f));
      got = models::read_nccl_tests_text(f, text, op, a.gpus);
    }
    measured.insert(measured.end(), got.begin(), got.end());
  }
  for (const auto& m : measured)
    if (const std::string err = hw::check_gpu_count(sys, m.request.gpus); !err.empty())
      throw std::invalid_argument(
          fmt::format("{} ({} ranks measured): {}", m.series, m.request.gpus, err));
  const auto rows = models::compare_collectives(sys, tuning, measured, !a.no_nvls, a.host_issue_us);
  // Per series: bandwidth-bound sizes (>= 1 MiB) and latency-bound ones (<= 64 KiB).
  std::map<std::string, std::pair<std::vector<double>, std::vector<double>>> by;
  std::vector<std::string> order;
  for (const auto& r : rows) {
    if (!by.count(r.m.series)) order.push_back(r.m.series);
    auto& [big, small] = by[r.m.series];
    if (r.m.request.bytes >= 1048576) big.push_back(r.error());
    if (r.m.request.bytes <= 65536) small.push_back(r.error());
  }
  std::string text;
  nlohmann::json series = nlohmann::json::array();
  if (a.markdown) {
    text +=
        "| series (op/algo/proto) | sizes >= 1 MiB: median abs error | max abs error | "
        "sizes <= 64 KiB: median abs error |\n|---|---:|---:|---:|\n";
  }
  Table t({"series", ">=1MiB median |err|", ">=1MiB max |err|", "<=64KiB median |err|"});
  for (const auto& s : order) {
    const auto& [big, small] = by[s];
    double mx = big.empty() ? NAN : 0;
    for (double e : big) mx = std::max(mx, std::fabs(e));
    const double mb = median_abs(big), ms = median_abs(small);
    if (a.markdown)
      text += fmt::format("| {} | {} | {} | {} |\n", s, pct_or_dash(mb), pct_or_dash(mx),
                          pct_or_dash(ms));
    t.row({s, pct_or_dash(mb), pct_or_dash(mx), pct_or_dash(ms)});
    series.push_back(
        {{"series", s},
         {"big_median_abs", std::isnan(mb) ? nlohmann::json() : nlohmann::json(mb)},
         {"big_max_abs", std::isnan(mx) ? nlohmann::json() : nlohmann::json(mx)},
         {"small_median_abs", std::isnan(ms) ? nlohmann::json() : nlohmann::json(ms)}});
  }
  if (!a.markdown) {
    text = fmt::format(
        "{} collectives measured vs simulated on {}{}{}\n", rows.size(), sys.name,
        a.no_nvls ? " (NVLS off)" : "",
        a.host_issue_us > 0 ? fmt::format(", host issue {:.2f} us per rank", a.host_issue_us) : "");
    text += t.str();
    Table rt({"series", "bytes", "measured", "predicted", "error", "choice"});
    for (const auto& r : rows)
      if (a.all_rows)
        rt.row({r.m.series, fmt_bytes(r.m.request.bytes), fmt_time(r.m.measured_us * 1e-6),
                fmt_time(r.predicted_us * 1e-6), fmt::format("{:+.1f}%", 100 * r.error()),
                r.choice});
    if (a.all_rows) text += "\n" + rt.str();
    text += provenance_text(files);
  }
  nlohmann::json jrows = nlohmann::json::array();
  for (const auto& r : rows)
    jrows.push_back({{"series", r.m.series},
                     {"bytes", r.m.request.bytes},
                     {"gpus", r.m.request.gpus},
                     {"measured_us", r.m.measured_us},
                     {"predicted_us", r.predicted_us},
                     {"error", r.error()},
                     {"choice", r.choice}});
  nlohmann::json j = {
      {"system", sys.name}, {"series", series}, {"rows", jrows}, {"provenance", provenance(files)}};
  emit(a.json, text, j);
  return 0;
}

}  // namespace ridge::cli
