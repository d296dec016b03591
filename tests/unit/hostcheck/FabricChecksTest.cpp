// FabricChecks on staged trees: each check present and absent, good and
// bad; PFC's dcb answered by a recording runner.
#include <sys/stat.h>

#include "StagedTree.h"
#include "hostcheck/FabricChecks.h"

namespace nfsrdma::hostcheck {
namespace {
using testing::checkNamed;
using testing::contains;
using testing::StagedTree;

RdmaPortInfo onlyPort(const StagedTree& t) {
  auto ports = readRdmaPorts(t.host());
  if (ports.size() != 1) throw std::runtime_error("expected one staged port");
  return ports[0];
}

TEST(FabricRoceGid, PassNamesTheAddressFailWithoutOne) {
  StagedTree t;
  t.roceDevice();
  CheckList list;
  checkRoceGid(onlyPort(t), list);
  const auto c = checkNamed(list, "rxe0 port 1 RoCE v2 GID");
  EXPECT_EQ(c.level, CheckLevel::Pass);
  EXPECT_EQ(c.detail, "10.0.0.1 (index 1, eth0)");

  t.write("/sys/class/infiniband/rxe0/ports/1/gid_attrs/types/1", "IB/RoCE v1\n");
  CheckList bad;
  checkRoceGid(onlyPort(t), bad);
  const auto f = checkNamed(bad, "rxe0 port 1 RoCE v2 GID");
  EXPECT_EQ(f.level, CheckLevel::Fail);
  EXPECT_TRUE(contains(f.fix, "ip addr add <ip>/<prefix> dev eth0")) << f.fix;
}

TEST(FabricMtu, RocePathMtuIsRdmaCmsRule) {
  EXPECT_EQ(rocePathMtu(9000), 4096u);
  EXPECT_EQ(rocePathMtu(4192), 4096u);  // 4096 + 96 bytes of headers
  EXPECT_EQ(rocePathMtu(4191), 2048u);
  EXPECT_EQ(rocePathMtu(1500), 1024u);
  EXPECT_EQ(rocePathMtu(352), 256u);
  EXPECT_EQ(rocePathMtu(351), 0u);
}

DoctorCheck mtuCheck(const StagedTree& t) {
  CheckList list;
  checkMtu(t.host(), readRdmaPorts(t.host()).at(0), list);
  return checkNamed(list, "rxe0 port 1 MTU");
}

TEST(FabricMtu, SmallMtuPassesAndSaysTheCost) {
  StagedTree t;
  t.roceDevice(1500);
  const auto c = mtuCheck(t);
  EXPECT_EQ(c.level, CheckLevel::Pass);
  EXPECT_TRUE(contains(c.detail,
                       "eth0 mtu 1500, RoCE path MTU 1024 (fine, but every 4 KiB of "
                       "data is 4 RoCE packets"))
      << c.detail;
  EXPECT_TRUE(contains(c.detail, "a netdev mtu of 4192 or more gives 4096")) << c.detail;
}

TEST(FabricMtu, Full4096Passes) {
  StagedTree t;
  t.roceDevice(9000);
  const auto c = mtuCheck(t);
  EXPECT_EQ(c.level, CheckLevel::Pass);
  EXPECT_EQ(c.detail, "eth0 mtu 9000, RoCE path MTU 4096");
}

TEST(FabricMtu, JustBelowTheRoomFor4096CostsHalf) {
  StagedTree t;
  t.roceDevice(4100);  // 4096 + 96 bytes of headers do not fit
  const auto c = mtuCheck(t);
  EXPECT_TRUE(contains(c.detail, "RoCE path MTU 2048 (fine, but every 4 KiB of data is 2 RoCE"))
      << c.detail;
}

TEST(FabricMtu, NoRoceMtuFitsFails) {
  StagedTree t;
  t.roceDevice(300);
  const auto c = mtuCheck(t);
  EXPECT_EQ(c.level, CheckLevel::Fail);
  EXPECT_TRUE(contains(c.fix, "ip link set eth0 mtu 1500")) << c.fix;
}

TEST(FabricMtu, NoNetdevMtuIsNotChecked) {
  StagedTree t;
  t.roceDevice();
  std::filesystem::remove(t.root / "sys/class/net/eth0/mtu");
  const auto c = mtuCheck(t);
  EXPECT_EQ(c.level, CheckLevel::Pass);
  EXPECT_EQ(c.detail, "not checked: no netdev mtu to read");
}

DoctorCheck tosCheck(const StagedTree& t) {
  CheckList list;
  checkRoceTos(t.host(), onlyPort(t), list);
  return checkNamed(list, "rxe0 port 1 default_roce_tos");
}

TEST(FabricRoceTos, NoConfigfsWarnsWithTheWholeFix) {
  StagedTree t;
  t.roceDevice();
  const auto c = tosCheck(t);
  EXPECT_EQ(c.level, CheckLevel::Warn);
  EXPECT_TRUE(contains(c.detail, "not set (no /sys/kernel/config/rdma_cm)")) << c.detail;
  EXPECT_TRUE(contains(c.fix, "modprobe rdma_cm")) << c.fix;
  EXPECT_TRUE(contains(c.fix, "mount -t configfs none /sys/kernel/config")) << c.fix;
  EXPECT_TRUE(contains(c.fix,
                       "mkdir /sys/kernel/config/rdma_cm/rxe0 && echo 106 > "
                       "/sys/kernel/config/rdma_cm/rxe0/ports/1/default_roce_tos"))
      << c.fix;
}

TEST(FabricRoceTos, NoDeviceDirectoryWarnsWithMkdir) {
  StagedTree t;
  t.roceDevice();
  t.mkdir("/sys/kernel/config/rdma_cm");
  const auto c = tosCheck(t);
  EXPECT_EQ(c.level, CheckLevel::Warn);
  EXPECT_TRUE(contains(c.detail, "not set (no /sys/kernel/config/rdma_cm/rxe0)")) << c.detail;
  EXPECT_EQ(c.fix.rfind("mkdir /sys/kernel/config/rdma_cm/rxe0 && echo 106", 0), 0u) << c.fix;
}

TEST(FabricRoceTos, ZeroWarnsAndATosPasses) {
  StagedTree t;
  t.roceDevice();
  t.write("/sys/kernel/config/rdma_cm/rxe0/ports/1/default_roce_tos", "0\n");
  auto c = tosCheck(t);
  EXPECT_EQ(c.level, CheckLevel::Warn);
  EXPECT_TRUE(contains(c.detail, "0: the kernel NFS client and server never set a TOS"))
      << c.detail;
  EXPECT_EQ(c.fix, "echo 106 > /sys/kernel/config/rdma_cm/rxe0/ports/1/default_roce_tos");
  t.write("/sys/kernel/config/rdma_cm/rxe0/ports/1/default_roce_tos", "106\n");
  c = tosCheck(t);
  EXPECT_EQ(c.level, CheckLevel::Pass);
  EXPECT_TRUE(contains(c.detail, "106 (DSCP 26)")) << c.detail;
}

TEST(FabricEcn, AbsentIsNotExposedNeverAFailure) {
  StagedTree t;
  CheckList list;
  checkEcn(t.host(), "eth0", list);
  checkTrust(t.host(), "eth0", list);
  for (const auto& c : list.checks()) {
    EXPECT_EQ(c.level, CheckLevel::Pass) << c.name;
    EXPECT_TRUE(contains(c.detail, "not exposed by this driver")) << c.detail;
  }
}

TEST(FabricEcn, EnabledOnAPriorityPassesOffWarns) {
  StagedTree t;
  for (const char* side : {"roce_np", "roce_rp"}) {
    for (int prio = 0; prio < 8; ++prio)
      t.write(std::string("/sys/class/net/eth0/ecn/") + side + "/enable/" + std::to_string(prio),
              prio == 3 ? "1\n" : "0\n");
  }
  CheckList good;
  checkEcn(t.host(), "eth0", good);
  auto c = checkNamed(good, "eth0 ECN");
  EXPECT_EQ(c.level, CheckLevel::Pass);
  EXPECT_EQ(c.detail, "enabled: roce_np priority 3, roce_rp priority 3");
  t.write("/sys/class/net/eth0/ecn/roce_rp/enable/3", "0\n");
  CheckList bad;
  checkEcn(t.host(), "eth0", bad);
  c = checkNamed(bad, "eth0 ECN");
  EXPECT_EQ(c.level, CheckLevel::Warn);
  EXPECT_TRUE(contains(c.detail, "enabled on no priority for roce_rp")) << c.detail;
}

TEST(FabricTrust, DscpPassesPcpWarns) {
  StagedTree t;
  t.write("/sys/class/net/eth0/qos/trust", "dscp\n");
  CheckList good;
  checkTrust(t.host(), "eth0", good);
  EXPECT_EQ(checkNamed(good, "eth0 DSCP trust").level, CheckLevel::Pass);
  t.write("/sys/class/net/eth0/qos/trust", "pcp\n");
  CheckList bad;
  checkTrust(t.host(), "eth0", bad);
  const auto c = checkNamed(bad, "eth0 DSCP trust");
  EXPECT_EQ(c.level, CheckLevel::Warn);
  EXPECT_EQ(c.fix, "mlnx_qos -i eth0 --trust dscp");
}

// Answers dcb with what a test gives and records what was run.
class DcbRunner final : public CommandRunner {
 public:
  DcbRunner(int status, std::string output) : result_{status, std::move(output)} {}
  CommandResult run(const std::vector<std::string>& argv) override {
    ran.push_back(shellJoin(argv));
    return result_;
  }
  std::vector<std::string> ran;

 private:
  CommandResult result_;
};

void stageDcb(const StagedTree& t) {
  t.write("/usr/sbin/dcb", "#!/bin/sh\n");
  ::chmod((t.root / "usr/sbin/dcb").c_str(), 0755);
}

DoctorCheck pfcCheck(const StagedTree& t, CommandRunner* runner) {
  CheckList list;
  checkPfc(t.host(), "eth0", runner, list);
  return checkNamed(list, "eth0 PFC");
}

TEST(FabricPfc, NoDcbCannotBeChecked) {
  StagedTree t;
  DcbRunner runner(0, "");
  const auto c = pfcCheck(t, &runner);
  EXPECT_EQ(c.level, CheckLevel::Warn);
  EXPECT_EQ(c.detail, "could not be checked: no dcb program");
  EXPECT_TRUE(runner.ran.empty());
}

TEST(FabricPfc, OnForAPriorityPassesOffEverywhereWarns) {
  StagedTree t;
  stageDcb(t);
  DcbRunner on(0,
               "pfc-cap 8 macsec-bypass off delay 0\nprio-pfc 0:off 1:off 2:off 3:on 4:off "
               "5:off 6:off 7:off\n");
  auto c = pfcCheck(t, &on);
  EXPECT_EQ(c.level, CheckLevel::Pass);
  EXPECT_EQ(c.detail, "on for priority 3");
  ASSERT_EQ(on.ran.size(), 1u);
  EXPECT_EQ(on.ran[0], "/usr/sbin/dcb pfc show dev eth0");
  DcbRunner off(0, "prio-pfc 0:off 1:off 2:off 3:off 4:off 5:off 6:off 7:off\n");
  c = pfcCheck(t, &off);
  EXPECT_EQ(c.level, CheckLevel::Warn);
  EXPECT_EQ(c.fix, "dcb pfc set dev eth0 prio-pfc 3:on  # and the switch ports");
}

TEST(FabricPfc, NoDcbOnTheNetdevAndNoRunnerAreSaid) {
  StagedTree t;
  stageDcb(t);
  DcbRunner refused(1, "Attribute failed policy validation\n");
  auto c = pfcCheck(t, &refused);
  EXPECT_EQ(c.level, CheckLevel::Pass);
  EXPECT_TRUE(contains(c.detail, "no DCB on this netdev")) << c.detail;
  c = pfcCheck(t, nullptr);
  EXPECT_EQ(c.level, CheckLevel::Pass);
  EXPECT_EQ(c.detail, "not checked: no host command runs under --root");
}

}  // namespace
}  // namespace nfsrdma::hostcheck
