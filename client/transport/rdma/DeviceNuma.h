// numa=auto's look-ups of the NUMA node a device sits on, from verbs' sysfs
// discovery (verbs/DeviceDiscovery.h): here, with the RDMA transport, the
// one client layer that links verbs. The TCP transport is handed the node
// its connection's interface is on (ClientSetup.cpp); pinning a thread to a
// node is transport/NumaPlacement.h's. The sysfs root is a parameter so
// tests can point it at a fake tree.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace nfsrdma::transport::rdma {

// The node of an RDMA device (its bus device's numa_node, else its netdev's),
// or nullopt (a virtual device such as rxe on a virtual NIC has none).
std::optional<int> rdmaDeviceNumaNode(const std::string& device,
                                      const std::filesystem::path& sysfs = "/sys");
// The node of the network interface holding a local IP address, or nullopt
// (loopback and virtual interfaces have none; an address no interface holds).
std::optional<int> localAddressNumaNode(const std::string& ip,
                                        const std::filesystem::path& sysfs = "/sys");

}  // namespace nfsrdma::transport::rdma
