// RdmaPorts: the RDMA ports of a host as sysfs shows them
// (/sys/class/infiniband/DEV/ports/N: state, link_layer, the GID table with each entry's type and
// netdev), for the fabric checks both doctors run.
#pragma once

#include <string>
#include <vector>

#include "hostcheck/HostRoot.h"

namespace nfsrdma::hostcheck {

struct PortGid {
  unsigned index = 0;
  std::string type;    // "RoCE v2", "IB/RoCE v1"
  std::string netdev;  // gid_attrs/ndevs
  std::string ip;      // see gidIp
};

struct RdmaPortInfo {
  std::string device;  // rxe0, mlx5_0
  unsigned number = 0;
  std::string state;          // "4: ACTIVE"
  std::string linkLayer;      // "Ethernet" or "InfiniBand"
  std::vector<PortGid> gids;  // entries with an address or a netdev
  std::string name() const { return device + " port " + std::to_string(number); }
  bool roce() const { return linkLayer == "Ethernet"; }
  // The netdev behind the port: that of its first GID with one, else "".
  std::string netdev() const;
};

// Every port of every device under /sys/class/infiniband; none when absent.
std::vector<RdmaPortInfo> readRdmaPorts(const HostRoot& root);

// "0000:0000:0000:0000:0000:ffff:0a00:0001" -> "10.0.0.1"; IPv6 kept as is;
// "" for the zero GID and link-local (fe80::) GIDs, which carry no usable IP.
std::string gidIp(const std::string& gid);

}  // namespace nfsrdma::hostcheck
