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

// The value of a "key=value" option in a client's options, or "".
std::string exportOptionValue(const ExportClient& client, std::string_view key);
bool hasExportOption(const ExportClient& client, std::string_view option);

}  // namespace nfsrdma::server
