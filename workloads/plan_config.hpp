// Loader of a plan study (`ridge plan STUDY.yaml`): a study whose `plan:` block asks which parallel
// layout to train a model with (see workloads/plan.hpp and docs/planning.md).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hw/config.hpp"
#include "workloads/plan.hpp"
#include "workloads/plan_serve.hpp"

namespace ridge::workloads {

/// One key of the `plan:` block (or of `plan.search`), for `ridge describe plan`.
struct PlanKey {
  const char* key;
  const char* fallback;
  const char* meaning;
};
const std::vector<PlanKey>& plan_keys();

struct PlanStudy {
  std::string question;
  std::string model_path;
  PlanOptions plan;
  /// A serving plan (plan.serve names a `kind: serve` study) instead of a training one.
  std::optional<ServePlanOptions> serve;
  std::vector<std::pair<std::string, std::string>> files;  ///< study file (path, sha256)
  hw::ConfigError at;  ///< the plan block's position, for errors found by the search (no fit)
};

/// Loads and checks a plan study; an empty search space is an error here. Throws
/// hw::ConfigException (file:line:col: key: message), every problem at once.
PlanStudy load_plan_study(const std::string& path);

}  // namespace ridge::workloads
