#include "models/calibration.hpp"

#include <fmt/format.h>
#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <set>

#include "hw/model_params.hpp"
#include "hw/units.hpp"
#include "models/least_squares.hpp"
#include "models/op_cost.hpp"

namespace ridge::models {
namespace {

Timing timing_of(const Record& r) {
  return r.method == "per_call" ? Timing::kPerCall : Timing::kKernel;
}

double predict_s(const hw::GpuSpec& gpu, const Record& r, Mode mode) {
  return predict_kernel(gpu, *r.spec, mode, timing_of(r), Detail::kSkip).time_s;
}

// Sensitivity above which a record "pins" a parameter: |d ln t / d ln p| > 0.05, a 10% change of
// the parameter moving the record's time by more than 0.5%.
constexpr double kPinSensitivity = 0.05;

}  // namespace

std::string op_class(const Record& r) {
  if (r.op == "gemm") return "gemm " + r.spec->s("dtype");
  if (r.op == "elementwise") return r.spec->i("stride") > 1 ? "elementwise strided" : "elementwise";
  if (r.op == "copy") return "copy " + r.spec->s("direction");
  return r.op;
}

std::vector<Split> extrapolation_splits(const std::vector<Record>& records, double top_fraction) {
  const std::vector<Record> pred = predictable(records);
  // Size of a case within its sweep: FLOPs for the ops whose work is arithmetic (GEMM, attention,
  // fma), bytes for the rest (memory-bound by design; their few FLOPs follow the bytes anyway).
  auto size_of = [](const Record& r) {
    const OpCost c = op_cost(*r.spec);
    return c.tensor || r.op == "fma" ? c.flops : c.min_bytes;
  };
  auto sweep_of = [](const Record& r) {
    std::string k = op_class(r);
    for (const char* key : {"group", "kind", "memory", "dtype", "pass", "causal"})
      if (r.params.contains(key) && !r.params[key].is_object())
        k += std::string("/") + key + "=" + r.params[key].dump();
    return k;
  };
  std::map<std::string, std::vector<double>> sizes;
  for (const auto& r : pred)
    if (const double s = size_of(r); s > 0) sizes[sweep_of(r)].push_back(s);
  auto threshold = std::make_shared<std::map<std::string, double>>();
  for (const auto& [k, v] : sizes)
    (*threshold)[k] = v.size() >= 3 ? percentile(v, 100 * (1 - top_fraction))
                                    : std::numeric_limits<double>::infinity();
  std::vector<Split> out;
  out.push_back({fmt::format("largest {:.0f}% of each sweep", 100 * top_fraction),
                 [threshold, size_of, sweep_of](const Record& r) {
                   if (!r.spec) return false;
                   const auto it = threshold->find(sweep_of(r));
                   return it != threshold->end() && size_of(r) > it->second;
                 }});
  std::set<std::string> classes, dtypes;
  for (const auto& r : pred) {
    classes.insert(op_class(r));
    if (r.params.contains("dtype") && r.params["dtype"].is_string())
      dtypes.insert(r.params["dtype"].get<std::string>());
  }
  for (const auto& c : classes)
    out.push_back({"class:" + c, [c](const Record& r) { return r.spec && op_class(r) == c; }});
  for (const auto& d : dtypes)
    out.push_back({"precision:" + d, [d](const Record& r) {
                     return r.spec && r.params.contains("dtype") && r.params["dtype"] == d;
                   }});
  return out;
}

std::vector<Record> predictable(const std::vector<Record>& records) {
  std::vector<Record> out;
  for (const auto& r : records)
    if (r.spec && r.median_s > 0) out.push_back(r);
  return out;
}

CalibrationResult calibrate(const hw::GpuSpec& gpu_in, const std::vector<Record>& all, Mode mode,
                            const Split& split, const std::vector<std::string>& fixed) {
  CalibrationResult res;
  hw::GpuSpec gpu = gpu_in;
  set_kernel_memo(false);

  // Direct measurements: pointer-chase latencies.
  std::map<std::string, std::vector<double>> lat;
  std::map<std::string, std::set<std::string>> lat_files;
  for (const auto& r : all) {
    if (r.op != "latency" || split.holds_out(r)) continue;
    const std::string level = r.params.value("level", "");
    double ns = r.raw.contains("latency_ns") && r.raw["latency_ns"].is_number()
                    ? r.raw["latency_ns"].get<double>()
                    : r.median_s * 1e9;
    if (level == "hbm" || level == "l2" || level == "l1") {
      lat[level + "_latency"].push_back(ns * 1e-9);
      lat_files[level + "_latency"].insert(r.file);
    }
  }
  for (const auto& [name, v] : lat) {
    FittedParam p;
    p.name = name;
    p.before = gpu.param(name);
    p.value = percentile(v, 50);
    p.method = "direct measurement";
    p.records = static_cast<int>(v.size());
    p.residual = v.size() > 1 ? (percentile(v, 90) - percentile(v, 10)) / p.value : 0.0;
    for (const auto& f : lat_files[name]) p.sources += (p.sources.empty() ? "" : ", ") + f;
    gpu.model[name] = p.value;
    res.params.push_back(p);
  }

  std::vector<Record> train;
  for (const auto& r : predictable(all)) {
    if (split.holds_out(r)) {
      ++res.held_out_records;
    } else {
      train.push_back(r);
    }
  }
  res.train_records = static_cast<int>(train.size());
  if (train.empty()) {
    set_kernel_memo(true);
    return res;
  }

  // Candidate parameters: every declared one except the latencies measured directly.
  std::vector<const hw::ModelParamDecl*> decls;
  // The HBM access size is a hardware constant with a discrete effect (a stride crosses it or not):
  // least squares would move it to wherever the boundary suits the sample, so it is not fitted.
  for (const auto& d : hw::model_param_table())
    // Power figures are direct measurements (models/clock_model.hpp), not fitted.
    if (!lat.count(std::string(d.name)) && d.name != "hbm_access_bytes" &&
        !d.name.starts_with("power_") && !d.name.starts_with("energy_") &&
        std::find(fixed.begin(), fixed.end(), std::string(d.name)) == fixed.end())
      decls.push_back(&d);

  auto residuals = [&](const hw::GpuSpec& g) {
    Eigen::VectorXd r(static_cast<Eigen::Index>(train.size()));
    for (size_t i = 0; i < train.size(); ++i)
      r[static_cast<Eigen::Index>(i)] = std::log(predict_s(g, train[i], mode) / train[i].median_s);
    return r;
  };
  auto set_theta = [&](hw::GpuSpec& g, const std::vector<const hw::ModelParamDecl*>& ps,
                       const Eigen::VectorXd& th) {
    for (size_t j = 0; j < ps.size(); ++j) {
      const double v = std::clamp(std::exp(th[static_cast<Eigen::Index>(j)]),
                                  std::max(ps[j]->lo, 1e-15), ps[j]->hi);
      g.model[std::string(ps[j]->name)] = v;
    }
  };
  // Huber weights on the residuals (c = 0.1 in log terms, about 10%).
  auto weights = [](const Eigen::VectorXd& r) {
    Eigen::VectorXd w(r.size());
    for (Eigen::Index i = 0; i < r.size(); ++i)
      w[i] = std::fabs(r[i]) <= 0.1 ? 1.0 : 0.1 / std::fabs(r[i]);
    return w;
  };

  Eigen::VectorXd r0 = residuals(gpu);
  res.train_rms_before = std::sqrt(r0.squaredNorm() / static_cast<double>(r0.size()));

  // Keep parameters the training records are sensitive to (a 5% change moves some record by
  // more than 0.1%); the rest cannot be fitted from these measurements.
  std::vector<const hw::ModelParamDecl*> params;
  for (const auto* d : decls) {
    hw::GpuSpec g = gpu;
    const double v = gpu.param(std::string(d->name));
    if (v <= 0) continue;
    g.model[std::string(d->name)] = std::clamp(v * 1.05, d->lo, d->hi);
    if (g.model[std::string(d->name)] == v)
      g.model[std::string(d->name)] = std::clamp(v * 0.95, d->lo, d->hi);
    const Eigen::VectorXd r1 = residuals(g);
    if ((r1 - r0).cwiseAbs().maxCoeff() > 1e-3)
      params.push_back(d);
    else
      res.not_fitted.push_back(std::string(d->name));
  }
  const Eigen::Index n = static_cast<Eigen::Index>(params.size());
  Eigen::VectorXd theta(n);
  for (Eigen::Index j = 0; j < n; ++j)
    theta[j] = std::log(gpu.param(std::string(params[static_cast<size_t>(j)]->name)));
  std::vector<double> before(params.size());
  for (size_t j = 0; j < params.size(); ++j) before[j] = gpu.param(std::string(params[j]->name));

  double lambda = 1e-2;
  Eigen::VectorXd r = r0;
  auto cost = [&](const Eigen::VectorXd& rr) {
    const Eigen::VectorXd w = weights(rr);
    return (w.array() * rr.array().square()).sum();
  };
  double c = cost(r);
  for (int it = 0; it < 30 && n > 0; ++it) {
    res.iterations = it + 1;
    Eigen::MatrixXd J(r.size(), n);
    for (Eigen::Index j = 0; j < n; ++j) {
      Eigen::VectorXd th = theta;
      const double h = 1e-3;
      th[j] += h;
      hw::GpuSpec g = gpu;
      set_theta(g, params, th);
      J.col(j) = (residuals(g) - r) / h;
    }
    const Eigen::VectorXd w = weights(r);
    const Eigen::MatrixXd JtW = J.transpose() * w.asDiagonal();
    const Eigen::MatrixXd A = JtW * J;
    const Eigen::VectorXd g = JtW * r;
    bool improved = false;
    for (int tries = 0; tries < 8; ++tries) {
      Eigen::MatrixXd Ad = A;
      for (Eigen::Index j = 0; j < n; ++j) Ad(j, j) += lambda * std::max(A(j, j), 1e-9);
      const Eigen::VectorXd step = Ad.ldlt().solve(-g);
      Eigen::VectorXd th = theta + step;
      for (Eigen::Index j = 0; j < n; ++j) {
        const auto* d = params[static_cast<size_t>(j)];
        th[j] = std::clamp(th[j], std::log(std::max(d->lo, 1e-15)), std::log(d->hi));
      }
      hw::GpuSpec gt = gpu;
      set_theta(gt, params, th);
      const Eigen::VectorXd rt = residuals(gt);
      const double ct = cost(rt);
      if (ct < c) {
        theta = th;
        r = rt;
        c = ct;
        gpu = gt;
        lambda = std::max(lambda / 3, 1e-7);
        improved = true;
        break;
      }
      lambda *= 4;
    }
    if (!improved) break;
  }
  res.train_rms_after = std::sqrt(r.squaredNorm() / static_cast<double>(r.size()));

  // Identifiability at the solution: the Jacobian d r / d ln p (stepping away from a bound the
  // fit ended on), the Gauss-Newton covariance sigma^2 (J^T W J)^-1, and per parameter the records
  // that pin it. Directions of J^T W J with eigenvalue below 1e-10 of the largest are not
  // determined by the data: parameters with weight on them get an infinite interval.
  Eigen::MatrixXd J(r.size(), n);
  std::vector<bool> at_bound(params.size(), false);
  for (Eigen::Index j = 0; j < n; ++j) {
    const auto* d = params[static_cast<size_t>(j)];
    const double v = gpu.param(std::string(d->name));
    const bool hi = v >= d->hi * (1 - 1e-9);
    at_bound[static_cast<size_t>(j)] = hi || v <= std::max(d->lo, 1e-15) * (1 + 1e-9);
    const double h = hi ? -1e-3 : 1e-3;
    Eigen::VectorXd th = theta;
    th[j] += h;
    hw::GpuSpec g = gpu;
    set_theta(g, params, th);
    J.col(j) = (residuals(g) - r) / h;
  }
  std::vector<double> sd(params.size(), std::numeric_limits<double>::infinity());
  if (n > 0) {
    const Eigen::VectorXd w = weights(r);
    const double dof = std::max<double>(static_cast<double>(r.size() - n), 1.0);
    const double sigma2 = (w.array() * r.array().square()).sum() / dof;
    const GaussNewtonVariance gn = gauss_newton_variance(J, w);
    for (size_t j = 0; j < params.size(); ++j)
      if (!gn.undetermined[j]) sd[j] = std::sqrt(sigma2 * gn.var[static_cast<Eigen::Index>(j)]);
  }

  std::set<std::string> files;
  for (const auto& t : train) files.insert(t.file);
  std::string all_files;
  for (const auto& f : files) all_files += (all_files.empty() ? "" : ", ") + f;
  for (size_t j = 0; j < params.size(); ++j) {
    FittedParam p;
    p.name = std::string(params[j]->name);
    p.before = before[j];
    p.value = gpu.param(p.name);
    p.method = "least squares";
    // The records this parameter moves, and the rms log error over them after the fit.
    hw::GpuSpec g = gpu;
    g.model[p.name] = std::clamp(p.value * 1.05, params[j]->lo, params[j]->hi);
    const Eigen::VectorXd r1 = residuals(g);
    double ss = 0;
    std::set<std::string> pf;
    for (Eigen::Index i = 0; i < r.size(); ++i) {
      if (std::fabs(r1[i] - r[i]) > 1e-3) {
        ++p.records;
        ss += r[i] * r[i];
        pf.insert(train[static_cast<size_t>(i)].file);
      }
    }
    p.residual = p.records > 0 ? std::sqrt(ss / p.records) : 0.0;
    for (const auto& f : pf) p.sources += (p.sources.empty() ? "" : ", ") + f;
    if (p.sources.empty()) p.sources = all_files;
    const Eigen::Index jj = static_cast<Eigen::Index>(j);
    std::map<std::string, int> pin_classes;
    for (Eigen::Index i = 0; i < r.size(); ++i) {
      if (std::fabs(J(i, jj)) > kPinSensitivity) {
        ++p.pinning;
        ++pin_classes[op_class(train[static_cast<size_t>(i)])];
      }
    }
    for (const auto& [c, k] : pin_classes)
      p.pinned_by += fmt::format("{}{} ({})", p.pinned_by.empty() ? "" : ", ", c, k);
    p.sd_log = sd[j];
    p.at_bound = at_bound[j];
    p.ci_lo = std::isfinite(sd[j]) ? p.value * std::exp(-1.96 * sd[j]) : 0.0;
    p.ci_hi = std::isfinite(sd[j]) ? p.value * std::exp(1.96 * sd[j])
                                   : std::numeric_limits<double>::infinity();
    // Pinned: known to within about +-10% at 95% (sd of ln p under 0.05) by at least 3 records,
    // inside its range. Unidentifiable: no record pins it, the data leave it undetermined, or the
    // interval spans more than a factor e^(+-1.96*0.5) = 2.7 either way.
    if (p.pinning == 0 || !std::isfinite(sd[j]) || sd[j] > 0.5)
      p.verdict = "unidentifiable";
    else if (sd[j] > 0.05 || p.at_bound || p.pinning < 3)
      p.verdict = "weak";
    else
      p.verdict = "pinned";
    res.params.push_back(p);
  }
  std::sort(res.params.begin(), res.params.end(),
            [](const auto& a, const auto& b) { return a.name < b.name; });
  set_kernel_memo(true);
  clear_kernel_memo();
  return res;
}

hw::GpuSpec apply_calibration(hw::GpuSpec gpu, const CalibrationResult& result) {
  for (const auto& p : result.params) gpu.model[p.name] = p.value;
  clear_kernel_memo();
  return gpu;
}

std::string calibrated_overlay_yaml(const std::string& base_file, const std::string& name,
                                    const CalibrationResult& result, const std::string& command) {
  std::string y = fmt::format(
      "# Generated by `{}`: do not edit by hand; run it again.\n"
      "# Least squares on {} training records (held out: {}); rms log error {:.4f} before, {:.4f} "
      "after.\n"
      "base: {}\n"
      "gpu:\n"
      "  name: {}\n"
      "  aliases: [{}]\n"
      "  model:\n",
      command, result.train_records, result.held_out_records, result.train_rms_before,
      result.train_rms_after, base_file, name, name);
  for (const auto& p : result.params) {
    const hw::ModelParamDecl* d = hw::find_model_param(p.name);
    std::string value;
    switch (d ? d->dim : hw::Dimension::kCount) {
      case hw::Dimension::kTime:
        value = fmt::format("{:.4g} ns", p.value * 1e9);
        break;
      case hw::Dimension::kBytes:
        value = fmt::format("{:.0f} B", p.value);
        break;
      default:
        value = fmt::format("{:.6g}", p.value);
        break;
    }
    if (p.records == 0 && p.method.rfind("fixed", 0) == 0)
      y += fmt::format("    {}:\n      value: {}\n      source: \"{}: {}; was {:.6g}\"\n", p.name,
                       value, p.method, p.sources, p.before);
    else
      y += fmt::format(
          "    {}:\n      value: {}\n      source: \"{} on {} records of {}; residual (rms log "
          "error over them) {:.4f}; was {:.6g}\"\n",
          p.name, value, p.method, p.records, p.sources, p.residual, p.before);
  }
  return y;
}

Comparison compare(const hw::GpuSpec& gpu, const std::vector<Record>& records, Mode mode,
                   bool held_out_only) {
  Comparison c;
  std::map<std::string, std::vector<double>> by_class;
  std::vector<double> all;
  for (const auto& r : predictable(records)) {
    const bool held = is_held_out(r.id);
    if (held_out_only && !held) continue;
    ComparisonRow row;
    row.id = r.id;
    row.op = r.op;
    row.op_class = op_class(r);
    row.file = r.file;
    row.held_out = held;
    row.measured_s = r.median_s;
    const KernelPrediction p = predict_kernel(gpu, *r.spec, mode, timing_of(r), Detail::kSkip);
    row.predicted_s = p.time_s;
    row.bound = p.bound;
    row.error = relative_error(row.predicted_s, row.measured_s);
    by_class[row.op_class].push_back(std::fabs(row.error));
    all.push_back(std::fabs(row.error));
    c.rows.push_back(row);
  }
  auto stats = [](const std::string& name, const std::vector<double>& v) {
    ClassStats s;
    s.op_class = name;
    s.cases = static_cast<int>(v.size());
    s.median_abs = percentile(v, 50);
    s.p90_abs = percentile(v, 90);
    s.max_abs = v.empty() ? 0 : *std::max_element(v.begin(), v.end());
    return s;
  };
  for (const auto& [k, v] : by_class) c.classes.push_back(stats(k, v));
  c.classes.push_back(stats("all", all));
  return c;
}

Comparison compare_held_out(const hw::GpuSpec& gpu, const std::vector<Record>& records, Mode mode,
                            const Split& split) {
  std::vector<Record> held;
  for (const auto& r : predictable(records))
    if (split.holds_out(r)) held.push_back(r);
  // compare() filters by the hashed split only when asked: every record given is compared.
  Comparison c = compare(gpu, held, mode, false);
  for (auto& row : c.rows) row.held_out = true;
  return c;
}

nlohmann::json comparison_json(const Comparison& c) {
  nlohmann::json j;
  j["cases"] = nlohmann::json::array();
  for (const auto& r : c.rows) {
    j["cases"].push_back({{"id", r.id},
                          {"op", r.op},
                          {"class", r.op_class},
                          {"file", r.file},
                          {"held_out", r.held_out},
                          {"measured_us", r.measured_s * 1e6},
                          {"predicted_us", r.predicted_s * 1e6},
                          {"error", r.error},
                          {"bound", r.bound}});
  }
  j["classes"] = nlohmann::json::array();
  for (const auto& s : c.classes) {
    j["classes"].push_back({{"class", s.op_class},
                            {"cases", s.cases},
                            {"median_abs_error", s.median_abs},
                            {"p90_abs_error", s.p90_abs},
                            {"max_abs_error", s.max_abs}});
  }
  return j;
}

}  // namespace ridge::models
