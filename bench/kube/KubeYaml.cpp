#include "bench/kube/KubeYaml.h"

#include <array>
#include <cctype>
#include <string>

namespace nfsrdma::bench::kube::yaml {
namespace {

// YAML 1.1's bools and nulls, in any case kubectl's reader accepts.
constexpr std::array<std::string_view, 14> kSpecialWords = {
    "y", "n", "yes", "no", "on", "off", "true", "false", "null", "~", "nan", "inf", "none", "."};

bool isSpecialWord(std::string_view text) {
  std::string lower;
  for (char c : text) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (auto w : kSpecialWords) {
    if (lower == w) return true;
  }
  return false;
}

bool isPlainChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' ||
         c == '/';
}

}  // namespace

bool needsQuotes(std::string_view text) {
  if (text.empty() || isSpecialWord(text)) return true;
  // A digit, sign or dot first may start a number (1e3, .5, -1, -.inf,
  // 0x10, 1_000); an option's dash before a letter ("--target", "-np")
  // starts none, and "---" alone would end a document.
  const char first = text.front();
  const char second = text.size() > 1 ? text[1] : '\0';
  const bool optionDash = first == '-' && (std::isalpha(static_cast<unsigned char>(second)) ||
                                           (second == '-' && text.size() > 2 && text[2] != '-'));
  if (!optionDash && (std::isdigit(static_cast<unsigned char>(first)) || first == '-' ||
                      first == '+' || first == '.')) {
    return true;
  }
  for (char c : text) {
    if (!isPlainChar(c)) return true;
  }
  return false;
}

YAML::Emitter& str(YAML::Emitter& e, std::string_view text) {
  const std::string s(text);
  if (needsQuotes(text)) return e << YAML::DoubleQuoted << s;
  return e << s;
}

void field(YAML::Emitter& e, std::string_view k, std::string_view value) {
  key(e, k);
  str(e, value);
}

void number(YAML::Emitter& e, std::string_view k, std::int64_t value) {
  key(e, k);
  e << value;
}

void flag(YAML::Emitter& e, std::string_view k, bool value) {
  key(e, k);
  e << YAML::TrueFalseBool << value;
}

void key(YAML::Emitter& e, std::string_view k) {
  e << YAML::Key;
  str(e, k);
  e << YAML::Value;
}

void beginMap(YAML::Emitter& e, std::string_view k, std::string_view comment) {
  key(e, k);
  if (!comment.empty()) e << YAML::Comment(std::string(comment));
  e << YAML::BeginMap;
}

}  // namespace nfsrdma::bench::kube::yaml
