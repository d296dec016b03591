// ConfigHostChecks: the config against the host, through HostFiles'
// confined probes, with each error at the config entry it is about.
#include "server/ConfigHostChecks.h"

#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>

#include "server/ConfigReader.h"
#include "server/ExportsFile.h"
#include "server/HostFiles.h"

namespace nfsrdma::server {
namespace fs = std::filesystem;
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
bool probeAt(const ConfigReader& r, const SourceMark& mark, const std::string& what, Probe probe) {
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
void checkExportDirectory(const ConfigReader& r, const ExportSpec& e, const HostPaths& paths) {
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
void checkSysfsEntry(const ConfigReader& r, const SourceMark& mark, const std::string& what,
                     const HostPaths& paths, const fs::path& hostPath, const std::string& hint) {
  if (!probeAt(r, mark, what, [&] { return hostPathExists(paths, hostPath); }))
    r.fail(mark, what + " does not exist (" + lookedAt(paths, hostPath) + "; " + hint + ")");
}

}  // namespace

void validateOnHost(const ServerConfig& cfg, const HostPaths& paths, bool allowInsecure) {
  ConfigReader r(cfg.source);
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
