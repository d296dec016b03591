// ConfigReader: the config file read whole within its bound, checked to be
// one YAML document, and its nodes read with a position in every error.
#include "server/ConfigReader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <set>

#include "server/ExportsFile.h"
#include "util/ErrnoText.h"
#include "util/UniqueFd.h"

namespace nfsrdma::server {
namespace {

// A config is a small hand-written file (the example is 4 KiB): 1 MiB holds
// thousands of exports, keeps the tree yaml-cpp builds from it (several times
// the text) small, and stops `plan /dev/zero` before memory runs out.
constexpr std::size_t kMaxConfigBytes = 1 << 20;

// "a, b, c": the values a key may take, for a message.
std::string listOf(const std::vector<std::string>& allowed) {
  std::string list;
  for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
  return list;
}

}  // namespace

void ConfigReader::fail(const YAML::Mark& m, const std::string& msg) const {
  throw ConfigError(source_ + ":" + std::to_string(m.line + 1) + ":" +
                    std::to_string(m.column + 1) + ": " + msg);
}

void ConfigReader::fail(const SourceMark& m, const std::string& msg) const {
  throw ConfigError(source_ + ":" + std::to_string(m.line) + ":" + std::to_string(m.column) + ": " +
                    msg);
}

void ConfigReader::requireMap(const YAML::Node& n, const std::string& what) const {
  if (!n.IsMap()) fail(n.Mark(), what + " must be a mapping of keys to values");
}

void ConfigReader::requireKeys(const YAML::Node& n, const std::string& what,
                               const std::vector<std::string>& allowed) const {
  requireMap(n, what);
  std::set<std::string> seen;
  for (auto it = n.begin(); it != n.end(); ++it) {
    const std::string key = it->first.Scalar();
    // yaml-cpp keeps both and answers with the first: the second would be
    // silently ignored, so "access: ro" then "access: rw" would mean ro.
    if (!seen.insert(key).second)
      fail(it->first.Mark(), "key '" + shownInput(key) + "' appears twice in " + what);
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      fail(it->first.Mark(), "unknown key '" + shownInput(key) + "' in " + what +
                                 " (expected one of: " + listOf(allowed) + ")");
    }
  }
}

std::string ConfigReader::scalar(const YAML::Node& n, const std::string& what) const {
  if (!n.IsScalar()) fail(n.Mark(), what + " must be a single value, not a list or mapping");
  return n.Scalar();
}

bool ConfigReader::boolean(const YAML::Node& n, const std::string& what) const {
  std::string v = scalar(n, what);
  std::transform(v.begin(), v.end(), v.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (v == "true" || v == "yes" || v == "on") return true;
  if (v == "false" || v == "no" || v == "off") return false;
  fail(n.Mark(), what + ": expected true or false, got '" + shownInput(n.Scalar()) + "'");
}

uint64_t ConfigReader::number(const YAML::Node& n, const std::string& what, uint64_t min,
                              uint64_t max, const std::string& rule) const {
  const std::string v = scalar(n, what);
  const std::string range =
      std::to_string(min) + ".." + std::to_string(max) + (rule.empty() ? "" : " (" + rule + ")");
  if (v.empty() || v.size() > 19 || !std::all_of(v.begin(), v.end(), [](char c) {
        return std::isdigit(static_cast<unsigned char>(c));
      })) {
    fail(n.Mark(),
         what + ": expected a whole number in " + range + ", got '" + shownInput(v) + "'");
  }
  uint64_t x = std::stoull(v);
  if (x < min || x > max) fail(n.Mark(), what + ": " + v + " is out of range " + range);
  return x;
}

std::string ConfigReader::oneOf(const YAML::Node& n, const std::string& what,
                                const std::vector<std::string>& allowed) const {
  const std::string v = scalar(n, what);
  if (std::find(allowed.begin(), allowed.end(), v) != allowed.end()) return v;
  fail(n.Mark(),
       what + ": unknown value '" + shownInput(v) + "' (expected one of: " + listOf(allowed) + ")");
}

namespace {

// The "---" line that starts the document whose first node is at `at`
// (yaml-cpp marks an empty document at the line after its "---").
SourceMark documentStart(const std::string& text, const YAML::Mark& at) {
  std::vector<std::size_t> lineStarts{0};
  for (std::size_t i = 0; i < text.size(); ++i)
    if (text[i] == '\n') lineStarts.push_back(i + 1);
  std::size_t line = lineStarts.size() - 1;
  if (at.line >= 0) line = std::min(line, static_cast<std::size_t>(at.line));
  for (; line > 0; --line)
    if (text.compare(lineStarts[line], 3, "---") == 0) break;
  return {static_cast<int>(line) + 1, 1};
}

// yaml-cpp takes a quote that is never closed as running to the end of the
// file: the value swallows every later line, and the error would be a key
// missing far away. A quoted scalar's mark is its opening quote.
void checkQuoteClosed(const ConfigReader& r, const std::string& text, const YAML::Mark& m) {
  if (m.pos < 0 || static_cast<std::size_t>(m.pos) >= text.size()) return;
  const auto open = static_cast<std::size_t>(m.pos);
  const char q = text[open];
  if (q != '"' && q != '\'') return;
  for (std::size_t i = open + 1; i < text.size(); ++i) {
    if (q == '"' && text[i] == '\\') {
      ++i;  // an escaped character, maybe a quote
    } else if (text[i] == q) {
      if (q == '"' || i + 1 == text.size() || text[i + 1] != '\'') return;
      ++i;  // '' is a quote inside single quotes
    }
  }
  r.fail(m, std::string("YAML syntax error: this ") + q +
                " quote is never closed (its value would run to the end of the file)");
}

// Every quoted scalar of the tree, keys included. Aliases can make a small
// file a huge tree, so the walk stops after kMaxNodes.
void checkQuotesClosed(const ConfigReader& r, const std::string& text, const YAML::Node& root) {
  constexpr std::size_t kMaxNodes = 1000000;
  std::vector<YAML::Node> todo{root};
  for (std::size_t visited = 0; !todo.empty(); ++visited) {
    if (visited == kMaxNodes)
      r.fail(root.Mark(), "the config expands to more than 1000000 YAML nodes (aliases?)");
    const YAML::Node n = todo.back();
    todo.pop_back();
    if (n.IsScalar() && n.Tag() == "!") checkQuoteClosed(r, text, n.Mark());
    if (!n.IsMap() && !n.IsSequence()) continue;
    for (auto it = n.begin(); it != n.end(); ++it) {
      if (n.IsMap()) {
        todo.push_back(it->first);
        todo.push_back(it->second);
      } else {
        todo.push_back(*it);
      }
    }
  }
}

}  // namespace

// Load() would silently drop every document after the first.
YAML::Node loadOneDocument(const ConfigReader& r, const std::string& text) {
  std::vector<YAML::Node> docs;
  try {
    docs = YAML::LoadAll(text);
  } catch (const YAML::ParserException& e) {
    r.fail(e.mark, "YAML syntax error: " + e.msg);
  }
  if (docs.size() > 1) {
    r.fail(documentStart(text, docs[1].Mark()),
           "a second YAML document starts here; the config is one document (remove the '---' "
           "line and what follows, or merge it into the first)");
  }
  const YAML::Node root = docs.empty() ? YAML::Node() : docs.front();
  checkQuotesClosed(r, text, root);
  return root;
}

std::string readConfigText(const std::string& name) {
  // O_NONBLOCK: opening a FIFO would otherwise wait for a writer.
  const UniqueFd fd(::open(name.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  if (!fd) throw ConfigError(name + ": cannot read the config file: " + util::errnoText(errno));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0)
    throw ConfigError(name + ": cannot read the config file: " + util::errnoText(errno));
  if (S_ISDIR(st.st_mode)) throw ConfigError(name + ": is a directory; expected a YAML file");
  if (!S_ISREG(st.st_mode)) {
    throw ConfigError(name +
                      ": not a regular file (a device, FIFO or socket); expected a YAML file");
  }
  const auto tooBig = [&](std::uint64_t size) {
    return ConfigError(name + ": is " + std::to_string(size) + " bytes; a config is at most " +
                       std::to_string(kMaxConfigBytes) + " bytes (1 MiB)");
  };
  if (static_cast<std::uint64_t>(st.st_size) > kMaxConfigBytes)
    throw tooBig(static_cast<std::uint64_t>(st.st_size));
  std::string text;
  char buf[65536];
  while (text.size() <= kMaxConfigBytes) {  // also bounded if the file grows meanwhile
    const ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw ConfigError(name + ": cannot read the config file: " + util::errnoText(errno));
    if (n == 0) break;
    text.append(buf, static_cast<std::size_t>(n));
  }
  if (text.size() > kMaxConfigBytes) throw tooBig(text.size());
  return text;
}

}  // namespace nfsrdma::server
