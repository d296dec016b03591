// What a file cell's verdict needs besides its counters (bench/bound):
// the transport its bytes crossed, its depth asked and granted, and its
// figures.
#pragma once

#include "bench/bound/Bound.h"
#include "bench/file/FileRun.h"

namespace nfsrdma::bench {

// "rdma" or "tcp" (our client, libnfs), "kernel-nfs" (a path on an NFS
// mount), "local" (a path), "block" (a device).
CellFacts cellFacts(const TargetSpec& target, const RunResult& r);

}  // namespace nfsrdma::bench
