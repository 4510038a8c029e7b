// The op vocabulary: every op Ridge can time, with its named parameters, declared once. The names
// are a contract shared by `ridge kernel`, `ridge roofline`, `ridge predict`, workload graphs and
// the measurement records of validate/ (validate/README.md): extend, never rename.
#pragma once

#include <nlohmann/json.hpp>

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ridge::models {

enum class ParamType { kInt, kFloat, kBool, kEnum };

struct ParamDecl {
  std::string_view name;
  ParamType type;
  std::string_view fallback;              ///< default as text; empty = required
  std::vector<std::string_view> choices;  ///< for kEnum
  double lo = 0;
  double hi = 9.007199254740992e15;
  std::string_view meaning;
};

struct OpDecl {
  std::string_view kind;
  std::string_view summary;
  std::vector<ParamDecl> params;
};

/// Every op kind, in documentation order.
std::span<const OpDecl> op_vocabulary();
const OpDecl* find_op(std::string_view kind);

/// An op with validated parameters (defaults filled in).
class OpSpec {
 public:
  OpSpec() = default;
  const std::string& kind() const { return kind_; }
  long long i(std::string_view name) const;
  double f(std::string_view name) const;
  bool b(std::string_view name) const;
  const std::string& s(std::string_view name) const;
  const nlohmann::json& params() const { return params_; }
  /// "gemm m=8192 n=8192 k=8192 dtype=bf16 ..." in vocabulary order.
  std::string str() const;

  /// Parses "key=value" tokens. Throws std::invalid_argument naming the key and what was expected.
  static OpSpec parse(std::string_view kind, const std::vector<std::string>& tokens);
  /// Validates a JSON object of params (as in measurement records and workload YAML converted to
  /// JSON).
  static OpSpec from_json(std::string_view kind, const nlohmann::json& params);

 private:
  friend struct OpBuilder;
  std::string kind_;
  nlohmann::json params_;
  const OpDecl* decl_ = nullptr;
};

/// Bytes per element of a dtype name ("bf16" -> 2, "fp8_e4m3" -> 1, "fp32"/"tf32" -> 4).
double dtype_bytes(std::string_view dtype);

}  // namespace ridge::models
