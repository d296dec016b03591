// NfsConf: line-preserving editor for nfs.conf, reading it the way
// nfs-utils' support/nfs/conffile.c does (conf_parse, conf_parse_line,
// conf_init_file).
#include "server/NfsConf.h"

#include <string.h>  // strverscmp (GNU), the order scandir(..., versionsort) gives

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "server/HostFiles.h"

namespace nfsrdma::server {
namespace fs = std::filesystem;
namespace {

bool isBlank(char c) {
  return c == ' ' || c == '\t';
}
bool isSpace(char c) {
  return std::isspace(static_cast<unsigned char>(c)) != 0;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && isSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && isSpace(s.back())) s.remove_suffix(1);
  return s;
}

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// One line as conf_parse sees it: physical lines [first, last] joined where
// a line ends in "\\\n" (both bytes read as blanks, so offsets into the
// joined text are offsets into the physical bytes).
struct Logical {
  enum class Kind { Blank, Comment, Header, Assign, Other, Unterminated };
  std::size_t first = 0, last = 0;
  Kind kind = Kind::Other;
  // The section in force after this line (Header) or for it (Assign).
  std::optional<std::string> section, arg;
  std::string key, value;
  std::size_t vbegin = 0, vend = 0;  // Assign: the value token in the joined text
};

// Appends physical lines from lines[i] on to `s` until one ends the logical
// line, and moves i past them. Returns false for a last line without a
// newline, which conf_parse ignores.
bool joinLogicalLine(const std::vector<std::string>& lines, std::size_t& i, std::string& s) {
  for (; i < lines.size(); ++i) {
    const std::string& p = lines[i];
    if (p.empty() || p.back() != '\n') {  // the last line, without a newline
      s += p;
      ++i;
      return false;
    }
    if (p.size() >= 2 && p[p.size() - 2] == '\\') {  // escaped newline: read on
      s += p.substr(0, p.size() - 2) + "  ";
      continue;
    }
    s += p.substr(0, p.size() - 1);
    ++i;
    return true;
  }
  return false;
}

// A "[section]" or `[section "arg"]` line, its '[' at s[b]: the section in
// force after it.
void parseHeader(const std::string& s, std::size_t b, std::optional<std::string>& section,
                 std::optional<std::string>& arg) {
  section.reset();
  arg.reset();
  std::size_t n = b + 1;
  while (n < s.size() && isBlank(s[n])) ++n;
  const auto close = s.find(']', n);
  if (close == std::string::npos) return;  // without ']' no section is in force
  std::string name = s.substr(n, close - n);
  while (!name.empty() && isBlank(name.back())) name.pop_back();
  const auto q = name.find('"');
  if (q == std::string::npos) {
    section = name;
    return;
  }
  std::string rest = name.substr(q + 1);
  name.resize(q);
  while (!name.empty() && isBlank(name.back())) name.pop_back();
  section = name;
  const auto q2 = rest.find('"');
  if (q2 != std::string::npos) arg = rest.substr(0, q2);
}

// A line inside a section, its first non-blank at s[b]: l becomes an Assign
// when it is a "key = value" nfs-utils accepts.
void parseAssignment(const std::string& s, std::size_t b, Logical& l) {
  const auto eq = s.find('=', b);
  if (eq == std::string::npos) return;
  std::size_t kend = eq;
  while (kend > b && isBlank(s[kend - 1])) --kend;
  std::size_t v = eq + 1;
  while (v < s.size() && isBlank(s[v])) ++v;
  std::size_t vend = s.size();
  if (v < s.size() && (s[v] == '"' || s[v] == '\'')) {
    const auto q = s.find(s[v], v + 1);
    if (q == std::string::npos) return;  // unmatched quotes: nfs-utils ignores the line
    ++v;
    vend = q;
  } else {
    vend = std::min(s.find_first_of("#;", v), s.size());
    while (vend > v + 1 && isSpace(s[vend - 1])) --vend;  // keeps the first byte, as nfs-utils
  }
  if (kend == b) return;
  l.kind = Logical::Kind::Assign;
  l.key = s.substr(b, kend - b);
  l.value = s.substr(v, vend - v);
  l.vbegin = v;
  l.vend = vend;
}

std::vector<Logical> parse(const std::vector<std::string>& lines,
                           std::optional<std::string> section, std::optional<std::string> arg) {
  std::vector<Logical> out;
  std::size_t i = 0;
  while (i < lines.size()) {
    Logical l;
    l.first = i;
    std::string s;
    const bool terminated = joinLogicalLine(lines, i, s);
    l.last = i - 1;
    if (!terminated) {
      // conf_parse: "last line non-terminated, ignored".
      l.kind = Logical::Kind::Unterminated;
      l.section = section;
      l.arg = arg;
      out.push_back(std::move(l));
      break;
    }
    std::size_t b = 0;
    while (b < s.size() && isSpace(s[b])) ++b;
    if (b == s.size()) {
      l.kind = Logical::Kind::Blank;
    } else if (s[b] == '#' || s[b] == ';') {
      l.kind = Logical::Kind::Comment;
    } else if (s[b] == '[') {
      l.kind = Logical::Kind::Header;
      parseHeader(s, b, section, arg);
    } else {
      l.kind = Logical::Kind::Other;
      if (section) parseAssignment(s, b, l);
    }
    l.section = section;
    l.arg = arg;
    out.push_back(std::move(l));
  }
  return out;
}

bool inSection(const Logical& l, std::string_view section) {
  return l.section && iequals(*l.section, section) && !l.arg;
}

bool boolWord(std::string_view v, bool& truth) {
  for (const char* w : {"1", "t", "true", "y", "yes", "on"}) {
    if (iequals(v, w)) return truth = true;
  }
  for (const char* w : {"0", "f", "false", "n", "no", "off"}) {
    if (iequals(v, w)) {
      truth = false;
      return true;
    }
  }
  return false;
}

// Whether a directory is at the host path, read inside the root as every path is.
bool isDirectory(const HostPaths& paths, const std::string& host) {
  return orAbsent(host, [&] {
    const auto st = hostPathStatus(paths, host);
    return st && st->type() == fs::file_type::directory;
  });
}

// Why what conf_readfile gets from a file of this kind cannot be known, or
// nullptr when it can: a regular file is read; an absent file, a directory
// (read() fails) and a socket (open() fails) are skipped. The rest it opens
// and reads as configuration.
const char* unknowableRead(fs::file_type type) {
  switch (type) {
    case fs::file_type::not_found:
    case fs::file_type::regular:
    case fs::file_type::directory:
    case fs::file_type::socket:
      return nullptr;
    case fs::file_type::fifo:
      return "nfs-utils would block opening it until something writes to it: nfsconf and the "
             "NFS server's start hang";
    case fs::file_type::character:
    case fs::file_type::block:
      return "nfs-utils would read the device's bytes as configuration";
    default:  // a link where nfsrdma-server keeps its own files: not followed here
      return "nfsrdma-server does not read it the way nfs-utils would";
  }
}

// The *.conf files of /etc/nfs.conf.d in the order conf_init_dir reads them
// (versionsort; hidden names and directories skipped), as host paths.
std::vector<std::string> confDFiles(const HostPaths& paths) {
  const std::string dir = std::string(HostPaths::kNfsConf) + ".d";
  std::vector<std::string> names;
  for (const std::string& name : listHostDirOrAbsent(paths, dir)) {
    if (name.front() == '.') continue;
    if (name.size() <= 5 || name.compare(name.size() - 5, 5, ".conf") != 0) continue;
    // nfs-utils skips directories, and warns that it cannot read a link to one;
    // the probe sees where links end, so both are skipped here, without a word.
    if (isDirectory(paths, dir + "/" + name)) continue;
    names.push_back(name);
  }
  std::sort(names.begin(), names.end(), [](const std::string& a, const std::string& b) {
    return ::strverscmp(a.c_str(), b.c_str()) < 0;
  });
  std::vector<std::string> out;
  for (const auto& name : names) out.push_back(dir + "/" + name);
  return out;
}

}  // namespace

bool nfsConfSameValue(std::string_view have, std::string_view want) {
  if (have == want) return true;
  bool w = false, h = false;
  if (want.empty() || std::isdigit(static_cast<unsigned char>(want.front())) || !boolWord(want, w))
    return false;
  return boolWord(have, h) && h == w;
}

NfsConf::NfsConf(std::string_view text) {
  // conf_parse stops at strlen(): nothing from the first NUL on is a line.
  if (const auto nul = text.find('\0'); nul != std::string_view::npos) {
    afterNul_ = std::string(text.substr(nul));
    text = text.substr(0, nul);
  }
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
  return out + afterNul_;
}

std::optional<NfsConf::Cut> NfsConf::cutAtNul() const {
  if (afterNul_.empty()) return std::nullopt;
  // Every line before the NUL's own ends in '\n'; the NUL's line may have begun.
  std::size_t line = 1;
  for (const auto& l : lines_) line += l.back() == '\n' ? 1U : 0U;
  return Cut{line, afterNul_.size()};
}

std::vector<NfsConf::Assignment> NfsConf::assignments(const std::optional<std::string>& section,
                                                      const std::optional<std::string>& arg) const {
  std::vector<Assignment> out;
  for (const auto& l : parse(lines_, section, arg)) {
    if (l.kind != Logical::Kind::Assign) continue;
    out.push_back({*l.section, l.arg, l.key, l.value, l.first + 1});
  }
  return out;
}

std::optional<std::string> NfsConf::get(std::string_view section, std::string_view key) const {
  std::optional<std::string> value;
  for (const auto& l : parse(lines_, std::nullopt, std::nullopt)) {
    if (l.kind != Logical::Kind::Assign || l.value.empty() || !iequals(l.key, key)) continue;
    if (!l.section || !iequals(*l.section, section)) continue;
    // An assignment in [section "arg"] replaces the plain one (conf_remove_now
    // ignores the argument) but is not what get() asks for.
    value = l.arg ? std::nullopt : std::optional<std::string>(l.value);
  }
  return value;
}

bool NfsConf::set(std::string_view section, std::string_view key, std::string_view value) {
  const auto parsed = parse(lines_, std::nullopt, std::nullopt);
  const Logical* hit = nullptr;
  const Logical* lastHeader = nullptr;
  for (const auto& l : parsed) {
    if (l.kind == Logical::Kind::Header && inSection(l, section)) lastHeader = &l;
    if (l.kind == Logical::Kind::Assign && inSection(l, section) && !l.value.empty() &&
        iequals(l.key, key))
      hit = &l;
  }
  if (hit) {
    if (nfsConfSameValue(hit->value, value)) return false;
    // Map the value token back to physical lines; replace those bytes only.
    auto locate = [&](std::size_t off) {
      std::size_t li = hit->first;
      while (li < hit->last && off >= lines_[li].size()) off -= lines_[li++].size();
      return std::pair{li, off};
    };
    const auto [bl, bo] = locate(hit->vbegin);
    const auto [el, eo] = locate(hit->vend);
    std::string joined = lines_[bl].substr(0, bo) + std::string(value) + lines_[el].substr(eo);
    lines_.erase(lines_.begin() + static_cast<std::ptrdiff_t>(bl) + 1,
                 lines_.begin() + static_cast<std::ptrdiff_t>(el) + 1);
    lines_[bl] = std::move(joined);
    return true;
  }
  const std::string assignment = std::string(key) + "=" + std::string(value) + "\n";
  // nfs-utils ignores a last line without a newline: ours goes before it, so
  // it stays last, unterminated and ignored (ending it would switch it on).
  const std::size_t end =
      !lines_.empty() && lines_.back().back() != '\n' ? lines_.size() - 1 : lines_.size();
  auto insertAt = [&](std::size_t at, const std::string& text) {
    std::string prefix;
    if (at > 0) {
      const std::string& prev = lines_[at - 1];
      if (prev.size() >= 2 && prev[prev.size() - 2] == '\\') prefix = "\n";  // would join ours
    }
    lines_.insert(lines_.begin() + static_cast<std::ptrdiff_t>(at), prefix + text);
  };
  if (!lastHeader) {
    const bool afterText = end > 0 && !trim(lines_[end - 1]).empty();
    insertAt(end,
             std::string(afterText ? "\n" : "") + "[" + std::string(section) + "]\n" + assignment);
    return true;
  }
  // After the last non-blank line of the last [section].
  std::size_t after = lastHeader->last;
  for (const Logical* l = lastHeader + 1; l != parsed.data() + parsed.size(); ++l) {
    if (l->kind == Logical::Kind::Header) break;
    if (l->kind != Logical::Kind::Blank) after = l->last;
  }
  insertAt(std::min(after + 1, end), assignment);
  return true;
}

bool NfsConf::remove(std::string_view section, std::string_view key) {
  const auto parsed = parse(lines_, std::nullopt, std::nullopt);
  bool changed = false;
  for (auto it = parsed.rbegin(); it != parsed.rend(); ++it) {
    if (it->kind != Logical::Kind::Assign || !inSection(*it, section) || !iequals(it->key, key))
      continue;
    lines_.erase(lines_.begin() + static_cast<std::ptrdiff_t>(it->first),
                 lines_.begin() + static_cast<std::ptrdiff_t>(it->last) + 1);
    changed = true;
  }
  return changed;
}

EffectiveNfsConf::EffectiveNfsConf(const HostPaths& paths,
                                   const std::optional<std::string>& nfsConf) {
  if (nfsConf) load(paths, HostPaths::kNfsConf, *nfsConf, Reach{{}, {}, {HostPaths::kNfsConf}, {}});
  for (const std::string& host : confDFiles(paths)) {
    if (auto text = readAsNfsUtils(paths, host, host, false))
      load(paths, host, *text, Reach{{}, {}, {host}, {}});
  }
}

void EffectiveNfsConf::load(const HostPaths& paths, const std::string& hostPath,
                            const std::string& text, const Reach& reach) {
  NfsConf file(text);
  if (const auto cut = file.cutAtNul()) {
    warnings_.push_back(hostPath + ":" + std::to_string(cut->line) +
                        ": a NUL byte; nfs-utils reads nothing from there on (" +
                        std::to_string(cut->ignoredBytes) +
                        " bytes), and neither does nfsrdma-server, which keeps them as they are");
  }
  // An included file starts in the includer's section (conf_parse_line).
  for (const auto& a : file.assignments(reach.section, reach.arg)) {
    if (iequals(a.key, "include")) {
      include(paths, hostPath, a, reach);
      continue;
    }
    if (a.value.empty()) continue;  // conf_set ignores empty values
    const std::string from = reach.lines.empty() ? "" : reach.lines.back();
    bindings_.push_back({lower(a.section), lower(a.key), {a.value, hostPath, a.line, from, a.arg}});
  }
}

void EffectiveNfsConf::include(const HostPaths& paths, const std::string& hostPath,
                               const NfsConf::Assignment& a, const Reach& reach) {
  std::string target = a.value;
  const bool optional = !target.empty() && target.front() == '-';
  if (optional) target.erase(0, 1);
  // relative_path(): the includer's directory as its name says, links not followed.
  if (target.empty() || target.front() != '/')
    target = (fs::path(hostPath).parent_path() / target).string();
  const std::string where = hostPath + ":" + std::to_string(a.line);
  const std::string named = where + ": include " + target;
  std::string chain;
  for (const auto& l : reach.lines) chain += l + " -> ";
  chain += where;
  const fs::path normal = fs::path(target).lexically_normal();
  if (std::any_of(reach.files.begin(), reach.files.end(),
                  [&](const std::string& f) { return fs::path(f).lexically_normal() == normal; })) {
    refusals_.push_back(named + " leads back to a file on its way (" + chain +
                        "): nfs-utils follows includes without a limit, so it would recurse "
                        "until it crashes (nfsconf dies of a segmentation fault); expected "
                        "includes without a loop");
    return;
  }
  if (reach.lines.size() >= kMaxIncludeDepth) {
    refusals_.push_back(named + " is include number " + std::to_string(reach.lines.size() + 1) +
                        " of a chain (" + chain + "); nfsrdma-server follows " +
                        std::to_string(kMaxIncludeDepth) +
                        " and nfs-utils any number, so what nfs-utils reads there is not known; "
                        "expected a chain of at most " +
                        std::to_string(kMaxIncludeDepth) + " includes");
    return;
  }
  const std::optional<std::string> text = readAsNfsUtils(paths, target, named, optional);
  if (!text) return;
  Reach next{a.section, a.arg, reach.files, reach.lines};
  next.files.push_back(target);
  next.lines.push_back(where);
  load(paths, target, *text, next);
}

std::optional<std::string> EffectiveNfsConf::readAsNfsUtils(const HostPaths& paths,
                                                            const std::string& hostPath,
                                                            const std::string& named,
                                                            bool optional) {
  // O_PATH after links: a FIFO is looked at, never opened.
  const auto st = orAbsent(hostPath, [&] { return hostPathStatus(paths, hostPath); });
  const fs::file_type type = st ? st->type() : fs::file_type::not_found;
  if (const char* why = unknowableRead(type)) {
    refusals_.push_back(named + " is a " + fileKindName(type) + "; expected a regular file (" +
                        why + ")");
    return std::nullopt;
  }
  std::optional<std::string> text;
  if (type == fs::file_type::regular) text = readHostFileOrAbsent(paths, hostPath);
  if (!text && !optional) {
    const bool plain = type == fs::file_type::not_found || type == fs::file_type::regular;
    warnings_.push_back(named + " cannot be read" +
                        (plain ? std::string() : std::string(" (a ") + fileKindName(type) + ")") +
                        "; nfs-utils skips it too");
  }
  return text;
}

std::optional<NfsConfOrigin> EffectiveNfsConf::get(std::string_view section,
                                                   std::string_view key) const {
  for (auto it = bindings_.rbegin(); it != bindings_.rend(); ++it) {
    if (it->section == lower(section) && it->key == lower(key)) return it->origin;
  }
  return std::nullopt;
}

}  // namespace nfsrdma::server
