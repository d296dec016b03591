#include "util/YamlScalar.h"

#include <array>
#include <cctype>
#include <cstdio>

namespace nfsrdma::util {
namespace {

// YAML 1.1's bools, nulls and special floats, in any case a reader accepts.
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
         c == '/' || c == '=' || c == '+';
}

// A digit, sign, dot or '=' first may start a number (1e3, .5, -1, -.inf,
// 0x10, 1_000) or YAML 1.1's value key; an option's dash before a letter
// ("--target", "-np") starts none, and "---" alone would end a document.
bool startsLikeNonString(std::string_view text) {
  const char first = text.front();
  const char second = text.size() > 1 ? text[1] : '\0';
  const bool optionDash = first == '-' && (std::isalpha(static_cast<unsigned char>(second)) ||
                                           (second == '-' && text.size() > 2 && text[2] != '-'));
  if (optionDash) return false;
  return std::isdigit(static_cast<unsigned char>(first)) || first == '-' || first == '+' ||
         first == '.' || first == '=';
}

}  // namespace

bool yamlNeedsQuotes(std::string_view text) {
  if (text.empty() || isSpecialWord(text) || startsLikeNonString(text)) return true;
  for (char c : text) {
    if (!isPlainChar(c)) return true;
  }
  return false;
}

std::string yamlDoubleQuoted(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (byte < 0x20 || byte == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02X", static_cast<unsigned>(byte));
      out += buf;
    } else {
      out += c;
    }
  }
  return out + '"';
}

std::string yamlScalar(std::string_view text) {
  return yamlNeedsQuotes(text) ? yamlDoubleQuoted(text) : std::string(text);
}

}  // namespace nfsrdma::util
