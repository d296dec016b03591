// ConfigHostChecks: the checks of a parsed config that need the host, made
// before plan, apply or serve writes anything: the export paths and the
// RDMA device and netdev exist, and no export gives root to the world
// without --allow-insecure. Every probe goes through HostFiles, confined to
// the root (a symlink resolves with the root as "/", never above it), and a
// failure is a ConfigError at the config entry it is about.
#pragma once

#include "server/HostPaths.h"
#include "server/ServerConfig.h"

namespace nfsrdma::server {

// Every export path is an existing directory, the RDMA device / netdev exist
// under /sys/class, and rw to a client that admits every host ('*',
// 0.0.0.0/0, ::/0, '*.*': admitsEveryHost() in ExportsFile.h) with
// no_root_squash, or with anonuid=0 / anongid=0 (the squashed users become
// root or root's group), is refused unless allowInsecure. Throws ConfigError
// at the offending entry; a kernel without openat2 under --root is the
// host's error (ConfinementUnavailable), not the config's.
void validateOnHost(const ServerConfig& config, const HostPaths& paths, bool allowInsecure);

}  // namespace nfsrdma::server
