// Why: device discovery must read a RoCE host's sysfs correctly (GID -> IP,
// type, netdev; port state, rate, NUMA) without hardware, so it runs here
// against a fake /sys tree shaped like the one rdma_rxe creates in the VM.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "verbs/DeviceDiscovery.h"
#include "verbs/VerbsError.h"

namespace nfsrdma::verbs {
namespace {

namespace fs = std::filesystem;

class FakeSysfs : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("nfsrdma-sysfs-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  void write(const fs::path& rel, const std::string& text) {
    const fs::path p = root_ / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text << "\n";
  }

  // An rxe device on netdev: GID 0 link-local (v1 and v2), GID 1 IPv4 (v2).
  void addRxe(const std::string& dev, const std::string& netdev, const std::string& ipHex) {
    const fs::path d = fs::path("class/infiniband") / dev;
    write(d / "node_guid", "5054:00ff:fe12:3456");
    write(d / "node_type", "1: CA");
    write(d / "fw_ver", "0.0.0");
    const fs::path p = d / "ports/1";
    write(p / "state", "4: ACTIVE");
    write(p / "phys_state", "5: LinkUp");
    write(p / "link_layer", "Ethernet");
    write(p / "rate", "10 Gb/sec (1X QDR)");
    write(p / "gids/0", "fe80:0000:0000:0000:5054:00ff:fe12:3456");
    write(p / "gid_attrs/types/0", "IB/RoCE v1");
    write(p / "gid_attrs/ndevs/0", netdev);
    write(p / "gids/1", "fe80:0000:0000:0000:5054:00ff:fe12:3456");
    write(p / "gid_attrs/types/1", "RoCE v2");
    write(p / "gid_attrs/ndevs/1", netdev);
    write(p / "gids/2", "0000:0000:0000:0000:0000:ffff:" + ipHex);
    write(p / "gid_attrs/types/2", "RoCE v2");
    write(p / "gid_attrs/ndevs/2", netdev);
    write(p / "gids/3", "0000:0000:0000:0000:0000:0000:0000:0000");  // unpopulated
  }

  DiscoveryOptions options() const {
    DiscoveryOptions o;
    o.sysfsRoot = root_;
    o.queryVerbs = false;
    return o;
  }

  fs::path root_;
};

TEST_F(FakeSysfs, FindsBothRxeDevicesWithTheirIps) {
  addRxe("rxe0", "veth0", "c612:0001");
  addRxe("rxe1", "veth1", "c612:0002");
  const auto devices = discoverDevices(options());
  ASSERT_EQ(devices.size(), 2u);
  EXPECT_EQ(devices[0].name, "rxe0");
  EXPECT_EQ(devices[0].nodeGuid, "5054:00ff:fe12:3456");
  EXPECT_EQ(devices[0].nodeType, "CA");
  EXPECT_EQ(devices[0].numaNode, -1);
  ASSERT_EQ(devices[0].ports.size(), 1u);
  const PortInfo& port = devices[0].ports[0];
  EXPECT_EQ(port.number, 1);
  EXPECT_EQ(port.state, "ACTIVE");
  EXPECT_EQ(port.physState, "LinkUp");
  EXPECT_EQ(port.linkLayer, "Ethernet");
  EXPECT_DOUBLE_EQ(port.gbps, 10.0);
  EXPECT_EQ(port.rate, "1X QDR");
  EXPECT_EQ(port.netdev, "veth0");
  ASSERT_EQ(port.gids.size(), 3u);  // the all-zero entry is skipped
  EXPECT_EQ(port.gids[0].type, "IB/RoCE v1");
  EXPECT_EQ(port.gids[0].ip, "fe80::5054:ff:fe12:3456");
  EXPECT_EQ(port.gids[2].index, 2);
  EXPECT_EQ(port.gids[2].type, "RoCE v2");
  EXPECT_EQ(port.gids[2].ip, "198.18.0.1");
  EXPECT_EQ(port.gids[2].netdev, "veth0");
  EXPECT_EQ(devices[1].ports[0].gids[2].ip, "198.18.0.2");
  EXPECT_EQ(devices[1].ports[0].netdev, "veth1");
}

TEST_F(FakeSysfs, NumaNodeFromDeviceOrNetdev) {
  addRxe("mlx5_0", "ens1f0", "0a08:0001");
  write("class/infiniband/mlx5_0/device/numa_node", "1");
  addRxe("rxe0", "eth0", "0a08:0002");
  write("class/net/eth0/device/numa_node", "0");
  const auto devices = discoverDevices(options());
  ASSERT_EQ(devices.size(), 2u);
  EXPECT_EQ(devices[0].name, "mlx5_0");
  EXPECT_EQ(devices[0].numaNode, 1);
  EXPECT_EQ(devices[1].numaNode, 0);  // virtual device: its netdev's node
}

// A hardware HCA has a bus device behind its sysfs entry (the `device` link
// to its PCI function); rxe and siw have none. The link benchmark sleeps on
// CQ events on the latter by default (kernels since 5.11).
TEST_F(FakeSysfs, SoftwareDeviceHasNoBusDevice) {
  addRxe("mlx5_0", "ens1f0", "0a08:0001");
  write("class/infiniband/mlx5_0/device/numa_node", "1");
  addRxe("rxe0", "eth0", "0a08:0002");
  const auto devices = discoverDevices(options());
  ASSERT_EQ(devices.size(), 2u);
  EXPECT_EQ(devices[0].name, "mlx5_0");
  EXPECT_FALSE(devices[0].software);
  EXPECT_TRUE(devices[1].software);
}

// Kernels before 5.11 gave rxe its netdev's parent as bus device; the
// vendor id the driver reports tells it apart there (verbs discovery).
TEST(DeviceDiscovery, SoftwareVendorIdsAreRxeAndSiw) {
  EXPECT_TRUE(isSoftwareVendor(0xffffff));  // rxe
  EXPECT_TRUE(isSoftwareVendor(0x626d74));  // siw, "bmt"
  EXPECT_FALSE(isSoftwareVendor(0x02c9));   // Mellanox
  EXPECT_FALSE(isSoftwareVendor(0));
}

TEST_F(FakeSysfs, EmptyTreeIsTheNoDeviceError) {
  fs::create_directories(root_ / "class/infiniband");
  try {
    (void)discoverDevices(options());
    FAIL() << "expected NoDeviceError";
  } catch (const NoDeviceError& e) {
    EXPECT_NE(std::string(e.what()).find("no RDMA device found (sysfs: "), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("see nfsrdma-server doctor"), std::string::npos);
  }
}

TEST(DeviceHelpers, GidToIp) {
  EXPECT_EQ(gidToIp("0000:0000:0000:0000:0000:ffff:c612:0001"), "198.18.0.1");
  EXPECT_EQ(gidToIp("fe80:0000:0000:0000:0202:c9ff:fe00:0001"), "fe80::202:c9ff:fe00:1");
  EXPECT_EQ(gidToIp("0000:0000:0000:0000:0000:0000:0000:0000"), std::nullopt);
  EXPECT_EQ(gidToIp("garbage"), std::nullopt);
}

TEST(DeviceHelpers, SpeedTimesWidth) {
  EXPECT_DOUBLE_EQ(linkSpeedGbps(32, 2), 100.0);  // 4X EDR
  EXPECT_EQ(linkRateName(32, 2), "4X EDR");
  EXPECT_DOUBLE_EQ(linkSpeedGbps(64, 2), 200.0);   // 4X HDR
  EXPECT_DOUBLE_EQ(linkSpeedGbps(128, 2), 400.0);  // 4X NDR: the field notes' 400 Gb/s setup
  EXPECT_DOUBLE_EQ(linkSpeedGbps(1, 1), 2.5);      // 1X SDR
  EXPECT_DOUBLE_EQ(linkSpeedGbps(4, 8), 120.0);    // 12X QDR
  EXPECT_DOUBLE_EQ(linkSpeedGbps(3, 2), 0.0);      // unknown speed
  EXPECT_DOUBLE_EQ(parseSysfsRate("100 Gb/sec (4X EDR)"), 100.0);
  EXPECT_DOUBLE_EQ(parseSysfsRate("2.5 Gb/sec (1X SDR)"), 2.5);
  EXPECT_DOUBLE_EQ(parseSysfsRate(""), 0.0);
  EXPECT_EQ(mtuBytes(5), 4096);
  EXPECT_EQ(mtuBytes(1), 256);
  EXPECT_EQ(mtuBytes(0), 0);
}

}  // namespace
}  // namespace nfsrdma::verbs
