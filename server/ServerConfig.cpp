// ServerConfig: the config's keys, read through ConfigReader (a position in
// every error) into ServerConfig, with the checks across entries (a path,
// pseudo path or fsid used twice, an option against a written key, TCP off
// with NFSv4), and the tuning profiles. Profiles encode a reason per value so
// `plan` can say why.
#include "server/ServerConfig.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <map>
#include <optional>
#include <set>

#include "server/ConfigReader.h"
#include "server/ExportsFile.h"

namespace nfsrdma::server {
namespace fs = std::filesystem;
namespace {

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
std::string writtenValue(const ConfigReader& r, const YAML::Node& n, const std::string& key,
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

ClientSpec readClientKeys(const ConfigReader& r, const YAML::Node& n, const std::string& where) {
  r.requireKeys(n, where,
                {"host", "access", "sync", "squash", "sec", "fsid", "crossmnt", "subtree_check",
                 "insecure", "options"});
  ClientSpec c;
  c.mark = ConfigReader::mark(n);
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
void checkOption(const ConfigReader& r, const YAML::Node& item, const std::string& where,
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
void checkOptionPairs(const ConfigReader& r, const YAML::Node& list, const std::string& where) {
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
    seen.emplace(opt, ConfigReader::mark(item));
  }
}

// One entry of `options`. An option that says what a client key says
// overrides the key's default when the key is not written (exportfs reads
// the last of two, and ours come after the keys' options), so
// [no_root_squash] without a squash key means no_root_squash; against a
// written key it must agree or it is an error naming both.
void readOption(const ConfigReader& r, const YAML::Node& n, const YAML::Node& item,
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
      r.fail(item.Mark(),
             where + " option '" + opt + "' conflicts with " + k->key + ": " + written + " (line " +
                 std::to_string(ConfigReader::mark(n[k->key]).line) + "); keep one of them");
    }
  }
  if (negated)
    c.extraOptions.push_back(opt);  // the default of squash already says it
  else
    setFromOption(c, *k);
}

ClientSpec readClient(const ConfigReader& r, const YAML::Node& n, const std::string& where) {
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

// An export's path as exportfs and the kernel take it, in one spelling.
std::string readExportPath(const ConfigReader& r, const YAML::Node& e, const std::string& where) {
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

std::string readPseudo(const ConfigReader& r, const YAML::Node& p, const std::string& where) {
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
void checkFsid(const ConfigReader& r, const ClientSpec& c, std::size_t exportIndex,
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

ExportSpec readExport(const ConfigReader& r, const YAML::Node& e, std::size_t i,
                      ExportsSeen& seen) {
  const std::string where = "exports[" + std::to_string(i) + "]";
  r.requireKeys(e, where, {"path", "pseudo", "clients"});
  ExportSpec spec;
  spec.mark = ConfigReader::mark(e);
  spec.path = readExportPath(r, e, where);
  if (seen.paths.count(spec.path)) {
    r.fail(e["path"].Mark(), where + " path '" + shownInput(spec.path) +
                                 "' is exported twice (first at line " +
                                 std::to_string(seen.paths[spec.path].line) + ")");
  }
  seen.paths[spec.path] = ConfigReader::mark(e["path"]);
  spec.pseudo = e["pseudo"] ? readPseudo(r, e["pseudo"], where) : spec.path;
  if (seen.pseudos.count(spec.pseudo))
    r.fail(ConfigReader::mark(e),
           where + ": pseudo path '" + shownInput(spec.pseudo) + "' is used twice");
  seen.pseudos[spec.pseudo] = ConfigReader::mark(e);
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

void readExports(const ConfigReader& r, const YAML::Node& root, ServerConfig& cfg) {
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
std::optional<YAML::Mark> readTransports(const ConfigReader& r, const YAML::Node& t,
                                         ServerConfig& cfg) {
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

void readVersions(const ConfigReader& r, const YAML::Node& v, NfsdSpec& nfsd) {
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

void readNfsd(const ConfigReader& r, const YAML::Node& n, NfsdSpec& nfsd) {
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
void readIfName(const ConfigReader& r, const YAML::Node& n, const std::string& what,
                const std::string& expected, std::string& name, SourceMark& mark) {
  name = r.scalar(n, what);
  mark = ConfigReader::mark(n);
  if (!validIfName(name)) r.fail(n.Mark(), what + " '" + shownInput(name) + "' is not " + expected);
}

void readRdma(const ConfigReader& r, const YAML::Node& d, ServerConfig& cfg) {
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
void readTuning(const ConfigReader& r, const YAML::Node& tn, ServerConfig& cfg) {
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

}  // namespace

ServerConfig parseServerConfig(const std::string& text, const std::string& source) {
  ConfigReader r(source);
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

}  // namespace nfsrdma::server
