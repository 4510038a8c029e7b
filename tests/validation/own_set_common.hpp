// What the own-program sets' tests share (validate/prereg/own-set*): reading a committed JSON
// file, and the op classes errors.py scores by (models/calibration.cpp's names: GEMMs by dtype,
// strided elementwise apart, copies by direction, else the op), with the GEMMs whose leading
// dimensions are not 16-byte multiples as a class of their own from set 2 on.
#pragma once

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace ridge::own_sets {

inline nlohmann::json read_json(const std::string& path) {
  std::ifstream f(path);
  REQUIRE(f.good());
  return nlohmann::json::parse(f);
}

/// A GEMM whose k (rows of A and B) or n (rows of C) is not a multiple of 16 bytes.
inline bool misaligned(const nlohmann::json& p) {
  const std::string dt = p.at("dtype");
  const int in = dt == "fp32" || dt == "tf32" ? 4 : (dt == "fp16" || dt == "bf16" ? 2 : 1);
  const int out = dt.rfind("fp8", 0) == 0 ? 2 : in;
  return (p.at("k").get<long long>() * in) % 16 != 0 ||
         (p.at("n").get<long long>() * out) % 16 != 0;
}

/// The op class of a record; `split_misaligned`: misaligned GEMMs as "gemm misaligned" (sets 2+).
inline std::string op_class(const nlohmann::json& r, bool split_misaligned) {
  const std::string op = r.at("op");
  const auto& p = r.at("params");
  if (op == "gemm")
    return split_misaligned && misaligned(p) ? "gemm misaligned"
                                             : "gemm " + p.at("dtype").get<std::string>();
  if (op == "elementwise") return p.at("stride").get<int>() > 1 ? "elementwise strided" : op;
  if (op == "copy") return "copy " + p.at("direction").get<std::string>();
  return op;
}

/// |predicted - measured| / measured of a set's measured cases (timing.median_us, matched by id):
/// every case in its op class (misaligned GEMMs apart), and in `all` unless its class is
/// `unscored` (set 2's rule left its misaligned GEMMs out).
struct SetErrors {
  std::vector<double> all;
  std::map<std::string, std::vector<double>> by_class;
};

/// From own-set12 on, the launch cases are scored at the host's measured launch cost
/// (validate/prereg/own_prereg.py launch_conditioned, written out again here): the probe's two
/// runs (before/ and after/ the cases) are averaged, the host cost h is where the pre-registered
/// launch table's probe column equals that mean (linear between columns), and every launch case's
/// prediction is the table's value at h. Returns the predictions by id, launch cases replaced.
inline std::map<std::string, double> launch_conditioned(std::map<std::string, double> pred,
                                                        const std::string& table_path,
                                                        const std::string& probe_path) {
  const auto table = read_json(table_path);
  const auto probe = read_json(probe_path);
  REQUIRE(table.at("probe").size() == 1);
  const std::string probe_id = table.at("probe")[0];
  const std::string want = probe_id.substr(probe_id.find('/') + 1);
  std::vector<double> runs;
  for (const auto& r : probe.at("records")) {
    const std::string id = r.at("id");
    if (id.substr(id.find('/') + 1) == want) runs.push_back(r.at("timing").at("median_us"));
  }
  REQUIRE(runs.size() == 2);
  const double m = (runs[0] + runs[1]) / 2;
  const std::vector<double> col = table.at("cases").at(probe_id);
  REQUIRE(col.front() <= m);
  REQUIRE(m <= col.back());
  size_t i = 0;
  while (i + 2 < col.size() && col[i + 1] <= m) ++i;
  const double w = (m - col[i]) / (col[i + 1] - col[i]);
  for (auto& [id, v] : pred) {
    if (id.rfind("launch/", 0) != 0) continue;
    const std::vector<double> c = table.at("cases").at(id);
    v = c[i] + w * (c[i + 1] - c[i]);
  }
  return pred;
}

inline SetErrors score_set(const std::string& measured_path, const std::string& predicted_path,
                           const std::string& unscored = "", const std::string& launch_table = "",
                           const std::string& launch_probe = "") {
  const auto measured = read_json(measured_path);
  const auto pred = read_json(predicted_path);
  std::map<std::string, double> p;
  for (const auto& r : pred.at("records")) p[r.at("id")] = r.at("timing").at("median_us");
  if (!launch_table.empty()) p = launch_conditioned(std::move(p), launch_table, launch_probe);
  SetErrors out;
  for (const auto& r : measured.at("records")) {
    const double m = r.at("timing").at("median_us");
    const double err = std::abs(p.at(r.at("id")) - m) / m;
    const std::string c = op_class(r, true);
    out.by_class[c].push_back(err);
    if (c != unscored) out.all.push_back(err);
  }
  return out;
}

}  // namespace ridge::own_sets
