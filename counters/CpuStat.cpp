#include "counters/CpuStat.h"

#include <stdexcept>

#include "counters/TextFields.h"

namespace nfsrdma::counters {
namespace {

// 2^56 ticks is millions of years at any USER_HZ: a larger value is no
// tick count, and the sums of nine of them cannot wrap below it.
constexpr std::uint64_t kMaxTicks = 1ULL << 56;

std::uint64_t ticks(std::size_t line, std::string_view word) {
  if (const auto n = wholeNumber<std::uint64_t>(word); n && *n <= kMaxTicks) return *n;
  throw std::invalid_argument("/proc/stat line " + std::to_string(line) + ": '" +
                              std::string(word) + "' is not a tick count (0.." +
                              std::to_string(kMaxTicks) + ")");
}

CpuTimes cpuLine(std::size_t line, const std::vector<std::string_view>& w) {
  if (w.size() < 5) {
    throw std::invalid_argument("/proc/stat line " + std::to_string(line) +
                                ": a cpu line needs user, nice, system and idle");
  }
  CpuTimes c;
  c.name = std::string(w[0]);
  c.user = ticks(line, w[1]);
  c.nice = ticks(line, w[2]);
  c.system = ticks(line, w[3]);
  c.idle = ticks(line, w[4]);
  std::optional<std::uint64_t>* rest[] = {&c.iowait, &c.irq, &c.softirq, &c.steal};
  for (std::size_t i = 0; i < 4 && 5 + i < w.size(); ++i) *rest[i] = ticks(line, w[5 + i]);
  return c;
}

}  // namespace

std::uint64_t CpuTimes::total() const {
  return user + nice + system + idle + iowait.value_or(0) + irq.value_or(0) + softirq.value_or(0) +
         steal.value_or(0);
}

std::uint64_t CpuTimes::busy() const {
  return total() - idle - iowait.value_or(0);
}

std::vector<CpuTimes> parseProcStat(std::string_view text) {
  std::vector<CpuTimes> cpus;
  forEachLine(text, [&](std::size_t number, std::string_view line) {
    const auto w = splitWords(line);
    if (!w.empty() && w[0].substr(0, 3) == "cpu") cpus.push_back(cpuLine(number, w));
  });
  return cpus;
}

TaskStat parseTaskStat(std::string_view text) {
  const std::size_t open = text.find('(');
  const std::size_t close = text.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) {
    throw std::invalid_argument("task stat: expected 'PID (COMM) STATE ...'");
  }
  TaskStat t;
  t.comm = std::string(text.substr(open + 1, close - open - 1));
  // After the name: field 3 (state) is the first word.
  const auto w = splitWords(text.substr(close + 1));
  if (w.size() < 13 || w[0].size() != 1) {
    throw std::invalid_argument("task stat: expected a state and at least fields 3 to 15 after '" +
                                t.comm + "'");
  }
  t.state = w[0][0];
  const auto field = [&](std::size_t n) -> std::string_view { return w[n - 3]; };
  const auto utime = wholeNumber<std::uint64_t>(field(14));
  const auto stime = wholeNumber<std::uint64_t>(field(15));
  if (!utime || !stime)
    throw std::invalid_argument("task stat: utime and stime must be whole numbers");
  t.utime = *utime;
  t.stime = *stime;
  if (w.size() >= 39 - 2) t.processor = wholeNumber<int>(field(39));
  return t;
}

}  // namespace nfsrdma::counters
