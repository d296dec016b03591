// NfsConf: line-preserving editor for nfs.conf's INI dialect ([section],
// key = value, '#' or ';' comments).
#include "server/NfsConf.h"

#include <algorithm>
#include <cctype>

namespace nfsrdma::server {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

bool isComment(std::string_view t) {
  return !t.empty() && (t.front() == '#' || t.front() == ';');
}

// The section name of a "[name]" line, or nullopt.
std::optional<std::string_view> sectionName(std::string_view line) {
  std::string_view t = trim(line);
  if (t.size() < 2 || t.front() != '[') return std::nullopt;
  auto close = t.find(']');
  if (close == std::string_view::npos) return std::nullopt;
  return trim(t.substr(1, close - 1));
}

// The key of a "key = value" line, or nullopt.
std::optional<std::string_view> keyOf(std::string_view line) {
  std::string_view t = trim(line);
  if (t.empty() || isComment(t) || t.front() == '[') return std::nullopt;
  auto eq = t.find('=');
  if (eq == std::string_view::npos) return std::nullopt;
  return trim(t.substr(0, eq));
}

}  // namespace

NfsConf::NfsConf(std::string_view text) {
  std::size_t start = 0;
  while (start < text.size()) {
    auto nl = text.find('\n', start);
    std::size_t end = nl == std::string_view::npos ? text.size() : nl + 1;
    lines_.emplace_back(text.substr(start, end - start));
    start = end;
  }
}

std::string NfsConf::text() const {
  std::string out;
  for (const auto& l : lines_) out += l;
  return out;
}

std::optional<NfsConf::Range> NfsConf::findSection(std::string_view section) const {
  for (std::size_t i = 0; i < lines_.size(); ++i) {
    auto name = sectionName(lines_[i]);
    if (!name || !iequals(*name, section)) continue;
    std::size_t end = i + 1;
    while (end < lines_.size() && !sectionName(lines_[end])) ++end;
    return Range{i, end};
  }
  return std::nullopt;
}

std::vector<std::size_t> NfsConf::findKey(const Range& r, std::string_view key) const {
  std::vector<std::size_t> out;
  for (std::size_t i = r.begin + 1; i < r.end; ++i) {
    auto k = keyOf(lines_[i]);
    if (k && iequals(*k, key)) out.push_back(i);
  }
  return out;
}

std::optional<std::string> NfsConf::get(std::string_view section, std::string_view key) const {
  auto r = findSection(section);
  if (!r) return std::nullopt;
  auto hits = findKey(*r, key);
  if (hits.empty()) return std::nullopt;
  std::string_view line = lines_[hits.back()];
  return std::string(trim(line.substr(line.find('=') + 1)));
}

bool NfsConf::set(std::string_view section, std::string_view key, std::string_view value) {
  const std::string assignment = std::string(key) + "=" + std::string(value) + "\n";
  auto r = findSection(section);
  if (!r) {
    std::string prefix;
    if (!lines_.empty() && lines_.back().back() != '\n') lines_.back() += "\n";
    if (!lines_.empty() && !trim(lines_.back()).empty()) prefix = "\n";
    lines_.push_back(prefix + "[" + std::string(section) + "]\n");
    lines_.push_back(assignment);
    return true;
  }
  auto hits = findKey(*r, key);
  if (!hits.empty()) {
    std::string& line = lines_[hits.back()];
    // Keep everything up to the value's first character and the line end.
    std::size_t eq = line.find('=');
    std::size_t vbegin = eq + 1;
    while (vbegin < line.size() && (line[vbegin] == ' ' || line[vbegin] == '\t')) ++vbegin;
    std::size_t vend = line.size();
    while (vend > vbegin && std::isspace(static_cast<unsigned char>(line[vend - 1]))) --vend;
    if (line.compare(vbegin, vend - vbegin, value) == 0) return false;
    line = line.substr(0, vbegin) + std::string(value) + line.substr(vend);
    return true;
  }
  std::size_t insertAt = r->begin + 1;
  for (std::size_t i = r->begin + 1; i < r->end; ++i) {
    if (!trim(lines_[i]).empty()) insertAt = i + 1;
  }
  if (lines_[insertAt - 1].back() != '\n') lines_[insertAt - 1] += "\n";
  lines_.insert(lines_.begin() + static_cast<std::ptrdiff_t>(insertAt), assignment);
  return true;
}

bool NfsConf::remove(std::string_view section, std::string_view key) {
  auto r = findSection(section);
  if (!r) return false;
  auto hits = findKey(*r, key);
  for (auto it = hits.rbegin(); it != hits.rend(); ++it) {
    lines_.erase(lines_.begin() + static_cast<std::ptrdiff_t>(*it));
  }
  return !hits.empty();
}

}  // namespace nfsrdma::server
