// HostState: a read-only snapshot of what the host's kernel and packages look
// like, read through HostPaths (so a --root staging tree is probed the same
// way as the live host). `doctor`, `status` and `plan` all start from it;
// nothing here writes.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "server/HostPaths.h"

namespace nfsrdma::server {

struct RdmaGid {
  unsigned index = 0;
  std::string gid;     // "0000:...:ffff:0a00:0001"
  std::string type;    // "RoCE v2", "IB/RoCE v1"
  std::string netdev;  // from gid_attrs/ndevs
  std::string ip;      // IPv4 for an IPv4-mapped GID, else the IPv6 text; "" for link-local
};

struct RdmaPort {
  unsigned number = 0;
  std::string state;      // "4: ACTIVE"
  std::string linkLayer;  // "Ethernet" (RoCE) or "InfiniBand"
  std::vector<RdmaGid> gids;
  bool active() const;
};

struct RdmaDevice {
  std::string name;  // mlx5_0, rxe0
  std::vector<RdmaPort> ports;
};

struct HostState {
  std::string kernelRelease;
  bool modulesDirPresent = false;        // /lib/modules/<release>
  std::string rdmaServerModule;          // "svcrdma" or "rpcrdma": what this kernel calls it
  std::map<std::string, bool> packages;  // name -> installed
  std::vector<RdmaDevice> rdmaDevices;
  // Raw contents of the nfsd control files (nullopt: absent).
  std::optional<std::string> threads, versions, portList, leaseTime, graceTime;
  std::optional<std::string> kernelExports;
  std::map<std::string, std::string> svcRdma;  // sysctl name -> value (trimmed)
  std::string nfsdctl;                         // host path of nfsdctl, "" when not installed
  std::string exportfs;

  static HostState probe(const HostPaths& paths);

  bool moduleLoaded(const HostPaths& paths, const std::string& name) const;
  bool nfsdRunning() const;  // threads > 0
  bool nfsdFsMounted() const { return threads.has_value(); }
  // Listeners from the port list, e.g. {"rdma 20049", "tcp 2049"}.
  std::vector<std::string> listeners() const;
  bool hasListener(const std::string& proto, unsigned port) const;
};

std::string trimmed(const std::string& s);

}  // namespace nfsrdma::server
