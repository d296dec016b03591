// CPU placement for the link benchmark. Bandwidth on a remote NUMA node can be
// far below the local one, and users rarely know which node a NIC hangs off;
// `--numa auto` pins the process to the device's node before any buffer is
// allocated, so first-touch puts the buffers there too.
#pragma once

#include <filesystem>
#include <string>

#include "bench/link/LinkOptions.h"

namespace nfsrdma::bench {

// Applies --cpu / --numa (deviceNumaNode: -1 when unknown). Returns a banner
// text ("cpu 3", "numa node 0 (cpus 0-15)", "not pinned"). Throws
// std::system_error naming sched_setaffinity, or std::invalid_argument.
std::string applyPlacement(const LinkOptions& options, int deviceNumaNode,
                           const std::filesystem::path& sysfsRoot = "/sys");

}  // namespace nfsrdma::bench
