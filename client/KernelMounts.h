// What the kernel's NFS client has mounted, for tools that measure through
// a mount (the benchmarks' path engine): which transport the mount holding
// a path uses. Reads the text of /proc/self/mounts handed in, so tests can
// hand in their own.
#pragma once

#include <string_view>

#include "client/ClientOptions.h"

namespace nfsrdma {

// The transport of the NFS mount that holds path (absolute, symbolic links
// resolved) in procMounts, the text of /proc/self/mounts: of the nfs and
// nfs4 mounts on path's way the one with the longest mount point; rdma when
// its proto= says rdma (or rdma6), else tcp, also when no NFS mount holds it.
TransportKind kernelMountTransport(std::string_view procMounts, std::string_view path);

}  // namespace nfsrdma
