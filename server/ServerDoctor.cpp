// ServerDoctor: read-only checks over a HostState snapshot.
#include "server/ServerDoctor.h"

#include <algorithm>
#include <set>
#include <sstream>
#include <string_view>

#include "server/ExportsFile.h"

namespace nfsrdma::server {

namespace {

// Whether a comma-separated export option list holds flag as a whole word
// ("insecure" is not "insecure_locks").
bool hasExportFlag(const std::string& options, std::string_view flag) {
  ExportClient client;
  std::istringstream in(options);
  for (std::string token; std::getline(in, token, ',');) client.options.push_back(trimmed(token));
  return hasExportOption(client, flag);
}

}  // namespace

std::vector<DoctorCheck> runDoctor(const HostPaths& paths, const HostState& st,
                                   const ServerConfig* cfg) {
  std::vector<DoctorCheck> out;
  auto pass = [&](std::string name, std::string detail) {
    out.push_back({CheckLevel::Pass, name, detail, ""});
  };
  auto warn = [&](std::string name, std::string detail, std::string fix) {
    out.push_back({CheckLevel::Warn, name, detail, fix});
  };
  auto fail = [&](std::string name, std::string detail, std::string fix) {
    out.push_back({CheckLevel::Fail, name, detail, fix});
  };
  const unsigned rdmaPort = cfg ? cfg->rdma.port : 20049;
  // A TCP-only config: the RDMA checks would fail on what it does not want.
  const bool wantRdma = cfg == nullptr || cfg->rdma.enabled;
  if (!wantRdma) pass("RDMA", "not checked: transports.rdma.enabled is false in " + cfg->source);

  for (const char* pkg : {"nfs-kernel-server", "rdma-core"}) {
    if (!wantRdma && std::string(pkg) == "rdma-core") continue;
    auto it = st.packages.find(pkg);
    if (it != st.packages.end() && it->second) {
      pass(std::string("package ") + pkg, "installed");
    } else {
      fail(std::string("package ") + pkg, "not installed", std::string("apt-get install ") + pkg);
    }
  }

  const std::string modHint =
      st.modulesDirPresent
          ? ""
          : " (and " + paths.resolve(HostPaths::kLibModules).string() + "/" + st.kernelRelease +
                " is missing: this kernel's modules are not installed here, as in a "
                "container or a VM booted with its own kernel)";
  for (const std::string& mod : {std::string("nfsd"), st.rdmaServerModule}) {
    if (!wantRdma && mod != "nfsd") continue;
    if (st.moduleLoaded(paths, mod)) {
      pass("module " + mod, "loaded");
    } else {
      fail("module " + mod, "not loaded" + modHint,
           "modprobe " + mod +
               (st.modulesDirPresent
                    ? ""
                    : std::string("  # on a kernel built with ") +
                          (mod == "nfsd" ? "CONFIG_NFSD" : "CONFIG_SUNRPC_XPRT_RDMA") +
                          " (e.g. the VM testbed)"));
    }
  }

  if (!wantRdma) {
    // nothing: no device, port or GID is needed
  } else if (st.rdmaDevices.empty()) {
    fail("RDMA devices", "none in " + paths.resolve(HostPaths::kInfiniband).string(),
         "install the NIC's RDMA driver, or for testing: modprobe rdma_rxe && rdma link add rxe0 "
         "type rxe netdev "
         "<eth>");
  } else {
    std::string names;
    for (const auto& d : st.rdmaDevices) names += (names.empty() ? "" : ", ") + d.name;
    pass("RDMA devices", names);
  }
  if (wantRdma && cfg && !cfg->rdmaDevice.empty()) {
    bool found = std::any_of(st.rdmaDevices.begin(), st.rdmaDevices.end(),
                             [&](const RdmaDevice& d) { return d.name == cfg->rdmaDevice; });
    if (found) {
      pass("RDMA device " + cfg->rdmaDevice, "present (named in " + cfg->source + ")");
    } else {
      fail("RDMA device " + cfg->rdmaDevice, "named in " + cfg->source + " but not present",
           "rdma link show  # then fix rdma.device in " + cfg->source);
    }
  }
  for (const auto& d : st.rdmaDevices) {
    if (!wantRdma) break;
    if (cfg && !cfg->rdmaDevice.empty() && d.name != cfg->rdmaDevice) continue;
    for (const auto& p : d.ports) {
      const std::string name = d.name + " port " + std::to_string(p.number);
      std::set<std::string> netdevs;
      for (const auto& g : p.gids) {
        if (!g.netdev.empty()) netdevs.insert(g.netdev);
      }
      const std::string netdev = netdevs.empty() ? "<netdev>" : *netdevs.begin();
      if (p.active()) {
        pass(name + " state", p.state);
      } else {
        fail(name + " state", "'" + (p.state.empty() ? "unknown" : p.state) + "', not ACTIVE",
             p.linkLayer == "InfiniBand"
                 ? "start a subnet manager (opensm) and check the cable"
                 : "ip link set " + netdev + " up  # and check the cable/switch port");
      }
      if (p.linkLayer == "Ethernet") {
        pass(name + " link layer", "Ethernet (RoCE)");
        auto v2 = std::find_if(p.gids.begin(), p.gids.end(), [&](const RdmaGid& g) {
          return g.type == "RoCE v2" && !g.ip.empty() &&
                 (cfg == nullptr || cfg->rdmaNetdev.empty() || g.netdev == cfg->rdmaNetdev);
        });
        if (v2 != p.gids.end()) {
          pass(name + " RoCE v2 GID", "index " + std::to_string(v2->index) + " carries " + v2->ip +
                                          " (" + v2->netdev + ")");
        } else {
          fail(name + " RoCE v2 GID", "no RoCE v2 GID carries an IP address",
               "ip addr add <ip>/<prefix> dev " + netdev +
                   "  # the GID table follows the netdev's addresses");
        }
      } else if (p.linkLayer == "InfiniBand") {
        pass(name + " link layer", "InfiniBand (IPoIB addresses the peers)");
      } else {
        warn(name + " link layer", "'" + p.linkLayer + "' (expected Ethernet or InfiniBand)",
             "rdma link show");
      }
    }
  }

  if (!st.nfsdFsMounted()) {
    fail("nfsd running",
         "no " + paths.resolve(HostPaths::kThreads).string() + " (nfsd not loaded or not mounted)",
         "systemctl start nfs-server");
  } else if (!st.nfsdRunning()) {
    fail("nfsd running", "threads = " + trimmed(*st.threads), "systemctl start nfs-server");
  } else {
    pass("nfsd running", trimmed(*st.threads) + " threads");
  }
  if (!wantRdma) {
    // not wanted: see the "RDMA" line
  } else if (!st.portList) {
    fail("RDMA listener", "no port list (" + paths.resolve(HostPaths::kPortList).string() + ")",
         "nfsrdma-server apply <config>   # or: echo 'rdma " + std::to_string(rdmaPort) +
             "' > /proc/fs/nfsd/portlist");
  } else if (st.hasListener("rdma", rdmaPort)) {
    pass("RDMA listener", "rdma " + std::to_string(rdmaPort) + " is in the port list");
  } else {
    fail("RDMA listener", "rdma " + std::to_string(rdmaPort) + " is not in the port list",
         "nfsrdma-server apply <config>   # or: echo 'rdma " + std::to_string(rdmaPort) +
             "' > /proc/fs/nfsd/portlist");
  }

  // RDMA connections come from unprivileged "ports": knfsd refuses them
  // unless the export says insecure.
  if (cfg && wantRdma) {
    for (const auto& e : cfg->exports) {
      for (const auto& c : e.clients) {
        if (c.insecure) {
          pass("export " + e.path + " " + c.host, "insecure set (RDMA clients can mount)");
        } else {
          warn("export " + e.path + " " + c.host,
               "no 'insecure': RDMA clients get 'access denied' at mount",
               "set `insecure: true` for this client in " + cfg->source);
        }
      }
    }
  }
  if (st.kernelExports) {
    std::istringstream in(*st.kernelExports);
    for (std::string line; std::getline(in, line);) {
      if (line.empty() || line[0] == '#') continue;
      auto open = line.find('(');
      const std::string path = trimmed(line.substr(0, line.find_first_of(" \t")));
      if (open == std::string::npos) continue;
      if (!hasExportFlag(line.substr(open + 1, line.find(')', open) - open - 1), "insecure")) {
        warn("live export " + path, "exported without insecure: RDMA clients cannot mount it",
             "add insecure to its options and run exportfs -ra");
      }
    }
  }
  return out;
}

std::string renderDoctor(const std::vector<DoctorCheck>& checks) {
  std::ostringstream out;
  std::size_t fails = 0, warns = 0;
  for (const auto& c : checks) {
    const char* tag = c.level == CheckLevel::Pass   ? "PASS"
                      : c.level == CheckLevel::Warn ? "WARN"
                                                    : "FAIL";
    out << tag << "  " << c.name << ": " << c.detail;
    if (!c.fix.empty()) out << "\n      fix: " << c.fix;
    out << "\n";
    fails += c.level == CheckLevel::Fail;
    warns += c.level == CheckLevel::Warn;
  }
  out << checks.size() << " checks: " << fails << " FAIL, " << warns << " WARN, "
      << (checks.size() - fails - warns) << " PASS\n";
  return out.str();
}

bool anyFailed(const std::vector<DoctorCheck>& checks) {
  return std::any_of(checks.begin(), checks.end(),
                     [](const DoctorCheck& c) { return c.level == CheckLevel::Fail; });
}

}  // namespace nfsrdma::server
