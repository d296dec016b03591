// What libnfs itself can do per call, shared by the file benchmark's libnfs
// engine and the anchor's libnfs read driver.
#pragma once

#include <cstddef>

namespace nfsrdma::bench {

// The largest reply libnfs 4.0.0 takes: a 2 MiB READ fails its context
// ("nfs_service failed") even from a server that allows it, so 1 MiB is the
// most libnfs itself can do per call.
inline constexpr std::size_t kLibnfsLargestIo = 1U << 20;

}  // namespace nfsrdma::bench
