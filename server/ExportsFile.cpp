// ExportsFile: exports(5) parser and renderer, written from the man page's
// grammar: entry = path [ -defaults ] { host[(options)] }, '#' comments,
// '\' continues a line, '"' quotes a path, "\ooo" is an octal escape.
#include "server/ExportsFile.h"

#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>
#include <cstdio>

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
  if (key == "fsid") {
    std::string why;
    if (fsidIdentity(value, why).empty()) return "option '" + std::string(option) + "' " + why;
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
      // No host ("/srv (rw)") is the world, as exportfs reads it.
      if (const std::string why = client.host.empty() ? "" : checkExportClient(client.host);
          !why.empty())
        cur.fail(line, col, "client '" + shownInput(client.host) + "': " + why);
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

// ---- Value rules (pure) ----
namespace {

constexpr std::string_view kHostRule =
    "host names are dot-separated labels of 1..63 letters, digits, '-' and '_' (RFC 1123, plus "
    "the '_' of /etc/hosts and Active Directory names), with the wildcards '*', '?' and "
    "[classes] of exports(5)";

bool isIpv4(std::string_view s) {
  in_addr a{};
  return ::inet_pton(AF_INET, std::string(s).c_str(), &a) == 1;
}

bool isIpv6(std::string_view s) {
  in6_addr a{};
  return ::inet_pton(AF_INET6, std::string(s).c_str(), &a) == 1;
}

std::string quotedInput(std::string_view s) {
  return "'" + shownInput(s) + "'";
}

// A prefix length after '/': digits only (exportfs's strtoul would also take
// "+8" or " 8"), at most `max`.
std::string checkPrefix(std::string_view prefix, unsigned max, const char* family) {
  if (prefix.empty()) return "the prefix after '/' is empty";
  if (!isAllDigits(prefix) || prefix.size() > 3)
    return "prefix /" + shownInput(prefix) + " is not a number 0.." + std::to_string(max);
  if (std::stoul(std::string(prefix)) > max) {
    return "prefix /" + std::string(prefix) + " is out of range 0.." + std::to_string(max) +
           " for an " + family + " network";
  }
  return "";
}

// exportfs takes any dotted mask inet_pton reads; a non-contiguous one
// (255.0.255.0) matches scattered addresses and is always a typo.
std::string checkNetmask(std::string_view mask) {
  in_addr a{};
  if (::inet_pton(AF_INET, std::string(mask).c_str(), &a) != 1)
    return "netmask " + quotedInput(mask) + " is not a dotted IPv4 netmask";
  const std::uint32_t m = ntohl(a.s_addr);
  const std::uint32_t hostBits = ~m;
  if ((hostBits & (hostBits + 1)) != 0)
    return "netmask " + std::string(mask) + " is not contiguous (write a prefix length, e.g. /24)";
  return "";
}

std::string checkNetwork(std::string_view address, std::string_view mask) {
  if (address.find(':') != std::string_view::npos) {
    if (!isIpv6(address)) return quotedInput(address) + " is not an IPv6 address";
    // exports(5): "IPv6 addresses must use a contiguous mask length".
    return checkPrefix(mask, 128, "IPv6");
  }
  if (!isIpv4(address))
    return quotedInput(address) + " is not an IPv4 address (four numbers 0..255)";
  if (mask.find('.') != std::string_view::npos) return checkNetmask(mask);
  return checkPrefix(mask, 32, "IPv4");
}

// A byte a label may hold outside a [class]: RFC 1123's letters, digits and
// '-', the wildcards '*' and '?', and '_', which RFC 1123 lacks but the
// resolver exportfs hands names to takes (/etc/hosts and AD names have it).
bool isLabelChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '*' ||
         c == '?';
}

// One label of a host name or wildcard pattern; `n` counts from 1.
std::string checkLabel(std::string_view label, std::size_t n) {
  if (label.empty())
    return "label " + std::to_string(n) + " is empty (" + std::string(kHostRule) + ")";
  if (label.size() > 63)
    return "label " + std::to_string(n) + " is longer than 63 bytes (RFC 1123)";
  if (label.front() == '-' || label.back() == '-')
    return "label " + quotedInput(label) + " starts or ends with '-' (RFC 1123)";
  for (std::size_t i = 0; i < label.size(); ++i) {
    const char c = label[i];
    if (isLabelChar(c)) continue;
    if (c == '[') {
      const auto close = label.find(']', i + 1);
      if (close == std::string_view::npos || close == i + 1)
        return "'[' in label " + quotedInput(label) + " opens no [class] that ']' closes";
      i = close;
      continue;
    }
    return "'" + shownInput(label.substr(i, 1)) + "' is not allowed in a host name (" +
           std::string(kHostRule) + ")";
  }
  return "";
}

std::string checkHostPattern(std::string_view host) {
  // A leading '-' would make exportfs read the entry as a default options list.
  if (host.front() == '-') return "a leading '-' would make exportfs read it as an options list";
  if (host.size() > 253) return "the name is longer than 253 bytes (RFC 1123)";
  std::size_t start = 0;
  for (std::size_t n = 1; n <= host.size() + 1; ++n) {  // at most one label per byte, and one more
    const auto dot = host.find('.', start);
    const auto label = host.substr(start, dot == std::string_view::npos ? host.npos : dot - start);
    if (auto why = checkLabel(label, n); !why.empty()) return why;
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return "";
}

}  // namespace

std::string checkExportClient(std::string_view host) {
  if (host.empty()) return "the host is empty (expected a host, network, wildcard, @netgroup or *)";
  if (host == "*") return "";
  if (host.front() == '@') {
    if (host.size() == 1) return "a netgroup needs a name (@name)";
    const auto name = host.substr(1);
    const bool ok = std::all_of(name.begin(), name.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
    });
    return ok ? "" : "netgroup names are letters, digits, '-', '_' and '.'";
  }
  if (host.front() == '[' && host.find(':') != std::string_view::npos) {
    std::string bare(host);
    bare.erase(
        std::remove_if(bare.begin(), bare.end(), [](char c) { return c == '[' || c == ']'; }),
        bare.end());
    return "IPv6 addresses must not be in square brackets (exports(5) reads brackets as a "
           "wildcard character class); write " +
           shownInput(bare);
  }
  // exportfs classifies a client as client_gettype (support/export/client.c)
  // does, and so the rule named here is the one of that class: "gss/" first,
  // then whichever of a wildcard byte or '/' comes first.
  if (host.substr(0, 4) == "gss/") {
    return "'gss/' names exports(5)'s RPCSEC_GSS pseudo-client, deprecated in favour of the "
           "sec= option (mountd matches no client to it); give the clients' host or network "
           "and their flavors in the sec key (sec: [krb5])";
  }
  const auto special = host.find_first_of("*?[/");
  if (special != std::string_view::npos && host[special] == '/')
    return checkNetwork(host.substr(0, special), host.substr(special + 1));
  if (special != std::string_view::npos) return checkHostPattern(host);  // a wildcard
  if (host.find(':') != std::string_view::npos)
    return isIpv6(host) ? "" : quotedInput(host) + " is not an IPv6 address";
  // All digits and dots: exportfs would look it up as a name and fail.
  if (host.find_first_not_of("0123456789.") == std::string_view::npos)
    return isIpv4(host) ? "" : quotedInput(host) + " is not an IPv4 address (four numbers 0..255)";
  return checkHostPattern(host);
}

bool isNumericAddress(std::string_view address) {
  return isIpv4(address) || isIpv6(address);
}

bool admitsEveryHost(std::string_view host) {
  if (host == "*") return true;
  if (const auto slash = host.find('/'); slash != std::string_view::npos) {
    const auto mask = host.substr(slash + 1);
    return mask == "0" || mask == "00" || mask == "000" || mask == "0.0.0.0";
  }
  return host.find('*') != std::string_view::npos &&
         host.find_first_not_of("*?.") == std::string_view::npos;
}

std::string fsidIdentity(std::string_view v, std::string& why) {
  if (v == "root") return "n:0";
  const bool hex = v.size() > 2 && v[0] == '0' && (v[1] == 'x' || v[1] == 'X');
  const std::string_view digits = hex ? v.substr(2) : v;
  const bool number =
      hex ? std::all_of(digits.begin(), digits.end(),
                        [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); })
          : isAllDigits(v);
  if (number) {
    const bool octal = !hex && v.size() > 1 && v[0] == '0';
    if (octal) {
      const auto bad = v.find_first_not_of("01234567");
      if (bad != std::string_view::npos) {
        why = "is octal to exportfs (a leading 0), and '" + std::string(1, v[bad]) +
              "' is not an octal digit; write " + std::string(v.substr(v.find_first_not_of('0')));
        return "";
      }
    }
    const int base = hex ? 16 : octal ? 8 : 10;
    std::uint64_t value = 0;
    for (char c : digits) {  // bounded by the check below: stops past 32 bits
      value =
          value * static_cast<std::uint64_t>(base) +
          static_cast<std::uint64_t>(std::isdigit(static_cast<unsigned char>(c))
                                         ? c - '0'
                                         : std::tolower(static_cast<unsigned char>(c)) - 'a' + 10);
      if (value > UINT32_MAX) {
        why = "is above 4294967295 (exportfs keeps fsid= in 32 bits)";
        return "";
      }
    }
    return "n:" + std::to_string(value);
  }
  std::string uuid;
  for (char c : v) {
    if (std::isxdigit(static_cast<unsigned char>(c)))
      uuid.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    else if (c != '-')
      uuid = "-";  // not a UUID
  }
  if (uuid.size() == 32) return "u:" + uuid;
  why =
      "must be a number, 'root' or a UUID (a number: decimal, 0x hex or 0-prefixed octal, at "
      "most 4294967295; a UUID: 32 hex digits, '-' allowed between them)";
  return "";
}

std::string checkExportPath(std::string_view path) {
  for (char c : path) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02x", u);
      return std::string("contains a control character (byte ") + hex + ")";
    }
  }
  if (path.empty() || path.front() != '/') return "must be absolute";
  if (path.size() > 1024) return "is longer than exportfs's 1024 bytes (NFS_MAXPATHLEN)";
  for (std::size_t at = path.find(".."); at != std::string_view::npos;
       at = path.find("..", at + 1)) {
    const bool starts = path[at - 1] == '/';  // at >= 1: path starts with '/'
    const bool ends = at + 2 == path.size() || path[at + 2] == '/';
    if (starts && ends) return "has a '..' component; write the directory's own absolute path";
  }
  return "";
}

std::string shownInput(std::string_view input) {
  constexpr std::size_t kShown = 80;
  std::string out;
  for (char c : input.substr(0, kShown)) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", u);
      out += hex;
    } else {
      out.push_back(c);
    }
  }
  if (input.size() > kShown) out += "... (" + std::to_string(input.size()) + " bytes)";
  return out;
}

}  // namespace nfsrdma::server
