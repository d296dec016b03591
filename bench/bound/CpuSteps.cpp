#include "bench/bound/CpuSteps.h"

#include <array>
#include <string_view>

#include "bench/bound/BoundSteps.h"

namespace nfsrdma::bench {
namespace {

// The first four are on every kernel's line; a kernel that does not print
// one of the others (older than 2.6.11) has it left out of the sum, while a
// column that is there but has no delta in an interval leaves the interval
// unknown.
constexpr std::size_t kAlwaysPrinted = 4;
constexpr std::array<std::string_view, 8> kColumns{"user",   "nice", "system",  "idle",
                                                   "iowait", "irq",  "softirq", "steal"};

}  // namespace

std::vector<std::optional<HostStep>> hostSteps(const counters::Series& hostCpu) {
  std::array<std::vector<Step>, kColumns.size()> columns;
  std::array<bool, kColumns.size()> printed{};
  for (std::size_t c = 0; c < kColumns.size(); ++c) {
    columns[c] = counterSteps(hostCpu, kColumns[c]);
    printed[c] = c < kAlwaysPrinted || hasCounter(hostCpu, kColumns[c]);
  }
  std::vector<std::optional<HostStep>> steps(columns[0].size());
  for (std::size_t i = 0; i < steps.size(); ++i) {
    std::array<std::int64_t, kColumns.size()> d{};
    bool known = true;
    for (std::size_t c = 0; c < kColumns.size(); ++c) {
      if (!printed[c]) continue;
      known = known && columns[c][i].delta.has_value();
      if (known) d[c] = *columns[c][i].delta;
    }
    if (!known) continue;
    HostStep h;
    for (auto v : d) h.total += v;
    h.busy = h.total - d[3] - d[4];
    h.user = d[0] + d[1];
    h.system = d[2];
    h.softirq = d[5] + d[6];
    steps[i] = h;
  }
  return steps;
}

bool softirqDominates(const std::vector<std::optional<HostStep>>& steps) {
  HostStep sum;
  for (const auto& s : steps) {
    if (!s) continue;
    sum.user += s->user;
    sum.system += s->system;
    sum.softirq += s->softirq;
  }
  return sum.softirq > 0 && sum.softirq > sum.user && sum.softirq > sum.system;
}

std::int64_t busyTicks(const std::vector<std::optional<HostStep>>& steps) {
  std::int64_t busy = 0;
  for (const auto& s : steps) busy += s ? s->busy : 0;
  return busy;
}

std::vector<std::optional<double>> cpusUsed(const counters::Series& s, std::string_view ticks,
                                            double hz) {
  std::vector<std::optional<double>> used;
  for (const auto& step : counterSteps(s, ticks)) {
    if (!step.delta || hz <= 0) {
      used.emplace_back();
      continue;
    }
    used.emplace_back(static_cast<double>(*step.delta) / step.seconds / hz);
  }
  return used;
}

}  // namespace nfsrdma::bench
