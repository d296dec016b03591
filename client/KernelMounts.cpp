#include "client/KernelMounts.h"

#include <string>

#include "client/mount/MountPlan.h"

namespace nfsrdma {

TransportKind kernelMountTransport(std::string_view procMounts, std::string_view path) {
  std::string best, proto = "tcp";
  for (const mount::ExistingMount& m : mount::parseProcMounts(procMounts)) {
    const std::string& point = m.mountPoint;
    if (m.type.rfind("nfs", 0) != 0) continue;
    const bool under =
        path == point || (path.rfind(point, 0) == 0 && (point == "/" || path[point.size()] == '/'));
    if (!under || point.size() < best.size()) continue;
    best = point;
    proto = mount::optionValue(m.options, "proto");
  }
  return proto.rfind("rdma", 0) == 0 ? TransportKind::kRdma : TransportKind::kTcp;
}

}  // namespace nfsrdma
