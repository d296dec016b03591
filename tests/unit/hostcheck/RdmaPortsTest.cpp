// RdmaPorts: the ports, their MTU and GID tables read from a staged sysfs.
#include "StagedTree.h"
#include "hostcheck/RdmaPorts.h"

namespace nfsrdma::hostcheck {
namespace {
using testing::StagedTree;

TEST(RdmaPortsGidIp, MappedIpv4IsDottedLinkLocalAndZeroAreNone) {
  EXPECT_EQ(gidIp("0000:0000:0000:0000:0000:ffff:c612:0001"), "198.18.0.1");
  EXPECT_EQ(gidIp("fe80:0000:0000:0000:0000:0000:0000:0001"), "");
  EXPECT_EQ(gidIp("0000:0000:0000:0000:0000:0000:0000:0000"), "");
  EXPECT_EQ(gidIp("2001:0db8:0000:0000:0000:0000:0000:0001"),
            "2001:0db8:0000:0000:0000:0000:0000:0001");
  EXPECT_EQ(gidIp("zz"), "");
  EXPECT_EQ(gidIp("0000:0000:0000:0000:0000:ffff:c612:00zz"), "");
}

TEST(RdmaPorts, ReadsStateLinkLayerAndTheGidsInUse) {
  StagedTree t;
  t.roceDevice(9000);
  const auto ports = readRdmaPorts(t.host());
  ASSERT_EQ(ports.size(), 1u);
  const auto& p = ports[0];
  EXPECT_EQ(p.name(), "rxe0 port 1");
  EXPECT_EQ(p.state, "4: ACTIVE");
  EXPECT_TRUE(p.roce());
  EXPECT_EQ(p.netdev(), "eth0");
  ASSERT_EQ(p.gids.size(), 3u);  // the zero GID at index 3 is not in use
  EXPECT_EQ(p.gids[1].index, 1u);
  EXPECT_EQ(p.gids[1].type, "RoCE v2");
  EXPECT_EQ(p.gids[1].ip, "10.0.0.1");
  EXPECT_EQ(p.gids[0].ip, "");  // link-local
}

TEST(RdmaPorts, NoInfinibandClassIsNoPortsAndAPortIsANumber) {
  StagedTree t;
  EXPECT_TRUE(readRdmaPorts(t.host()).empty());
  t.roceDevice();
  t.mkdir("/sys/class/infiniband/rxe0/ports/notaport");
  const auto ports = readRdmaPorts(t.host());
  ASSERT_EQ(ports.size(), 1u);
  EXPECT_EQ(ports[0].number, 1u);
}

}  // namespace
}  // namespace nfsrdma::hostcheck
