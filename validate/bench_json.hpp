// A small JSON value and writer for measurement records. validate/ builds on GPU machines that lack
// Ridge's host libraries (nlohmann_json among them), so it carries its own: objects keep insertion
// order, doubles print with 7 significant digits, NaN and infinities print as null.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ridge::validate {

/// A JSON value: null, bool, integer, number, string, array or object (ordered keys).
class Json {
 public:
  enum class Type { kNull, kBool, kInt, kNumber, kString, kArray, kObject };

  Json() = default;
  Json(std::nullptr_t) {}
  Json(bool b) : type_(Type::kBool), b_(b) {}
  Json(int v) : type_(Type::kInt), i_(v) {}
  Json(long v) : type_(Type::kInt), i_(v) {}
  Json(long long v) : type_(Type::kInt), i_(v) {}
  Json(unsigned v) : type_(Type::kInt), i_(static_cast<std::int64_t>(v)) {}
  Json(unsigned long v) : type_(Type::kInt), i_(static_cast<std::int64_t>(v)) {}
  Json(unsigned long long v) : type_(Type::kInt), i_(static_cast<std::int64_t>(v)) {}
  Json(double v) : type_(Type::kNumber), d_(v) {}
  Json(float v) : type_(Type::kNumber), d_(v) {}
  Json(const char* s) : type_(Type::kString), s_(s) {}
  Json(std::string s) : type_(Type::kString), s_(std::move(s)) {}

  static Json object() {
    Json j;
    j.type_ = Type::kObject;
    return j;
  }
  static Json array() {
    Json j;
    j.type_ = Type::kArray;
    return j;
  }
  template <typename T>
  static Json array_of(const std::vector<T>& v) {
    Json j = array();
    for (const auto& x : v) j.push_back(Json(x));
    return j;
  }

  Type type() const { return type_; }
  bool is_null() const { return type_ == Type::kNull; }

  /// Object member, appended if absent (a null value becomes an object first).
  Json& operator[](const std::string& key);
  /// Object member or nullptr.
  const Json* find(const std::string& key) const;
  /// Appends to an array (a null value becomes an array first).
  void push_back(Json v);
  std::size_t size() const { return type_ == Type::kObject ? keys_.size() : items_.size(); }
  const Json& at(std::size_t i) const { return items_.at(i); }

  double number() const { return type_ == Type::kInt ? static_cast<double>(i_) : d_; }
  bool boolean() const { return b_; }
  const std::string& str() const { return s_; }

  /// Compact text (one line).
  std::string dump() const;
  void dump_to(std::string& out) const;

 private:
  Type type_ = Type::kNull;
  bool b_ = false;
  std::int64_t i_ = 0;
  double d_ = 0;
  std::string s_;
  std::vector<Json> items_;  ///< array items, or object values (parallel to keys_)
  std::vector<std::string> keys_;
};

/// Parses JSON text (objects keep their order; numbers with a '.', 'e' or 'E' are doubles, others
/// integers). Throws std::runtime_error naming `where` and the byte offset of the first problem.
Json parse_json(const std::string& text, const std::string& where);

/// Escapes a string for JSON, with the surrounding quotes.
std::string json_quote(const std::string& s);

/// Writes a records document: top-level members one per line and each record on its own line,
/// so that diffs of committed measurements stay readable. Throws std::runtime_error on I/O error.
void write_records_file(const std::string& path, const Json& doc);

}  // namespace ridge::validate
