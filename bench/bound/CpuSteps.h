// CPU time read interval by interval, from the host-cpu series (/proc/stat's
// "cpu" line: user nice system idle iowait irq softirq steal, in ticks) and
// from thread tick counters (bench-threads, nfsd-threads).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "counters/Series.h"

namespace nfsrdma::bench {

// One interval of the host's CPU time, in ticks over all CPUs.
struct HostStep {
  std::int64_t total = 0;    // every column
  std::int64_t busy = 0;     // total less idle and iowait (iowait is idle waiting on I/O)
  std::int64_t user = 0;     // user + nice
  std::int64_t system = 0;   // system
  std::int64_t softirq = 0;  // softirq + irq
  double busyShare() const {
    return total > 0 ? static_cast<double>(busy) / static_cast<double>(total) : 0;
  }
};
// A step per interval; nullopt where a column was not read in it.
std::vector<std::optional<HostStep>> hostSteps(const counters::Series& hostCpu);

// Whether softirq (with irq) is the largest part of the busy time summed
// over the steps: network receive work (rxe, a NIC's queues) then weighs
// more than the programs themselves.
bool softirqDominates(const std::vector<std::optional<HostStep>>& steps);
// The sum of the steps' busy ticks.
std::int64_t busyTicks(const std::vector<std::optional<HostStep>>& steps);

// CPUs' worth a tick counter used in each interval (ticks / seconds / hz);
// nullopt where it has no delta.
std::vector<std::optional<double>> cpusUsed(const counters::Series& s, std::string_view ticks,
                                            double hz);

}  // namespace nfsrdma::bench
