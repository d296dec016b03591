// The host facts a mount plan needs (mount/MountPlan.h is pure), read from
// a root: /proc/mounts, whether the kernel's RPC-over-RDMA client module is
// loaded, and the running kernel's version. One reader for the mount
// helper and for `nfsrdma-bench tune`'s own trial mounts.
#pragma once

#include <filesystem>

#include "client/mount/MountPlan.h"

namespace nfsrdma::mount {

// root: "/" on a live host; a staged tree in tests. What cannot be read is
// left empty (no mounts, module absent, version 0.0).
HostFacts readHostFacts(const std::filesystem::path& root = "/");

}  // namespace nfsrdma::mount
