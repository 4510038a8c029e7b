// The input of `ridge predict`: a YAML (or JSON) list of cases {id, op, params, timing}, or a
// measurement-record file (schema ridge.records/1) whose records are re-predicted.
//
// Captures: which op with which parameters, and whether the time asked for is the kernel alone or
// one call with its launch. Ignores every other key of a record (echoed back unchanged in the
// output). The keys a case may hold are the table `case_keys()`, which also drives
// `ridge describe cases` (a test checks the two agree).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/kernel_model.hpp"
#include "models/op.hpp"

namespace ridge::models {

struct Case {
  std::string id;
  OpSpec op;
  Timing timing = Timing::kKernel;
  nlohmann::json record;  ///< the input record (records files), echoed
};

/// One key of a case (or of a record, as `ridge predict` reads it).
struct CaseKey {
  const char* key;
  const char* type;
  const char* fallback;  ///< "" when required
  const char* meaning;
};
const std::vector<CaseKey>& case_keys();

/// Parses a cases file's text (`path` names it in messages; a name ending in .json is read as
/// JSON, anything else as YAML through the bounded strict parser). Problems of single cases go to
/// `errors` (all of them, each naming file and case index); a file that is no list of cases
/// throws std::invalid_argument (or hw::ConfigException for YAML syntax).
std::vector<Case> parse_cases(const std::string& text, const std::string& path,
                              std::vector<std::string>& errors);

/// "kernel" or "per_call" (the --timing and case `timing:` values).
Timing timing_from_name(const std::string& s);

}  // namespace ridge::models
