// The kernel mount planner: ports, nosharecache, nconnect by kernel and
// transport, module checks, and the error for each bad input.
#include <gtest/gtest.h>

#include "client/mount/MountPlan.h"

namespace nfsrdma::mount {
namespace {

HostFacts modernHost() {
  HostFacts f;
  f.rdmaClientModule = true;
  f.kernelMajor = 6;
  f.kernelMinor = 12;
  f.mounts = "proc /proc proc rw 0 0\n";
  return f;
}

MountRequest request(const std::string& proto) {
  MountRequest r;
  r.server = "198.18.0.1";
  r.exportPath = "/export";
  r.mountPoint = "/mnt/x";
  r.proto = proto;
  return r;
}

TEST(MountPlan, RdmaDefaultsToPort20049AndVersion42) {
  MountPlan p = planMount(request("rdma"), modernHost());
  ASSERT_EQ(p.mounts.size(), 1U);
  EXPECT_EQ(p.mounts[0].command, "mount -t nfs -o vers=4.2,proto=rdma,port=20049 198.18.0.1:/export /mnt/x");
  EXPECT_EQ(p.mounts[0].fstabLine, "198.18.0.1:/export /mnt/x nfs vers=4.2,proto=rdma,port=20049,_netdev 0 0");
  EXPECT_TRUE(p.problems.empty());
  EXPECT_NE(p.kubernetesYaml.find("    - proto=rdma\n"), std::string::npos);
  EXPECT_NE(p.kubernetesYaml.find("kind: StorageClass"), std::string::npos);
  EXPECT_NE(p.kubernetesYaml.find("kind: PersistentVolume"), std::string::npos);
}

TEST(MountPlan, TcpHasNoPortUnlessGiven) {
  MountRequest r = request("tcp");
  EXPECT_EQ(planMount(r, modernHost()).mounts[0].options, "vers=4.2,proto=tcp");
  r.port = 2050;
  EXPECT_EQ(planMount(r, modernHost()).mounts[0].options, "vers=4.2,proto=tcp,port=2050");
}

TEST(MountPlan, BothTransportsGetNoShareCacheAndTheirOwnDirectories) {
  MountPlan p = planMount(request("both"), modernHost());
  ASSERT_EQ(p.mounts.size(), 2U);
  EXPECT_EQ(p.mounts[0].mountPoint, "/mnt/x-rdma");
  EXPECT_EQ(p.mounts[1].mountPoint, "/mnt/x-tcp");
  EXPECT_EQ(p.mounts[0].options, "vers=4.2,proto=rdma,port=20049,nosharecache");
  EXPECT_EQ(p.mounts[1].options, "vers=4.2,proto=tcp,nosharecache");
  EXPECT_EQ(planUnmount(request("both")), (std::vector<std::string>{"umount /mnt/x-rdma", "umount /mnt/x-tcp"}));
}

TEST(MountPlan, ExistingMountOfTheServerAddsNoShareCache) {
  HostFacts f = modernHost();
  f.mounts += "198.18.0.1:/export /mnt/tcp nfs4 rw,vers=4.2,proto=tcp 0 0\n";
  MountPlan p = planMount(request("rdma"), f);
  EXPECT_EQ(p.mounts[0].options, "vers=4.2,proto=rdma,port=20049,nosharecache");
  ASSERT_EQ(p.notes.size(), 1U);
  EXPECT_NE(p.notes[0].find("already mounted (198.18.0.1:/export on /mnt/tcp)"), std::string::npos);
  // Another server's mount changes nothing.
  HostFacts g = modernHost();
  g.mounts += "198.18.0.9:/export /mnt/other nfs4 rw 0 0\n";
  EXPECT_EQ(planMount(request("rdma"), g).mounts[0].options, "vers=4.2,proto=rdma,port=20049");
}

TEST(MountPlan, MountPointInUseIsAProblem) {
  HostFacts f = modernHost();
  f.mounts += "198.18.0.1:/export /mnt/x nfs4 rw 0 0\n";
  MountPlan p = planMount(request("rdma"), f);
  ASSERT_EQ(p.problems.size(), 1U);
  EXPECT_EQ(p.problems[0], "/mnt/x already has 198.18.0.1:/export mounted on it");
}

TEST(MountPlan, NconnectOnlyWhereTheKernelSupportsIt) {
  MountRequest r = request("both");
  r.nconnect = 4;
  HostFacts old = modernHost();
  old.kernelMajor = 5;
  old.kernelMinor = 4;
  MountPlan p = planMount(r, old);
  EXPECT_EQ(p.mounts[0].options.find("nconnect"), std::string::npos);             // rdma on 5.4: dropped
  EXPECT_NE(p.mounts[1].options.find("nconnect=4"), std::string::npos);           // tcp on 5.4: kept
  EXPECT_NE(p.notes.back().find("nconnect dropped for proto=rdma: kernel 5.4"), std::string::npos);
  EXPECT_NE(planMount(r, modernHost()).mounts[0].options.find("nconnect=4"), std::string::npos);
}

TEST(MountPlan, MissingClientModuleIsAProblemWithTheFix) {
  HostFacts f = modernHost();
  f.rdmaClientModule = false;
  MountPlan p = planMount(request("rdma"), f);
  ASSERT_EQ(p.problems.size(), 1U);
  EXPECT_NE(p.problems[0].find("modprobe rpcrdma"), std::string::npos);
  EXPECT_TRUE(planMount(request("tcp"), f).problems.empty());
}

TEST(MountPlan, BadInputIsNamed) {
  auto expectError = [](MountRequest r, const std::string& text) {
    try {
      planMount(r, modernHost());
      ADD_FAILURE() << "accepted: " << text;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
    }
  };
  MountRequest r = request("rdma");
  r.proto = "udp";
  expectError(r, "proto 'udp': expected rdma, tcp or both");
  r = request("rdma");
  r.exportPath = "export";
  expectError(r, "export 'export': expected an absolute path");
  r = request("rdma");
  r.mountPoint = "/mnt/a b";
  expectError(r, "mount point '/mnt/a b'");
  r = request("rdma");
  r.rsize = 5000;
  expectError(r, "rsize=5000: expected a power of two");
  r = request("rdma");
  r.vers = "5";
  expectError(r, "vers '5'");
  r = request("rdma");
  r.server = "";
  expectError(r, "server '': expected a host name or address");
  r = request("rdma");
  r.nconnect = 99;
  expectError(r, "nconnect=99: expected 1 to 16");
}

}  // namespace
}  // namespace nfsrdma::mount
