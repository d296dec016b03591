// counters/HostCounters: each source read from a staged host (RDMA ports
// with their netdevs, /proc/stat, nfsd's pools, threads and svcrdma, a
// kernel NFS mount's mountstats), and a host without them reading nothing.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "counters/HostCounters.h"

namespace nfsrdma::counters {
namespace {

namespace fs = std::filesystem;

class HostCountersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("nfsrdma-hostcounters-" + std::to_string(::getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  void put(const std::string& path, const std::string& text) {
    fs::create_directories((root_ / path).parent_path());
    std::ofstream(root_ / path) << text;
  }
  void nfsdThread(int pid, char state, int utime, int stime) {
    put("proc/" + std::to_string(pid) + "/stat",
        std::to_string(pid) + " (nfsd) " + state + " 2 0 0 0 -1 2129984 0 0 0 0 " +
            std::to_string(utime) + " " + std::to_string(stime) + " 0 0 20 0 1 0 100 0 0\n");
  }
  fs::path root_;
};

TEST_F(HostCountersTest, ReadsAnRxePortWithItsNetdevAndNoPmaCounters) {
  put("sys/class/infiniband/rxe0/ports/1/hw_counters/rcvd_seq_err", "3\n");
  put("sys/class/infiniband/rxe0/ports/1/hw_counters/lifespan", "10\n");
  put("sys/class/infiniband/rxe0/ports/1/gid_attrs/ndevs/0", "veth0\n");
  put("sys/class/infiniband/rxe0/parent", "veth0\n");
  put("sys/class/net/veth0/statistics/rx_dropped", "7\n");
  ASSERT_EQ(rdmaPorts(root_), std::vector<std::string>{"rxe0/1"});
  EXPECT_EQ(rdmaNetdevs(root_), std::vector<std::string>{"veth0"});
  const auto port = rdmaPortCounters(root_, "rxe0/1").read();
  ASSERT_TRUE(port);
  EXPECT_EQ(port->get("rcvd_seq_err"), 3);
  EXPECT_FALSE(port->get("lifespan"));       // a setting, not a counter
  EXPECT_FALSE(port->get("port_rcv_data"));  // rxe has no counters/: absent, not zero
  EXPECT_EQ(netdevCounters(root_, "veth0").read()->get("rx_dropped"), 7);
}

TEST_F(HostCountersTest, AHostWithoutTheSourcesReadsNothing) {
  EXPECT_TRUE(rdmaPorts(root_).empty());
  EXPECT_FALSE(rdmaPortCounters(root_, "mlx5_0/1").read());
  EXPECT_FALSE(netdevCounters(root_, "eth0").read());
  EXPECT_FALSE(readHostCpu(root_, 100));
  EXPECT_FALSE(readNfsdPools(root_));
  EXPECT_FALSE(svcRdmaCounters(root_).read());
  EXPECT_FALSE(readMountCounters(root_, "/mnt"));
  EXPECT_FALSE(ThreadCounters(root_, "", 100).read());
}

TEST_F(HostCountersTest, ReadsTheHostCpuLineAndCountsTheCpus) {
  put("proc/stat",
      "cpu  10 1 5 100 2 0 3 0 0 0\ncpu0 5 0 2 50 1 0 2 0 0 0\ncpu1 5 1 3 50 1 0 1 0 0 0\nintr "
      "5\n");
  const auto cpu = readHostCpu(root_, 100);
  ASSERT_TRUE(cpu);
  EXPECT_EQ(cpu->get("user"), 10);
  EXPECT_EQ(cpu->get("softirq"), 3);
  EXPECT_EQ(cpu->get("cpus"), 2);
  EXPECT_EQ(cpu->get("hz"), 100);
}

TEST_F(HostCountersTest, SumsNfsdPoolsAndKeepsOnlySvcRdmaStatisticsAndItsGrant) {
  put("proc/fs/nfsd/pool_stats",
      "# pool packets-arrived sockets-enqueued threads-woken threads-timedout\n0 10 12 4 0\n1 5 6 "
      "2 0\n");
  put("proc/sys/sunrpc/svc_rdma/rdma_stat_recv", "900\n");
  put("proc/sys/sunrpc/svc_rdma/max_requests", "64\n");
  put("proc/sys/sunrpc/svc_rdma/max_req_size", "4096\n");
  const auto pools = readNfsdPools(root_);
  ASSERT_TRUE(pools);
  EXPECT_EQ(pools->get("packets-arrived"), 15);
  EXPECT_EQ(pools->get("threads-woken"), 6);
  EXPECT_EQ(pools->get("pools"), 2);
  const auto svc = svcRdmaCounters(root_).read();
  ASSERT_TRUE(svc);
  EXPECT_EQ(svc->get("rdma_stat_recv"), 900);
  EXPECT_EQ(svc->get("max_requests"), 64);
  EXPECT_FALSE(svc->get("max_req_size"));
}

TEST_F(HostCountersTest, NfsdThreadsCountBusyOnesAndAddTheirTicksFromTheFirstReading) {
  put("proc/fs/nfsd/threads", "2\n");
  nfsdThread(101, 'I', 10, 20);
  nfsdThread(102, 'R', 5, 5);
  put("proc/200/stat", "200 (bash) S 1 0 0 0 -1 0 0 0 0 0 99 99 0 0 20 0 1 0 100 0 0\n");
  ThreadCounters nfsd(root_, "", 100);
  auto r = nfsd.read();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->get("threads"), 2);
  EXPECT_EQ(r->get("busy"), 1);
  EXPECT_EQ(r->get("ticks"), 0);  // what they used before the first reading is not counted
  nfsdThread(101, 'D', 10, 30);
  nfsdThread(102, 'R', 15, 5);
  r = nfsd.read();
  EXPECT_EQ(r->get("busy"), 2);
  EXPECT_EQ(r->get("ticks"), 20);
  nfsdThread(103, 'I', 0, 0);  // a thread started: found once the count says so
  EXPECT_EQ(nfsd.read()->get("threads"), 2);
  put("proc/fs/nfsd/threads", "3\n");
  EXPECT_EQ(nfsd.read()->get("threads"), 3);
  put("proc/fs/nfsd/threads", "0\n");  // nfsd stopped
  EXPECT_FALSE(nfsd.read());
}

TEST_F(HostCountersTest, BenchThreadsSumTheBusiestThreadOfEachIntervalAndKeepEndedOnes) {
  const auto task = [&](int tid, int utime) {
    put("proc/self/task/" + std::to_string(tid) + "/stat",
        std::to_string(tid) + " (nfsrdma (io)) R 1 0 0 0 -1 0 0 0 0 0 " + std::to_string(utime) +
            " 0 0 0 20 0 1 0 100 0 0\n");
  };
  task(1, 100);
  task(2, 50);
  ThreadCounters self(root_, "self", 100);
  ASSERT_TRUE(self.read());
  task(1, 110);
  task(2, 75);
  auto r = self.read();
  EXPECT_EQ(r->get("busiest_ticks"), 25);
  EXPECT_EQ(r->get("ticks"), 35);
  fs::remove_all(root_ / "proc/self/task/2");  // the thread ended
  task(1, 112);
  r = self.read();
  EXPECT_EQ(r->get("busiest_ticks"), 27);
  EXPECT_EQ(r->get("ticks"), 37);  // cumulative: the ended thread's ticks stay
  EXPECT_EQ(r->get("threads"), 1);
  EXPECT_FALSE(r->get("longest_wait_ms"));  // no schedstat staged: not measured
}

TEST_F(HostCountersTest, BenchThreadsSumTheLongestRunQueueWaitOfEachInterval) {
  const auto task = [&](int tid, std::uint64_t waitMs) {
    const std::string dir = "proc/self/task/" + std::to_string(tid) + "/";
    put(dir + "stat",
        std::to_string(tid) + " (io) R 1 0 0 0 -1 0 0 0 0 0 1 1 0 0 20 0 1 0 1 0 0\n");
    put(dir + "schedstat", "5000000 " + std::to_string(waitMs * 1000000) + " 12\n");
  };
  task(1, 100);
  task(2, 40);
  ThreadCounters self(root_, "self", 100);
  EXPECT_EQ(self.read()->get("longest_wait_ms"), 0);
  task(1, 130);
  task(2, 240);
  EXPECT_EQ(self.read()->get("longest_wait_ms"), 200);
  task(1, 330);
  task(2, 250);
  EXPECT_EQ(self.read()->get("longest_wait_ms"), 400);
}

TEST_F(HostCountersTest, FindsTheMountOfAPathAndReadsItsTransportAndOperations) {
  put("proc/self/mountstats",
      "device 198.18.0.1:/export mounted on /mnt/nfs with fstype nfs4 statvers=1.1\n"
      "\topts:\trw,vers=4.2,proto=rdma\n"
      "\tRPC iostats version: 1.1  p/v: 100003/4 (nfs)\n"
      "\txprt:\trdma 0 0 1 60 0 100 100 0 150 10 0 100 0 100 100 0 0 0 0 0 0 100 0 8 0 0 0\n"
      "\tper-op statistics\n"
      "\t        READ: 100 101 0 18000 420000 3 200 210 0\n"
      "\t       WRITE: 0 0 0 0 0 0 0 0 0\n"
      "device /dev/sda1 mounted on / with fstype ext4\n");
  EXPECT_EQ(nfsMountOf(root_, "/mnt/nfs/dir"), "/mnt/nfs");
  EXPECT_FALSE(nfsMountOf(root_, "/mnt/nfs2"));
  const auto m = readMountCounters(root_, "/mnt/nfs");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->get("sends"), 100);
  EXPECT_EQ(m->get("bklog_u"), 10);
  EXPECT_EQ(m->get("READ.transmissions"), 101);
  EXPECT_EQ(m->get("READ.rtt_ms"), 200);
  EXPECT_FALSE(m->get("WRITE.ops"));  // operations that never ran are left out
}

}  // namespace
}  // namespace nfsrdma::counters
