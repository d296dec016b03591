// ServerConfig: strict YAML reading with positions in every message, and the
// tuning profiles. Profiles encode a reason per value so `plan` can say why.
#include "server/ServerConfig.h"

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
      if (!seen.insert(key).second) fail(it->first.Mark(), "key '" + key + "' appears twice in " + what);
      if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
        std::string list;
        for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
        fail(it->first.Mark(),
             "unknown key '" + key + "' in " + what + " (expected one of: " + list + ")");
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
    fail(n.Mark(), what + ": expected true or false, got '" + n.Scalar() + "'");
  }
  uint64_t number(const YAML::Node& n, const std::string& what, uint64_t min, uint64_t max) const {
    const std::string v = scalar(n, what);
    if (v.empty() || v.size() > 19 || !std::all_of(v.begin(), v.end(), [](char c) {
          return std::isdigit(static_cast<unsigned char>(c));
        })) {
      fail(n.Mark(), what + ": expected a whole number in " + std::to_string(min) + ".." +
                         std::to_string(max) + ", got '" + v + "'");
    }
    uint64_t x = std::stoull(v);
    if (x < min || x > max) {
      fail(n.Mark(), what + ": " + v + " is out of range " + std::to_string(min) + ".." +
                         std::to_string(max));
    }
    return x;
  }
  std::string oneOf(const YAML::Node& n, const std::string& what,
                    const std::vector<std::string>& allowed) const {
    const std::string v = scalar(n, what);
    if (std::find(allowed.begin(), allowed.end(), v) != allowed.end()) return v;
    std::string list;
    for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
    fail(n.Mark(), what + ": unknown value '" + v + "' (expected one of: " + list + ")");
  }

 private:
  std::string source_;
};

bool validHostName(const std::string& h) {
  // A leading '-' would make exportfs read the host as a default options list.
  if (h.empty() || h.front() == '-') return false;
  return std::all_of(h.begin(), h.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) ||
           std::string_view("*?.-_:/@[]").find(c) != std::string_view::npos;
  });
}

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

ClientSpec readClient(const Reader& r, const YAML::Node& n, const std::string& where) {
  r.requireKeys(n, where,
                {"host", "access", "sync", "squash", "sec", "fsid", "crossmnt", "subtree_check",
                 "insecure", "options"});
  ClientSpec c;
  c.mark = Reader::mark(n);
  if (n["host"]) {
    c.host = r.scalar(n["host"], where + " host");
    if (!validHostName(c.host)) {
      r.fail(n["host"].Mark(),
             where + " host '" + c.host +
                 "' is not a host, network (10.0.0.0/24), wildcard (*) or @netgroup");
    }
  }
  if (n["access"]) c.readOnly = r.oneOf(n["access"], where + " access", {"rw", "ro"}) == "ro";
  if (n["sync"]) c.sync = r.boolean(n["sync"], where + " sync");
  if (n["squash"]) {
    std::string s =
        r.oneOf(n["squash"], where + " squash", {"root_squash", "no_root_squash", "all_squash"});
    c.squash = s == "root_squash"      ? Squash::Root
               : s == "no_root_squash" ? Squash::NoRoot
                                       : Squash::All;
  }
  if (n["sec"]) {
    const auto& s = n["sec"];
    std::vector<std::string> flavors;
    if (s.IsSequence()) {
      for (const auto& f : s)
        flavors.push_back(r.oneOf(f, where + " sec", {"sys", "krb5", "krb5i", "krb5p", "none"}));
    } else {
      flavors.push_back(r.oneOf(s, where + " sec", {"sys", "krb5", "krb5i", "krb5p", "none"}));
    }
    if (flavors.empty()) r.fail(s.Mark(), where + " sec: the list is empty (expected e.g. [sys])");
    c.sec = flavors;
  }
  if (n["fsid"]) {
    std::string f = r.scalar(n["fsid"], where + " fsid");
    if (!isKnownExportOption("fsid=" + f)) {
      r.fail(n["fsid"].Mark(), where + " fsid '" + f + "' must be a number, 'root' or a UUID");
    }
    c.fsid = f;
  }
  if (n["crossmnt"]) c.crossmnt = r.boolean(n["crossmnt"], where + " crossmnt");
  if (n["subtree_check"]) c.subtreeCheck = r.boolean(n["subtree_check"], where + " subtree_check");
  if (n["insecure"]) c.insecure = r.boolean(n["insecure"], where + " insecure");
  if (n["options"]) {
    const auto& o = n["options"];
    if (!o.IsSequence())
      r.fail(o.Mark(), where + " options must be a list of exports(5) options, e.g. [no_wdelay]");
    for (const auto& item : o) {
      std::string opt = r.scalar(item, where + " option");
      if (!isKnownExportOption(opt)) {
        r.fail(item.Mark(), where + " option '" + opt + "' is not an exports(5) option");
      }
      for (const char* key : {"anonuid=", "anongid="}) {
        if (opt.rfind(key, 0) == 0 && (opt.size() - std::strlen(key) > 10 ||
                                       std::stoull(opt.substr(std::strlen(key))) > UINT32_MAX)) {
          r.fail(item.Mark(), where + " option '" + opt + "': the id must be at most 4294967295");
        }
      }
      // exports(5) applies ro/rw and the squash options to the flavors of
      // the sec= before them: a second list after our sec=sys would leave
      // sys open with the options meant for the other flavors.
      if (opt.rfind("sec=", 0) == 0) {
        std::string flavors = opt.substr(4);
        for (std::size_t at = flavors.find(':'); at != std::string::npos;
             at = flavors.find(':', at))
          flavors.replace(at, 1, ", ");
        r.fail(item.Mark(), where + " option '" + opt +
                                "': flavors go in the client's sec key (sec: [" + flavors +
                                "]), which renders the export's one sec= list");
      }
      c.extraOptions.push_back(opt);
    }
  }
  // Contradictions between the structured keys and the extra options.
  auto all = c.exportOptions();
  for (const auto& [a, b] : kConflicts) {
    bool hasA = std::find(all.begin(), all.end(), a) != all.end();
    bool hasB = std::find(all.begin(), all.end(), b) != all.end();
    if (hasA && hasB) r.fail(c.mark, where + ": conflicting options '" + a + "' and '" + b + "'");
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

ServerConfig parseServerConfig(const std::string& text, const std::string& source) {
  Reader r(source);
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    r.fail(e.mark, "YAML syntax error: " + e.msg);
  }
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

  if (!root["exports"]) r.fail(root.Mark(), "missing 'exports' (a list of directories to export)");
  const YAML::Node exports = root["exports"];
  if (!exports.IsSequence() || exports.size() == 0) {
    r.fail(exports.Mark(), "'exports' must be a non-empty list of {path, clients}");
  }
  std::map<std::string, SourceMark> paths, pseudos;
  struct FsidUse {
    std::size_t exportIndex;
    SourceMark mark;
  };
  std::map<std::string, FsidUse> fsids;
  for (std::size_t i = 0; i < exports.size(); ++i) {
    const YAML::Node e = exports[i];
    const std::string where = "exports[" + std::to_string(i) + "]";
    r.requireKeys(e, where, {"path", "pseudo", "clients"});
    ExportSpec spec;
    spec.mark = Reader::mark(e);
    if (!e["path"]) r.fail(e.Mark(), where + ": missing 'path'");
    spec.path = r.scalar(e["path"], where + " path");
    if (spec.path.empty() || spec.path.front() != '/') {
      r.fail(e["path"].Mark(), where + " path '" + spec.path + "' must be absolute");
    }
    // One directory, one spelling: "/srv//a/" and "/srv/./a" are "/srv/a".
    spec.path = std::filesystem::path(spec.path).lexically_normal().string();
    if (spec.path.size() > 1 && spec.path.back() == '/') spec.path.pop_back();
    if (spec.path.find_first_of("\"\n\\") != std::string::npos) {
      r.fail(e["path"].Mark(),
             where + " path '" + spec.path + "' contains a quote, backslash or newline");
    }
    if (paths.count(spec.path)) {
      r.fail(e["path"].Mark(), where + " path '" + spec.path +
                                   "' is exported twice (first at line " +
                                   std::to_string(paths[spec.path].line) + ")");
    }
    paths[spec.path] = Reader::mark(e["path"]);
    spec.pseudo = spec.path;
    if (e["pseudo"]) {
      spec.pseudo = r.scalar(e["pseudo"], where + " pseudo");
      if (spec.pseudo.size() < 2 || spec.pseudo.front() != '/' || spec.pseudo.back() == '/') {
        r.fail(e["pseudo"].Mark(), where + " pseudo '" + spec.pseudo +
                                       "' must be an absolute path below '/', e.g. /export");
      }
    }
    if (pseudos.count(spec.pseudo))
      r.fail(Reader::mark(e), where + ": pseudo path '" + spec.pseudo + "' is used twice");
    pseudos[spec.pseudo] = Reader::mark(e);
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
        r.fail(c.mark, where + ": client '" + c.host + "' is listed twice");
      // From the fsid key or an fsid= in options: either way one export's.
      std::optional<std::string> fsid = c.fsid;
      for (const std::string& o : c.extraOptions) {
        if (o.rfind("fsid=", 0) == 0) fsid = o.substr(5);
      }
      if (fsid && *fsid != "root") {
        auto it = fsids.find(*fsid);
        if (it != fsids.end() && it->second.exportIndex != i) {
          r.fail(c.mark, where + ": duplicate fsid=" + *fsid + " (already used by the export at line " +
                             std::to_string(it->second.mark.line) + "); each export needs its own fsid");
        }
        fsids.insert({*fsid, {i, spec.mark}});
      }
      spec.clients.push_back(std::move(c));
    }
    cfg.exports.push_back(std::move(spec));
  }

  std::optional<YAML::Mark> tcpDisabledAt;
  if (const auto t = root["transports"]; t && !t.IsNull()) {
    r.requireKeys(t, "transports", {"bind_address", "tcp", "rdma"});
    if (t["bind_address"]) cfg.bindAddress = r.scalar(t["bind_address"], "transports bind_address");
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
      r.fail(t.Mark(),
             "transports: tcp and rdma cannot share port " + std::to_string(cfg.tcp.port));
    }
    if (!cfg.tcp.enabled && !cfg.rdma.enabled)
      r.fail(t.Mark(), "transports: tcp and rdma are both disabled");
  }

  if (const auto n = root["nfsd"]; n && !n.IsNull()) {
    r.requireKeys(n, "nfsd", {"threads", "versions", "lease_time", "grace_time"});
    if (n["threads"])
      cfg.nfsd.threads = static_cast<unsigned>(r.number(n["threads"], "nfsd threads", 1, 8192));
    if (n["versions"]) {
      const auto v = n["versions"];
      if (!v.IsSequence() || v.size() == 0)
        r.fail(v.Mark(), "nfsd versions must be a non-empty list, e.g. [\"4.1\", \"4.2\"]");
      cfg.nfsd.v3 = cfg.nfsd.v40 = cfg.nfsd.v41 = cfg.nfsd.v42 = false;
      for (const auto& item : v) {
        std::string s = r.oneOf(item, "nfsd versions", {"3", "4.0", "4.1", "4.2"});
        bool& flag = s == "3"     ? cfg.nfsd.v3
                     : s == "4.0" ? cfg.nfsd.v40
                     : s == "4.1" ? cfg.nfsd.v41
                                  : cfg.nfsd.v42;
        if (flag) r.fail(item.Mark(), "nfsd versions: '" + s + "' is listed twice");
        flag = true;
      }
    }
    if (n["lease_time"])
      cfg.nfsd.leaseTime =
          static_cast<unsigned>(r.number(n["lease_time"], "nfsd lease_time", 10, 3600));
    if (n["grace_time"])
      cfg.nfsd.graceTime =
          static_cast<unsigned>(r.number(n["grace_time"], "nfsd grace_time", 10, 3600));
  }

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

  if (const auto d = root["rdma"]; d && !d.IsNull()) {
    r.requireKeys(d, "rdma", {"device", "netdev"});
    if (d["device"]) {
      cfg.rdmaDevice = r.scalar(d["device"], "rdma device");
      cfg.deviceMark = Reader::mark(d["device"]);
      if (!validIfName(cfg.rdmaDevice))
        r.fail(d["device"].Mark(),
               "rdma device '" + cfg.rdmaDevice + "' is not a device name such as mlx5_0 or rxe0");
    }
    if (d["netdev"]) {
      cfg.rdmaNetdev = r.scalar(d["netdev"], "rdma netdev");
      cfg.netdevMark = Reader::mark(d["netdev"]);
      if (!validIfName(cfg.rdmaNetdev))
        r.fail(d["netdev"].Mark(),
               "rdma netdev '" + cfg.rdmaNetdev + "' is not an interface name such as eth0");
    }
  }

  if (const auto tn = root["tuning"]; tn && !tn.IsNull()) {
    r.requireKeys(tn, "tuning", {"max_requests", "max_req_size", "max_outbound_read_requests"});
    struct Range {
      const char* key;
      uint64_t min, max;
    };
    for (const Range& k : {Range{"max_requests", 4, 16384}, Range{"max_req_size", 1024, 65536},
                           Range{"max_outbound_read_requests", 1, 65535}}) {
      if (!tn[k.key]) continue;
      uint64_t v = r.number(tn[k.key], std::string("tuning ") + k.key, k.min, k.max);
      auto it = std::find_if(cfg.tuning.begin(), cfg.tuning.end(),
                             [&](const TuningSetting& s) { return s.name == k.key; });
      TuningSetting s{k.key, v, "set in " + source};
      if (it != cfg.tuning.end())
        *it = s;
      else
        cfg.tuning.push_back(s);
    }
  }
  return cfg;
}

ServerConfig loadServerConfig(const fs::path& file) {
  std::ifstream in(file);
  if (!in) throw ConfigError(file.string() + ": cannot read the config file: " + std::strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  return parseServerConfig(ss.str(), file.string());
}

void validateOnHost(const ServerConfig& cfg, const HostPaths& paths, bool allowInsecure) {
  Reader r(cfg.source);
  for (const auto& e : cfg.exports) {
    std::error_code ec;
    const fs::path p = paths.resolve(e.path);
    if (!fs::exists(p, ec))
      r.fail(e.mark, "export path '" + e.path + "' does not exist (looked at " + p.string() + ")");
    if (!fs::is_directory(p, ec)) r.fail(e.mark, "export path '" + e.path + "' is not a directory");
    for (const auto& c : e.clients) {
      if (c.host == "*" && !c.readOnly && c.squash == Squash::NoRoot && !allowInsecure) {
        r.fail(c.mark, "export '" + e.path +
                           "' gives root on the server to any host (rw + no_root_squash to '*'); "
                           "restrict 'host' to your RDMA network, or pass --allow-insecure");
      }
    }
  }
  if (!cfg.rdmaDevice.empty()) {
    const fs::path dev = paths.resolve(HostPaths::kInfiniband) / cfg.rdmaDevice;
    std::error_code ec;
    if (!fs::exists(dev, ec)) {
      r.fail(cfg.deviceMark, "rdma device '" + cfg.rdmaDevice + "' does not exist (no " +
                                 dev.string() +
                                 "; list devices with `rdma link` or `ibv_devices`)");
    }
  }
  if (!cfg.rdmaNetdev.empty()) {
    const fs::path dev = paths.resolve(HostPaths::kNet) / cfg.rdmaNetdev;
    std::error_code ec;
    if (!fs::exists(dev, ec)) {
      r.fail(cfg.netdevMark, "rdma netdev '" + cfg.rdmaNetdev + "' does not exist (no " +
                                 dev.string() + "; list interfaces with `ip link`)");
    }
  }
}

}  // namespace nfsrdma::server
