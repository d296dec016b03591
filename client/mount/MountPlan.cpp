#include "client/mount/MountPlan.h"

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "util/YamlScalar.h"

namespace nfsrdma::mount {
namespace {

// nconnect (several connections per mount) arrived in Linux 5.3, where NFSv2/3's
// nfs_init_server() passes it on for any transport (53c326307156). NFSv4's nfs4_set_client()
// passed it only for proto=tcp until "NFS: enable nconnect for RDMA" (b326df4a8ec6, merged for
// 6.9; 6.1's still tests XPRT_TRANSPORT_TCP): older kernels accept nconnect with proto=rdma and
// silently use one connection. (6.6.117 stable has the backport; uname's x.y cannot tell.)
bool nconnectUsed(const std::string& proto, const std::string& vers, const HostFacts& f) {
  const int v = f.kernelMajor * 1000 + f.kernelMinor;
  return proto == "tcp" || vers == "3" ? v >= 5003 : v >= 6009;
}

bool isControl(char c) {
  const auto u = static_cast<unsigned char>(c);
  return u < 0x20 || u == 0x7f;
}

bool hasControl(std::string_view s) {
  return std::any_of(s.begin(), s.end(), isControl);
}

std::string octal(char c) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "\\%03o", static_cast<unsigned>(static_cast<unsigned char>(c)));
  return buf;
}

// Errors echo the input: control characters as \ooo keep the message on one line and show
// what was given.
std::string shown(std::string_view s) {
  std::string out;
  for (char c : s) out += isControl(c) ? octal(c) : std::string(1, c);
  return out;
}

// fstab(5) fields are separated by whitespace, so a space, tab, newline or backslash in one is
// written as an octal escape; /proc/mounts writes its fields the same way.
std::string fstabField(std::string_view s) {
  std::string out;
  for (char c : s) {
    out += c == ' ' || c == '\t' || c == '\n' || c == '\\' ? octal(c) : std::string(1, c);
  }
  return out;
}

std::string unescapeMountField(std::string_view s) {
  auto isOctal = [](char c) { return c >= '0' && c <= '7'; };
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size() && isOctal(s[i + 1]) && isOctal(s[i + 2]) &&
        isOctal(s[i + 3])) {
      const int v = (s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0');
      if (v <= 0xff) {
        out += static_cast<char>(v);
        i += 3;
        continue;
      }
    }
    out += s[i];
  }
  return out;
}

// The host as the kernel compares it: an IPv6 address without its brackets.
std::string bareHost(std::string_view host) {
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  return std::string(host);
}

// "host:/path" or "[v6]:/path" -> {bare host, path}; nothing for other sources.
std::optional<std::pair<std::string, std::string>> splitNfsSource(std::string_view source) {
  std::size_t colon = std::string_view::npos;
  if (!source.empty() && source.front() == '[') {
    const auto close = source.find("]:");
    if (close != std::string_view::npos) colon = close + 1;
  } else {
    colon = source.find(':');
  }
  if (colon == std::string_view::npos || colon + 1 >= source.size() || source[colon + 1] != '/') {
    return std::nullopt;
  }
  return std::pair{bareHost(source.substr(0, colon)), std::string(source.substr(colon + 1))};
}

// "/mnt/x/" and "/mnt/x" name the same directory; /proc/mounts shows the latter.
bool samePath(std::string_view a, std::string_view b) {
  auto trim = [](std::string_view p) {
    while (p.size() > 1 && p.back() == '/') p.remove_suffix(1);
    return p;
  };
  return trim(a) == trim(b);
}

bool sameSource(std::string_view a, std::string_view b) {
  const auto x = splitNfsSource(a);
  const auto y = splitNfsSource(b);
  return x && y && x->first == y->first && samePath(x->second, y->second);
}

std::string commandLine(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& w : argv) {
    if (!out.empty()) out += ' ';
    out += shellQuote(w);
  }
  return out;
}

void checkServer(const std::string& s) {
  const std::string what = "server '" + shown(s) + "': ";
  if (s.empty() || hasControl(s) || s.find_first_of(" ,/#") != std::string::npos) {
    throw std::invalid_argument(what +
                                "expected a host name or address without whitespace, control "
                                "characters, ',', '/' or '#'");
  }
  // mount(8) would read "-o...:/export" as an option.
  if (s.front() == '-') {
    throw std::invalid_argument(what + "expected a host name or address, not an option");
  }
  const bool bracketed = s.size() > 2 && s.front() == '[' && s.back() == ']';
  const std::string_view inner =
      bracketed ? std::string_view(s).substr(1, s.size() - 2) : std::string_view(s);
  if (inner.find_first_of("[]") != std::string_view::npos ||
      (bracketed != (inner.find(':') != std::string_view::npos))) {
    throw std::invalid_argument(what + "expected [addr] for an IPv6 address");
  }
}

void checkPath(const std::string& field, const std::string& p) {
  if (p.empty() || p.front() != '/') {
    throw std::invalid_argument(field + " '" + shown(p) + "': expected an absolute path");
  }
  if (hasControl(p)) {
    throw std::invalid_argument(field + " '" + shown(p) +
                                "': expected a path without control characters");
  }
}

// Mount options the plan sets from its own flags (with their kernel aliases), and that flag.
constexpr std::pair<std::string_view, std::string_view> kPlannedOptions[] = {
    {"proto", "--proto"},  {"tcp", "--proto"},         {"udp", "--proto"},
    {"rdma", "--proto"},   {"port", "--port"},         {"vers", "--vers"},
    {"nfsvers", "--vers"}, {"minorversion", "--vers"}, {"v2", "--vers"},
    {"v3", "--vers"},      {"v4", "--vers"},           {"v4.0", "--vers"},
    {"v4.1", "--vers"},    {"v4.2", "--vers"},         {"nconnect", "--nconnect"},
    {"rsize", "--rsize"},  {"wsize", "--wsize"},
};

// Each -o value becomes one comma-separated option in the mount(8) argument, the fstab line and
// the YAML: a ',' would smuggle in more options, whitespace or '#' would break the fstab line.
void checkExtraOption(const std::string& o) {
  if (o.empty() || hasControl(o) || o.find_first_of(" ,\\#") != std::string::npos) {
    throw std::invalid_argument("-o '" + shown(o) +
                                "': expected one mount option per -o, without whitespace, control "
                                "characters, ',', '\\' or '#'");
  }
  const std::string_view key = std::string_view(o).substr(0, o.find('='));
  for (const auto& [k, flag] : kPlannedOptions) {
    if (key == k) throw std::invalid_argument("-o " + o + ": use " + std::string(flag));
  }
}

void checkRequest(const MountRequest& r) {
  checkServer(r.server);
  checkPath("export", r.exportPath);
  checkPath("mount point", r.mountPoint);
  if (r.proto != "rdma" && r.proto != "tcp" && r.proto != "both") {
    throw std::invalid_argument("proto '" + r.proto + "': expected rdma, tcp or both");
  }
  if (r.vers != "4.2" && r.vers != "4.1" && r.vers != "4.0" && r.vers != "4" && r.vers != "3") {
    throw std::invalid_argument("vers '" + r.vers + "': expected 3, 4, 4.0, 4.1 or 4.2");
  }
  for (auto [name, v] : {std::pair{"rsize", r.rsize}, std::pair{"wsize", r.wsize}}) {
    if (v && (*v < 4096 || *v > (1U << 20) || (*v & (*v - 1)) != 0)) {
      throw std::invalid_argument(std::string(name) + "=" + std::to_string(*v) +
                                  ": expected a power of two from 4096 to 1048576");
    }
  }
  if (r.nconnect && (*r.nconnect < 1 || *r.nconnect > 16)) {
    throw std::invalid_argument("nconnect=" + std::to_string(*r.nconnect) + ": expected 1 to 16");
  }
  if (r.port && *r.port == 0) throw std::invalid_argument("port 0: expected 1 to 65535");
  for (const auto& o : r.extraOptions) checkExtraOption(o);
}

// Why a new NFSv4 mount over 'proto' would land on an existing mount's client (see planMount),
// if it would: same server, NFSv4 on both sides, the same minor version ("4" negotiates the
// highest, so it may meet any), and another transport.
std::optional<std::string> trunkingClash(const ExistingMount& e, const std::string& proto,
                                         const std::string& vers) {
  if (vers == "3" || e.type != "nfs4") return std::nullopt;
  const std::string theirs = optionValue(e.options, "vers");
  // /proc/mounts names an IPv6 mount's transport tcp6 or rdma6.
  std::string theirProto = optionValue(e.options, "proto");
  if (!theirProto.empty() && theirProto.back() == '6') theirProto.pop_back();
  if (theirProto.empty() || theirProto == proto) return std::nullopt;
  if (!theirs.empty() && vers != "4" && theirs != "4" && theirs != vers) return std::nullopt;
  return "'" + e.source + "' is already mounted on " + e.mountPoint + " with proto=" + theirProto +
         (theirs.empty() ? "" : ",vers=" + theirs) + ": the kernel would give this proto=" + proto +
         " mount that mount's NFSv4 client and transport (trunking matches the client ID, "
         "not the transport); unmount it first, or mount with another NFSv4 minor version";
}

std::vector<std::string> protosOf(const MountRequest& r) {
  if (r.proto == "both") return {"rdma", "tcp"};
  return {r.proto};
}

std::string mountPointFor(const MountRequest& r, const std::string& proto) {
  return r.proto == "both" ? r.mountPoint + "-" + proto : r.mountPoint;
}

}  // namespace

std::optional<std::string> sharedClientMount(const MountRequest& r, std::string_view procMounts) {
  if (r.vers == "3") return std::nullopt;
  for (const ExistingMount& e : nfsMountsOf(procMounts, r.server)) {
    if (e.type != "nfs4") continue;
    std::string theirProto = optionValue(e.options, "proto");
    if (!theirProto.empty() && theirProto.back() == '6') theirProto.pop_back();
    const std::string theirs = optionValue(e.options, "vers");
    if (theirProto != r.proto) continue;
    if (!theirs.empty() && r.vers != "4" && theirs != "4" && theirs != r.vers) continue;
    return "'" + e.source + "' is mounted on " + e.mountPoint + " (proto=" + theirProto +
           (theirs.empty() ? "" : ",vers=" + theirs) +
           "): the kernel gives a new proto=" + r.proto + ",vers=" + r.vers +
           " mount of that server the same NFS client, with that mount's connections, nconnect "
           "and credits";
  }
  return std::nullopt;
}

std::vector<ExistingMount> parseProcMounts(std::string_view procMounts) {
  std::vector<ExistingMount> out;
  std::istringstream in{std::string(procMounts)};
  std::string line;
  for (int n = 0; n < 100000 && std::getline(in, line); ++n) {
    std::istringstream fields(line);
    ExistingMount m;
    if (!(fields >> m.source >> m.mountPoint >> m.type >> m.options)) continue;
    m.source = unescapeMountField(m.source);
    m.mountPoint = unescapeMountField(m.mountPoint);
    m.options = unescapeMountField(m.options);
    out.push_back(std::move(m));
  }
  return out;
}

// The value of key= in a mount option list ("" when absent).
std::string optionValue(std::string_view options, std::string_view key) {
  for (std::size_t at = 0; at <= options.size();) {
    const auto comma = std::min(options.find(',', at), options.size());
    const std::string_view item = options.substr(at, comma - at);
    if (item.size() > key.size() && item.substr(0, key.size()) == key && item[key.size()] == '=') {
      return std::string(item.substr(key.size() + 1));
    }
    at = comma + 1;
  }
  return "";
}

std::string shellQuote(std::string_view word) {
  static constexpr std::string_view kSafe =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%+=:,./_-";
  if (!word.empty() && word.find_first_not_of(kSafe) == std::string_view::npos) {
    return std::string(word);
  }
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::vector<ExistingMount> nfsMountsOf(std::string_view procMounts, std::string_view server) {
  std::vector<ExistingMount> out;
  const std::string host = bareHost(server);
  for (auto& m : parseProcMounts(procMounts)) {
    if (m.type != "nfs" && m.type != "nfs4") continue;
    const auto split = splitNfsSource(m.source);
    if (split && split->first == host) out.push_back(std::move(m));
  }
  return out;
}

namespace {

// --proto both: refused with a port (the two mounts need different ones) and
// with NFSv4, where the tcp mount would not stay on TCP.
void checkBothProtos(const MountRequest& r) {
  if (r.proto == "both" && r.port) {
    throw std::invalid_argument(
        "--port with --proto both: the RDMA and TCP mounts need different ports; "
        "mount them one at a time");
  }

  const bool nfs4 = r.vers != "3";
  // NFSv4 trunking detection: a new mount's EXCHANGE_ID gets the client ID the server already
  // gave this host, and nfs4_match_client() then hands the mount the existing nfs_client,
  // comparing minor versions and client IDs but not transports. A proto=tcp mount next to a
  // proto=rdma one of the same server and minor version runs over RDMA (the VM testbed's
  // mount-both test shows /proc/mounts saying proto=rdma for it).
  if (nfs4 && r.proto == "both") {
    throw std::invalid_argument(
        "--proto both with vers=" + r.vers +
        ": the kernel gives both mounts of one server the same NFSv4 client (NFSv4 trunking "
        "matches the client ID, not the transport), so the tcp mount would run over RDMA; "
        "mount one transport at a time (--proto rdma, measure, umount, then --proto tcp), or "
        "use --vers 3 for both side by side");
  }
}

// The problems and notes that come from mounts of the server already there,
// or from two mounts side by side.
void noteSharing(MountPlan& plan, const MountRequest& r, const std::vector<ExistingMount>& existing,
                 const std::vector<std::string>& protos) {
  for (const auto& e : existing) {
    if (const auto clash = trunkingClash(e, r.proto, r.vers)) plan.problems.push_back(*clash);
  }
  // nosharecache only separates superblocks: the kernel picks the nfs_client (and with it the
  // connection) by server address, port, proto and version.
  if (!existing.empty()) {
    plan.notes.push_back("'" + r.server + "' is already mounted (" + existing.front().source +
                         " on " + existing.front().mountPoint +
                         "): adding nosharecache, which gives this mount its own superblock "
                         "(own cache and mount options); the kernel may still share one "
                         "nfs_client and connection with that mount, as it does for the same "
                         "server address, port, proto and version");
  } else if (protos.size() > 1) {
    plan.notes.push_back(
        "both transports side by side (NFSv3): nosharecache gives each mount its own "
        "superblock (own cache and mount options); different protos get different "
        "nfs_clients and connections");
  }
}

// The mount options of the mount over 'proto', in the order mount(8) is given them.
std::vector<std::string> mountOptionsFor(const MountRequest& r, const std::string& proto,
                                         const HostFacts& facts, bool noShareCache,
                                         MountPlan& plan) {
  std::vector<std::string> opts{"vers=" + r.vers, "proto=" + proto};
  if (proto == "rdma") {
    opts.push_back("port=" + std::to_string(r.port.value_or(20049)));
  } else if (r.port) {
    opts.push_back("port=" + std::to_string(*r.port));
  }
  if (r.rsize) opts.push_back("rsize=" + std::to_string(*r.rsize));
  if (r.wsize) opts.push_back("wsize=" + std::to_string(*r.wsize));
  if (r.nconnect) {
    if (nconnectUsed(proto, r.vers, facts)) {
      opts.push_back("nconnect=" + std::to_string(*r.nconnect));
    } else {
      plan.notes.push_back("nconnect dropped for proto=" + proto + ": kernel " +
                           std::to_string(facts.kernelMajor) + "." +
                           std::to_string(facts.kernelMinor) +
                           " would ignore it (NFSv4 over RDMA uses it from Linux 6.9 on)");
    }
  }
  if (noShareCache) opts.push_back("nosharecache");
  for (const auto& e : r.extraOptions) opts.push_back(e);
  return opts;
}

PlannedMount plannedMount(const MountRequest& r, const std::string& proto,
                          const std::vector<std::string>& opts) {
  PlannedMount m;
  m.proto = proto;
  m.source = r.server + ":" + r.exportPath;
  m.mountPoint = mountPointFor(r, proto);
  for (const auto& o : opts) m.options += (m.options.empty() ? "" : ",") + o;
  m.argv = {"mount", "-t", "nfs", "-o", m.options, m.source, m.mountPoint};
  m.command = commandLine(m.argv);
  m.fstabLine =
      fstabField(m.source) + " " + fstabField(m.mountPoint) + " nfs " + m.options + ",_netdev 0 0";
  return m;
}

// Kubernetes: a StorageClass (for dynamic provisioners that pass mountOptions)
// and a static PersistentVolume carrying the same options. Its nfs volume takes a bare IPv6
// address.
std::string kubernetesYaml(const MountRequest& r, const std::string& proto,
                           const std::vector<std::string>& options) {
  std::ostringstream k;
  k << "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata:\n  name: nfs-" << proto
    << "\nprovisioner: kubernetes.io/no-provisioner\nmountOptions:\n";
  for (const auto& o : options) k << "  - " << util::yamlScalar(o) << "\n";
  k << "---\napiVersion: v1\nkind: PersistentVolume\nmetadata:\n  name: nfs-" << proto
    << "-pv\nspec:\n  capacity:\n    storage: 1Ti\n  accessModes:\n    - ReadWriteMany\n"
    << "  persistentVolumeReclaimPolicy: Retain\n  storageClassName: nfs-" << proto
    << "\n  mountOptions:\n";
  for (const auto& o : options) k << "    - " << util::yamlScalar(o) << "\n";
  k << "  nfs:\n    server: " << util::yamlDoubleQuoted(bareHost(r.server))
    << "\n    path: " << util::yamlDoubleQuoted(r.exportPath) << "\n";
  return k.str();
}

}  // namespace

MountPlan planMount(const MountRequest& r, const HostFacts& facts) {
  checkRequest(r);
  checkBothProtos(r);

  MountPlan plan;
  const auto existing = nfsMountsOf(facts.mounts, r.server);
  const std::vector<std::string> protos = protosOf(r);
  const bool needNoShareCache = protos.size() > 1 || !existing.empty();
  noteSharing(plan, r, existing, protos);
  for (const auto& e : r.extraOptions) {
    if (needNoShareCache && e == "sharecache") {
      throw std::invalid_argument("-o sharecache: this plan needs nosharecache (see its note)");
    }
  }
  // The kernel loads it on demand (xprt_class_find_by_netid() -> request_module("rpcrdma")),
  // and a built-in one has no /sys/module entry: only worth a note.
  if (!facts.rdmaClientModule && std::find(protos.begin(), protos.end(), "rdma") != protos.end()) {
    plan.notes.push_back(
        "the kernel's NFS/RDMA client module (rpcrdma) is not loaded: mount will try to load it; "
        "if it fails, run 'modprobe rpcrdma'");
  }
  std::vector<std::string> firstOptions;
  for (const auto& proto : protos) {
    const std::vector<std::string> opts = mountOptionsFor(r, proto, facts, needNoShareCache, plan);
    PlannedMount m = plannedMount(r, proto, opts);
    for (const auto& e : existing) {
      if (samePath(e.mountPoint, m.mountPoint)) {
        plan.problems.push_back(m.mountPoint + " already has " + e.source + " mounted on it");
      }
    }
    if (plan.mounts.empty()) firstOptions = opts;
    plan.mounts.push_back(std::move(m));
  }
  plan.kubernetesYaml = kubernetesYaml(r, plan.mounts.front().proto, firstOptions);
  return plan;
}

std::vector<PlannedUnmount> planUnmount(const MountRequest& r) {
  checkRequest(r);
  std::vector<PlannedUnmount> out;
  for (const auto& proto : protosOf(r)) {
    PlannedUnmount u;
    u.source = r.server + ":" + r.exportPath;
    u.mountPoint = mountPointFor(r, proto);
    u.argv = {"umount", u.mountPoint};
    u.command = commandLine(u.argv);
    out.push_back(std::move(u));
  }
  return out;
}

std::optional<std::string> unmountProblem(const PlannedUnmount& u, std::string_view procMounts) {
  // Later lines are mounted over earlier ones: umount takes off the last.
  std::optional<ExistingMount> top;
  for (auto& m : parseProcMounts(procMounts)) {
    if (samePath(m.mountPoint, u.mountPoint)) top = std::move(m);
  }
  if (!top) return "nothing is mounted on " + u.mountPoint + " (expected " + u.source + ")";
  if ((top->type == "nfs" || top->type == "nfs4") && sameSource(top->source, u.source)) {
    return std::nullopt;
  }
  return u.mountPoint + " has " + top->source + " (" + top->type + ") mounted on it, not " +
         u.source;
}

}  // namespace nfsrdma::mount
