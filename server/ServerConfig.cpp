// ServerConfig: strict YAML reading with positions in every message, and the
// tuning profiles. Profiles encode a reason per value so `plan` can say why.
#include "server/ServerConfig.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "server/ExportsFile.h"
#include "server/HostFiles.h"
#include "verbs/UniqueFd.h"

namespace nfsrdma::server {
namespace fs = std::filesystem;
namespace {

class Reader {
 public:
  explicit Reader(std::string source) : source_(std::move(source)) {}

  [[noreturn]] void fail(const YAML::Mark& m, const std::string& msg) const {
    throw ConfigError(source_ + ":" + std::to_string(m.line + 1) + ":" +
                      std::to_string(m.column + 1) + ": " + msg);
  }
  [[noreturn]] void fail(const SourceMark& m, const std::string& msg) const {
    throw ConfigError(source_ + ":" + std::to_string(m.line) + ":" + std::to_string(m.column) +
                      ": " + msg);
  }
  static SourceMark mark(const YAML::Node& n) { return {n.Mark().line + 1, n.Mark().column + 1}; }

  void requireMap(const YAML::Node& n, const std::string& what) const {
    if (!n.IsMap()) fail(n.Mark(), what + " must be a mapping of keys to values");
  }
  void requireKeys(const YAML::Node& n, const std::string& what,
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
        std::string list;
        for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
        fail(it->first.Mark(), "unknown key '" + shownInput(key) + "' in " + what +
                                   " (expected one of: " + list + ")");
      }
    }
  }
  std::string scalar(const YAML::Node& n, const std::string& what) const {
    if (!n.IsScalar()) fail(n.Mark(), what + " must be a single value, not a list or mapping");
    return n.Scalar();
  }
  bool boolean(const YAML::Node& n, const std::string& what) const {
    std::string v = scalar(n, what);
    std::transform(v.begin(), v.end(), v.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (v == "true" || v == "yes" || v == "on") return true;
    if (v == "false" || v == "no" || v == "off") return false;
    fail(n.Mark(), what + ": expected true or false, got '" + shownInput(n.Scalar()) + "'");
  }
  // A whole number in min..max; `rule` names where the range comes from.
  uint64_t number(const YAML::Node& n, const std::string& what, uint64_t min, uint64_t max,
                  const std::string& rule = "") const {
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
  std::string oneOf(const YAML::Node& n, const std::string& what,
                    const std::vector<std::string>& allowed) const {
    const std::string v = scalar(n, what);
    if (std::find(allowed.begin(), allowed.end(), v) != allowed.end()) return v;
    std::string list;
    for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
    fail(n.Mark(),
         what + ": unknown value '" + shownInput(v) + "' (expected one of: " + list + ")");
  }

 private:
  std::string source_;
};

bool validIfName(const std::string& n) {
  return !n.empty() && n.size() < 64 && n != "." && n != ".." &&
         std::all_of(n.begin(), n.end(), [](char c) {
           return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' ||
                  c == ':';
         });
}

// Options that cannot both be given, each pair (a, b).
const std::vector<std::pair<std::string, std::string>> kConflicts = {
    {"rw", "ro"},
    {"sync", "async"},
    {"root_squash", "no_root_squash"},
    {"all_squash", "no_all_squash"},
    {"secure", "insecure"},
    {"subtree_check", "no_subtree_check"},
    {"crossmnt", "nocrossmnt"},
    {"hide", "nohide"},
    {"wdelay", "no_wdelay"}};

// Options that say what a client key says: the key and the value the option
// stands for ("!v": any value but v, and the option sets nothing).
struct KeyedOption {
  const char* option;
  const char* key;
  const char* value;
};
// clang-format off
constexpr KeyedOption kKeyedOptions[] = {
    {"rw", "access", "rw"},                      {"ro", "access", "ro"},
    {"sync", "sync", "true"},                    {"async", "sync", "false"},
    {"root_squash", "squash", "root_squash"},    {"no_root_squash", "squash", "no_root_squash"},
    {"all_squash", "squash", "all_squash"},      {"no_all_squash", "squash", "!all_squash"},
    {"insecure", "insecure", "true"},            {"secure", "insecure", "false"},
    {"subtree_check", "subtree_check", "true"},  {"no_subtree_check", "subtree_check", "false"},
    {"crossmnt", "crossmnt", "true"},            {"nocrossmnt", "crossmnt", "false"}};
// clang-format on

// The squash key's values, as the enum.
Squash squashNamed(const std::string& v) {
  return v == "root_squash" ? Squash::Root : v == "no_root_squash" ? Squash::NoRoot : Squash::All;
}

// The value a written key has, spelled as kKeyedOptions spells it.
std::string writtenValue(const Reader& r, const YAML::Node& n, const std::string& key,
                         const std::string& where) {
  if (key == "access" || key == "squash") return n[key].Scalar();
  return r.boolean(n[key], where + " " + key) ? "true" : "false";
}

// Sets the field of `c` that the key of a keyed option sets.
void setFromOption(ClientSpec& c, const KeyedOption& k) {
  const std::string key = k.key, v = k.value;
  const bool yes = v == "true";
  if (key == "access") c.readOnly = v == "ro";
  if (key == "sync") c.sync = yes;
  if (key == "insecure") c.insecure = yes;
  if (key == "subtree_check") c.subtreeCheck = yes;
  if (key == "crossmnt") c.crossmnt = yes;
  if (key == "squash") c.squash = squashNamed(v);
}

ClientSpec readClientKeys(const Reader& r, const YAML::Node& n, const std::string& where) {
  r.requireKeys(n, where,
                {"host", "access", "sync", "squash", "sec", "fsid", "crossmnt", "subtree_check",
                 "insecure", "options"});
  ClientSpec c;
  c.mark = Reader::mark(n);
  if (n["host"]) {
    c.host = r.scalar(n["host"], where + " host");
    if (const std::string why = checkExportClient(c.host); !why.empty())
      r.fail(n["host"].Mark(), where + " host '" + shownInput(c.host) + "': " + why);
  }
  if (n["access"]) c.readOnly = r.oneOf(n["access"], where + " access", {"rw", "ro"}) == "ro";
  if (n["sync"]) c.sync = r.boolean(n["sync"], where + " sync");
  if (n["squash"]) {
    c.squash = squashNamed(
        r.oneOf(n["squash"], where + " squash", {"root_squash", "no_root_squash", "all_squash"}));
  }
  if (n["sec"]) {
    const auto& s = n["sec"];
    const std::vector<std::string> known = {"sys", "krb5", "krb5i", "krb5p", "none"};
    std::vector<std::string> flavors;
    if (s.IsSequence()) {
      for (const auto& f : s) flavors.push_back(r.oneOf(f, where + " sec", known));
    } else {
      flavors.push_back(r.oneOf(s, where + " sec", known));
    }
    if (flavors.empty()) r.fail(s.Mark(), where + " sec: the list is empty (expected e.g. [sys])");
    c.sec = flavors;
  }
  if (n["fsid"]) {
    std::string f = r.scalar(n["fsid"], where + " fsid");
    std::string why;
    if (fsidIdentity(f, why).empty())
      r.fail(n["fsid"].Mark(), where + " fsid '" + shownInput(f) + "' " + why);
    c.fsid = f;
  }
  if (n["crossmnt"]) c.crossmnt = r.boolean(n["crossmnt"], where + " crossmnt");
  if (n["subtree_check"]) c.subtreeCheck = r.boolean(n["subtree_check"], where + " subtree_check");
  if (n["insecure"]) c.insecure = r.boolean(n["insecure"], where + " insecure");
  return c;
}

// An entry of `options` as an exports(5) option with a value exportfs takes.
void checkOption(const Reader& r, const YAML::Node& item, const std::string& where,
                 const std::string& opt) {
  const std::string what = where + " option '" + shownInput(opt) + "'";
  if (opt.rfind("fsid=", 0) == 0) {
    std::string why;
    if (fsidIdentity(opt.substr(5), why).empty()) r.fail(item.Mark(), what + " " + why);
  }
  if (!isKnownExportOption(opt)) r.fail(item.Mark(), what + " is not an exports(5) option");
  for (const char* key : {"anonuid=", "anongid="}) {
    if (opt.rfind(key, 0) == 0 && (opt.size() - std::strlen(key) > 10 ||
                                   std::stoull(opt.substr(std::strlen(key))) > UINT32_MAX)) {
      r.fail(item.Mark(), what + ": the id must be at most 4294967295");
    }
  }
  // exports(5) applies ro/rw and the squash options to the flavors of
  // the sec= before them: a second list after our sec=sys would leave
  // sys open with the options meant for the other flavors.
  if (opt.rfind("sec=", 0) == 0) {
    std::string flavors = opt.substr(4);
    for (std::size_t at = flavors.find(':'); at != std::string::npos; at = flavors.find(':', at))
      flavors.replace(at, 1, ", ");
    r.fail(item.Mark(), what + ": flavors go in the client's sec key (sec: [" + flavors +
                            "]), which renders the export's one sec= list");
  }
}

// Two entries of `options` that cannot both hold (kConflicts).
void checkOptionPairs(const Reader& r, const YAML::Node& list, const std::string& where) {
  std::map<std::string, SourceMark> seen;
  for (const auto& item : list) {
    const std::string opt = r.scalar(item, where + " option");
    for (const auto& [a, b] : kConflicts) {
      const std::string& other = opt == a ? b : opt == b ? a : opt;
      if (other == opt || !seen.count(other)) continue;
      r.fail(item.Mark(), where + " option '" + opt + "' conflicts with option '" + other +
                              "' (line " + std::to_string(seen[other].line) +
                              "); keep one of them");
    }
    seen.emplace(opt, Reader::mark(item));
  }
}

// One entry of `options`. An option that says what a client key says
// overrides the key's default when the key is not written (exportfs reads
// the last of two, and ours come after the keys' options), so
// [no_root_squash] without a squash key means no_root_squash; against a
// written key it must agree or it is an error naming both.
void readOption(const Reader& r, const YAML::Node& n, const YAML::Node& item,
                const std::string& where, ClientSpec& c) {
  const std::string opt = r.scalar(item, where + " option");
  checkOption(r, item, where, opt);
  const auto* k = std::find_if(std::begin(kKeyedOptions), std::end(kKeyedOptions),
                               [&](const KeyedOption& x) { return opt == x.option; });
  if (k == std::end(kKeyedOptions)) {
    c.extraOptions.push_back(opt);
    return;
  }
  const std::string value = k->value;
  const bool negated = value.front() == '!';
  if (n[k->key]) {
    const std::string written = writtenValue(r, n, k->key, where);
    if (negated ? written == value.substr(1) : written != value) {
      r.fail(item.Mark(), where + " option '" + opt + "' conflicts with " + k->key + ": " +
                              written + " (line " + std::to_string(Reader::mark(n[k->key]).line) +
                              "); keep one of them");
    }
  }
  if (negated)
    c.extraOptions.push_back(opt);  // the default of squash already says it
  else
    setFromOption(c, *k);
}

ClientSpec readClient(const Reader& r, const YAML::Node& n, const std::string& where) {
  ClientSpec c = readClientKeys(r, n, where);
  if (n["options"]) {
    const auto& o = n["options"];
    if (!o.IsSequence())
      r.fail(o.Mark(), where + " options must be a list of exports(5) options, e.g. [no_wdelay]");
    checkOptionPairs(r, o, where);
    for (const auto& item : o) readOption(r, n, item, where, c);
  }
  return c;
}

}  // namespace

std::vector<std::string> ClientSpec::exportOptions() const {
  std::vector<std::string> o;
  o.push_back(readOnly ? "ro" : "rw");
  o.push_back(sync ? "sync" : "async");
  switch (squash) {
    case Squash::Root:
      o.push_back("root_squash");
      break;
    case Squash::NoRoot:
      o.push_back("no_root_squash");
      break;
    case Squash::All:
      o.push_back("all_squash");
      break;
  }
  if (insecure) o.push_back("insecure");
  o.push_back(subtreeCheck ? "subtree_check" : "no_subtree_check");
  if (crossmnt) o.push_back("crossmnt");
  if (fsid) o.push_back("fsid=" + *fsid);
  std::string flavors;
  for (const auto& f : sec) flavors += (flavors.empty() ? "" : ":") + f;
  o.push_back("sec=" + flavors);
  for (const auto& e : extraOptions) {
    if (std::find(o.begin(), o.end(), e) == o.end()) o.push_back(e);
  }
  return o;
}

Squash ClientSpec::effectiveSquash() const {
  const auto o = exportOptions();
  const auto has = [&](const char* x) { return std::find(o.begin(), o.end(), x) != o.end(); };
  if (has("all_squash")) return Squash::All;
  return has("no_root_squash") ? Squash::NoRoot : Squash::Root;
}

std::optional<std::uint32_t> ClientSpec::anonymousId(const std::string& key) const {
  std::optional<std::uint32_t> id;
  for (const auto& e : extraOptions) {
    if (e.rfind(key + "=", 0) != 0) continue;
    // Digits only and in range (readClient); the last one given counts, as in exportfs.
    id = static_cast<std::uint32_t>(std::stoull(e.substr(key.size() + 1)));
  }
  return id;
}

std::vector<TuningSetting> profileTuning(const std::string& profile) {
  if (profile == "default") return {};
  if (profile == "throughput") {
    return {{"max_requests", 128, "more RPC credits per connection keep more large I/Os in flight"},
            {"max_req_size", 4096,
             "large I/O moves in RDMA chunks, so a bigger inline buffer buys nothing"},
            {"max_outbound_read_requests", 32,
             "more concurrent RDMA Reads pull client WRITE data faster"}};
  }
  if (profile == "latency") {
    return {{"max_requests", 64, "enough credits for queue depth without deep server queues"},
            {"max_req_size", 16384,
             "small requests fit inline and skip chunk registration round trips"},
            {"max_outbound_read_requests", 16,
             "the kernel default; small I/O rarely needs RDMA Reads"}};
  }
  throw std::invalid_argument("unknown profile '" + profile +
                              "' (expected default, throughput or latency)");
}

unsigned profileThreads(const std::string& profile) {
  if (profile == "throughput") return 64;
  if (profile == "latency") return 16;
  return 8;
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
void checkQuoteClosed(const Reader& r, const std::string& text, const YAML::Mark& m) {
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
void checkQuotesClosed(const Reader& r, const std::string& text, const YAML::Node& root) {
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

// The one YAML document in `text`: Load() would silently drop every
// document after the first.
YAML::Node loadOneDocument(const Reader& r, const std::string& text) {
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

// An export's path as exportfs and the kernel take it, in one spelling.
std::string readExportPath(const Reader& r, const YAML::Node& e, const std::string& where) {
  if (!e["path"]) r.fail(e.Mark(), where + ": missing 'path'");
  std::string path = r.scalar(e["path"], where + " path");
  if (const std::string why = checkExportPath(path); !why.empty())
    r.fail(e["path"].Mark(), where + " path '" + shownInput(path) + "' " + why);
  // One directory, one spelling: "/srv//a/" and "/srv/./a" are "/srv/a".
  path = fs::path(path).lexically_normal().string();
  if (path.size() > 1 && path.back() == '/') path.pop_back();
  if (path.find_first_of("\"\\") != std::string::npos) {
    r.fail(e["path"].Mark(),
           where + " path '" + shownInput(path) + "' contains a quote, backslash or newline");
  }
  return path;
}

std::string readPseudo(const Reader& r, const YAML::Node& p, const std::string& where) {
  std::string pseudo = r.scalar(p, where + " pseudo");
  if (pseudo.size() < 2 || pseudo.front() != '/' || pseudo.back() == '/') {
    r.fail(p.Mark(), where + " pseudo '" + shownInput(pseudo) +
                         "' must be an absolute path below '/', e.g. /export");
  }
  if (const std::string why = checkExportPath(pseudo); !why.empty())
    r.fail(p.Mark(), where + " pseudo '" + shownInput(pseudo) + "' " + why);
  return pseudo;
}

// What the exports share: no path, pseudo path or fsid twice.
struct ExportsSeen {
  std::map<std::string, SourceMark> paths, pseudos;
  struct FsidUse {
    std::size_t exportIndex;
    SourceMark mark;
    std::string spelling;
  };
  std::map<std::string, FsidUse> fsids;  // by fsidIdentity(): "01" is "1"
};

// The fsid a client gives its export (the fsid key, or an fsid= option,
// which exportfs reads after it), against the other exports' fsids.
void checkFsid(const Reader& r, const ClientSpec& c, std::size_t exportIndex,
               const SourceMark& exportMark, const std::string& where, ExportsSeen& seen) {
  std::optional<std::string> fsid = c.fsid;
  for (const std::string& o : c.extraOptions) {
    if (o.rfind("fsid=", 0) == 0) fsid = o.substr(5);
  }
  if (!fsid) return;
  std::string why;
  const std::string id = fsidIdentity(*fsid, why);  // valid: readClient checked it
  const auto it = seen.fsids.find(id);
  if (it != seen.fsids.end() && it->second.exportIndex != exportIndex) {
    const std::string& first = it->second.spelling;
    r.fail(c.mark,
           where + ": duplicate fsid=" + shownInput(*fsid) +
               " (already used by the export at line " + std::to_string(it->second.mark.line) +
               (first == *fsid ? ""
                               : " as fsid=" + shownInput(first) + ", the same fsid to exportfs") +
               "); each export needs its own fsid");
  }
  seen.fsids.insert({id, {exportIndex, exportMark, *fsid}});
}

ExportSpec readExport(const Reader& r, const YAML::Node& e, std::size_t i, ExportsSeen& seen) {
  const std::string where = "exports[" + std::to_string(i) + "]";
  r.requireKeys(e, where, {"path", "pseudo", "clients"});
  ExportSpec spec;
  spec.mark = Reader::mark(e);
  spec.path = readExportPath(r, e, where);
  if (seen.paths.count(spec.path)) {
    r.fail(e["path"].Mark(), where + " path '" + shownInput(spec.path) +
                                 "' is exported twice (first at line " +
                                 std::to_string(seen.paths[spec.path].line) + ")");
  }
  seen.paths[spec.path] = Reader::mark(e["path"]);
  spec.pseudo = e["pseudo"] ? readPseudo(r, e["pseudo"], where) : spec.path;
  if (seen.pseudos.count(spec.pseudo))
    r.fail(Reader::mark(e),
           where + ": pseudo path '" + shownInput(spec.pseudo) + "' is used twice");
  seen.pseudos[spec.pseudo] = Reader::mark(e);
  if (!e["clients"])
    r.fail(e.Mark(), where + ": missing 'clients' (who may mount it, e.g. - host: 10.0.0.0/24)");
  const YAML::Node clients = e["clients"];
  if (!clients.IsSequence() || clients.size() == 0) {
    r.fail(clients.Mark(), where + " clients must be a non-empty list");
  }
  std::set<std::string> hosts;
  for (std::size_t j = 0; j < clients.size(); ++j) {
    ClientSpec c = readClient(r, clients[j], where + ".clients[" + std::to_string(j) + "]");
    if (!hosts.insert(c.host).second)
      r.fail(c.mark, where + ": client '" + shownInput(c.host) + "' is listed twice");
    checkFsid(r, c, i, spec.mark, where, seen);
    spec.clients.push_back(std::move(c));
  }
  return spec;
}

void readExports(const Reader& r, const YAML::Node& root, ServerConfig& cfg) {
  if (!root["exports"]) r.fail(root.Mark(), "missing 'exports' (a list of directories to export)");
  const YAML::Node exports = root["exports"];
  if (!exports.IsSequence() || exports.size() == 0) {
    r.fail(exports.Mark(), "'exports' must be a non-empty list of {path, clients}");
  }
  ExportsSeen seen;
  for (std::size_t i = 0; i < exports.size(); ++i)
    cfg.exports.push_back(readExport(r, exports[i], i, seen));
}

// Where TCP is turned off, if it is.
std::optional<YAML::Mark> readTransports(const Reader& r, const YAML::Node& t, ServerConfig& cfg) {
  std::optional<YAML::Mark> tcpDisabledAt;
  r.requireKeys(t, "transports", {"bind_address", "tcp", "rdma"});
  if (t["bind_address"]) {
    cfg.bindAddress = r.scalar(t["bind_address"], "transports bind_address");
    // serve hands it to nfs-ganesha's Bind_addr, which takes a numeric address.
    if (!isNumericAddress(cfg.bindAddress)) {
      r.fail(t["bind_address"].Mark(),
             "transports bind_address '" + shownInput(cfg.bindAddress) +
                 "' is not a numeric IPv4 or IPv6 address (nfs-ganesha's Bind_addr; e.g. "
                 "0.0.0.0, 127.0.0.1 or ::)");
    }
  }
  for (const char* name : {"tcp", "rdma"}) {
    if (!t[name]) continue;
    TransportSpec& spec = std::string(name) == "tcp" ? cfg.tcp : cfg.rdma;
    const std::string what = std::string("transports ") + name;
    r.requireKeys(t[name], what, {"enabled", "port"});
    if (t[name]["enabled"]) {
      spec.enabled = r.boolean(t[name]["enabled"], what + " enabled");
      if (std::string(name) == "tcp" && !spec.enabled) tcpDisabledAt = t[name]["enabled"].Mark();
    }
    if (t[name]["port"])
      spec.port = static_cast<uint16_t>(r.number(t[name]["port"], what + " port", 1, 65535));
  }
  if (cfg.tcp.enabled && cfg.rdma.enabled && cfg.tcp.port == cfg.rdma.port) {
    r.fail(t.Mark(), "transports: tcp and rdma cannot share port " + std::to_string(cfg.tcp.port));
  }
  if (!cfg.tcp.enabled && !cfg.rdma.enabled)
    r.fail(t.Mark(), "transports: tcp and rdma are both disabled");
  return tcpDisabledAt;
}

void readVersions(const Reader& r, const YAML::Node& v, NfsdSpec& nfsd) {
  if (!v.IsSequence() || v.size() == 0)
    r.fail(v.Mark(), "nfsd versions must be a non-empty list, e.g. [\"4.1\", \"4.2\"]");
  nfsd.v3 = nfsd.v40 = nfsd.v41 = nfsd.v42 = false;
  for (const auto& item : v) {
    std::string s = r.oneOf(item, "nfsd versions", {"3", "4.0", "4.1", "4.2"});
    bool& flag = s == "3" ? nfsd.v3 : s == "4.0" ? nfsd.v40 : s == "4.1" ? nfsd.v41 : nfsd.v42;
    if (flag) r.fail(item.Mark(), "nfsd versions: '" + s + "' is listed twice");
    flag = true;
  }
}

void readNfsd(const Reader& r, const YAML::Node& n, NfsdSpec& nfsd) {
  r.requireKeys(n, "nfsd", {"threads", "versions", "lease_time", "grace_time"});
  // nfsd clamps a larger count to NFSD_MAXSERVS (fs/nfsd/nfsd.h) without a word.
  if (n["threads"]) {
    nfsd.threads = static_cast<unsigned>(r.number(n["threads"], "nfsd threads", 1, kNfsdMaxThreads,
                                                  "nfsd's NFSD_MAXSERVS, fs/nfsd/nfsd.h"));
  }
  if (n["versions"]) readVersions(r, n["versions"], nfsd);
  const char* timeRule = "what the kernel takes, fs/nfsd/nfsctl.c __nfsd4_write_time";
  const KernelLimit t = kNfsv4TimeLimits;
  if (n["lease_time"])
    nfsd.leaseTime =
        static_cast<unsigned>(r.number(n["lease_time"], "nfsd lease_time", t.min, t.max, timeRule));
  if (n["grace_time"])
    nfsd.graceTime =
        static_cast<unsigned>(r.number(n["grace_time"], "nfsd grace_time", t.min, t.max, timeRule));
}

// An RDMA device or interface name: one file name under /sys/class.
void readIfName(const Reader& r, const YAML::Node& n, const std::string& what,
                const std::string& expected, std::string& name, SourceMark& mark) {
  name = r.scalar(n, what);
  mark = Reader::mark(n);
  if (!validIfName(name)) r.fail(n.Mark(), what + " '" + shownInput(name) + "' is not " + expected);
}

void readRdma(const Reader& r, const YAML::Node& d, ServerConfig& cfg) {
  r.requireKeys(d, "rdma", {"device", "netdev"});
  if (d["device"]) {
    readIfName(r, d["device"], "rdma device", "a device name such as mlx5_0 or rxe0",
               cfg.rdmaDevice, cfg.deviceMark);
  }
  if (d["netdev"]) {
    readIfName(r, d["netdev"], "rdma netdev", "an interface name such as eth0", cfg.rdmaNetdev,
               cfg.netdevMark);
  }
}

// The kernel's own limits for each svc_rdma sysctl (kSvcRdmaLimits):
//   max_requests                min_max_requests 4 .. max_max_requests 16384
//   max_req_size                min_max_inline 4096 .. max_max_inline 65536
//   max_outbound_read_requests  min_ord 1 .. max_ord 255
void readTuning(const Reader& r, const YAML::Node& tn, ServerConfig& cfg) {
  r.requireKeys(tn, "tuning", {"max_requests", "max_req_size", "max_outbound_read_requests"});
  for (const KernelLimit& k : kSvcRdmaLimits) {
    if (!tn[k.name]) continue;
    uint64_t v = r.number(tn[k.name], std::string("tuning ") + k.name, k.min, k.max,
                          "the kernel's limits, net/sunrpc/xprtrdma/svc_rdma.c");
    auto it = std::find_if(cfg.tuning.begin(), cfg.tuning.end(),
                           [&](const TuningSetting& s) { return s.name == k.name; });
    TuningSetting s{k.name, v, "set in " + cfg.source};
    if (it != cfg.tuning.end())
      *it = s;
    else
      cfg.tuning.push_back(s);
  }
}

// A config is a small hand-written file (the example is 4 KiB): 1 MiB holds
// thousands of exports, keeps the tree yaml-cpp builds from it (several times
// the text) small, and stops `plan /dev/zero` before memory runs out.
constexpr std::size_t kMaxConfigBytes = 1 << 20;

std::string readConfigText(const std::string& name) {
  // O_NONBLOCK: opening a FIFO would otherwise wait for a writer.
  const UniqueFd fd(::open(name.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  if (!fd) throw ConfigError(name + ": cannot read the config file: " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0)
    throw ConfigError(name + ": cannot read the config file: " + std::strerror(errno));
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
    if (n < 0) throw ConfigError(name + ": cannot read the config file: " + std::strerror(errno));
    if (n == 0) break;
    text.append(buf, static_cast<std::size_t>(n));
  }
  if (text.size() > kMaxConfigBytes) throw tooBig(text.size());
  return text;
}

}  // namespace

ServerConfig parseServerConfig(const std::string& text, const std::string& source) {
  Reader r(source);
  const YAML::Node root = loadOneDocument(r, text);
  if (!root || root.IsNull())
    r.fail(YAML::Mark(), "the file is empty (expected at least an 'exports' list)");
  r.requireKeys(root, "the top level",
                {"profile", "exports", "transports", "nfsd", "rdma", "tuning"});

  ServerConfig cfg;
  cfg.source = source;
  if (root["profile"])
    cfg.profile = r.oneOf(root["profile"], "profile", {"default", "throughput", "latency"});
  cfg.nfsd.threads = profileThreads(cfg.profile);
  cfg.tuning = profileTuning(cfg.profile);
  readExports(r, root, cfg);
  std::optional<YAML::Mark> tcpDisabledAt;
  if (const auto t = root["transports"]; t && !t.IsNull())
    tcpDisabledAt = readTransports(r, t, cfg);
  if (const auto n = root["nfsd"]; n && !n.IsNull()) readNfsd(r, n, cfg.nfsd);

  // rpc.nfsd refuses to start NFSv4 without TCP ("version 4 requires the
  // TCP protocol"): the live apply would work and the next restart of
  // nfs-server would fail.
  if (tcpDisabledAt && cfg.nfsd.anyV4()) {
    r.fail(*tcpDisabledAt,
           "transports tcp enabled: false cannot be combined with NFSv4: rpc.nfsd will not start "
           "NFSv4 without TCP (\"version 4 requires the TCP protocol\"), so nfs-server would fail "
           "at its next start; keep TCP enabled (a firewall can close its port) or list only "
           "nfsd versions [\"3\"]");
  }
  if (const auto d = root["rdma"]; d && !d.IsNull()) readRdma(r, d, cfg);
  if (const auto tn = root["tuning"]; tn && !tn.IsNull()) readTuning(r, tn, cfg);
  return cfg;
}

ServerConfig loadServerConfig(const fs::path& file) {
  return parseServerConfig(readConfigText(file.string()), file.string());
}

namespace {

// What a client gives every host, and why: the --allow-insecure error.
struct WorldGrant {
  std::string what;  // "root on the server"
  std::string why;   // "rw + no_root_squash to '*'"
};

// Root (or root's group) for any host, or nullopt: rw to a spec that admits
// every host (admitsEveryHost: however it is spelled) with root unsquashed
// (the squash key or an option), or with the squashed users mapped to id 0.
std::optional<WorldGrant> grantToTheWorld(const ClientSpec& c) {
  if (!admitsEveryHost(c.host) || c.readOnly) return std::nullopt;
  const std::string to = " to '" + c.host + "'";
  if (c.effectiveSquash() == Squash::NoRoot)
    return WorldGrant{"root on the server", "rw + no_root_squash" + to};
  // With root_squash root still becomes uid 0; with all_squash everyone does.
  if (c.anonymousId("anonuid") == 0u) {
    return WorldGrant{"root on the server",
                      "rw + anonuid=0" + to +
                          ": anonuid=0 maps the squashed users to root, which is "
                          "no_root_squash by another name"};
  }
  if (c.anonymousId("anongid") == 0u) {
    return WorldGrant{"root's group on the server",
                      "rw + anongid=0" + to +
                          ": anongid=0 maps the squashed users to group 0 (root), so they may "
                          "write whatever root's group may"};
  }
  return std::nullopt;
}

// Where a probe looked, for a "does not exist" message. Under --root it says
// how links were followed there (Links::InRoot in HostPaths.h): a link that
// leads out of the root finds nothing, and the message must say why.
std::string lookedAt(const HostPaths& paths, const fs::path& hostPath) {
  if (paths.isLiveHost()) return "looked at " + hostPath.string();
  return "looked at " + paths.display(hostPath) +
         ", where symlinks resolve with the root as '/', never above it";
}

// A confined host probe for a config entry. A path the confined resolution
// refuses (a symlink loop, a link where none may be, a wrong kind) is a
// ConfigError at the entry, naming it; a kernel without openat2 is the
// host's error, not the config's, and passes on as it is.
template <typename Probe>
bool probeAt(const Reader& r, const SourceMark& mark, const std::string& what, Probe probe) {
  try {
    return probe();
  } catch (const ConfinementUnavailable&) {
    throw;
  } catch (const std::runtime_error& e) {
    r.fail(mark, what + ": " + e.what());
  }
}

// Whether the host path is a directory once its links are followed. For a
// read-only (InRoot) path a trailing '/' makes the kernel's lookup demand a
// directory, following a last link (path_resolution(7)); our own and /proc
// paths are opened as directories with no link followed (Links::Refuse).
bool isHostDirectory(const HostPaths& paths, const fs::path& hostPath) {
  if (HostPaths::linksFor(hostPath) == Links::InRoot) return hostPathExists(paths, hostPath / "");
  return static_cast<bool>(openHostDir(paths, hostPath, false));
}

// The export path is an existing directory inside the root; a symlink on
// the way resolves inside it, so one that leads out finds nothing.
void checkExportDirectory(const Reader& r, const ExportSpec& e, const HostPaths& paths) {
  const fs::path p = e.path;
  if (p.relative_path().empty()) return;  // "/": the root itself
  const std::string what = "export path '" + e.path + "'";
  if (!probeAt(r, e.mark, what, [&] { return hostPathExists(paths, p); }))
    r.fail(e.mark, what + " does not exist (" + lookedAt(paths, p) + ")");
  if (!probeAt(r, e.mark, what, [&] { return isHostDirectory(paths, p); }))
    r.fail(e.mark, what + " is not a directory (exportfs exports directories)");
}

// A named sysfs entry (an RDMA device, a netdev) exists, links followed
// inside the root as sysfs needs (/sys/class/net/eth0 -> ../../devices/...).
void checkSysfsEntry(const Reader& r, const SourceMark& mark, const std::string& what,
                     const HostPaths& paths, const fs::path& hostPath, const std::string& hint) {
  if (!probeAt(r, mark, what, [&] { return hostPathExists(paths, hostPath); }))
    r.fail(mark, what + " does not exist (" + lookedAt(paths, hostPath) + "; " + hint + ")");
}

}  // namespace

void validateOnHost(const ServerConfig& cfg, const HostPaths& paths, bool allowInsecure) {
  Reader r(cfg.source);
  for (const auto& e : cfg.exports) {
    checkExportDirectory(r, e, paths);
    for (const auto& c : e.clients) {
      const auto grant = grantToTheWorld(c);
      if (!grant || allowInsecure) continue;
      r.fail(c.mark, "export '" + e.path + "' gives " + grant->what + " to any host (" +
                         grant->why +
                         "); restrict 'host' to your RDMA network, or pass --allow-insecure");
    }
  }
  if (!cfg.rdmaDevice.empty()) {
    checkSysfsEntry(r, cfg.deviceMark, "rdma device '" + cfg.rdmaDevice + "'", paths,
                    fs::path(HostPaths::kInfiniband) / cfg.rdmaDevice,
                    "list devices with `rdma link` or `ibv_devices`");
  }
  if (!cfg.rdmaNetdev.empty()) {
    checkSysfsEntry(r, cfg.netdevMark, "rdma netdev '" + cfg.rdmaNetdev + "'", paths,
                    fs::path(HostPaths::kNet) / cfg.rdmaNetdev, "list interfaces with `ip link`");
  }
}

}  // namespace nfsrdma::server
