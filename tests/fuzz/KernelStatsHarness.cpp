#include "tests/fuzz/KernelStatsHarness.h"

#include <stdexcept>
#include <string_view>

#include "counters/CpuStat.h"
#include "counters/EthtoolStats.h"
#include "counters/MountStats.h"
#include "counters/PoolStats.h"

namespace nfsrdma::fuzz {
namespace {

bool mountsHold(std::string_view text) {
  for (const auto& m : counters::parseMountStats(text)) {
    if (m.fstype != "nfs" && m.fstype != "nfs4") return false;
    if (m.device.empty() || m.mountPoint.empty()) return false;
    for (const auto& [name, op] : m.ops) {
      if (name.empty() || text.find(name) == std::string_view::npos) return false;
    }
    for (const auto& x : m.xprts) {
      if (x.proto.empty()) return false;
      for (const auto& [name, value] : x.fields.values) {
        if (name.empty()) return false;
      }
    }
  }
  return true;
}

bool poolsHold(std::string_view text) {
  // Every pool came from a line of its own: no more pools than lines.
  std::size_t lines = 1;
  for (const char c : text) lines += c == '\n' ? 1 : 0;
  return counters::parsePoolStats(text).size() < lines;
}

bool cpuHolds(std::string_view text) {
  for (const auto& c : counters::parseProcStat(text)) {
    if (c.name.rfind("cpu", 0) != 0 || c.busy() > c.total()) return false;
  }
  return true;
}

bool taskHolds(std::string_view text) {
  const counters::TaskStat t = counters::parseTaskStat(text);
  return t.comm.size() < text.size();
}

// The input as an ethtool string set of as many names as it has 32-byte
// entries, and one more: every name at most 32 bytes, the extra refused.
bool ethtoolHolds(std::string_view block) {
  const std::size_t count = block.size() / 32;
  for (const auto& n : counters::parseEthtoolNames(block, count)) {
    if (n.size() > 32 || n.find('\0') != std::string::npos) return false;
  }
  try {
    counters::parseEthtoolNames(block, count + 1);
  } catch (const std::invalid_argument&) {
    return true;
  }
  return false;
}

template <class Check>
bool refusedOrHolds(Check check, std::string_view text) {
  try {
    return check(text);
  } catch (const std::invalid_argument&) {
    return true;
  } catch (...) {
    return false;
  }
}

}  // namespace

bool runKernelStats(std::span<const std::uint8_t> input) {
  const std::string_view text(reinterpret_cast<const char*>(input.data()), input.size());
  return refusedOrHolds(mountsHold, text) && refusedOrHolds(poolsHold, text) &&
         refusedOrHolds(cpuHolds, text) && refusedOrHolds(taskHolds, text) &&
         refusedOrHolds(ethtoolHolds, text);
}

}  // namespace nfsrdma::fuzz
