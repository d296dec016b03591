// LinkPlacement: sched_setaffinity from --cpu / --numa and sysfs cpulists.
#include "bench/link/LinkPlacement.h"

#include <sched.h>

#include <cerrno>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <system_error>

namespace nfsrdma::bench {

namespace {

void pin(const cpu_set_t& set) {
  if (sched_setaffinity(0, sizeof set, &set) != 0) {
    throw std::system_error(errno, std::generic_category(), "sched_setaffinity");
  }
}

// Parses "0-3,8,10-11" into set; returns false when malformed/empty.
bool parseCpuList(const std::string& list, cpu_set_t& set) {
  CPU_ZERO(&set);
  std::stringstream ss(list);
  std::string part;
  int count = 0;
  while (std::getline(ss, part, ',')) {
    if (part.empty()) continue;
    const auto dash = part.find('-');
    try {
      const int lo = std::stoi(part.substr(0, dash));
      const int hi = dash == std::string::npos ? lo : std::stoi(part.substr(dash + 1));
      for (int c = lo; c <= hi && c < CPU_SETSIZE; ++c) {
        CPU_SET(static_cast<unsigned>(c), &set);
        ++count;
      }
    } catch (const std::exception&) {
      return false;
    }
  }
  return count > 0;
}

}  // namespace

std::string applyPlacement(const LinkOptions& o, int deviceNumaNode,
                           const std::filesystem::path& sysfsRoot) {
  if (o.cpu >= 0) {
    if (o.cpu >= CPU_SETSIZE) throw std::invalid_argument("--cpu out of range");
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(static_cast<unsigned>(o.cpu), &set);
    pin(set);
    return "cpu " + std::to_string(o.cpu);
  }
  if (o.numa.empty()) return "not pinned";
  int node = -1;
  if (o.numa == "auto") {
    if (deviceNumaNode < 0) return "not pinned (device reports no NUMA node)";
    node = deviceNumaNode;
  } else {
    try {
      node = std::stoi(o.numa);
    } catch (const std::exception&) {
      throw std::invalid_argument("--numa takes a node number or 'auto'");
    }
  }
  const auto path =
      sysfsRoot / "devices" / "system" / "node" / ("node" + std::to_string(node)) / "cpulist";
  std::ifstream in(path);
  std::string list;
  if (!in || !std::getline(in, list))
    throw std::invalid_argument("no NUMA node " + std::to_string(node) + " (" + path.string() +
                                ")");
  cpu_set_t set;
  if (!parseCpuList(list, set)) throw std::invalid_argument("cannot parse " + path.string());
  pin(set);
  return "numa node " + std::to_string(node) + " (cpus " + list + ")";
}

}  // namespace nfsrdma::bench
