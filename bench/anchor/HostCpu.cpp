#include "bench/anchor/HostCpu.h"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace nfsrdma::bench {
namespace {

std::vector<std::string_view> fields(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\n' || s[i] == '\t')) ++i;
    const std::size_t start = i;
    while (i < s.size() && s[i] != ' ' && s[i] != '\n' && s[i] != '\t') ++i;
    if (i > start) out.push_back(s.substr(start, i - start));
  }
  return out;
}

std::optional<std::uint64_t> number(std::string_view s) {
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || end != s.data() + s.size()) return std::nullopt;
  return v;
}

std::string readWhole(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

std::optional<std::pair<double, double>> parseProcStatCpuLine(std::string_view line,
                                                              double ticksPerSecond) {
  const std::vector<std::string_view> f = fields(line);
  // cpu user nice system idle iowait irq softirq steal [guest guest_nice]:
  // guest time is already inside user and nice, so it is not added again.
  if (f.size() < 9 || f[0] != "cpu" || ticksPerSecond <= 0) return std::nullopt;
  std::uint64_t v[8];
  for (int i = 0; i < 8; ++i) {
    const auto n = number(f[static_cast<std::size_t>(i) + 1]);
    if (!n) return std::nullopt;
    v[i] = *n;
  }
  const std::uint64_t idle = v[3] + v[4];
  const std::uint64_t busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
  return std::make_pair(static_cast<double>(busy) / ticksPerSecond,
                        static_cast<double>(busy + idle) / ticksPerSecond);
}

std::optional<double> parseProcPidStatCpu(std::string_view text, double ticksPerSecond) {
  const std::size_t close = text.rfind(')');
  if (close == std::string_view::npos || ticksPerSecond <= 0) return std::nullopt;
  // After the name: state ppid pgrp session tty_nr tpgid flags minflt
  // cminflt majflt cmajflt utime stime (fields 3..15 of proc(5)).
  const std::vector<std::string_view> f = fields(text.substr(close + 1));
  if (f.size() < 13) return std::nullopt;
  const auto utime = number(f[11]);
  const auto stime = number(f[12]);
  if (!utime || !stime) return std::nullopt;
  return static_cast<double>(*utime + *stime) / ticksPerSecond;
}

HostCpuSample sampleHostCpu(pid_t watched) {
  const double ticks = static_cast<double>(::sysconf(_SC_CLK_TCK));
  HostCpuSample s;
  std::ifstream stat("/proc/stat");
  std::string line;
  if (std::getline(stat, line)) {
    if (auto bt = parseProcStatCpuLine(line, ticks)) {
      s.busySeconds = bt->first;
      s.totalSeconds = bt->second;
    }
  }
  if (watched > 0)
    s.processSeconds =
        parseProcPidStatCpu(readWhole("/proc/" + std::to_string(watched) + "/stat"), ticks);
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
