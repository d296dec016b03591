// HostState: sysfs/procfs/dpkg readers. Every reader tolerates absence: a
// host without RDMA or without nfsd is a normal case to report, not a crash.
#include "server/HostState.h"

#include <sys/utsname.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "server/AtomicFile.h"
#include "server/CommandRunner.h"

namespace nfsrdma::server {
namespace fs = std::filesystem;
namespace {

std::optional<std::string> readSmall(const fs::path& p) {
  try {
    return readFileIfExists(p);
  } catch (const std::exception&) {
    return std::nullopt;  // sysfs attributes may refuse reads (unused GID slots: EINVAL)
  }
}

std::vector<std::string> sortedChildren(const fs::path& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    out.push_back(it->path().filename().string());
  }
  std::sort(out.begin(), out.end());
  return out;
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

std::map<std::string, bool> readDpkgStatus(const fs::path& status,
                                           const std::vector<std::string>& wanted) {
  std::map<std::string, bool> out;
  for (const auto& w : wanted) out[w] = false;
  std::ifstream in(status);
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

HostState HostState::probe(const HostPaths& paths) {
  HostState h;
  if (auto rel = readSmall(paths.resolve(HostPaths::kOsRelease))) {
    h.kernelRelease = trimmed(*rel);
  } else if (paths.isLiveHost()) {
    utsname u{};
    if (::uname(&u) == 0) h.kernelRelease = u.release;
  }
  const fs::path modDir = paths.resolve(HostPaths::kLibModules) / h.kernelRelease;
  std::error_code ec;
  h.modulesDirPresent = !h.kernelRelease.empty() && fs::is_directory(modDir, ec);
  // Since Linux 4.17 the server side lives in rpcrdma (svcrdma is an alias).
  h.rdmaServerModule = "rpcrdma";
  for (const char* index : {"modules.dep", "modules.builtin"}) {
    auto text = readSmall(modDir / index);
    if (text && text->find("/svcrdma.ko") != std::string::npos) h.rdmaServerModule = "svcrdma";
  }
  h.packages = readDpkgStatus(paths.resolve(HostPaths::kDpkgStatus),
                              {"nfs-kernel-server", "rdma-core", "nfs-common"});

  const fs::path ib = paths.resolve(HostPaths::kInfiniband);
  for (const auto& name : sortedChildren(ib)) {
    RdmaDevice dev;
    dev.name = name;
    for (const auto& portName : sortedChildren(ib / name / "ports")) {
      const fs::path pd = ib / name / "ports" / portName;
      RdmaPort port;
      try {
        port.number = static_cast<unsigned>(std::stoul(portName));
      } catch (const std::exception&) {
        continue;
      }
      port.state = trimmed(readSmall(pd / "state").value_or(""));
      port.linkLayer = trimmed(readSmall(pd / "link_layer").value_or(""));
      for (const auto& idx : sortedChildren(pd / "gids")) {
        RdmaGid g;
        try {
          g.index = static_cast<unsigned>(std::stoul(idx));
        } catch (const std::exception&) {
          continue;
        }
        g.gid = trimmed(readSmall(pd / "gids" / idx).value_or(""));
        g.type = trimmed(readSmall(pd / "gid_attrs" / "types" / idx).value_or(""));
        g.netdev = trimmed(readSmall(pd / "gid_attrs" / "ndevs" / idx).value_or(""));
        g.ip = gidIp(g.gid);
        if (!g.gid.empty() && (!g.ip.empty() || !g.netdev.empty())) port.gids.push_back(g);
      }
      dev.ports.push_back(port);
    }
    h.rdmaDevices.push_back(dev);
  }

  h.threads = readSmall(paths.resolve(HostPaths::kThreads));
  h.versions = readSmall(paths.resolve(HostPaths::kVersions));
  h.portList = readSmall(paths.resolve(HostPaths::kPortList));
  h.leaseTime = readSmall(paths.resolve(HostPaths::kLeaseTime));
  h.graceTime = readSmall(paths.resolve(HostPaths::kGraceTime));
  h.kernelExports = readSmall(paths.resolve(HostPaths::kKernelExports));
  const fs::path svc = paths.resolve(HostPaths::kSvcRdmaSysctl);
  for (const auto& name : sortedChildren(svc)) {
    if (auto v = readSmall(svc / name)) h.svcRdma[name] = trimmed(*v);
  }
  h.nfsdctl = findHostTool(paths, "nfsdctl");
  h.exportfs = findHostTool(paths, "exportfs");
  return h;
}

bool HostState::moduleLoaded(const HostPaths& paths, const std::string& name) const {
  std::error_code ec;
  if (fs::exists(paths.resolve(HostPaths::kSysModule) / name, ec)) return true;
  auto mods = readSmall(paths.resolve(HostPaths::kProcModules));
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
