// CPU time as the kernel counts it, read: /proc/stat's cpu lines (the host
// and each CPU) and /proc/PID/task/TID/stat (one thread). Pure parsers;
// times are in clock ticks (USER_HZ, sysconf(_SC_CLK_TCK)), cumulative, so
// a sampler takes deltas.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nfsrdma::counters {

// One `cpu` or `cpuN` line of /proc/stat (fs/proc/stat.c). Guest time is
// already inside user. Fields a kernel did not print are absent.
struct CpuTimes {
  std::string name;  // "cpu" (all), "cpu0", ...
  std::uint64_t user = 0, nice = 0, system = 0, idle = 0;
  std::optional<std::uint64_t> iowait, irq, softirq, steal;
  // Every tick counted, and those not idle (idle and iowait left out).
  std::uint64_t total() const;
  std::uint64_t busy() const;
};

// The cpu lines, in the file's order; other lines are left alone. Throws
// std::invalid_argument "/proc/stat line N: ..." for a cpu line with fewer
// than four numbers or a word that is not one.
std::vector<CpuTimes> parseProcStat(std::string_view text);

// One thread's stat (fs/proc/array.c do_task_stat): its name, state and CPU
// time. The name is in parentheses and may hold spaces and ')', so the
// fields are counted from the last ')'.
struct TaskStat {
  std::string comm;
  char state = '?';              // R, S, D, I (idle kernel thread), ...
  std::uint64_t utime = 0;       // field 14, ticks in user mode
  std::uint64_t stime = 0;       // field 15, ticks in the kernel
  std::optional<int> processor;  // field 39, the CPU it last ran on
};

// Throws std::invalid_argument "task stat: ..." naming what was expected.
TaskStat parseTaskStat(std::string_view text);

}  // namespace nfsrdma::counters
