#include "bench/report/Json.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "bench/report/InputFile.h"
#include "util/Version.h"

namespace nfsrdma::bench {

std::string jsonQuote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (u < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(u));
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

JsonWriter& writeVersionField(JsonWriter& w) {
  return w.field(kVersionKey, util::versionText());
}

void JsonWriter::prefix(std::string_view key) {
  if (!first_.empty()) {
    if (!first_.back()) out_ += ", ";
    first_.back() = false;
    if (isObject_.back()) out_ += jsonQuote(key) + ": ";
  }
}

JsonWriter& JsonWriter::beginObject(std::string_view key) {
  prefix(key);
  out_ += "{";
  first_.push_back(true);
  isObject_.push_back(true);
  return *this;
}

JsonWriter& JsonWriter::endObject() {
  out_ += "}";
  first_.pop_back();
  isObject_.pop_back();
  if (first_.empty()) out_ += "\n";
  return *this;
}

JsonWriter& JsonWriter::beginArray(std::string_view key) {
  prefix(key);
  out_ += "[";
  first_.push_back(true);
  isObject_.push_back(false);
  return *this;
}

JsonWriter& JsonWriter::endArray() {
  out_ += "]";
  first_.pop_back();
  isObject_.pop_back();
  return *this;
}

JsonWriter& JsonWriter::field(std::string_view key, std::string_view value) {
  prefix(key);
  out_ += jsonQuote(value);
  return *this;
}

JsonWriter& JsonWriter::field(std::string_view key, double value) {
  prefix(key);
  if (!std::isfinite(value)) {
    out_ += "null";
    return *this;
  }
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.17g", value);
  // Trim representation noise: 0.1 rather than 0.10000000000000001.
  char shorter[48];
  for (int prec = 6; prec <= 17; ++prec) {
    std::snprintf(shorter, sizeof shorter, "%.*g", prec, value);
    if (std::strtod(shorter, nullptr) == value) {
      out_ += shorter;
      return *this;
    }
  }
  out_ += buf;
  return *this;
}

JsonWriter& JsonWriter::field(std::string_view key, std::uint64_t value) {
  prefix(key);
  out_ += std::to_string(value);
  return *this;
}

JsonWriter& JsonWriter::field(std::string_view key, bool value) {
  prefix(key);
  out_ += value ? "true" : "false";
  return *this;
}

JsonWriter& JsonWriter::null(std::string_view key) {
  prefix(key);
  out_ += "null";
  return *this;
}

namespace {

// JSON's number grammar: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
bool isJsonNumber(std::string_view t) {
  std::size_t i = 0;
  const auto digits = [&] {
    const std::size_t from = i;
    while (i < t.size() && t[i] >= '0' && t[i] <= '9') ++i;
    return i > from;
  };
  if (i < t.size() && t[i] == '-') ++i;
  if (i < t.size() && t[i] == '0') {
    ++i;
  } else if (!digits()) {
    return false;
  }
  if (i < t.size() && t[i] == '.' && (++i, !digits())) return false;
  if (i < t.size() && (t[i] == 'e' || t[i] == 'E')) {
    ++i;
    if (i < t.size() && (t[i] == '+' || t[i] == '-')) ++i;
    if (!digits()) return false;
  }
  return i == t.size();
}

}  // namespace

JsonWriter& JsonWriter::number(std::string_view key, std::string_view text) {
  if (!isJsonNumber(text)) {
    throw std::invalid_argument("JSON number for \"" + std::string(key) + "\": \"" +
                                std::string(text) + "\" is not one");
  }
  prefix(key);
  out_ += text;
  return *this;
}

const JsonValue* JsonValue::find(std::string_view key) const {
  if (kind != Kind::Object) return nullptr;
  auto it = object.find(key);
  return it == object.end() ? nullptr : &it->second;
}

double JsonValue::num(std::string_view key, double fallback) const {
  const JsonValue* v = find(key);
  return v != nullptr && v->kind == Kind::Number ? v->number : fallback;
}

std::uint64_t JsonValue::whole(std::string_view key, std::uint64_t max) const {
  const double x = num(key);
  if (!(x >= 0)) return 0;
  return x >= static_cast<double>(max) ? max : static_cast<std::uint64_t>(x);
}

std::string JsonValue::str(std::string_view key, std::string_view fallback) const {
  const JsonValue* v = find(key);
  return v != nullptr && v->kind == Kind::String ? v->string : std::string(fallback);
}

namespace {

class Parser {
 public:
  explicit Parser(std::string_view t) : t_(t) {}

  JsonValue document() {
    JsonValue v = value(0);
    skipSpace();
    if (pos_ != t_.size()) fail("trailing characters after the document");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error("JSON at byte " + std::to_string(pos_) + ": " + what);
  }
  void skipSpace() {
    while (pos_ < t_.size() &&
           (t_[pos_] == ' ' || t_[pos_] == '\n' || t_[pos_] == '\r' || t_[pos_] == '\t'))
      ++pos_;
  }
  char peek() {
    skipSpace();
    if (pos_ >= t_.size()) fail("unexpected end of input");
    return t_[pos_];
  }
  void expect(char c) {
    if (peek() != c) fail(std::string("expected '") + c + "'");
    ++pos_;
  }
  bool literal(std::string_view word) {
    if (t_.substr(pos_, word.size()) == word) {
      pos_ += word.size();
      return true;
    }
    return false;
  }

  JsonValue value(int depth) {
    if (depth > 64) fail("nesting deeper than 64 levels");
    JsonValue v;
    const char c = peek();
    if (c == '{') {
      ++pos_;
      v.kind = JsonValue::Kind::Object;
      if (peek() == '}') {
        ++pos_;
        return v;
      }
      for (;;) {
        if (peek() != '"') fail("expected a member name");
        std::string key = string();
        expect(':');
        v.object[key] = value(depth + 1);
        const char d = peek();
        ++pos_;
        if (d == '}') break;
        if (d != ',') fail("expected ',' or '}'");
      }
    } else if (c == '[') {
      ++pos_;
      v.kind = JsonValue::Kind::Array;
      if (peek() == ']') {
        ++pos_;
        return v;
      }
      for (;;) {
        v.array.push_back(value(depth + 1));
        const char d = peek();
        ++pos_;
        if (d == ']') break;
        if (d != ',') fail("expected ',' or ']'");
      }
    } else if (c == '"') {
      v.kind = JsonValue::Kind::String;
      v.string = string();
    } else if (literal("true")) {
      v.kind = JsonValue::Kind::Bool;
      v.boolean = true;
    } else if (literal("false")) {
      v.kind = JsonValue::Kind::Bool;
    } else if (literal("null")) {
      v.kind = JsonValue::Kind::Null;
    } else {
      v.kind = JsonValue::Kind::Number;
      const std::size_t start = pos_;
      while (pos_ < t_.size() &&
             std::string_view("+-0123456789.eE").find(t_[pos_]) != std::string_view::npos)
        ++pos_;
      if (start == pos_) fail("unexpected character");
      const std::string num(t_.substr(start, pos_ - start));
      char* end = nullptr;
      v.number = std::strtod(num.c_str(), &end);
      if (end != num.c_str() + num.size()) fail("malformed number '" + num + "'");
      v.numberText = num;
    }
    return v;
  }

  std::string string() {
    expect('"');
    std::string out;
    for (;;) {
      if (pos_ >= t_.size()) fail("unterminated string");
      const char c = t_[pos_++];
      if (c == '"') return out;
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= t_.size()) fail("unterminated escape");
      const char e = t_[pos_++];
      switch (e) {
        case 'n':
          out += '\n';
          break;
        case 't':
          out += '\t';
          break;
        case 'r':
          out += '\r';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'u': {
          if (pos_ + 4 > t_.size()) fail("short \\u escape");
          const unsigned long cp =
              std::strtoul(std::string(t_.substr(pos_, 4)).c_str(), nullptr, 16);
          pos_ += 4;
          // UTF-8 encode the BMP code point (surrogate pairs are not produced by our writers).
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
          out += e;
          break;
      }
    }
  }

  std::string_view t_;
  std::size_t pos_ = 0;
};

}  // namespace

JsonValue parseJson(std::string_view text) {
  return Parser(text).document();
}

JsonValue parseJsonFile(const std::string& path, std::uint64_t maxBytes) {
  const std::string text = readInputFile(path, {"a JSON file", maxBytes});
  try {
    return parseJson(text);
  } catch (const std::exception& e) {
    throw std::runtime_error(path + ": " + e.what());
  }
}

}  // namespace nfsrdma::bench
