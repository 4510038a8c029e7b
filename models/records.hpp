// Measurement records (schema "ridge.records/1", documented in validate/README.md): what validate/
// measures on a GPU and what `ridge predict` writes, so the two line up case by case.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "models/op.hpp"

namespace ridge::models {

struct Record {
  std::string file;  ///< where it was read from
  size_t index = 0;  ///< position in the file's records array
  std::string id;
  std::string op;  ///< op kind
  nlohmann::json params;
  std::string method;          ///< "kernel" or "per_call"
  double median_s = 0;         ///< the measured (or predicted) median
  nlohmann::json raw;          ///< the record as read
  std::optional<OpSpec> spec;  ///< set when the op and its params are in the vocabulary
};

struct RecordFile {
  std::string path;
  std::string sha256;
  nlohmann::json device;
  std::vector<Record> records;
};

/// One key of a records file that Ridge reads (dotted path, list items as []); any other key of a
/// record is kept as written (echoed by `ridge predict`) and otherwise ignored. Drives
/// `ridge describe records`; the reader looks every key it reads up here, so the two cannot drift.
struct RecordKey {
  const char* path;
  const char* type;
  const char* fallback;  ///< "" when required
  const char* meaning;
};
const std::vector<RecordKey>& record_keys();

/// Reads a records file strictly: not JSON, wrong schema, or a record without id, op, params or
/// timing.median_us is an error naming the file, the record index and what was expected
/// (std::invalid_argument). Params outside the op vocabulary are kept in `params` but leave
/// `spec` empty (e.g. microbenchmarks Ridge does not predict).
RecordFile read_records(const std::string& path);
/// The same from the file's text (`path` names it in messages).
RecordFile parse_records(const std::string& text, const std::string& path);

/// `params` with the record's top-level "buffers" (validate/ writes the buffer sets of an
/// elementwise case beside its params) added as params.buffers when the op has that parameter
/// and params does not set it.
nlohmann::json params_with_record_buffers(const nlohmann::json& record, const std::string& op,
                                          nlohmann::json params);

/// Deterministic split: a record is held out for testing when the FNV-1a hash of its id falls in
/// the last third. The same ids always land on the same side.
bool is_held_out(const std::string& id);

/// Error of a prediction against a measurement, as a signed fraction: (predicted - measured) /
/// measured.
inline double relative_error(double predicted, double measured) {
  return (predicted - measured) / measured;
}

/// Percentile of a sample (linear interpolation between order statistics), p in [0, 100].
double percentile(std::vector<double> values, double p);

}  // namespace ridge::models
