// HostChecks: CPU, IRQ and knfsd readings of the server host. A reading a
// host does not have (no cpufreq in a VM, no msi_irqs on a veth) is a PASS
// that says what was not there.
#include "hostcheck/HostChecks.h"

#include <map>
#include <set>

#include "util/CpuList.h"

namespace nfsrdma::hostcheck {
namespace fs = std::filesystem;

namespace {

const fs::path kNet = "/sys/class/net";
const fs::path kNodes = "/sys/devices/system/node";

std::set<int> cpuSet(const std::optional<std::string>& text) {
  std::set<int> out;
  if (!text) return out;
  if (auto cpus = util::parseCpuList(*text)) out.insert(cpus->begin(), cpus->end());
  return out;
}

unsigned numaNodes(const HostRoot& root) {
  unsigned n = 0;
  for (const auto& e : root.list(kNodes)) n += e.rfind("node", 0) == 0 && e.size() > 4;
  return n;
}

}  // namespace

unsigned onlineCpus(const HostRoot& root) {
  return static_cast<unsigned>(cpuSet(root.read("/sys/devices/system/cpu/online")).size());
}

void checkNicNuma(const HostRoot& root, const std::string& netdev, CheckList& out) {
  const std::string name = netdev + " NUMA node";
  const auto node = root.readNumber(kNet / netdev / "device" / "numa_node");
  const unsigned nodes = numaNodes(root);
  if (!node) {
    out.pass(name, "none (no device/numa_node: a virtual netdev)");
  } else if (*node < 0 || nodes <= 1) {
    out.pass(name, "one node on this host: nothing to place");
  } else {
    const std::string cpus =
        root.read(kNodes / ("node" + std::to_string(*node)) / "cpulist").value_or("?");
    out.pass(name, std::to_string(*node) + " of " + std::to_string(nodes) + " (CPUs " + cpus +
                       "): nfsd and the benchmark's threads run best there (numa=auto pins ours)");
  }
}

void checkIrqAffinity(const HostRoot& root, const std::string& netdev, CheckList& out) {
  const std::string name = netdev + " IRQ affinity";
  const auto irqs = root.list(kNet / netdev / "device" / "msi_irqs");
  if (irqs.empty()) {
    out.pass(name, "no msi_irqs (a virtual netdev, or a driver without MSI)");
    return;
  }
  const auto node = root.readNumber(kNet / netdev / "device" / "numa_node").value_or(-1);
  const std::set<int> local =
      node < 0 ? std::set<int>{}
               : cpuSet(root.read(kNodes / ("node" + std::to_string(node)) / "cpulist"));
  std::vector<std::string> remote;
  std::set<std::string> targets;
  for (const auto& irq : irqs) {
    const auto list = root.read(fs::path("/proc/irq") / irq / "smp_affinity_list");
    if (!list) continue;
    targets.insert(*list);
    const auto cpus = cpuSet(list);
    bool outside = false;
    for (int c : cpus) outside = outside || (!local.empty() && !local.count(c));
    if (outside) remote.push_back(irq + "->" + *list);
  }
  const std::string fix = "set_irq_affinity_bynode.sh " + std::to_string(node < 0 ? 0 : node) +
                          " " + netdev +
                          "  # or echo <cpus> > /proc/irq/N/smp_affinity_list; "
                          "stop irqbalance first";
  if (!remote.empty() && numaNodes(root) > 1) {
    std::string list;
    for (const auto& r : remote) list += (list.empty() ? "" : " ") + r;
    out.warn(name,
             std::to_string(remote.size()) + " of " + std::to_string(irqs.size()) +
                 " queue IRQs on CPUs off the NIC's node " + std::to_string(node) + ": " + list,
             fix);
  } else if (irqs.size() > 1 && targets.size() == 1) {
    out.warn(name,
             "all " + std::to_string(irqs.size()) + " queue IRQs on CPUs " + *targets.begin() +
                 ": one CPU takes every completion",
             fix);
  } else {
    out.pass(name, std::to_string(irqs.size()) + " queue IRQs over " +
                       std::to_string(targets.size()) + " CPU sets");
  }
}

void checkGovernor(const HostRoot& root, CheckList& out) {
  std::map<std::string, unsigned> governors;
  for (const auto& cpu : root.list("/sys/devices/system/cpu")) {
    if (cpu.rfind("cpu", 0) != 0 || cpu.find_first_not_of("0123456789", 3) != std::string::npos)
      continue;
    const auto g =
        root.read(fs::path("/sys/devices/system/cpu") / cpu / "cpufreq" / "scaling_governor");
    if (g) ++governors[*g];
  }
  std::string found;
  for (const auto& [g, n] : governors)
    found += (found.empty() ? "" : ", ") + g + " on " + std::to_string(n) + " CPUs";
  if (governors.empty()) {
    out.pass("CPU governor", "no cpufreq (a VM, or a fixed frequency)");
  } else if (governors.count("powersave")) {
    out.warn("CPU governor", found + ": powersave adds wake-up and ramp latency to every RPC",
             "cpupower frequency-set -g performance  # or echo performance > "
             "/sys/devices/system/cpu/cpu*/cpufreq/scaling_governor");
  } else {
    out.pass("CPU governor", found);
  }
}

}  // namespace nfsrdma::hostcheck
