// CpuList: the cpulist parser.
#include "util/CpuList.h"

#include <sched.h>

#include <charconv>

namespace nfsrdma::util {

std::optional<std::vector<int>> parseCpuList(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  std::vector<int> cpus;
  if (text.empty()) return std::nullopt;
  while (!text.empty()) {
    const auto comma = text.find(',');
    const std::string_view part = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    if (comma != std::string_view::npos && text.empty()) return std::nullopt;  // "1,
    const auto dash = part.find('-');
    int lo = 0, hi = 0;
    const std::string_view a = part.substr(0, dash);
    const std::string_view b = dash == std::string_view::npos ? a : part.substr(dash + 1);
    const auto r1 = std::from_chars(a.data(), a.data() + a.size(), lo);
    const auto r2 = std::from_chars(b.data(), b.data() + b.size(), hi);
    if (a.empty() || b.empty() || r1.ec != std::errc() || r1.ptr != a.data() + a.size() ||
        r2.ec != std::errc() || r2.ptr != b.data() + b.size() || lo < 0 || hi < lo ||
        hi >= CPU_SETSIZE) {
      return std::nullopt;
    }
    for (int c = lo; c <= hi; ++c) cpus.push_back(c);
  }
  return cpus;
}

}  // namespace nfsrdma::util
