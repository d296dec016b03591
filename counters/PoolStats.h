// /proc/fs/nfsd/pool_stats, read: nfsd's per-pool counters
// (net/sunrpc/svc_xprt.c, svc_pool_stats_show). The header names the
// columns; the parser finds them by name, so a kernel that reorders or
// adds columns still reads. Cumulative since nfsd started: a sampler takes
// deltas.
//
// What the columns mean changed in Linux 6.5-6.7: sockets-enqueued now
// counts every enqueue of a transport (earlier only those that found no
// idle thread), and threads-timedout is always 0. So a starved pool shows
// as threads-woken falling behind sockets-enqueued while packets keep
// arriving, which a verdict pairs with the threads' own states.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace nfsrdma::counters {

struct PoolStats {
  std::uint32_t pool = 0;
  std::uint64_t packetsArrived = 0;
  std::uint64_t socketsEnqueued = 0;
  std::uint64_t threadsWoken = 0;
  std::optional<std::uint64_t> threadsTimedout;  // absent when the header has no such column
};

// One entry per pool line. Throws std::invalid_argument "pool_stats line N:
// ..." naming what was expected: the header must name pool, packets-arrived,
// sockets-enqueued and threads-woken, and each line must have a number per
// column.
std::vector<PoolStats> parsePoolStats(std::string_view text);

}  // namespace nfsrdma::counters
