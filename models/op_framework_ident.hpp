// Identifiability of the framework-op model's parameters (models/op_framework_params.hpp): for each
// parameter, the 95% interval the measurements allow and the records that determine it, by the
// method of the kernel model's table (models/calibration.hpp, `ridge calibrate --splits`).
//
// Captures: the fit's data at kernel level. Each record of a validate/torch set lists the kernels
// its op launched with their medians (torch.profiler, in launch order); where the model launches
// as many kernels, each pair is one residual r = ln(predicted / measured) (how v3's parameters
// were fitted: per kernel family); where the counts differ (fills and casts over 2^31 bytes that
// PyTorch splits), the record's sum is one residual. Huber weights (c = 0.1, as calibrate()),
// the Jacobian d r / d ln p by forward differences (h = 1e-3 in ln p), and the Gauss-Newton
// covariance sigma^2 (J^T W J)^-1, sigma^2 = sum w r^2 / (n - p), with directions of J^T W J whose
// eigenvalue is below 1e-10 of the largest left undetermined (infinite interval for every
// parameter with weight over 0.1 on them). The interval is value x exp(+-1.96 sd of ln p).
// Classification as calibrate(): unidentifiable when no residual has |d r / d ln p| > 0.05 (no
// record pins it), the data leave it undetermined, or sd > 0.5 (a factor 2.7 either way at 95%);
// weak when sd > 0.05 or fewer than 3 residuals pin it; else pinned.
// Ignores: the parameters' thresholds (l2_keep_fraction, lngi_keep_fraction) move a record from
// one regime to the other only when it crosses them; a local derivative cannot see that, so for
// every parameter the table also gives the range over which the weighted cost stays within
// chi-square(1, 95%) = 3.84 sigma^2 of its value with the others held (a conditional scan, a
// factor 10 each way at most), which does see a threshold's neighbours; a parameter that no
// residual pins is classified by that range instead (same rule, sd = ln(hi / lo) / 3.92; open at
// 0.1x or 10x: unidentifiable).
// Validation: tests/validation/test_framework_ops.cpp recovers a planted parameter from
// synthetic records and checks the committed table (validate/torch/identifiability.json).
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "hw/gpu_spec.hpp"
#include "models/op_framework_params.hpp"
#include "models/records.hpp"

namespace ridge::models {

struct FwParamIdent {
  std::string name;
  std::string kernels;  ///< the kernels it enters (framework_param_table)
  bool fitted = true;   ///< false: fixed at a measured or derived value
  double value = 0;
  int residuals = 0;  ///< residuals a 5% change of it moves by more than 1e-3
  int pinning = 0;    ///< residuals with |d r / d ln p| > 0.05
  int pinning_records = 0;
  std::string pinned_by;  ///< op class and pass of the pinning records, with counts
  std::string shapes;     ///< ranges of the pinning records' shape parameters and dtypes
  double sd_log = 0;      ///< sd of ln p; infinite when undetermined
  double ci_lo = 0, ci_hi = 0;
  double scan_lo = 0, scan_hi = 0;      ///< conditional cost scan (see above); 0.1x / 10x = open
  int scan_records = 0;                 ///< records the scan re-evaluated
  std::string verdict;                  ///< "pinned", "weak", "unidentifiable"
  std::string verdict_by = "jacobian";  ///< or "scan" when no residual pins it
};

struct FwIdentResult {
  int records = 0;                   ///< framework-op records used
  int residuals = 0;                 ///< kernel pairs + whole records
  int kernel_level = 0;              ///< records matched kernel by kernel
  double rms_log = 0;                ///< rms of r over the residuals
  double sigma = 0;                  ///< sqrt of the weighted residual variance
  std::vector<FwParamIdent> params;  ///< in framework_param_table() order
};

/// The residuals of `params` on `records` (framework ops only; others are skipped).
struct FwResiduals {
  std::vector<double> r;
  std::vector<size_t> record;  ///< index into the records of each residual
  int records = 0, kernel_level = 0;
};
FwResiduals framework_residuals(const hw::GpuSpec& gpu, const std::vector<Record>& records,
                                const FwParams& params);

/// The interval and pinning records of every parameter, at `params`.
FwIdentResult framework_identifiability(const hw::GpuSpec& gpu, const std::vector<Record>& records,
                                        const FwParams& params = {});

/// Levenberg-Marquardt on the same weighted log residuals over the parameters named in `free`
/// (in ln p, from `start`); the others keep their `start` values. Throws std::invalid_argument
/// on an unknown name.
FwParams framework_refit(const hw::GpuSpec& gpu, const std::vector<Record>& records,
                         const FwParams& start, const std::vector<std::string>& free);

/// Markdown table (one row a parameter) and the JSON form (schema ridge.fw_ident/1).
std::string framework_ident_markdown(const FwIdentResult& r);
nlohmann::json framework_ident_json(const FwIdentResult& r);

}  // namespace ridge::models
