#include "models/collective_compare.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <sstream>

#include "hw/config.hpp"

namespace ridge::models {

namespace {

[[noreturn]] void fail(const std::string& file, int line, const std::string& path,
                       const std::string& message) {
  throw hw::ConfigException({{file, line, 0, path, message}});
}

}  // namespace

std::vector<CollectiveMeasurement> read_collective_records(const std::string& file,
                                                           const std::string& text, int* skipped) {
  nlohmann::json d;
  try {
    d = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {  // parse_error, or out_of_range for 1e400
    fail(file, 0, "", fmt::format("not JSON: {}", e.what()));
  }
  if (!d.is_object() || !d.contains("records") || !d["records"].is_array())
    fail(file, 0, "records", "expected an object with a 'records' array (ridge.records/1)");
  std::vector<CollectiveMeasurement> out;
  std::vector<hw::ConfigError> errors;
  int skip = 0, index = -1;
  for (const auto& r : d["records"]) {
    ++index;
    const std::string where = fmt::format("records[{}] ({})", index,
                                          r.is_object() && r.contains("id") && r["id"].is_string()
                                              ? r["id"].get<std::string>()
                                              : std::string("no id"));
    auto bad = [&](const std::string& field, const std::string& msg) {
      errors.push_back({file, 0, 0, where + "." + field, msg});
    };
    if (!r.is_object() || !r.contains("op") || !r["op"].is_string()) {
      bad("op", "expected a string");
      continue;
    }
    CollectiveMeasurement m;
    if (!parse_coll_op(r["op"].get<std::string>(), m.request.op)) {
      ++skip;
      continue;
    }
    const auto& p = r.contains("params") ? r["params"] : nlohmann::json();
    if (!p.is_object() || !p.contains("nranks") || !p["nranks"].is_number_integer() ||
        p["nranks"].get<long long>() < 1 || p["nranks"].get<long long>() > 1 << 20) {
      bad("params.nranks", "expected a rank count in [1, 2^20]");
      continue;
    }
    if (!r.contains("bytes") || !r["bytes"].is_number() || !(r["bytes"].get<double>() >= 1) ||
        r["bytes"].get<double>() > 1e15) {
      bad("bytes", "expected a size in bytes in [1, 1e15]");
      continue;
    }
    const auto* t = r.contains("timing") && r["timing"].is_object() ? &r["timing"] : nullptr;
    if (!t || !t->contains("median_us") || !(*t)["median_us"].is_number() ||
        !((*t)["median_us"].get<double>() > 0)) {
      bad("timing.median_us", "expected a positive number of microseconds");
      continue;
    }
    m.request.gpus = p["nranks"].get<int>();
    m.request.bytes = r["bytes"].get<double>();
    m.measured_us = (*t)["median_us"].get<double>();
    const std::string algo =
        p.contains("algo") && p["algo"].is_string() ? p["algo"].get<std::string>() : "default";
    const std::string proto =
        p.contains("proto") && p["proto"].is_string() ? p["proto"].get<std::string>() : "default";
    if (algo != "default") {
      hw::NcclAlgo a;
      if (!parse_nccl_algo(algo, a)) {
        bad("params.algo", fmt::format("unknown NCCL algorithm '{}'", algo));
        continue;
      }
      m.request.algo = a;
    }
    if (proto != "default") {
      hw::NcclProto pr;
      if (!parse_nccl_proto(proto, pr)) {
        bad("params.proto", fmt::format("unknown NCCL protocol '{}'", proto));
        continue;
      }
      m.request.proto = pr;
    }
    m.series = fmt::format("{}/{}/{}", r["op"].get<std::string>(), algo, proto);
    out.push_back(std::move(m));
  }
  if (!errors.empty()) throw hw::ConfigException(std::move(errors));
  if (skipped) *skipped = skip;
  return out;
}

std::vector<CollectiveMeasurement> read_nccl_tests_text(const std::string& file,
                                                        const std::string& text, CollOp op,
                                                        int gpus) {
  std::vector<CollectiveMeasurement> out;
  std::vector<hw::ConfigError> errors;
  std::istringstream in(text);
  std::string line;
  int n = 0, ranks = 0;
  std::vector<std::pair<int, std::vector<std::string>>> rows;
  while (std::getline(in, line)) {
    ++n;
    std::istringstream ls(line);
    std::vector<std::string> f;
    for (std::string w; ls >> w;) f.push_back(w);
    if (f.empty()) continue;
    if (f[0] == "#") {
      if (f.size() > 1 && f[1] == "Rank") ++ranks;
      continue;
    }
    if (f[0][0] == '#') continue;
    rows.emplace_back(n, std::move(f));
  }
  if (ranks == 0) ranks = gpus;
  if (ranks < 1) fail(file, 0, "", "no '#  Rank' lines: give the GPU count with --gpus");
  for (const auto& [ln, f] : rows) {
    // size count type redop root time algbw busbw #wrong (out-of-place), then in-place.
    if (f.size() < 9) {
      errors.push_back({file, ln, 1, "row",
                        fmt::format("expected nccl-tests' columns (size count "
                                    "type redop root time algbw busbw #wrong), "
                                    "got {} fields",
                                    f.size())});
      continue;
    }
    char* end = nullptr;
    const double bytes = std::strtod(f[0].c_str(), &end);
    const bool size_ok = end && *end == '\0' && bytes >= 1 && bytes <= 1e15;
    const double us = std::strtod(f[5].c_str(), &end);
    const bool time_ok = end && *end == '\0' && us > 0 && std::isfinite(us);
    if (!size_ok || !time_ok) {
      errors.push_back({file, ln, 1, !size_ok ? "size" : "time",
                        !size_ok ? fmt::format("size '{}' is not a byte count", f[0])
                                 : fmt::format("time '{}' is not a positive number of us", f[5])});
      continue;
    }
    CollectiveMeasurement m;
    m.request.op = op;
    m.request.bytes = bytes;
    m.request.gpus = ranks;
    m.measured_us = us;
    m.series = fmt::format("{}/nccl-tests", coll_op_name(op));
    out.push_back(std::move(m));
  }
  if (!errors.empty()) throw hw::ConfigException(std::move(errors));
  if (out.empty()) fail(file, 0, "", "no data rows (is this nccl-tests' output?)");
  return out;
}

std::vector<CollectiveComparison> compare_collectives(
    const hw::SystemSpec& system, const hw::NcclTuning& tuning,
    const std::vector<CollectiveMeasurement>& measured, bool nvls_enabled,
    double host_issue_us_per_rank) {
  std::vector<CollectiveComparison> out;
  for (const auto& m : measured) {
    CollectiveRequest q = m.request;
    q.nvls_enabled = nvls_enabled;
    q.host_issue_s = host_issue_us_per_rank * 1e-6 * q.gpus;
    const CollectiveResult r = simulate_collective(system, tuning, q);
    CollectiveComparison c;
    c.m = m;
    c.predicted_us = r.time_s * 1e6;
    c.choice = fmt::format("{}/{}", r.p2p ? "p2p" : hw::nccl_algo_name(r.algo),
                           hw::nccl_proto_name(r.proto));
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace ridge::models
