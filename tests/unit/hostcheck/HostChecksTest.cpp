// The server host's NIC placement, IRQ affinity and CPU governor on staged trees.
#include "StagedTree.h"
#include "hostcheck/HostChecks.h"

namespace nfsrdma::hostcheck {
namespace {
using testing::checkNamed;
using testing::contains;
using testing::StagedTree;

// Two NUMA nodes of 4 CPUs each; eth0 on node 1 with three queue IRQs.
void twoNodes(const StagedTree& t, const char* irq33, const char* irq34, const char* irq35) {
  t.write("/sys/devices/system/cpu/online", "0-7\n");
  t.write("/sys/devices/system/node/node0/cpulist", "0-3\n");
  t.write("/sys/devices/system/node/node1/cpulist", "4-7\n");
  t.write("/sys/class/net/eth0/device/numa_node", "1\n");
  t.write("/sys/class/net/eth0/device/msi_irqs/33", "msix\n");
  t.write("/sys/class/net/eth0/device/msi_irqs/34", "msix\n");
  t.write("/sys/class/net/eth0/device/msi_irqs/35", "msix\n");
  t.write("/proc/irq/33/smp_affinity_list", std::string(irq33) + "\n");
  t.write("/proc/irq/34/smp_affinity_list", std::string(irq34) + "\n");
  t.write("/proc/irq/35/smp_affinity_list", std::string(irq35) + "\n");
}

TEST(HostNicNuma, VirtualNetdevOneNodeAndTwoNodes) {
  StagedTree t;
  CheckList virt;
  checkNicNuma(t.host(), "veth0", virt);
  EXPECT_TRUE(contains(checkNamed(virt, "veth0 NUMA node").detail, "a virtual netdev"));
  t.write("/sys/class/net/eth0/device/numa_node", "-1\n");
  t.mkdir("/sys/devices/system/node/node0");
  CheckList one;
  checkNicNuma(t.host(), "eth0", one);
  EXPECT_EQ(checkNamed(one, "eth0 NUMA node").detail, "one node on this host: nothing to place");
  twoNodes(t, "4", "5", "6");
  CheckList two;
  checkNicNuma(t.host(), "eth0", two);
  const auto c = checkNamed(two, "eth0 NUMA node");
  EXPECT_EQ(c.level, CheckLevel::Pass);
  EXPECT_TRUE(contains(c.detail, "1 of 2 (CPUs 4-7)")) << c.detail;
}

TEST(HostIrqAffinity, OnTheNicsNodePassesOffItWarns) {
  StagedTree t;
  CheckList none;
  checkIrqAffinity(t.host(), "veth0", none);
  EXPECT_EQ(checkNamed(none, "veth0 IRQ affinity").level, CheckLevel::Pass);
  twoNodes(t, "4", "5", "6-7");
  CheckList good;
  checkIrqAffinity(t.host(), "eth0", good);
  EXPECT_EQ(checkNamed(good, "eth0 IRQ affinity").detail, "3 queue IRQs over 3 CPU sets");
  twoNodes(t, "4", "0", "1-5");
  CheckList bad;
  checkIrqAffinity(t.host(), "eth0", bad);
  const auto c = checkNamed(bad, "eth0 IRQ affinity");
  EXPECT_EQ(c.level, CheckLevel::Warn);
  EXPECT_TRUE(contains(c.detail, "2 of 3 queue IRQs on CPUs off the NIC's node 1: 34->0 35->1-5"))
      << c.detail;
  EXPECT_TRUE(contains(c.fix, "set_irq_affinity_bynode.sh 1 eth0")) << c.fix;
}

TEST(HostIrqAffinity, AllQueuesOnOneCpuWarns) {
  StagedTree t;
  twoNodes(t, "5", "5", "5");
  CheckList list;
  checkIrqAffinity(t.host(), "eth0", list);
  const auto c = checkNamed(list, "eth0 IRQ affinity");
  EXPECT_EQ(c.level, CheckLevel::Warn);
  EXPECT_TRUE(contains(c.detail, "all 3 queue IRQs on CPUs 5")) << c.detail;
}

TEST(HostGovernor, NoneAbsentPerformancePassesPowersaveWarns) {
  StagedTree t;
  CheckList none;
  checkGovernor(t.host(), none);
  EXPECT_TRUE(contains(checkNamed(none, "CPU governor").detail, "no cpufreq"));
  t.write("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "performance\n");
  t.write("/sys/devices/system/cpu/cpu1/cpufreq/scaling_governor", "performance\n");
  t.write("/sys/devices/system/cpu/cpufreq/policy0/scaling_governor", "powersave\n");  // not a CPU
  CheckList good;
  checkGovernor(t.host(), good);
  const auto p = checkNamed(good, "CPU governor");
  EXPECT_EQ(p.level, CheckLevel::Pass);
  EXPECT_EQ(p.detail, "performance on 2 CPUs");
  t.write("/sys/devices/system/cpu/cpu1/cpufreq/scaling_governor", "powersave\n");
  CheckList bad;
  checkGovernor(t.host(), bad);
  const auto w = checkNamed(bad, "CPU governor");
  EXPECT_EQ(w.level, CheckLevel::Warn);
  EXPECT_TRUE(contains(w.detail, "performance on 1 CPUs, powersave on 1 CPUs")) << w.detail;
  EXPECT_TRUE(contains(w.fix, "cpupower frequency-set -g performance")) << w.fix;
}

}  // namespace
}  // namespace nfsrdma::hostcheck
