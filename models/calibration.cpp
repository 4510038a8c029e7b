#include "models/calibration.hpp"

#include <fmt/format.h>
#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "hw/model_params.hpp"
#include "hw/units.hpp"

namespace ridge::models {
namespace {

Timing timing_of(const Record& r) {
  return r.method == "per_call" ? Timing::kPerCall : Timing::kKernel;
}

double predict_s(const hw::GpuSpec& gpu, const Record& r, Mode mode) {
  return predict_kernel(gpu, *r.spec, mode, timing_of(r)).time_s;
}

std::string op_class(const Record& r) {
  if (r.op == "gemm") return "gemm " + r.spec->s("dtype");
  if (r.op == "elementwise") return r.spec->i("stride") > 1 ? "elementwise strided" : "elementwise";
  if (r.op == "copy") return "copy " + r.spec->s("direction");
  return r.op;
}

}  // namespace

std::vector<Record> predictable(const std::vector<Record>& records) {
  std::vector<Record> out;
  for (const auto& r : records)
    if (r.spec && r.median_s > 0) out.push_back(r);
  return out;
}

CalibrationResult calibrate(const hw::GpuSpec& gpu_in, const std::vector<Record>& all, Mode mode) {
  CalibrationResult res;
  hw::GpuSpec gpu = gpu_in;
  set_kernel_memo(false);

  // Direct measurements: pointer-chase latencies.
  std::map<std::string, std::vector<double>> lat;
  std::map<std::string, std::set<std::string>> lat_files;
  for (const auto& r : all) {
    if (r.op != "latency" || is_held_out(r.id)) continue;
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
    if (is_held_out(r.id)) {
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
    if (!lat.count(std::string(d.name)) && d.name != "hbm_access_bytes") decls.push_back(&d);

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
    if ((r1 - r0).cwiseAbs().maxCoeff() > 1e-3) params.push_back(d);
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
    y += fmt::format(
        "    {}:\n      value: {}\n      source: \"{} on {} records of {}; residual (rms log error "
        "over them) {:.4f}; was {:.6g}\"\n",
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
    const KernelPrediction p = predict_kernel(gpu, *r.spec, mode, timing_of(r));
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
