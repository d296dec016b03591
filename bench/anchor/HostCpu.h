// CPU time outside this process, read from /proc: the whole host's busy time
// and one other process's (a server this run started). When the server
// shares the host with the client, a client's rate is bounded by what the
// rest of the host spends per operation; the anchor prints that bound.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>

namespace nfsrdma::bench {

struct HostCpuSample {
  double busySeconds = 0;                // all CPUs: every mode but idle and iowait
  double totalSeconds = 0;               // all CPUs: every mode
  std::optional<double> processSeconds;  // the watched process's user+system (all its threads)
};

// Samples /proc/stat and, when watched > 0, /proc/<watched>/stat. A file
// that cannot be read or parsed leaves its figures at zero / empty.
HostCpuSample sampleHostCpu(pid_t watched);

// The aggregate "cpu " line of /proc/stat, in clock ticks: {busy, total}.
std::optional<std::pair<double, double>> parseProcStatCpuLine(std::string_view line,
                                                              double ticksPerSecond);
// utime + stime of a /proc/<pid>/stat text (the command name may hold
// spaces and parentheses: the fields start after its last ')').
std::optional<double> parseProcPidStatCpu(std::string_view text, double ticksPerSecond);

// What the rest of the host spent per operation between two samples, given
// this process's CPU seconds and the operations it completed.
struct HostCpuShare {
  double busyFraction = 0;                  // host busy time / (CPUs x wall time)
  double othersMicrosPerOp = 0;             // host busy time minus this process's, per op
  std::optional<double> serverMicrosPerOp;  // the watched process alone, per op
};
std::optional<HostCpuShare> hostCpuShare(const HostCpuSample& before, const HostCpuSample& after,
                                         double ownCpuSeconds, std::uint64_t ops);

}  // namespace nfsrdma::bench
