#include "bench_json.hpp"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <stdexcept>

namespace ridge::validate {

Json& Json::operator[](const std::string& key) {
  if (type_ == Type::kNull) type_ = Type::kObject;
  if (type_ != Type::kObject) throw std::logic_error("Json: member access on a non-object");
  for (std::size_t i = 0; i < keys_.size(); ++i) {
    if (keys_[i] == key) return items_[i];
  }
  keys_.push_back(key);
  items_.emplace_back();
  return items_.back();
}

const Json* Json::find(const std::string& key) const {
  if (type_ != Type::kObject) return nullptr;
  for (std::size_t i = 0; i < keys_.size(); ++i) {
    if (keys_[i] == key) return &items_[i];
  }
  return nullptr;
}

void Json::push_back(Json v) {
  if (type_ == Type::kNull) type_ = Type::kArray;
  if (type_ != Type::kArray) throw std::logic_error("Json: push_back on a non-array");
  items_.push_back(std::move(v));
}

std::string json_quote(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
  return out;
}

void Json::dump_to(std::string& out) const {
  switch (type_) {
    case Type::kNull:
      out += "null";
      break;
    case Type::kBool:
      out += b_ ? "true" : "false";
      break;
    case Type::kInt:
      out += std::to_string(i_);
      break;
    case Type::kNumber: {
      if (!std::isfinite(d_)) {
        out += "null";
        break;
      }
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.7g", d_);
      out += buf;
      break;
    }
    case Type::kString:
      out += json_quote(s_);
      break;
    case Type::kArray:
      out += '[';
      for (std::size_t i = 0; i < items_.size(); ++i) {
        if (i) out += ", ";
        items_[i].dump_to(out);
      }
      out += ']';
      break;
    case Type::kObject:
      out += '{';
      for (std::size_t i = 0; i < keys_.size(); ++i) {
        if (i) out += ", ";
        out += json_quote(keys_[i]);
        out += ": ";
        items_[i].dump_to(out);
      }
      out += '}';
      break;
  }
}

std::string Json::dump() const {
  std::string out;
  dump_to(out);
  return out;
}

void write_records_file(const std::string& path, const Json& doc) {
  std::string out = "{\n";
  const char* order[] = {"schema", "generated_by", "device", "failures", "records"};
  bool first = true;
  for (const char* key : order) {
    const Json* v = doc.find(key);
    if (!v) continue;
    if (!first) out += ",\n";
    first = false;
    out += "  " + json_quote(key) + ": ";
    if (std::string(key) == "records" && v->type() == Json::Type::kArray) {
      out += "[";
      for (std::size_t r = 0; r < v->size(); ++r) {
        out += r ? ",\n    " : "\n    ";
        v->at(r).dump_to(out);
      }
      out += v->size() ? "\n  ]" : "]";
    } else {
      v->dump_to(out);
    }
  }
  out += "\n}\n";
  std::ofstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot open " + path + " for writing");
  f << out;
  if (!f) throw std::runtime_error("error writing " + path);
}

}  // namespace ridge::validate
