// The client host's checks on staged trees: rpcrdma, the NFS mounts and
// their read-ahead, the slots, and the route to the server.
#include "StagedTree.h"
#include "hostcheck/ClientChecks.h"

namespace nfsrdma::hostcheck {
namespace {
using testing::checkNamed;
using testing::contains;
using testing::StagedTree;

// A 6.12 kernel's mountinfo: an ext4 root, an RDMA mount with a space in
// its mount point, a TCP mount, and a line without the separator.
const char* kMountinfo =
    "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
    "40 22 0:53 / /mnt/rdma\\040data rw,relatime shared:70 - nfs4 198.18.0.1:/export "
    "rw,vers=4.2,rsize=1048576,wsize=1048576,namlen=255,hard,proto=rdma,nconnect=4,port=20049\n"
    "41 22 0:54 / /mnt/tcp rw,relatime - nfs 10.0.0.1:/old "
    "rw,vers=3,rsize=131072,wsize=131072,proto=tcp\n"
    "bogus line\n";

TEST(ClientMounts, ParsesNfsLinesOnly) {
  const auto m = parseNfsMounts(kMountinfo);
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0].mountPoint, "/mnt/rdma data");
  EXPECT_EQ(m[0].source, "198.18.0.1:/export");
  EXPECT_EQ(m[0].fstype, "nfs4");
  EXPECT_EQ(m[0].device, "0:53");
  EXPECT_EQ(mountOption(m[0].options, "proto"), "rdma");
  EXPECT_EQ(mountOption(m[0].options, "nconnect"), "4");
  EXPECT_EQ(mountOption(m[0].options, "port"), "20049");
  EXPECT_EQ(mountOption(m[0].options, "timeo"), "");
  EXPECT_EQ(m[1].mountPoint, "/mnt/tcp");
}

TEST(ClientMounts, RdmaPassesTcpWarnsReadAheadDefaultWarns) {
  StagedTree t;
  t.write("/proc/self/mountinfo", kMountinfo);
  t.write("/sys/class/bdi/0:53/read_ahead_kb", "128\n");
  t.write("/sys/class/bdi/0:54/read_ahead_kb", "4096\n");
  CheckList list;
  checkMounts(t.host(), list);
  const auto rdma = checkNamed(list, "mount /mnt/rdma data");
  EXPECT_EQ(rdma.level, CheckLevel::Pass);
  EXPECT_EQ(rdma.detail,
            "198.18.0.1:/export nfs4 proto=rdma nconnect=4 rsize=1048576 wsize=1048576");
  EXPECT_EQ(checkNamed(list, "mount /mnt/tcp").level, CheckLevel::Warn);
  const auto ra = checkNamed(list, "mount /mnt/rdma data read_ahead_kb");
  EXPECT_EQ(ra.level, CheckLevel::Warn);
  EXPECT_TRUE(contains(ra.fix, "echo 1024 > /sys/class/bdi/0:53/read_ahead_kb")) << ra.fix;
  const auto big = checkNamed(list, "mount /mnt/tcp read_ahead_kb");
  EXPECT_EQ(big.level, CheckLevel::Pass);
  EXPECT_EQ(big.detail, "4096 KiB");
}

TEST(ClientMounts, NoMountinfoNoMountsNoBdi) {
  StagedTree t;
  CheckList absent;
  checkMounts(t.host(), absent);
  EXPECT_TRUE(contains(checkNamed(absent, "NFS mounts").detail, "not checked"));
  t.write("/proc/self/mountinfo", "22 1 8:1 / / rw - ext4 /dev/sda1 rw\n");
  CheckList none;
  checkMounts(t.host(), none);
  EXPECT_EQ(checkNamed(none, "NFS mounts").detail, "none");
  t.write("/proc/self/mountinfo", kMountinfo);
  CheckList noBdi;
  checkMounts(t.host(), noBdi);
  EXPECT_TRUE(contains(checkNamed(noBdi, "mount /mnt/tcp read_ahead_kb").detail,
                       "not checked: no /sys/class/bdi/0:54/read_ahead_kb"));
}

TEST(ClientModules, RpcrdmaAndTheSlots) {
  StagedTree t;
  CheckList absent;
  clientHostChecks(t.host(), absent);
  EXPECT_EQ(checkNamed(absent, "module rpcrdma").level, CheckLevel::Warn);
  EXPECT_EQ(checkNamed(absent, "module rpcrdma").fix, "modprobe rpcrdma");
  EXPECT_TRUE(contains(checkNamed(absent, "nfs max_session_slots").detail, "not loaded"));
  EXPECT_TRUE(contains(checkNamed(absent, "rdma_slot_table_entries").detail, "not loaded"));
  t.mkdir("/sys/module/rpcrdma");
  t.write("/sys/module/nfs/parameters/max_session_slots", "64\n");
  t.write("/proc/sys/sunrpc/rdma_slot_table_entries", "128\n");
  CheckList loaded;
  clientHostChecks(t.host(), loaded);
  EXPECT_EQ(checkNamed(loaded, "module rpcrdma").level, CheckLevel::Pass);
  EXPECT_EQ(checkNamed(loaded, "nfs max_session_slots").level, CheckLevel::Pass);
  EXPECT_TRUE(contains(checkNamed(loaded, "rdma_slot_table_entries").detail, "128 RPC-over-RDMA"));
  t.write("/sys/module/nfs/parameters/max_session_slots", "16\n");
  CheckList few;
  checkSessionSlots(t.host(), few);
  EXPECT_EQ(checkNamed(few, "nfs max_session_slots").level, CheckLevel::Warn);
}

TEST(ClientRoute, TheGidHoldingTheSourcePassesNoneFails) {
  StagedTree t;
  t.roceDevice(1500, "rxe1", "veth1", "c612:0002");  // 198.18.0.2
  const auto ports = readRdmaPorts(t.host());
  CheckList good;
  checkRouteToServer(ports, "198.18.0.1", "198.18.0.2", "", good);
  const auto c = checkNamed(good, "route to 198.18.0.1");
  EXPECT_EQ(c.level, CheckLevel::Pass);
  EXPECT_EQ(c.detail, "leaves from 198.18.0.2 on veth1, held by rxe1 port 1 GID index 1 (RoCE v2)");
  CheckList other;
  checkRouteToServer(ports, "10.1.1.1", "10.0.0.9", "", other);
  EXPECT_EQ(checkNamed(other, "route to 10.1.1.1").level, CheckLevel::Fail);
  CheckList none;
  checkRouteToServer(ports, "nowhere", "", "cannot resolve nowhere: Name or service not known",
                     none);
  const auto f = checkNamed(none, "route to nowhere");
  EXPECT_EQ(f.level, CheckLevel::Fail);
  EXPECT_EQ(f.detail, "cannot resolve nowhere: Name or service not known");
}

}  // namespace
}  // namespace nfsrdma::hostcheck
