// Calibration and comparison against measurements.
//
// calibrate(): fits the kernel model's free parameters (hw/model_params.hpp) to measured records
// by nonlinear least squares on log errors, r_i = ln(predicted_i / measured_i), with the
// Levenberg-Marquardt method (Marquardt, "An Algorithm for Least-Squares Estimation of Nonlinear
// Parameters", SIAM J. Appl. Math. 11(2), 1963) and Huber weights (Huber, "Robust Estimation of a
// Location Parameter", 1964) so a few odd kernels cannot drag the rest. Parameters are fitted in
// log space and held inside their declared ranges. Only records of the training split are used
// (models/records.hpp: is_held_out); parameters no training record is sensitive to keep their
// value. Pointer-chase latencies are taken directly from their records (a measurement, not a fit).
//
// compare(): per case predicted vs measured, and per op class the median, 90th percentile and
// maximum of the absolute error.
#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <string>
#include <vector>

#include "hw/gpu_spec.hpp"
#include "models/kernel_model.hpp"
#include "models/records.hpp"

namespace ridge::models {

struct FittedParam {
  std::string name;
  double before = 0;
  double value = 0;
  std::string method;   ///< "least squares" or "direct measurement"
  std::string sources;  ///< the record files it came from
  double residual = 0;  ///< rms log error of the records it was fitted on (least squares) or spread
  int records = 0;      ///< how many records informed it
  // Identifiability (least squares only): the 95% interval from the Gauss-Newton covariance of
  // the weighted log-residual fit, sigma^2 (J^T W J)^-1 with sigma^2 = sum w r^2 / (n - p), in log
  // parameter space (so the interval is value * exp(+-1.96 sd)); `pinning` counts the training
  // records whose log time moves by more than kPinSensitivity per unit log change of the
  // parameter (|d ln t / d ln p| > 0.05).
  double ci_lo = 0, ci_hi = 0;
  double sd_log = 0;  ///< standard deviation of ln(value); infinite when J^T W J is singular
  int pinning = 0;
  bool at_bound = false;  ///< the fit ended on the declared range's edge
  std::string verdict;    ///< "pinned", "weak", "unidentifiable" (least squares only)
  std::string pinned_by;  ///< op classes of the pinning records, e.g. "gemm bf16 (17)"
};

/// Which records a fit holds out for testing (the rest train). A default-constructed split is
/// the hashed one (models/records.hpp: is_held_out), which interleaves test cases among training
/// cases of the same sweeps: it measures interpolation.
struct Split {
  std::string name;
  std::function<bool(const Record&)> held_out;
  bool holds_out(const Record& r) const { return held_out ? held_out(r) : is_held_out(r.id); }
};

/// The op class a record is reported under: gemm by dtype, elementwise strided apart, copy by
/// direction, the rest by op.
std::string op_class(const Record& r);

/// The splits that test prediction rather than interpolation, over the predictable records:
/// "largest": in each sweep (op class plus the sweep's own group, kind, memory, dtype, pass and
/// causal params where it has them), the records above the sweep's `1 - top_fraction` quantile of
/// size (FLOPs for tensor ops and fma, bytes for the rest); sweeps of fewer than 3 sized records
/// hold out none. "class:<c>" holds out one op class whole, "precision:<d>" one dtype whole (GEMMs
/// and kernels alike). In that order, classes and dtypes sorted.
std::vector<Split> extrapolation_splits(const std::vector<Record>& records, double top_fraction);

struct CalibrationResult {
  std::vector<FittedParam> params;
  int train_records = 0;
  int held_out_records = 0;
  double train_rms_before = 0;  ///< rms of ln(pred/meas) on the training split
  double train_rms_after = 0;
  int iterations = 0;
  std::vector<std::string> not_fitted;  ///< candidates no training record is sensitive to
};

/// Records Ridge can predict (op in the vocabulary, a measured median).
std::vector<Record> predictable(const std::vector<Record>& records);

/// `split` says which records are held out (default: the hashed split); parameters named in
/// `fixed` keep the spec's value and are not fitted.
CalibrationResult calibrate(const hw::GpuSpec& gpu, const std::vector<Record>& records,
                            Mode mode = Mode::kFast, const Split& split = {},
                            const std::vector<std::string>& fixed = {});

/// The spec with the fitted values in place.
hw::GpuSpec apply_calibration(hw::GpuSpec gpu, const CalibrationResult& result);

/// A configs/hw overlay holding the fitted values, each with its source and residual.
std::string calibrated_overlay_yaml(const std::string& base_file, const std::string& name,
                                    const CalibrationResult& result, const std::string& command);

struct ComparisonRow {
  std::string id, op, op_class, file;
  bool held_out = false;
  double measured_s = 0, predicted_s = 0, error = 0;  ///< error signed, (pred - meas) / meas
  std::string bound;
};

struct ClassStats {
  std::string op_class;
  int cases = 0;
  double median_abs = 0, p90_abs = 0, max_abs = 0;
};

struct Comparison {
  std::vector<ComparisonRow> rows;
  std::vector<ClassStats> classes;  ///< per class, then "all"
};

/// `held_out_only` restricts to the test split. `op_class` groups: gemm by dtype, the rest by op.
Comparison compare(const hw::GpuSpec& gpu, const std::vector<Record>& records, Mode mode,
                   bool held_out_only);

/// The held-out records of `split` only (every one of them predictable).
Comparison compare_held_out(const hw::GpuSpec& gpu, const std::vector<Record>& records, Mode mode,
                            const Split& split);

nlohmann::json comparison_json(const Comparison& c);

}  // namespace ridge::models
