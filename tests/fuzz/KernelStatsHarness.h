// The kernel counter files' fuzz harness (fuzz_kernel_stats), shared with
// the unit test that replays its corpus: the input is read as
// /proc/self/mountstats, /proc/fs/nfsd/pool_stats, /proc/stat, a
// thread's stat and an ethtool string set (counters/). Each parser must refuse it with
// std::invalid_argument or return what the text holds: NFS mounts only,
// operations and fields with names, no more pools than lines, busy time
// within the total.
#pragma once

#include <cstdint>
#include <span>

namespace nfsrdma::fuzz {

// False if a parser threw anything else or returned something the input
// cannot hold (the fuzz target aborts then).
bool runKernelStats(std::span<const std::uint8_t> input);

}  // namespace nfsrdma::fuzz
