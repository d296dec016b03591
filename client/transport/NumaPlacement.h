// numa=auto: a connection's I/O thread runs on the CPUs of the NUMA node its
// device sits on (the RDMA device, or the NIC holding a TCP connection's
// local address), as the field pins its pollers (SPDK's reactors, perftest's
// --cpu). Here: pinning a thread to a node's CPUs (sysfs text; the sysfs
// root is a parameter so tests can point it at a fake tree). Which node a
// device is on comes from verbs' sysfs discovery, so those look-ups are in
// transport/rdma/DeviceNuma.h, with the one layer that links verbs.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/CpuList.h"

namespace nfsrdma::transport {

// Where a connection's I/O thread was placed, for its stats line.
struct NumaPlacement {
  int node = -1;       // the node it runs on; -1: not pinned
  std::string detail;  // why not, or which CPUs: "node 0 (cpus 0-15)", "rxe0 has no NUMA node"
  // " numa=0" / " numa=none (why)" for a stats line.
  std::string statsField() const;
};

using util::parseCpuList;  // util/CpuList.h

// A socket's local IP address (getsockname), or "" when it has none.
std::string localAddressOf(int fd);
// The network interface holding a local IP address (getifaddrs), or "".
std::string interfaceOf(const std::string& ip);

// Pins the calling thread to the CPUs of node (sysfs nodeN/cpulist). The
// placement says where it runs, or why it was not pinned (what failed).
NumaPlacement pinThisThreadToNode(int node, const std::filesystem::path& sysfs = "/sys");

// numa=auto for a thread whose device's node is 'node' (nullopt: unknown,
// 'what' says whose): pins it when known, else says why not.
NumaPlacement placeThisThread(std::optional<int> node, const std::string& what,
                              const std::filesystem::path& sysfs = "/sys");

}  // namespace nfsrdma::transport
