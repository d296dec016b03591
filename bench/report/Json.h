// Minimal JSON for the file benchmark: a writer that builds one document as
// text (objects and arrays nest through begin/end calls, commas and escapes
// handled here, so hand-written JSON cannot go invalid) and a small parser
// for what we read back: saved results given as --baseline or --results, and
// `nfsrdma-bench link --json` output. No dependency beyond the standard
// library; numbers are doubles, which holds every figure we emit exactly
// enough (byte counts stay below 2^53).
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace nfsrdma::bench {

class JsonWriter {
 public:
  // Containers: key is ignored (pass "") inside arrays and at the top level.
  JsonWriter& beginObject(std::string_view key = {});
  JsonWriter& endObject();
  JsonWriter& beginArray(std::string_view key = {});
  JsonWriter& endArray();
  JsonWriter& field(std::string_view key, std::string_view value);
  JsonWriter& field(std::string_view key, const char* value) {
    return field(key, std::string_view(value));
  }
  JsonWriter& field(std::string_view key, double value);
  JsonWriter& field(std::string_view key, std::uint64_t value);
  JsonWriter& field(std::string_view key, bool value);
  JsonWriter& null(std::string_view key);
  // A number already formatted (a table's fixed decimals: "389.00"); text
  // that is not a finite JSON number throws std::invalid_argument.
  JsonWriter& number(std::string_view key, std::string_view text);
  // The document so far; complete once every begin has its end.
  const std::string& str() const { return out_; }

 private:
  void prefix(std::string_view key);
  std::string out_;
  std::vector<bool> first_;  // per open container: no element written yet
  std::vector<bool> isObject_;
};

// The member every document the tools write carries next to its schema:
// the build that made it ("0.1.0 (commit 7af4c7b5a2cc)", util/Version.h),
// as fio writes its version, so a figure can be told from a later build's.
// Readers take documents without it (those of earlier builds).
inline constexpr std::string_view kVersionKey = "nfsrdma_version";
// Writes kVersionKey and this build's version into the open object.
JsonWriter& writeVersionField(JsonWriter& w);

// "..." with JSON escapes.
std::string jsonQuote(std::string_view s);

class JsonValue {
 public:
  enum class Kind { Null, Bool, Number, String, Array, Object };
  Kind kind = Kind::Null;
  bool boolean = false;
  double number = 0;
  std::string string;
  // A Number's literal text: a double holds integers exactly only up to
  // 2^53, and a steady clock's nanoseconds pass that after 104 days of
  // uptime, so exact readers parse this instead of `number`.
  std::string numberText;
  std::vector<JsonValue> array;
  std::map<std::string, JsonValue, std::less<>> object;

  bool isObject() const { return kind == Kind::Object; }
  bool isArray() const { return kind == Kind::Array; }
  bool isNumber() const { return kind == Kind::Number; }
  bool isString() const { return kind == Kind::String; }
  // Member lookup; nullptr when absent or not an object.
  const JsonValue* find(std::string_view key) const;
  // Member as number/string with a fallback when absent or of another kind.
  double num(std::string_view key, double fallback = 0) const;
  // Member as a whole number 0..max for a saved document (user input): 0
  // when absent, not a number or below 0, max when above it, so that no
  // cast of a double goes out of its type's range.
  std::uint64_t whole(std::string_view key,
                      std::uint64_t max = std::numeric_limits<std::uint64_t>::max()) const;
  std::string str(std::string_view key, std::string_view fallback = {}) const;
};

// Parses one JSON document; throws std::runtime_error with the byte offset
// of the first problem. Nesting is bounded (64 levels).
JsonValue parseJson(std::string_view text);
// What a JSON file given to a command may hold. A compare JSON of 4096
// clients keeps a row per client and cell (some 250 bytes each): a full
// matrix of 9 rows and 8 targets is near 75 MiB. Parsed, a document takes
// several times its text.
inline constexpr std::uint64_t kMaxJsonFileBytes = std::uint64_t{256} << 20;
// Reads (readInputFile: a regular file of at most maxBytes) and parses a
// file; every error names the file.
JsonValue parseJsonFile(const std::string& path, std::uint64_t maxBytes = kMaxJsonFileBytes);

}  // namespace nfsrdma::bench
