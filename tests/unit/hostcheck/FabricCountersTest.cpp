// Loss counters that already counted, and fabricChecks over every port.
#include "StagedTree.h"
#include "hostcheck/FabricChecks.h"

namespace nfsrdma::hostcheck {
namespace {
using testing::checkNamed;
using testing::contains;
using testing::StagedTree;

TEST(FabricNetdevCounters, ZeroPassesCountedWarnsWithTheValuesAbsentSaysSo) {
  StagedTree t;
  CheckList none;
  checkNetdevCounters(t.host(), "eth0", none);
  EXPECT_EQ(checkNamed(none, "eth0 error counters").detail,
            "none to read (no /sys/class/net/eth0/statistics)");
  for (const char* n : {"rx_errors", "tx_errors", "rx_dropped", "tx_dropped", "rx_missed_errors",
                        "rx_crc_errors", "rx_bytes"})
    t.write(std::string("/sys/class/net/eth0/statistics/") + n, "0\n");
  t.write("/sys/class/net/eth0/statistics/rx_bytes", "123456\n");
  CheckList zero;
  checkNetdevCounters(t.host(), "eth0", zero);
  EXPECT_EQ(checkNamed(zero, "eth0 error counters").level, CheckLevel::Pass);
  t.write("/sys/class/net/eth0/statistics/rx_dropped", "12\n");
  t.write("/sys/class/net/eth0/statistics/rx_crc_errors", "3\n");
  CheckList counted;
  checkNetdevCounters(t.host(), "eth0", counted);
  const auto c = checkNamed(counted, "eth0 error counters");
  EXPECT_EQ(c.level, CheckLevel::Warn);
  EXPECT_EQ(c.detail, "rx_crc_errors=3, rx_dropped=12 (since the netdev came up)");
}

TEST(FabricPortCounters, RxeAndMlx5LossNamesWarnOthersDoNot) {
  StagedTree t;
  t.roceDevice();
  const std::string hw = "/sys/class/infiniband/rxe0/ports/1/hw_counters/";
  CheckList none;
  checkPortCounters(t.host(), readRdmaPorts(t.host())[0], none);
  EXPECT_TRUE(contains(checkNamed(none, "rxe0 port 1 loss counters").detail, "none to read"));
  t.write(hw + "sent_pkts", "1000\n");
  t.write(hw + "rcvd_seq_err", "0\n");
  t.write(hw + "lifespan", "10\n");
  CheckList zero;
  checkPortCounters(t.host(), readRdmaPorts(t.host())[0], zero);
  EXPECT_EQ(checkNamed(zero, "rxe0 port 1 loss counters").level, CheckLevel::Pass);
  t.write(hw + "rcvd_seq_err", "7\n");
  t.write(hw + "out_of_sequence", "2\n");
  CheckList counted;
  checkPortCounters(t.host(), readRdmaPorts(t.host())[0], counted);
  const auto c = checkNamed(counted, "rxe0 port 1 loss counters");
  EXPECT_EQ(c.level, CheckLevel::Warn);
  EXPECT_TRUE(contains(c.detail, "out_of_sequence=2, rcvd_seq_err=7")) << c.detail;
}

TEST(FabricChecks, EveryCheckOncePerPortAndOncePerSharedNetdev) {
  StagedTree t;
  t.roceDevice(1500, "rxe0", "eth0");
  t.roceDevice(1500, "rxe1", "eth0");  // a second device on the same netdev
  CheckList list;
  fabricChecks(t.host(), readRdmaPorts(t.host()), {}, list);
  for (const char* dev : {"rxe0", "rxe1"}) {
    for (const char* what : {" port 1 RoCE v2 GID", " port 1 MTU", " port 1 default_roce_tos",
                             " port 1 loss counters"})
      checkNamed(list, std::string(dev) + what);
  }
  for (const char* what : {"eth0 ECN", "eth0 DSCP trust", "eth0 PFC", "eth0 error counters"})
    checkNamed(list, what);  // once each
  CheckList noGids;
  fabricChecks(t.host(), readRdmaPorts(t.host()), {false, nullptr}, noGids);
  for (const auto& c : noGids.checks()) EXPECT_FALSE(contains(c.name, "GID")) << c.name;
}

}  // namespace
}  // namespace nfsrdma::hostcheck
