// ExportsFile: an exports(5) file as data. The knfsd backend renders its own
// /etc/exports.d/nfsrdma.exports from the YAML config (plan diffs that text
// with what is on disk; doctor reads the kernel's live table). The parser is
// the tests' check that what we render reads back as written; it accepts the
// common exportfs forms (comments, backslash continuations, quoted paths,
// \040 escapes, a leading "-opts" default list, bare hosts) and rejects
// unknown options by position, but it is not exportfs: a '#' inside an
// unquoted path ends it, and a continuation right after a bare host or a
// "-opts" list is not joined.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace nfsrdma::server {

// A parse or validation error at "source:line:column: message".
class ExportsError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ExportClient {
  std::string host;  // "*", "10.0.0.0/24", "@netgroup", "host.example"; "" = world, no host given
  std::vector<std::string> options;  // in file order, e.g. {"rw", "sync", "fsid=0"}
  bool operator==(const ExportClient&) const = default;
};

struct ExportEntry {
  std::string path;                         // unescaped
  std::vector<std::string> defaultOptions;  // from a "-opts" token, applied to later clients
  std::vector<ExportClient> clients;
  int line = 0;  // where the entry starts in the parsed text (0 when built in code)
  bool operator==(const ExportEntry& o) const {
    return path == o.path && defaultOptions == o.defaultOptions && clients == o.clients;
  }
};

class ExportsFile {
 public:
  // Parses exports(5) text; `source` names it in errors. Throws ExportsError
  // at the offending line and column: an unterminated quote or parenthesis,
  // a relative path, an empty or unknown option, a bad option value.
  static ExportsFile parse(std::string_view text, const std::string& source);

  // One line per entry: `path host(opt,...) ...`, paths with blanks quoted.
  // parse(render()) gives back the same entries.
  std::string render() const;

  std::vector<ExportEntry> entries;
};

// True when `option` ("rw", "fsid=0") is an exports(5) option knfsd knows.
bool isKnownExportOption(std::string_view option);

// The rules below are pure (no I/O): the config reader and the parser call
// them, and each returns "" when the value passes, else why it does not, as a
// phrase that follows the value in a message.

// A client as exports(5) "Machine Name Formats" describes it: '*'; a host
// name of RFC 1123 labels (letters, digits, '-', 1..63 each, at most 253 in
// all), plus '_' (exportfs hands names to the resolver, which takes it), that
// may hold the wildcards '*', '?' and [classes]; @netgroup; an IPv4 address
// (what inet_pton takes: exportfs's host_pton refuses short forms like
// "10.1"), alone or with /0..32 or a contiguous dotted netmask; an
// IPv6 address without brackets (exportfs would read them as a character
// class), alone or with /0..128.
std::string checkExportClient(std::string_view host);

// True when a client that passes checkExportClient() admits every host: '*',
// a network of prefix /0 or netmask 0.0.0.0 (0.0.0.0/0, ::/0, 10.0.0.0/0),
// and a wildcard that names no domain ('*.*', '?*': only '*', '?' and '.'),
// which matches every host name with a dot, i.e. every host in DNS.
bool admitsEveryHost(std::string_view host);

// fsid= as exportfs reads it (nfs-utils support/nfs/exports.c, parseopts):
// "root" is 0; a number as strtoul(value, .., 0) reads it (0x hex, a leading
// 0 octal, else decimal), at most 4294967295 (exportfs keeps 32 bits); or a
// UUID of 32 hex digits ('-' allowed between them). Returns what identifies
// the filesystem to knfsd ("n:<number>" or "u:<lowercase digits>"), so
// "1" and "01", or "0" and "root", compare equal; "" and `why` otherwise.
std::string fsidIdentity(std::string_view value, std::string& why);

// An export path exportfs takes as it is: absolute, no control bytes (NUL
// included), no ".." component, at most 1024 bytes (nfs-utils' e_path is
// NFS_MAXPATHLEN + 1).
std::string checkExportPath(std::string_view path);

// An IPv4 or IPv6 address as inet_pton reads it (no names, no brackets).
bool isNumericAddress(std::string_view address);

// `input` as messages show it: control bytes as \xNN, and beyond 80 bytes
// only the first 80 and the length, so a huge value is not echoed whole.
std::string shownInput(std::string_view input);

// The value of a "key=value" option in a client's options, or "".
std::string exportOptionValue(const ExportClient& client, std::string_view key);
bool hasExportOption(const ExportClient& client, std::string_view option);

}  // namespace nfsrdma::server
