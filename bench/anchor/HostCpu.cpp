#include "bench/anchor/HostCpu.h"

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "counters/CpuStat.h"
#include "counters/HostCounters.h"

namespace nfsrdma::bench {
std::optional<std::pair<double, double>> parseProcStatCpuLine(std::string_view line,
                                                              double ticksPerSecond) {
  if (ticksPerSecond <= 0) return std::nullopt;
  try {
    const auto cpus = counters::parseProcStat(line);
    // The host's line with every mode up to steal (guest time is already
    // inside user and nice, so it is not added again).
    if (cpus.size() != 1 || cpus[0].name != "cpu" || !cpus[0].steal) return std::nullopt;
    return std::make_pair(static_cast<double>(cpus[0].busy()) / ticksPerSecond,
                          static_cast<double>(cpus[0].total()) / ticksPerSecond);
  } catch (const std::invalid_argument&) {
    return std::nullopt;
  }
}

std::optional<double> parseProcPidStatCpu(std::string_view text, double ticksPerSecond) {
  if (ticksPerSecond <= 0) return std::nullopt;
  try {
    const counters::TaskStat t = counters::parseTaskStat(text);
    return static_cast<double>(t.utime + t.stime) / ticksPerSecond;
  } catch (const std::invalid_argument&) {
    return std::nullopt;
  }
}

HostCpuSample sampleHostCpu(pid_t watched) {
  const double ticks = static_cast<double>(::sysconf(_SC_CLK_TCK));
  HostCpuSample s;
  const std::string stat = counters::readSmallFile("/proc/stat").value_or("");
  if (!stat.empty()) {
    if (auto bt = parseProcStatCpuLine(stat.substr(0, stat.find('\n')), ticks)) {
      s.busySeconds = bt->first;
      s.totalSeconds = bt->second;
    }
  }
  if (watched > 0)
    s.processSeconds = parseProcPidStatCpu(
        counters::readSmallFile("/proc/" + std::to_string(watched) + "/stat").value_or(""), ticks);
  return s;
}

std::optional<HostCpuShare> hostCpuShare(const HostCpuSample& before, const HostCpuSample& after,
                                         double ownCpuSeconds, std::uint64_t ops) {
  const double total = after.totalSeconds - before.totalSeconds;
  const double busy = after.busySeconds - before.busySeconds;
  if (ops == 0 || total <= 0 || busy < 0) return std::nullopt;
  HostCpuShare share;
  share.busyFraction = busy / total;
  share.othersMicrosPerOp = std::max(0.0, busy - ownCpuSeconds) * 1e6 / static_cast<double>(ops);
  if (before.processSeconds && after.processSeconds &&
      *after.processSeconds >= *before.processSeconds) {
    share.serverMicrosPerOp =
        (*after.processSeconds - *before.processSeconds) * 1e6 / static_cast<double>(ops);
  }
  return share;
}

}  // namespace nfsrdma::bench
