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
};

struct CalibrationResult {
  std::vector<FittedParam> params;
  int train_records = 0;
  int held_out_records = 0;
  double train_rms_before = 0;  ///< rms of ln(pred/meas) on the training split
  double train_rms_after = 0;
  int iterations = 0;
};

/// Records Ridge can predict (op in the vocabulary, a measured median).
std::vector<Record> predictable(const std::vector<Record>& records);

CalibrationResult calibrate(const hw::GpuSpec& gpu, const std::vector<Record>& records,
                            Mode mode = Mode::kFast);

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

nlohmann::json comparison_json(const Comparison& c);

}  // namespace ridge::models
