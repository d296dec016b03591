// ExportsFile: exports(5) parser and renderer, written from the man page's
// grammar: entry = path [ -defaults ] { host[(options)] }, '#' comments,
// '\' continues a line, '"' quotes a path, "\ooo" is an octal escape.
#include "server/ExportsFile.h"

#include <algorithm>
#include <array>
#include <cctype>

namespace nfsrdma::server {
namespace {

// Flag options and options that take a value, as exports(5) lists them.
constexpr std::array<std::string_view, 31> kFlagOptions = {"rw",
                                                           "ro",
                                                           "sync",
                                                           "async",
                                                           "wdelay",
                                                           "no_wdelay",
                                                           "hide",
                                                           "nohide",
                                                           "crossmnt",
                                                           "nocrossmnt",
                                                           "subtree_check",
                                                           "no_subtree_check",
                                                           "secure",
                                                           "insecure",
                                                           "secure_locks",
                                                           "insecure_locks",
                                                           "auth_nlm",
                                                           "no_auth_nlm",
                                                           "root_squash",
                                                           "no_root_squash",
                                                           "all_squash",
                                                           "no_all_squash",
                                                           "mp",
                                                           "mountpoint",
                                                           "pnfs",
                                                           "no_pnfs",
                                                           "security_label",
                                                           "no_acl",
                                                           "acl",
                                                           "nordirplus",
                                                           "rdirplus"};
constexpr std::array<std::string_view, 9> kValueOptions = {
    "fsid", "anonuid", "anongid", "sec", "refer", "replicas", "mp", "mountpoint", "xprtsec"};

bool isAllDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c));
  });
}

// Empty when `option` is acceptable, else what was expected.
std::string checkOption(std::string_view option) {
  if (option.empty()) return "empty option (two commas in a row?)";
  auto eq = option.find('=');
  if (eq == std::string_view::npos) {
    if (std::find(kFlagOptions.begin(), kFlagOptions.end(), option) != kFlagOptions.end())
      return "";
    return "unknown export option '" + std::string(option) +
           "' (expected e.g. rw, ro, sync, async, root_squash, no_root_squash, all_squash, "
           "insecure, "
           "crossmnt, no_subtree_check, fsid=N, sec=sys)";
  }
  std::string_view key = option.substr(0, eq), value = option.substr(eq + 1);
  if (std::find(kValueOptions.begin(), kValueOptions.end(), key) == kValueOptions.end()) {
    return "unknown export option '" + std::string(key) +
           "=' (expected fsid=, anonuid=, anongid=, sec=, refer=, "
           "replicas=, mp=, mountpoint=, xprtsec=)";
  }
  if (value.empty()) return "option '" + std::string(key) + "=' needs a value";
  if ((key == "anonuid" || key == "anongid") && !isAllDigits(value)) {
    return "option '" + std::string(option) + "' needs a number";
  }
  if (key == "fsid" && !isAllDigits(value) && value != "root") {
    // fsid may also be a UUID: hex digits and dashes.
    bool uuid = std::all_of(value.begin(), value.end(), [](char c) {
      return std::isxdigit(static_cast<unsigned char>(c)) || c == '-';
    });
    if (!uuid) return "option '" + std::string(option) + "' needs a number, 'root' or a UUID";
  }
  if (key == "sec") {
    std::size_t start = 0;
    while (start <= value.size()) {
      auto end = value.find(':', start);
      std::string_view flavor =
          value.substr(start, end == std::string_view::npos ? value.npos : end - start);
      if (flavor != "sys" && flavor != "krb5" && flavor != "krb5i" && flavor != "krb5p" &&
          flavor != "none") {
        return "option '" + std::string(option) + "': unknown flavor '" + std::string(flavor) +
               "' (expected sys, krb5, krb5i, krb5p or none, ':'-separated)";
      }
      if (end == std::string_view::npos) break;
      start = end + 1;
    }
  }
  return "";
}

// Character cursor over the text with line/column tracking.
class Cursor {
 public:
  Cursor(std::string_view text, const std::string& source) : text_(text), source_(source) {}
  bool done() const { return pos_ >= text_.size(); }
  char peek(std::size_t ahead = 0) const {
    return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0';
  }
  char take() {
    char c = text_[pos_++];
    if (c == '\n') {
      ++line_;
      col_ = 1;
    } else {
      ++col_;
    }
    return c;
  }
  int line() const { return line_; }
  int col() const { return col_; }
  [[noreturn]] void fail(int line, int col, const std::string& msg) const {
    throw ExportsError(source_ + ":" + std::to_string(line) + ":" + std::to_string(col) + ": " +
                       msg);
  }
  // Skips blanks and line continuations, not newlines. A '#' comment runs to
  // the end of the line.
  void skipBlanks() {
    while (!done()) {
      char c = peek();
      if (c == ' ' || c == '\t' || c == '\r') {
        take();
      } else if (c == '\\' && peek(1) == '\n') {
        take();
        take();
      } else if (c == '#') {
        while (!done() && peek() != '\n') take();
      } else {
        break;
      }
    }
  }

 private:
  std::string_view text_;
  const std::string& source_;
  std::size_t pos_ = 0;
  int line_ = 1;
  int col_ = 1;
};

bool isOctal(char c) {
  return c >= '0' && c <= '7';
}

std::string readPath(Cursor& cur) {
  std::string out;
  const int line = cur.line(), col = cur.col();
  bool quoted = cur.peek() == '"';
  if (quoted) cur.take();
  while (!cur.done()) {
    char c = cur.peek();
    if (quoted && c == '"') {
      cur.take();
      quoted = false;
      // A quoted part may be followed by more path characters.
      continue;
    }
    if (!quoted && (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '#')) break;
    if (c == '\n') break;
    if (c == '\\' && isOctal(cur.peek(1)) && isOctal(cur.peek(2)) && isOctal(cur.peek(3))) {
      cur.take();
      int v = (cur.take() - '0') * 64;
      v += (cur.take() - '0') * 8;
      v += cur.take() - '0';
      out.push_back(static_cast<char>(v));
      continue;
    }
    if (c == '\\' && cur.peek(1) == '\n') break;
    out.push_back(cur.take());
  }
  if (quoted) cur.fail(line, col, "unterminated '\"' in export path");
  if (out.empty() || out.front() != '/') {
    cur.fail(line, col, "export path '" + out + "' must be absolute (start with '/')");
  }
  return out;
}

std::vector<std::string> readOptionList(Cursor& cur, char terminator, int line, int col) {
  std::vector<std::string> opts;
  std::string current;
  int optLine = cur.line(), optCol = cur.col();
  auto finish = [&] {
    std::string why = checkOption(current);
    if (!why.empty()) cur.fail(optLine, optCol, why);
    opts.push_back(current);
    current.clear();
  };
  while (true) {
    if (cur.done() || cur.peek() == '\n') {
      if (terminator == ')') cur.fail(line, col, "unterminated '(' in client options");
      finish();
      return opts;
    }
    char c = cur.peek();
    if ((terminator == ')' && c == ')') ||
        (terminator != ')' && (c == ' ' || c == '\t' || c == '\r'))) {
      if (c == ')') cur.take();
      finish();
      return opts;
    }
    if (c == ',') {
      cur.take();
      finish();
      optLine = cur.line();
      optCol = cur.col();
      continue;
    }
    if (c == ' ' || c == '\t' || c == '(')
      cur.fail(cur.line(), cur.col(), std::string("unexpected '") + c + "' in export options");
    current.push_back(cur.take());
  }
}

std::string escapePath(const std::string& path) {
  bool needsQuotes = std::any_of(path.begin(), path.end(),
                                 [](char c) { return c == ' ' || c == '\t' || c == '#'; });
  std::string out;
  for (char c : path) {
    auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\' || u < 0x20 || u == 0x7f) {
      const char oct[] = {'\\', static_cast<char>('0' + ((u >> 6) & 7)),
                          static_cast<char>('0' + ((u >> 3) & 7)), static_cast<char>('0' + (u & 7)),
                          '\0'};
      out += oct;
    } else {
      out.push_back(c);
    }
  }
  return needsQuotes ? "\"" + out + "\"" : out;
}

std::string joinOptions(const std::vector<std::string>& opts) {
  std::string out;
  for (const auto& o : opts) out += (out.empty() ? "" : ",") + o;
  return out;
}

}  // namespace

bool isKnownExportOption(std::string_view option) {
  return checkOption(option).empty();
}

std::string exportOptionValue(const ExportClient& client, std::string_view key) {
  for (const auto& o : client.options) {
    if (o.size() > key.size() && o.compare(0, key.size(), key) == 0 && o[key.size()] == '=') {
      return o.substr(key.size() + 1);
    }
  }
  return "";
}

bool hasExportOption(const ExportClient& client, std::string_view option) {
  return std::find(client.options.begin(), client.options.end(), option) != client.options.end();
}

ExportsFile ExportsFile::parse(std::string_view text, const std::string& source) {
  ExportsFile file;
  Cursor cur(text, source);
  while (!cur.done()) {
    cur.skipBlanks();
    if (cur.done()) break;
    if (cur.peek() == '\n') {
      cur.take();
      continue;
    }
    ExportEntry entry;
    entry.line = cur.line();
    entry.path = readPath(cur);
    while (true) {
      cur.skipBlanks();
      if (cur.done() || cur.peek() == '\n') break;
      const int line = cur.line(), col = cur.col();
      if (cur.peek() == '-') {
        if (!entry.clients.empty())
          cur.fail(line, col, "a '-options' default list must come before the first client");
        cur.take();
        entry.defaultOptions = readOptionList(cur, ' ', line, col);
        continue;
      }
      ExportClient client;
      while (!cur.done()) {
        char c = cur.peek();
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '(' || c == '#') break;
        if (c == ')' || c == ',')
          cur.fail(cur.line(), cur.col(), std::string("unexpected '") + c + "' in client name");
        client.host.push_back(cur.take());
      }
      if (cur.peek() == '(') {
        const int pl = cur.line(), pc = cur.col();
        cur.take();
        client.options = readOptionList(cur, ')', pl, pc);
        char after = cur.peek();
        if (!(cur.done() || after == ' ' || after == '\t' || after == '\n' || after == '\r' ||
              after == '#' || (after == '\\' && cur.peek(1) == '\n'))) {
          cur.fail(cur.line(), cur.col(), "expected a blank after ')' before the next client");
        }
      }
      entry.clients.push_back(std::move(client));
    }
    file.entries.push_back(std::move(entry));
  }
  return file;
}

std::string ExportsFile::render() const {
  std::string out;
  for (const auto& e : entries) {
    out += escapePath(e.path);
    if (!e.defaultOptions.empty()) out += " -" + joinOptions(e.defaultOptions);
    for (const auto& c : e.clients) {
      out += " " + c.host;
      if (!c.options.empty()) out += "(" + joinOptions(c.options) + ")";
    }
    out += "\n";
  }
  return out;
}

}  // namespace nfsrdma::server
