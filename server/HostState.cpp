// HostState: sysfs/procfs/dpkg readers. Every reader tolerates absence: a
// host without RDMA or without nfsd is a normal case to report, not a crash.
#include "server/HostState.h"

#include <sys/utsname.h>

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "server/AtomicFile.h"
#include "server/CommandRunner.h"

namespace nfsrdma::server {
namespace fs = std::filesystem;
namespace {

// A probe treats a file it cannot read as absent (unused sysfs GID slots
// answer EINVAL), but not a refused path where the tool writes (a symlink at
// /proc/fs/nfsd/threads) or openat2 missing or filtered: those must stop
// apply and doctor, not look like "no nfsd" (orAbsent).
std::optional<std::string> readSmall(const HostPaths& paths, const fs::path& host) {
  return orAbsent(host, [&] { return readHostFile(paths, host); });
}

std::vector<std::string> sortedChildren(const HostPaths& paths, const fs::path& host) {
  return orAbsent(host, [&] { return listHostDir(paths, host); });
}

// "0000:0000:0000:0000:0000:ffff:0a00:0001" -> "10.0.0.1"; IPv6 kept as is;
// "" for the zero GID and link-local (fe80::) GIDs, which carry no usable IP.
std::string gidIp(const std::string& gid) {
  std::string hex;
  for (char c : gid) {
    if (c != ':') hex.push_back(c);
  }
  if (hex.size() != 32) return "";
  if (hex == std::string(32, '0')) return "";
  if (hex.compare(0, 4, "fe80") == 0) return "";
  if (hex.compare(0, 24, "00000000000000000000ffff") == 0) {
    std::string ip;
    for (int i = 0; i < 4; ++i) {
      unsigned v = static_cast<unsigned>(
          std::stoul(hex.substr(24 + static_cast<std::size_t>(i) * 2, 2), nullptr, 16));
      ip += (i ? "." : "") + std::to_string(v);
    }
    return ip;
  }
  return gid;
}

std::map<std::string, bool> readDpkgStatus(const HostPaths& paths,
                                           const std::vector<std::string>& wanted) {
  std::map<std::string, bool> out;
  for (const auto& w : wanted) out[w] = false;
  std::istringstream in(readSmall(paths, HostPaths::kDpkgStatus).value_or(""));
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
  const fs::path ib = HostPaths::kInfiniband;
  for (const auto& name : sortedChildren(paths, ib)) {
    RdmaDevice dev;
    dev.name = name;
    for (const auto& portName : sortedChildren(paths, ib / name / "ports")) {
      const fs::path pd = ib / name / "ports" / portName;
      RdmaPort port;
      try {
        port.number = static_cast<unsigned>(std::stoul(portName));
      } catch (const std::exception&) {
        continue;
      }
      port.state = trimmed(readSmall(paths, pd / "state").value_or(""));
      port.linkLayer = trimmed(readSmall(paths, pd / "link_layer").value_or(""));
      for (const auto& idx : sortedChildren(paths, pd / "gids")) {
        RdmaGid g;
        try {
          g.index = static_cast<unsigned>(std::stoul(idx));
        } catch (const std::exception&) {
          continue;
        }
        g.gid = trimmed(readSmall(paths, pd / "gids" / idx).value_or(""));
        g.type = trimmed(readSmall(paths, pd / "gid_attrs" / "types" / idx).value_or(""));
        g.netdev = trimmed(readSmall(paths, pd / "gid_attrs" / "ndevs" / idx).value_or(""));
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
  if (auto rel = readSmall(paths, HostPaths::kOsRelease)) {
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
    auto text = h.kernelRelease.empty() ? std::nullopt : readSmall(paths, modDir / index);
    if (text && text->find("/svcrdma.ko") != std::string::npos) h.rdmaServerModule = "svcrdma";
  }
  h.packages = readDpkgStatus(paths, {"nfs-kernel-server", "rdma-core", "nfs-common"});
  h.rdmaDevices = probeRdmaDevices(paths);
  h.threads = readSmall(paths, HostPaths::kThreads);
  h.versions = readSmall(paths, HostPaths::kVersions);
  h.portList = readSmall(paths, HostPaths::kPortList);
  h.leaseTime = readSmall(paths, HostPaths::kLeaseTime);
  h.graceTime = readSmall(paths, HostPaths::kGraceTime);
  h.kernelExports = readSmall(paths, HostPaths::kKernelExports);
  const fs::path svc = HostPaths::kSvcRdmaSysctl;
  for (const auto& name : sortedChildren(paths, svc)) {
    if (auto v = readSmall(paths, svc / name)) h.svcRdma[name] = trimmed(*v);
  }
  h.nfsdctl = findHostTool(paths, "nfsdctl");
  h.exportfs = findHostTool(paths, "exportfs");
  return h;
}

bool HostState::moduleLoaded(const HostPaths& paths, const std::string& name) const {
  const fs::path marker = fs::path(HostPaths::kSysModule) / name;
  if (orAbsent(marker, [&] { return hostPathExists(paths, marker); })) return true;
  auto mods = readSmall(paths, HostPaths::kProcModules);
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
