// RdmaPorts: sysfs readers; absence is an empty answer.
#include "hostcheck/RdmaPorts.h"

#include <cstdlib>
#include <optional>

namespace nfsrdma::hostcheck {
namespace fs = std::filesystem;

namespace {

std::optional<unsigned> wholeNumber(const std::string& s) {
  if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos || s.size() > 9)
    return std::nullopt;
  return static_cast<unsigned>(std::stoul(s));
}

std::vector<PortGid> readGids(const HostRoot& root, const fs::path& port) {
  std::vector<PortGid> out;
  for (const auto& idx : root.list(port / "gids")) {
    const auto index = wholeNumber(idx);
    const auto gid = root.read(port / "gids" / idx);
    if (!index || !gid) continue;
    PortGid g;
    g.index = *index;
    g.ip = gidIp(*gid);
    // Unused entries: types/ndevs cannot be read (EINVAL), the GID is zero.
    g.type = root.read(port / "gid_attrs" / "types" / idx).value_or("");
    g.netdev = root.read(port / "gid_attrs" / "ndevs" / idx).value_or("");
    if (!g.ip.empty() || !g.netdev.empty()) out.push_back(g);
  }
  return out;
}

}  // namespace

std::string gidIp(const std::string& gid) {
  std::string hex;
  for (char c : gid) {
    if (c != ':') hex.push_back(c);
  }
  if (hex.size() != 32 || hex.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos)
    return "";
  if (hex == std::string(32, '0')) return "";
  if (hex.compare(0, 4, "fe80") == 0) return "";
  if (hex.compare(0, 24, "00000000000000000000ffff") == 0) {
    std::string ip;
    for (std::size_t i = 0; i < 4; ++i) {
      const auto v = std::strtoul(hex.substr(24 + i * 2, 2).c_str(), nullptr, 16);
      ip += (i ? "." : "") + std::to_string(v);
    }
    return ip;
  }
  return gid;
}

std::string RdmaPortInfo::netdev() const {
  for (const auto& g : gids) {
    if (!g.netdev.empty()) return g.netdev;
  }
  return "";
}

std::vector<RdmaPortInfo> readRdmaPorts(const HostRoot& root) {
  std::vector<RdmaPortInfo> out;
  const fs::path ib = "/sys/class/infiniband";
  for (const auto& dev : root.list(ib)) {
    for (const auto& portName : root.list(ib / dev / "ports")) {
      const auto number = wholeNumber(portName);
      if (!number) continue;
      const fs::path pd = ib / dev / "ports" / portName;
      RdmaPortInfo p;
      p.device = dev;
      p.number = *number;
      p.state = root.read(pd / "state").value_or("");
      p.linkLayer = root.read(pd / "link_layer").value_or("");
      p.gids = readGids(root, pd);
      out.push_back(std::move(p));
    }
  }
  return out;
}

}  // namespace nfsrdma::hostcheck
