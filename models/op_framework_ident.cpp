#include "models/op_framework_ident.hpp"

#include <fmt/format.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>

#include "models/least_squares.hpp"
#include "models/op_framework.hpp"

namespace ridge::models {
namespace {

constexpr double kPinSensitivity = 0.05;  // |d r / d ln p| that pins (as calibrate())
constexpr double kStep = 1e-3;            // forward difference in ln p
constexpr double kChi2 = 3.84;            // chi-square, 1 degree of freedom, 95%

double huber_weight(double r) {
  return std::fabs(r) <= 0.1 ? 1.0 : 0.1 / std::fabs(r);
}

double weighted_cost(const std::vector<double>& r) {
  double c = 0;
  for (double x : r) c += huber_weight(x) * x * x;
  return c;
}

// The residuals of the framework-op records in `idx` (indices into `records`).
void residuals_of(const hw::GpuSpec& gpu, const std::vector<Record>& records,
                  const std::vector<size_t>& idx, const FwParams& p, FwResiduals& out) {
  for (size_t i : idx) {
    const Record& rec = records[i];
    const auto ks = framework_kernels(gpu, *rec.spec, p);
    const auto& meas = rec.raw.contains("kernels") ? rec.raw.at("kernels") : nlohmann::json();
    ++out.records;
    if (meas.is_array() && meas.size() == ks.size()) {
      ++out.kernel_level;
      for (size_t k = 0; k < ks.size(); ++k) {
        out.r.push_back(std::log(ks[k].time_s / (meas[k].at("median_us").get<double>() * 1e-6)));
        out.record.push_back(i);
      }
    } else {
      double sum = 0;
      for (const auto& k : ks) sum += k.time_s;
      out.r.push_back(std::log(sum / rec.median_s));
      out.record.push_back(i);
    }
  }
}

std::vector<size_t> framework_records(const std::vector<Record>& records) {
  std::vector<size_t> idx;
  for (size_t i = 0; i < records.size(); ++i)
    if (records[i].spec && is_framework_op(records[i].op) && records[i].median_s > 0)
      idx.push_back(i);
  return idx;
}

std::vector<double> residual_vector(const hw::GpuSpec& gpu, const std::vector<Record>& records,
                                    const std::vector<size_t>& idx, const FwParams& p) {
  FwResiduals out;
  residuals_of(gpu, records, idx, p, out);
  return out.r;
}

FwParams with(FwParams p, const FwParamDecl& d, double v) {
  p.*(d.member) = v;
  return p;
}

std::string op_pass(const Record& r) {
  std::string op = r.op.starts_with("torch_") ? r.op.substr(6) : r.op;
  if (r.params.contains("pass") && r.params.at("pass") == "bwd") op += " bwd";
  return op;
}

// "rows 64-262144, cols 16-2048; bf16 fp32" over the records in `recs`.
std::string shape_ranges(const std::vector<Record>& records, const std::set<size_t>& recs) {
  static const char* keys[] = {"rows", "cols", "vocab", "n",      "outer",
                               "a",    "b",    "inner", "pieces", "stride"};
  std::string out;
  for (const char* k : keys) {
    double lo = std::numeric_limits<double>::infinity(), hi = 0;
    for (size_t i : recs) {
      const auto& p = records[i].params;
      if (p.contains(k) && p.at(k).is_number()) {
        lo = std::min(lo, p.at(k).get<double>());
        hi = std::max(hi, p.at(k).get<double>());
      }
    }
    if (hi <= 0) continue;
    out += fmt::format("{}{} {}", out.empty() ? "" : ", ", k,
                       lo == hi ? fmt::format("{:.0f}", lo) : fmt::format("{:.0f}-{:.0f}", lo, hi));
  }
  std::set<std::string> dtypes;
  for (size_t i : recs)
    for (const char* k : {"dtype", "logits_dtype"})
      if (records[i].params.contains(k)) dtypes.insert(records[i].params.at(k).get<std::string>());
  if (!dtypes.empty()) {
    out += ";";
    for (const auto& d : dtypes) out += " " + d;
  }
  return out;
}

}  // namespace

FwResiduals framework_residuals(const hw::GpuSpec& gpu, const std::vector<Record>& records,
                                const FwParams& params) {
  FwResiduals out;
  residuals_of(gpu, records, framework_records(records), params, out);
  return out;
}

FwIdentResult framework_identifiability(const hw::GpuSpec& gpu, const std::vector<Record>& records,
                                        const FwParams& params) {
  const auto& table = framework_param_table();
  const std::vector<size_t> idx = framework_records(records);
  FwResiduals base;
  residuals_of(gpu, records, idx, params, base);
  const Eigen::Index m = static_cast<Eigen::Index>(base.r.size());
  const Eigen::Index n = static_cast<Eigen::Index>(table.size());
  FwIdentResult res;
  res.records = base.records;
  res.residuals = static_cast<int>(m);
  res.kernel_level = base.kernel_level;
  if (m == 0) throw std::invalid_argument("framework identifiability: no framework-op records");

  // Where each record's residuals start (a record's kernel count does not depend on the
  // parameters).
  std::map<size_t, size_t> first;
  for (size_t i = base.r.size(); i-- > 0;) first[base.record[i]] = i;
  // The records a parameter touches (its residuals change at 0.1x, 10x or 1.05x of its value),
  // which residuals a 5% change moves by more than 1e-3, and the Jacobian d r / d ln p over the
  // touched records (zero elsewhere).
  Eigen::MatrixXd J = Eigen::MatrixXd::Zero(m, n);
  std::vector<std::vector<bool>> moved(table.size(), std::vector<bool>(base.r.size(), false));
  std::vector<std::set<size_t>> touched_by(table.size());
  for (size_t j = 0; j < table.size(); ++j) {
    const double v = params.*(table[j].member);
    for (double f : {0.1, 10.0, 1.05}) {
      const auto rf = residual_vector(gpu, records, idx, with(params, table[j], v * f));
      for (size_t i = 0; i < rf.size(); ++i) {
        if (std::fabs(rf[i] - base.r[i]) > 1e-9) touched_by[j].insert(base.record[i]);
        if (f == 1.05) moved[j][i] = std::fabs(rf[i] - base.r[i]) > 1e-3;
      }
    }
    const std::vector<size_t> sub(touched_by[j].begin(), touched_by[j].end());
    FwResiduals rj;
    residuals_of(gpu, records, sub, with(params, table[j], v * std::exp(kStep)), rj);
    for (size_t k = 0; k < rj.r.size();) {
      const size_t rec = rj.record[k];
      for (size_t at = first.at(rec); k < rj.r.size() && rj.record[k] == rec; ++k, ++at)
        J(static_cast<Eigen::Index>(at), static_cast<Eigen::Index>(j)) =
            (rj.r[k] - base.r[at]) / kStep;
    }
  }
  Eigen::VectorXd r(m), w(m);
  double wss = 0, ss = 0;
  for (Eigen::Index i = 0; i < m; ++i) {
    r[i] = base.r[static_cast<size_t>(i)];
    w[i] = huber_weight(r[i]);
    wss += w[i] * r[i] * r[i];
    ss += r[i] * r[i];
  }
  const double dof = std::max<double>(static_cast<double>(m - n), 1.0);
  const double sigma2 = wss / dof;
  res.sigma = std::sqrt(sigma2);
  res.rms_log = std::sqrt(ss / static_cast<double>(m));

  // Gauss-Newton covariance, as calibrate() takes it.
  const GaussNewtonVariance gn = gauss_newton_variance(J, w);
  const Eigen::VectorXd& var = gn.var;
  const std::vector<bool>& undetermined = gn.undetermined;

  const double c0 = weighted_cost(base.r);
  for (size_t j = 0; j < table.size(); ++j) {
    const Eigen::Index jj = static_cast<Eigen::Index>(j);
    FwParamIdent p;
    p.name = std::string(table[j].name);
    p.kernels = std::string(table[j].kernels);
    p.value = params.*(table[j].member);
    p.fitted = table[j].fitted;
    std::map<std::string, int> classes;
    std::set<size_t> pin_recs;
    for (Eigen::Index i = 0; i < m; ++i) {
      const size_t ii = static_cast<size_t>(i);
      if (moved[j][ii]) ++p.residuals;
      if (std::fabs(J(i, jj)) > kPinSensitivity) {
        ++p.pinning;
        if (pin_recs.insert(base.record[ii]).second) ++classes[op_pass(records[base.record[ii]])];
      }
    }
    p.pinning_records = static_cast<int>(pin_recs.size());
    for (const auto& [c, k] : classes)
      p.pinned_by += fmt::format("{}{} ({})", p.pinned_by.empty() ? "" : ", ", c, k);
    p.shapes = shape_ranges(records, pin_recs);
    const double sd = undetermined[j] || var[jj] <= 0 ? std::numeric_limits<double>::infinity()
                                                      : std::sqrt(sigma2 * var[jj]);
    p.sd_log = sd;
    p.ci_lo = std::isfinite(sd) ? p.value * std::exp(-1.96 * sd) : 0.0;
    p.ci_hi =
        std::isfinite(sd) ? p.value * std::exp(1.96 * sd) : std::numeric_limits<double>::infinity();
    if (p.pinning == 0 || !std::isfinite(sd) || sd > 0.5)
      p.verdict = "unidentifiable";
    else if (sd > 0.05 || p.pinning < 3)
      p.verdict = "weak";
    else
      p.verdict = "pinned";

    // Conditional scan: the others held, ln p on a grid of 5% steps out to a factor 10 each way,
    // re-evaluating only the records that p touches; the range of grid points around the grid
    // minimum whose cost stays within kChi2 sigma^2 of it.
    const std::set<size_t>& touched = touched_by[j];
    p.scan_lo = p.value * 0.1;
    p.scan_hi = p.value * 10;
    if (!touched.empty()) {
      const std::vector<size_t> sub(touched.begin(), touched.end());
      double c_rest = c0;  // the cost of the untouched residuals is constant
      for (size_t i = 0; i < base.r.size(); ++i)
        if (touched.count(base.record[i]))
          c_rest -= huber_weight(base.r[i]) * base.r[i] * base.r[i];
      const int steps = static_cast<int>(std::ceil(std::log(10.0) / std::log(1.05)));
      std::vector<double> grid, cost;
      for (int s = -steps; s <= steps; ++s) {
        const double v = p.value * std::pow(1.05, s);
        grid.push_back(v);
        cost.push_back(
            c_rest + weighted_cost(residual_vector(gpu, records, sub, with(params, table[j], v))));
      }
      const size_t best =
          static_cast<size_t>(std::min_element(cost.begin(), cost.end()) - cost.begin());
      const double limit = cost[best] + kChi2 * sigma2;
      size_t lo = best, hi = best;
      while (lo > 0 && cost[lo - 1] <= limit) --lo;
      while (hi + 1 < cost.size() && cost[hi + 1] <= limit) ++hi;
      p.scan_lo = grid[lo];
      p.scan_hi = grid[hi];
    }
    p.scan_records = static_cast<int>(touched.size());
    // A parameter the derivative cannot see (a threshold no record sits on, a floor that never
    // binds) is classified by its scan instead, with the same rule: an end at the scan's limit
    // (0.1x or 10x) is an open interval; else sd = ln(hi / lo) / (2 x 1.96).
    if (p.pinning == 0) {
      p.verdict_by = "scan";
      const bool open = p.scan_lo <= p.value * 0.1 * (1 + 1e-9) ||
                        p.scan_hi >= p.value * 10 * (1 - 1e-9) || touched.empty();
      const double sd_scan = std::log(p.scan_hi / p.scan_lo) / (2 * 1.96);
      if (open || sd_scan > 0.5)
        p.verdict = "unidentifiable";
      else if (sd_scan > 0.05 || p.scan_records < 3)
        p.verdict = "weak";
      else
        p.verdict = "pinned";
    }
    res.params.push_back(p);
  }
  return res;
}

FwParams framework_refit(const hw::GpuSpec& gpu, const std::vector<Record>& records,
                         const FwParams& start, const std::vector<std::string>& free) {
  const auto& table = framework_param_table();
  std::vector<const FwParamDecl*> ps;
  for (const auto& name : free) {
    const auto it = std::find_if(table.begin(), table.end(),
                                 [&](const FwParamDecl& d) { return d.name == name; });
    if (it == table.end())
      throw std::invalid_argument("framework refit: '" + name + "' is not a framework parameter");
    ps.push_back(&*it);
  }
  const std::vector<size_t> idx = framework_records(records);
  const Eigen::Index n = static_cast<Eigen::Index>(ps.size());
  auto set = [&](const Eigen::VectorXd& th) {
    FwParams p = start;
    for (size_t j = 0; j < ps.size(); ++j)
      p.*(ps[j]->member) = std::exp(th[static_cast<Eigen::Index>(j)]);
    return p;
  };
  auto vec = [](const std::vector<double>& v) {
    return Eigen::Map<const Eigen::VectorXd>(v.data(), static_cast<Eigen::Index>(v.size()));
  };
  Eigen::VectorXd theta(n);
  for (Eigen::Index j = 0; j < n; ++j)
    theta[j] = std::log(start.*(ps[static_cast<size_t>(j)]->member));
  std::vector<double> r = residual_vector(gpu, records, idx, set(theta));
  double c = weighted_cost(r);
  double lambda = 1e-2;
  for (int it = 0; it < 50 && n > 0; ++it) {
    const Eigen::Index m = static_cast<Eigen::Index>(r.size());
    Eigen::MatrixXd J(m, n);
    for (Eigen::Index j = 0; j < n; ++j) {
      Eigen::VectorXd th = theta;
      th[j] += kStep;
      J.col(j) = (vec(residual_vector(gpu, records, idx, set(th))) - vec(r)) / kStep;
    }
    Eigen::VectorXd w(m);
    for (Eigen::Index i = 0; i < m; ++i) w[i] = huber_weight(r[static_cast<size_t>(i)]);
    const Eigen::MatrixXd JtW = J.transpose() * w.asDiagonal();
    const Eigen::MatrixXd A = JtW * J;
    const Eigen::VectorXd g = JtW * vec(r);
    bool improved = false;
    for (int tries = 0; tries < 8; ++tries) {
      Eigen::MatrixXd Ad = A;
      for (Eigen::Index j = 0; j < n; ++j) Ad(j, j) += lambda * std::max(A(j, j), 1e-9);
      const Eigen::VectorXd th = theta + Ad.ldlt().solve(-g);
      const auto rt = residual_vector(gpu, records, idx, set(th));
      const double ct = weighted_cost(rt);
      if (ct < c) {
        const double gain = c - ct;
        theta = th;
        r = rt;
        c = ct;
        lambda = std::max(lambda / 3, 1e-7);
        improved = gain > 1e-12 * std::max(c, 1e-300);
        break;
      }
      lambda *= 4;
    }
    if (!improved) break;
  }
  return set(theta);
}

namespace {
std::string num(double v) {
  if (!std::isfinite(v)) return "inf";
  return fmt::format("{:.4g}", v);
}
}  // namespace

std::string framework_ident_markdown(const FwIdentResult& r) {
  std::string s = fmt::format(
      "{} records ({} matched kernel by kernel), {} residuals; rms ln(pred/meas) {:.3f}, "
      "sigma {:.3f}\n\n",
      r.records, r.kernel_level, r.residuals, r.rms_log, r.sigma);
  s += "| parameter | value | 95% interval (Jacobian) | scan (others held) | residuals pinning "
       "(records) | records by op | shapes | verdict |\n|---|---:|---|---|---:|---|---|---|\n";
  for (const auto& p : r.params)
    s += fmt::format("| {} | {} | {}-{} | {}-{} | {} ({}) | {} | {} | {} |\n", p.name, num(p.value),
                     num(p.ci_lo), num(p.ci_hi), num(p.scan_lo), num(p.scan_hi), p.pinning,
                     p.pinning_records, p.pinned_by.empty() ? "none" : p.pinned_by,
                     p.shapes.empty() ? "-" : p.shapes,
                     (p.verdict_by == "scan" ? p.verdict + " (scan)" : p.verdict) +
                         (p.fitted ? "" : "; fixed, not fitted"));
  return s;
}

nlohmann::json framework_ident_json(const FwIdentResult& r) {
  nlohmann::json j;
  j["schema"] = "ridge.fw_ident/1";
  j["records"] = r.records;
  j["kernel_level_records"] = r.kernel_level;
  j["residuals"] = r.residuals;
  j["rms_log"] = r.rms_log;
  j["sigma"] = r.sigma;
  auto fin = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(); };
  nlohmann::json ps = nlohmann::json::array();
  for (const auto& p : r.params)
    ps.push_back({{"name", p.name},
                  {"kernels", p.kernels},
                  {"fitted", p.fitted},
                  {"value", p.value},
                  {"residuals", p.residuals},
                  {"pinning_residuals", p.pinning},
                  {"pinning_records", p.pinning_records},
                  {"pinned_by", p.pinned_by},
                  {"shapes", p.shapes},
                  {"sd_log", fin(p.sd_log)},
                  {"ci_lo", p.ci_lo},
                  {"ci_hi", fin(p.ci_hi)},
                  {"scan_lo", p.scan_lo},
                  {"scan_hi", p.scan_hi},
                  {"scan_records", p.scan_records},
                  {"verdict", p.verdict},
                  {"verdict_by", p.verdict_by}});
  j["params"] = std::move(ps);
  return j;
}

}  // namespace ridge::models
