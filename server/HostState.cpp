// HostState: sysfs/procfs/dpkg readers. Every reader tolerates absence: a
// host without RDMA or without nfsd is a normal case to report, not a crash.
#include "server/HostState.h"

#include <sys/utsname.h>

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "hostcheck/RdmaPorts.h"
#include "server/CommandRunner.h"
#include "server/HostFiles.h"

namespace nfsrdma::server {
namespace fs = std::filesystem;
namespace {

using hostcheck::gidIp;  // hostcheck/RdmaPorts.h

std::map<std::string, bool> readDpkgStatus(const HostPaths& paths,
                                           const std::vector<std::string>& wanted) {
  std::map<std::string, bool> out;
  for (const auto& w : wanted) out[w] = false;
  std::istringstream in(readHostFileOrAbsent(paths, HostPaths::kDpkgStatus).value_or(""));
  std::string line, pkg;
  while (std::getline(in, line)) {
    if (line.rfind("Package: ", 0) == 0) {
      pkg = trimmed(line.substr(9));
    } else if (line.rfind("Status: ", 0) == 0 && out.count(pkg)) {
      if (line.find("install ok installed") != std::string::npos) out[pkg] = true;
    } else if (line.empty()) {
      pkg.clear();
    }
  }
  return out;
}

}  // namespace

std::string trimmed(const std::string& s) {
  auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  auto e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

bool RdmaPort::active() const {
  return state.find("ACTIVE") != std::string::npos;
}

// /sys/class/infiniband: each device's ports, their state and their GIDs.
static std::vector<RdmaDevice> probeRdmaDevices(const HostPaths& paths) {
  std::vector<RdmaDevice> out;
  // A sysfs attribute's value, trimmed; "" when it cannot be read.
  const auto attr = [&paths](const fs::path& p) {
    return trimmed(readHostFileOrAbsent(paths, p).value_or(""));
  };
  const fs::path ib = HostPaths::kInfiniband;
  for (const auto& name : listHostDirOrAbsent(paths, ib)) {
    RdmaDevice dev;
    dev.name = name;
    for (const auto& portName : listHostDirOrAbsent(paths, ib / name / "ports")) {
      const fs::path pd = ib / name / "ports" / portName;
      RdmaPort port;
      try {
        port.number = static_cast<unsigned>(std::stoul(portName));
      } catch (const std::exception&) {
        continue;
      }
      port.state = attr(pd / "state");
      port.linkLayer = attr(pd / "link_layer");
      for (const auto& idx : listHostDirOrAbsent(paths, pd / "gids")) {
        RdmaGid g;
        try {
          g.index = static_cast<unsigned>(std::stoul(idx));
        } catch (const std::exception&) {
          continue;
        }
        g.gid = attr(pd / "gids" / idx);
        g.type = attr(pd / "gid_attrs" / "types" / idx);
        g.netdev = attr(pd / "gid_attrs" / "ndevs" / idx);
        g.ip = gidIp(g.gid);
        if (!g.gid.empty() && (!g.ip.empty() || !g.netdev.empty())) port.gids.push_back(g);
      }
      dev.ports.push_back(port);
    }
    out.push_back(dev);
  }
  return out;
}

HostState HostState::probe(const HostPaths& paths) {
  HostState h;
  if (auto rel = readHostFileOrAbsent(paths, HostPaths::kOsRelease)) {
    h.kernelRelease = trimmed(*rel);
  } else if (paths.isLiveHost()) {
    utsname u{};
    if (::uname(&u) == 0) h.kernelRelease = u.release;
  }
  const fs::path modDir = fs::path(HostPaths::kLibModules) / h.kernelRelease;
  h.modulesDirPresent =
      !h.kernelRelease.empty() && orAbsent(modDir, [&] { return hostPathExists(paths, modDir); });
  // Since Linux 4.17 the server side lives in rpcrdma (svcrdma is an alias).
  h.rdmaServerModule = "rpcrdma";
  for (const char* index : {"modules.dep", "modules.builtin"}) {
    auto text =
        h.kernelRelease.empty() ? std::nullopt : readHostFileOrAbsent(paths, modDir / index);
    if (text && text->find("/svcrdma.ko") != std::string::npos) h.rdmaServerModule = "svcrdma";
  }
  h.packages = readDpkgStatus(paths, {"nfs-kernel-server", "rdma-core", "nfs-common"});
  h.rdmaDevices = probeRdmaDevices(paths);
  h.threads = readHostFileOrAbsent(paths, HostPaths::kThreads);
  h.versions = readHostFileOrAbsent(paths, HostPaths::kVersions);
  h.portList = readHostFileOrAbsent(paths, HostPaths::kPortList);
  h.leaseTime = readHostFileOrAbsent(paths, HostPaths::kLeaseTime);
  h.graceTime = readHostFileOrAbsent(paths, HostPaths::kGraceTime);
  h.kernelExports = readHostFileOrAbsent(paths, HostPaths::kKernelExports);
  const fs::path svc = HostPaths::kSvcRdmaSysctl;
  for (const auto& name : listHostDirOrAbsent(paths, svc)) {
    if (auto v = readHostFileOrAbsent(paths, svc / name)) h.svcRdma[name] = trimmed(*v);
  }
  h.nfsdctl = findHostTool(paths, "nfsdctl");
  h.exportfs = findHostTool(paths, "exportfs");
  return h;
}

bool HostState::moduleLoaded(const HostPaths& paths, const std::string& name) const {
  const fs::path marker = fs::path(HostPaths::kSysModule) / name;
  if (orAbsent(marker, [&] { return hostPathExists(paths, marker); })) return true;
  auto mods = readHostFileOrAbsent(paths, HostPaths::kProcModules);
  if (!mods) return false;
  std::istringstream in(*mods);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(name + " ", 0) == 0) return true;
  }
  return false;
}

bool HostState::nfsdRunning() const {
  if (!threads) return false;
  try {
    return std::stoul(trimmed(*threads)) > 0;
  } catch (const std::exception&) {
    return false;
  }
}

std::vector<std::string> HostState::listeners() const {
  std::vector<std::string> out;
  if (!portList) return out;
  std::istringstream in(*portList);
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::string proto, port;
    if (words >> proto >> port) out.push_back(proto + " " + port);
  }
  return out;
}

bool HostState::hasListener(const std::string& proto, unsigned port) const {
  auto l = listeners();
  return std::find(l.begin(), l.end(), proto + " " + std::to_string(port)) != l.end();
}

}  // namespace nfsrdma::server
