// numa=auto's pieces on a fake sysfs tree (the CPU list format is
// util/CpuList's, tested in tests/unit/util): a device's node (an RDMA device's; the interface of a
// local address), and pinning the calling thread to a node's CPUs, which sched_getaffinity then
// shows.
#include <gtest/gtest.h>
#include <sched.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "client/transport/NumaPlacement.h"
#include "client/transport/rdma/DeviceNuma.h"

namespace nfsrdma::transport {
namespace {
namespace fs = std::filesystem;
using rdma::localAddressNumaNode;  // the device look-ups link verbs: transport/rdma
using rdma::rdmaDeviceNumaNode;

class FakeSysfs : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("nfsrdma-numa-" + std::to_string(::getpid()));
    fs::remove_all(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  void write(const fs::path& rel, const std::string& text) {
    fs::create_directories((root_ / rel).parent_path());
    std::ofstream(root_ / rel) << text << "\n";
  }
  fs::path root_;
};

TEST_F(FakeSysfs, AnRdmaDeviceNodeAndNoneForAVirtualOne) {
  write("class/infiniband/mlx5_0/device/numa_node", "1");
  write("class/infiniband/rxe0/node_type", "1: CA");
  EXPECT_EQ(rdmaDeviceNumaNode("mlx5_0", root_), 1);
  EXPECT_EQ(rdmaDeviceNumaNode("rxe0", root_), std::nullopt);
  EXPECT_EQ(rdmaDeviceNumaNode("mlx5_9", root_), std::nullopt);
}

// 127.0.0.1 is lo's on every host: the fake tree gives lo a node to find.
TEST_F(FakeSysfs, TheInterfaceOfALocalAddress) {
  EXPECT_EQ(localAddressNumaNode("127.0.0.1", root_), std::nullopt);
  write("class/net/lo/device/numa_node", "0");
  EXPECT_EQ(localAddressNumaNode("127.0.0.1", root_), 0);
  EXPECT_EQ(localAddressNumaNode("192.0.2.77", root_), std::nullopt);  // no interface holds it
}

TEST_F(FakeSysfs, PinsTheCallingThreadToTheNodesCpus) {
  write("devices/system/node/node0/cpulist", "0");
  write("devices/system/node/node1/cpulist", "oops");
  NumaPlacement pinned, broken, unknown;
  cpu_set_t after;
  CPU_ZERO(&after);
  // On a thread of its own: the test's thread keeps every CPU.
  std::thread([&] {
    pinned = pinThisThreadToNode(0, root_);
    ASSERT_EQ(::sched_getaffinity(0, sizeof after, &after), 0);
    broken = pinThisThreadToNode(1, root_);
    unknown = placeThisThread(std::nullopt, "RDMA device rxe0", root_);
  }).join();
  EXPECT_EQ(pinned.node, 0);
  EXPECT_EQ(pinned.statsField(), " numa=0");
  EXPECT_EQ(CPU_COUNT(&after), 1);
  EXPECT_TRUE(CPU_ISSET(0, &after));
  EXPECT_EQ(broken.node, -1);
  EXPECT_NE(broken.detail.find("node 1: cannot read its CPUs from "), std::string::npos)
      << broken.detail;
  EXPECT_EQ(unknown.statsField(), " numa=none (RDMA device rxe0 has no NUMA node)");
}

}  // namespace
}  // namespace nfsrdma::transport
