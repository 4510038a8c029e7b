#include "bench_json.hpp"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
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

namespace {

// Recursive descent over the JSON grammar (RFC 8259); \u escapes above ASCII are kept as UTF-8.
class Parser {
 public:
  Parser(const std::string& t, const std::string& where) : t_(t), where_(where) {}
  Json document() {
    Json v = value(0);
    space();
    if (i_ != t_.size()) fail("trailing characters after the JSON value");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error(where_ + ": byte " + std::to_string(i_) + ": " + what);
  }
  void space() {
    while (i_ < t_.size() && (t_[i_] == ' ' || t_[i_] == '\t' || t_[i_] == '\n' || t_[i_] == '\r'))
      ++i_;
  }
  bool eat(char c) {
    space();
    if (i_ < t_.size() && t_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  void expect(char c) {
    if (!eat(c)) fail(std::string("expected '") + c + "'");
  }
  bool word(const char* w) {
    const std::size_t n = std::strlen(w);
    if (t_.compare(i_, n, w) == 0) {
      i_ += n;
      return true;
    }
    return false;
  }
  std::string string() {
    expect('"');
    std::string out;
    while (true) {
      if (i_ >= t_.size()) fail("unterminated string");
      const char c = t_[i_++];
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) fail("control character in a string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (i_ >= t_.size()) fail("unterminated escape");
      const char e = t_[i_++];
      switch (e) {
        case '"':
        case '\\':
        case '/':
          out += e;
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u': {
          if (i_ + 4 > t_.size()) fail("short \\u escape");
          const unsigned cp = static_cast<unsigned>(std::stoul(t_.substr(i_, 4), nullptr, 16));
          i_ += 4;
          if (cp < 0x80) {
            out += static_cast<char>(cp);
          } else if (cp < 0x800) {
            out += static_cast<char>(0xC0 | (cp >> 6));
            out += static_cast<char>(0x80 | (cp & 0x3F));
          } else {
            out += static_cast<char>(0xE0 | (cp >> 12));
            out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (cp & 0x3F));
          }
          break;
        }
        default:
          fail(std::string("bad escape '\\") + e + "'");
      }
    }
  }
  Json value(int depth) {
    if (depth > 64) fail("nested deeper than 64");
    space();
    if (i_ >= t_.size()) fail("expected a value, found the end");
    const char c = t_[i_];
    if (c == '{') {
      ++i_;
      Json o = Json::object();
      if (eat('}')) return o;
      do {
        space();
        std::string k = string();
        expect(':');
        o[k] = value(depth + 1);
      } while (eat(','));
      expect('}');
      return o;
    }
    if (c == '[') {
      ++i_;
      Json a = Json::array();
      if (eat(']')) return a;
      do {
        a.push_back(value(depth + 1));
      } while (eat(','));
      expect(']');
      return a;
    }
    if (c == '"') return Json(string());
    if (word("true")) return Json(true);
    if (word("false")) return Json(false);
    if (word("null")) return Json();
    const std::size_t start = i_;
    if (i_ < t_.size() && t_[i_] == '-') ++i_;
    bool real = false;
    while (i_ < t_.size() && (std::isdigit(static_cast<unsigned char>(t_[i_])) || t_[i_] == '.' ||
                              t_[i_] == 'e' || t_[i_] == 'E' || t_[i_] == '+' || t_[i_] == '-')) {
      if (!std::isdigit(static_cast<unsigned char>(t_[i_]))) real = true;
      ++i_;
    }
    const std::string num = t_.substr(start, i_ - start);
    if (num.empty() || num == "-") fail("expected a value");
    try {
      std::size_t used = 0;
      if (real) {
        const double d = std::stod(num, &used);
        if (used != num.size()) fail("bad number '" + num + "'");
        return Json(d);
      }
      const long long v = std::stoll(num, &used);
      if (used != num.size()) fail("bad number '" + num + "'");
      return Json(v);
    } catch (const std::logic_error&) {
      fail("bad number '" + num + "'");
    }
  }

  const std::string& t_;
  const std::string& where_;
  std::size_t i_ = 0;
};

}  // namespace

Json parse_json(const std::string& text, const std::string& where) {
  return Parser(text, where).document();
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
