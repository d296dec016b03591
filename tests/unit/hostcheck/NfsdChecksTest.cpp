// nfsd's threads against the CPUs (or the dynamic pool) and svcrdma's
// credits against the slot table, on staged trees.
#include "StagedTree.h"
#include "hostcheck/HostChecks.h"

namespace nfsrdma::hostcheck {
namespace {
using testing::checkNamed;
using testing::contains;
using testing::StagedTree;

TEST(NfsdThreads, NotRunningIsLeftToTheServerCheck) {
  StagedTree t;
  CheckList absent;
  checkNfsdThreads(t.host(), absent);
  EXPECT_TRUE(absent.checks().empty());
  t.write("/proc/fs/nfsd/threads", "0\n");
  CheckList stopped;
  checkNfsdThreads(t.host(), stopped);
  EXPECT_TRUE(stopped.checks().empty());
}

TEST(NfsdThreads, TheDefaultEightOnABigHostWarnsEnoughPasses) {
  StagedTree t;
  t.write("/sys/devices/system/cpu/online", "0-31\n");
  t.write("/proc/fs/nfsd/threads", "8\n");
  CheckList few;
  checkNfsdThreads(t.host(), few);
  const auto c = checkNamed(few, "nfsd threads");
  EXPECT_EQ(c.level, CheckLevel::Warn);
  EXPECT_TRUE(contains(c.detail, "8 threads for 32 CPUs")) << c.detail;
  EXPECT_EQ(c.fix,
            "echo 32 > /proc/fs/nfsd/threads  # persist: [nfsd] threads=32 in /etc/nfs.conf");
  t.write("/proc/fs/nfsd/threads", "64\n");
  CheckList enough;
  checkNfsdThreads(t.host(), enough);
  EXPECT_EQ(checkNamed(enough, "nfsd threads").detail, "64 threads for 32 CPUs");
}

TEST(NfsdThreads, TheDynamicPoolReportsMinAndMax) {
  StagedTree t;
  t.write("/sys/devices/system/cpu/online", "0-31\n");
  t.write("/proc/fs/nfsd/threads", "8\n");
  t.write("/proc/fs/nfsd/min_threads", "0\n");  // 0: a fixed count, as before 7.0
  CheckList fixed;
  checkNfsdThreads(t.host(), fixed);
  EXPECT_EQ(checkNamed(fixed, "nfsd threads").level, CheckLevel::Warn);
  t.write("/proc/fs/nfsd/min_threads", "4\n");
  CheckList dynamic;
  checkNfsdThreads(t.host(), dynamic);
  const auto c = checkNamed(dynamic, "nfsd threads");
  EXPECT_EQ(c.level, CheckLevel::Pass);
  EXPECT_EQ(c.detail, "dynamic pool: min 4, max 8");
}

TEST(RdmaCredits, AbsentAloneFewerThanTheSlotsAndEnough) {
  StagedTree t;
  CheckList absent;
  checkCredits(t.host(), absent);
  EXPECT_TRUE(absent.checks().empty());
  t.write("/proc/sys/sunrpc/svc_rdma/max_requests", "32\n");
  CheckList alone;
  checkCredits(t.host(), alone);
  EXPECT_EQ(checkNamed(alone, "RDMA credits").level, CheckLevel::Pass);
  t.write("/proc/sys/sunrpc/rdma_slot_table_entries", "128\n");
  CheckList few;
  checkCredits(t.host(), few);
  const auto c = checkNamed(few, "RDMA credits");
  EXPECT_EQ(c.level, CheckLevel::Warn);
  EXPECT_TRUE(contains(c.detail, "svcrdma grants up to 32 credits, fewer than")) << c.detail;
  EXPECT_TRUE(contains(c.fix, "echo 128 > /proc/sys/sunrpc/svc_rdma/max_requests")) << c.fix;
  t.write("/proc/sys/sunrpc/svc_rdma/max_requests", "128\n");
  CheckList enough;
  checkCredits(t.host(), enough);
  EXPECT_EQ(checkNamed(enough, "RDMA credits").level, CheckLevel::Pass);
}

TEST(ServerHostChecks, NicChecksOncePerNetdev) {
  StagedTree t;
  CheckList list;
  serverHostChecks(t.host(), {"eth0", "eth0", "", "eth1"}, list);
  checkNamed(list, "eth0 NUMA node");
  checkNamed(list, "eth1 IRQ affinity");
  checkNamed(list, "CPU governor");
}

}  // namespace
}  // namespace nfsrdma::hostcheck
