// The two things every counter file parser here does: split a line into
// its whitespace-separated words, and read a word as a whole decimal number
// (from_chars: no locale, no sign for unsigned, the whole word or nothing).
#pragma once

#include <charconv>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace nfsrdma::counters {

inline std::vector<std::string_view> splitWords(std::string_view line) {
  std::vector<std::string_view> words;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    const std::size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    if (i > start) words.push_back(line.substr(start, i - start));
  }
  return words;
}

template <class T>
std::optional<T> wholeNumber(std::string_view word) {
  T v{};
  const auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), v);
  if (ec != std::errc() || end != word.data() + word.size()) return std::nullopt;
  return v;
}

// A one-number counter file's text ("%llu\n"): the number, trailing
// newlines and spaces aside; nothing when it holds anything else.
inline std::optional<std::int64_t> counterFileValue(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  return wholeNumber<std::int64_t>(text);
}

// Calls f(lineNumber, line) for each line of text (1-based; the last line
// may lack its newline).
template <class F>
void forEachLine(std::string_view text, F&& f) {
  std::size_t number = 0;
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    f(++number, line);
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
}

}  // namespace nfsrdma::counters
