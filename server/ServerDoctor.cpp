// ServerDoctor: read-only checks over a HostState snapshot.
#include "server/ServerDoctor.h"

#include <algorithm>
#include <set>
#include <sstream>
#include <string_view>

#include "hostcheck/FabricChecks.h"
#include "hostcheck/HostChecks.h"
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

// runDoctor's checks, in the order they are printed; each group in a
// function of its own.
class Doctor {
 public:
  Doctor(const HostPaths& paths, const HostState& st, const ServerConfig* cfg)
      : paths_(paths),
        st_(st),
        cfg_(cfg),
        rdmaPort_(cfg ? cfg->rdma.port : 20049),
        // A TCP-only config: the RDMA checks would fail on what it does not want.
        wantRdma_(cfg == nullptr || cfg->rdma.enabled) {}

  void rdmaNotWanted();
  void packages();
  void modules();
  void rdmaDevices();
  void configuredDevice();
  void devicePorts();
  void nfsdRunning();
  void rdmaListener();
  void configExports();
  void liveExports();
  void fabricAndHost(hostcheck::CommandRunner* runner);
  std::vector<DoctorCheck> checks() && { return std::move(out_).checks(); }

 private:
  void pass(std::string name, std::string detail) { out_.pass(std::move(name), std::move(detail)); }
  void warn(std::string name, std::string detail, std::string fix) {
    out_.warn(std::move(name), std::move(detail), std::move(fix));
  }
  void fail(std::string name, std::string detail, std::string fix) {
    out_.fail(std::move(name), std::move(detail), std::move(fix));
  }
  void portState(const std::string& name, const RdmaPort& p, const std::string& netdev);
  void linkLayer(const std::string& name, const RdmaPort& p, const std::string& netdev);

  const HostPaths& paths_;
  const HostState& st_;
  const ServerConfig* cfg_;
  const unsigned rdmaPort_;
  const bool wantRdma_;
  hostcheck::CheckList out_;
};

void Doctor::rdmaNotWanted() {
  if (!wantRdma_) pass("RDMA", "not checked: transports.rdma.enabled is false in " + cfg_->source);
}

void Doctor::packages() {
  for (const char* pkg : {"nfs-kernel-server", "rdma-core"}) {
    if (!wantRdma_ && std::string(pkg) == "rdma-core") continue;
    auto it = st_.packages.find(pkg);
    if (it != st_.packages.end() && it->second) {
      pass(std::string("package ") + pkg, "installed");
    } else {
      fail(std::string("package ") + pkg, "not installed", std::string("apt-get install ") + pkg);
    }
  }
}

void Doctor::modules() {
  const std::string modHint =
      st_.modulesDirPresent
          ? ""
          : " (and " + paths_.resolve(HostPaths::kLibModules).string() + "/" + st_.kernelRelease +
                " is missing: this kernel's modules are not installed here, as in a "
                "container or a VM booted with its own kernel)";
  for (const std::string& mod : {std::string("nfsd"), st_.rdmaServerModule}) {
    if (!wantRdma_ && mod != "nfsd") continue;
    if (st_.moduleLoaded(paths_, mod)) {
      pass("module " + mod, "loaded");
    } else {
      fail("module " + mod, "not loaded" + modHint,
           "modprobe " + mod +
               (st_.modulesDirPresent
                    ? ""
                    : std::string("  # on a kernel built with ") +
                          (mod == "nfsd" ? "CONFIG_NFSD" : "CONFIG_SUNRPC_XPRT_RDMA") +
                          " (e.g. the VM testbed)"));
    }
  }
}

void Doctor::rdmaDevices() {
  if (!wantRdma_) {
    // nothing: no device, port or GID is needed
  } else if (st_.rdmaDevices.empty()) {
    fail("RDMA devices", "none in " + paths_.resolve(HostPaths::kInfiniband).string(),
         "install the NIC's RDMA driver, or for testing: modprobe rdma_rxe && rdma link add rxe0 "
         "type rxe netdev "
         "<eth>");
  } else {
    std::string names;
    for (const auto& d : st_.rdmaDevices) names += (names.empty() ? "" : ", ") + d.name;
    pass("RDMA devices", names);
  }
}

void Doctor::configuredDevice() {
  if (!wantRdma_ || !cfg_ || cfg_->rdmaDevice.empty()) return;
  bool found = std::any_of(st_.rdmaDevices.begin(), st_.rdmaDevices.end(),
                           [&](const RdmaDevice& d) { return d.name == cfg_->rdmaDevice; });
  if (found) {
    pass("RDMA device " + cfg_->rdmaDevice, "present (named in " + cfg_->source + ")");
  } else {
    fail("RDMA device " + cfg_->rdmaDevice, "named in " + cfg_->source + " but not present",
         "rdma link show  # then fix rdma.device in " + cfg_->source);
  }
}

void Doctor::devicePorts() {
  for (const auto& d : st_.rdmaDevices) {
    if (!wantRdma_) break;
    if (cfg_ && !cfg_->rdmaDevice.empty() && d.name != cfg_->rdmaDevice) continue;
    for (const auto& p : d.ports) {
      const std::string name = d.name + " port " + std::to_string(p.number);
      std::set<std::string> netdevs;
      for (const auto& g : p.gids) {
        if (!g.netdev.empty()) netdevs.insert(g.netdev);
      }
      const std::string netdev = netdevs.empty() ? "<netdev>" : *netdevs.begin();
      portState(name, p, netdev);
      linkLayer(name, p, netdev);
    }
  }
}

void Doctor::portState(const std::string& name, const RdmaPort& p, const std::string& netdev) {
  if (p.active()) {
    pass(name + " state", p.state);
  } else {
    fail(name + " state", "'" + (p.state.empty() ? "unknown" : p.state) + "', not ACTIVE",
         p.linkLayer == "InfiniBand"
             ? "start a subnet manager (opensm) and check the cable"
             : "ip link set " + netdev + " up  # and check the cable/switch port");
  }
}

void Doctor::linkLayer(const std::string& name, const RdmaPort& p, const std::string& netdev) {
  if (p.linkLayer == "InfiniBand") {
    pass(name + " link layer", "InfiniBand (IPoIB addresses the peers)");
    return;
  }
  if (p.linkLayer != "Ethernet") {
    warn(name + " link layer", "'" + p.linkLayer + "' (expected Ethernet or InfiniBand)",
         "rdma link show");
    return;
  }
  pass(name + " link layer", "Ethernet (RoCE)");
  auto v2 = std::find_if(p.gids.begin(), p.gids.end(), [&](const RdmaGid& g) {
    return g.type == "RoCE v2" && !g.ip.empty() &&
           (cfg_ == nullptr || cfg_->rdmaNetdev.empty() || g.netdev == cfg_->rdmaNetdev);
  });
  if (v2 != p.gids.end()) {
    pass(name + " RoCE v2 GID",
         "index " + std::to_string(v2->index) + " carries " + v2->ip + " (" + v2->netdev + ")");
  } else {
    fail(name + " RoCE v2 GID", "no RoCE v2 GID carries an IP address",
         "ip addr add <ip>/<prefix> dev " + netdev +
             "  # the GID table follows the netdev's addresses");
  }
}

void Doctor::nfsdRunning() {
  if (!st_.nfsdFsMounted()) {
    fail("nfsd running",
         "no " + paths_.resolve(HostPaths::kThreads).string() + " (nfsd not loaded or not mounted)",
         "systemctl start nfs-server");
  } else if (!st_.nfsdRunning()) {
    fail("nfsd running", "threads = " + trimmed(*st_.threads), "systemctl start nfs-server");
  } else {
    pass("nfsd running", trimmed(*st_.threads) + " threads");
  }
}

void Doctor::rdmaListener() {
  if (!wantRdma_) {
    // not wanted: see the "RDMA" line
  } else if (!st_.portList) {
    fail("RDMA listener", "no port list (" + paths_.resolve(HostPaths::kPortList).string() + ")",
         "nfsrdma-server apply <config>   # or: echo 'rdma " + std::to_string(rdmaPort_) +
             "' > /proc/fs/nfsd/portlist");
  } else if (st_.hasListener("rdma", rdmaPort_)) {
    pass("RDMA listener", "rdma " + std::to_string(rdmaPort_) + " is in the port list");
  } else {
    fail("RDMA listener", "rdma " + std::to_string(rdmaPort_) + " is not in the port list",
         "nfsrdma-server apply <config>   # or: echo 'rdma " + std::to_string(rdmaPort_) +
             "' > /proc/fs/nfsd/portlist");
  }
}

// RDMA connections come from unprivileged "ports": knfsd refuses them
// unless the export says insecure.
void Doctor::configExports() {
  if (!cfg_ || !wantRdma_) return;
  for (const auto& e : cfg_->exports) {
    for (const auto& c : e.clients) {
      if (c.insecure) {
        pass("export " + e.path + " " + c.host, "insecure set (RDMA clients can mount)");
      } else {
        warn("export " + e.path + " " + c.host,
             "no 'insecure': RDMA clients get 'access denied' at mount",
             "set `insecure: true` for this client in " + cfg_->source);
      }
    }
  }
}

// hostcheck's checks of the ports in use (the configured device's, or
// all), whose GIDs devicePorts has already reported, and of the host.
void Doctor::fabricAndHost(hostcheck::CommandRunner* runner) {
  const hostcheck::HostRoot root(paths_.root());
  std::vector<hostcheck::RdmaPortInfo> ports;
  std::vector<std::string> netdevs;
  for (auto& p : hostcheck::readRdmaPorts(root)) {
    if (!wantRdma_ || (cfg_ && !cfg_->rdmaDevice.empty() && p.device != cfg_->rdmaDevice)) continue;
    netdevs.push_back(p.netdev());
    ports.push_back(std::move(p));
  }
  hostcheck::fabricChecks(root, ports, {/*gids=*/false, runner}, out_);
  hostcheck::serverHostChecks(root, netdevs, out_);
}

void Doctor::liveExports() {
  if (!st_.kernelExports) return;
  std::istringstream in(*st_.kernelExports);
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

}  // namespace

std::vector<DoctorCheck> runDoctor(const HostPaths& paths, const HostState& st,
                                   const ServerConfig* cfg, hostcheck::CommandRunner* runner) {
  Doctor doctor(paths, st, cfg);
  doctor.rdmaNotWanted();
  doctor.packages();
  doctor.modules();
  doctor.rdmaDevices();
  doctor.configuredDevice();
  doctor.devicePorts();
  doctor.nfsdRunning();
  doctor.rdmaListener();
  doctor.configExports();
  doctor.liveExports();
  doctor.fabricAndHost(runner);
  return std::move(doctor).checks();
}

}  // namespace nfsrdma::server
