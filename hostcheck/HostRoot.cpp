// HostRoot: plain reads below a root, absence as an answer.
#include "hostcheck/HostRoot.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace nfsrdma::hostcheck {
namespace fs = std::filesystem;

std::string trimmedText(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

fs::path HostRoot::at(const fs::path& hostPath) const {
  return root_ / hostPath.relative_path();
}

bool HostRoot::exists(const fs::path& hostPath) const {
  std::error_code ec;
  return fs::exists(at(hostPath), ec);
}

std::optional<std::string> HostRoot::read(const fs::path& hostPath) const {
  std::ifstream in(at(hostPath));
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return trimmedText(text.str());
}

std::optional<long long> HostRoot::readNumber(const fs::path& hostPath) const {
  const auto text = read(hostPath);
  if (!text || text->empty()) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(text->c_str(), &end, 10);
  if (errno != 0 || end == text->c_str()) return std::nullopt;
  return v;
}

std::vector<std::string> HostRoot::list(const fs::path& hostPath) const {
  std::vector<std::string> out;
  std::error_code ec;
  for (fs::directory_iterator it(at(hostPath), ec), end; !ec && it != end; it.increment(ec)) {
    out.push_back(it->path().filename().string());
  }
  const auto numeric = [](const std::string& s) {
    return !s.empty() &&
           std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  std::sort(out.begin(), out.end(), [&](const std::string& a, const std::string& b) {
    if (numeric(a) && numeric(b) && a.size() != b.size()) return a.size() < b.size();
    return a < b;
  });
  return out;
}

}  // namespace nfsrdma::hostcheck
