// What a cell samples while it runs (counters/Series.h names the sources):
// our client's counters for nfs targets, the mount's mountstats for a path
// on a kernel NFS mount, and, for every target that crosses a network,
// the RDMA ports with their netdevs (statistics/ and the driver's pause,
// discard and congestion counters, ethtool -S) and, when this host runs nfsd, its
// pools, threads and svcrdma's statistics; the host's CPU and the
// benchmark's own threads always. Sources the host lacks read nothing and
// so have no series.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <vector>

#include "bench/file/engines/EngineTypes.h"
#include "counters/Sampler.h"

namespace nfsrdma::bench {

// How often a cell's counters are read unless --sample-interval says otherwise.
inline constexpr std::chrono::milliseconds kDefaultSampleInterval{250};

// The client source's reader gives the cell's live counters (CellJobs::live);
// wanted is the requests the cell asks to keep in flight (iodepth x jobs).
std::vector<counters::CounterSource> cellSources(const TargetSpec& target,
                                                 std::function<std::optional<ClientLive>()> client,
                                                 std::uint32_t wanted,
                                                 const std::filesystem::path& root = "/");

// The client source's values: calls, replies, timeouts, reconnects,
// connections_lost, slot_waits, retransmits (counts); wanted, in_flight,
// credits, slots (gauges).
counters::NamedValues clientValues(const ClientLive& live, std::uint32_t wanted);

}  // namespace nfsrdma::bench
