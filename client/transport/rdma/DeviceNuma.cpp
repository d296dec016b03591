#include "client/transport/rdma/DeviceNuma.h"

#include <exception>

#include "client/transport/NumaPlacement.h"
#include "verbs/DeviceDiscovery.h"

namespace nfsrdma::transport::rdma {
namespace fs = std::filesystem;

std::optional<int> rdmaDeviceNumaNode(const std::string& device, const fs::path& sysfs) {
  verbs::DiscoveryOptions o;
  o.sysfsRoot = sysfs;
  o.queryVerbs = false;
  try {
    for (const verbs::DeviceInfo& d : verbs::discoverDevices(o)) {
      if (d.name == device) return d.numaNode >= 0 ? std::optional<int>(d.numaNode) : std::nullopt;
    }
  } catch (const std::exception&) {
    // No device in this sysfs: no node to go by.
  }
  return std::nullopt;
}

std::optional<int> localAddressNumaNode(const std::string& ip, const fs::path& sysfs) {
  const std::string name = interfaceOf(ip);
  if (name.empty()) return std::nullopt;
  const int node = verbs::netdevNumaNode(name, sysfs);
  return node >= 0 ? std::optional<int>(node) : std::nullopt;
}

}  // namespace nfsrdma::transport::rdma
