// counters/MountStats: /proc/self/mountstats as the 6.12 kernel prints it
// (a kernel proto=rdma mount and a TCP one with nconnect=2), older and
// newer lines (fewer or more fields), other file systems skipped, escaped
// mount points, and malformed lines refused with their line number.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "counters/MountStats.h"

namespace nfsrdma::counters {
namespace {

// A 6.12 guest's file, shortened (every NFSv4 procedure has a line there).
const std::string kRdmaMount =
    "device 198.18.0.1:/export mounted on /mnt with fstype nfs4 statvers=1.1\n"
    "\topts:\trw,vers=4.2,rsize=262144,wsize=262144,hard,proto=rdma,nconnect=1,port=20049\n"
    "\tage:\t61\n"
    "\tcaps:\tcaps=0x3ffbffff,wtmult=512,dtsize=262144,bsize=0,namlen=255\n"
    "\tsec:\tflavor=1,pseudoflavor=1\n"
    "\tevents:\t4 9 0 0 2 3 5 0 0 0 0 0 0 0 1 0 0 1 0 0 0 0 7 0 0 0 0 \n"
    "\tbytes:\t0 0 41943040 0 41943040 0 0 0 \n"
    "\tRPC iostats version: 1.1  p/v: 100003/4 (nfs)\n"
    "\txprt:\trdma 0 0 1 60 0 10262 10262 0 10534 12 0 10240 0 10240 10240 0 0 0 0 0 0 10240 0 8 "
    "0 0 0\n"
    "\tper-op statistics\n"
    "\t        NULL: 1 1 0 44 24 0 0 0 0\n"
    "\t        READ: 10240 10240 0 1802240 42434560 310 19822 20491 0\n"
    "\t       WRITE: 0 0 0 0 0 0 0 0 0\n"
    "\n";

TEST(MountStats, ReadsAKernelRdmaMountsTransportAndOperations) {
  const auto mounts =
      parseMountStats("device sysfs mounted on /sys with fstype sysfs\n" + kRdmaMount +
                      "device /dev/vda mounted on / with fstype ext4\n");
  ASSERT_EQ(mounts.size(), 1U);
  const NfsMountStats& m = mounts[0];
  EXPECT_EQ(m.device, "198.18.0.1:/export");
  EXPECT_EQ(m.mountPoint, "/mnt");
  EXPECT_EQ(m.fstype, "nfs4");
  EXPECT_EQ(m.options,
            "rw,vers=4.2,rsize=262144,wsize=262144,hard,proto=rdma,nconnect=1,port=20049");
  ASSERT_EQ(m.xprts.size(), 1U);
  EXPECT_EQ(m.xprts[0].proto, "rdma");
  EXPECT_EQ(m.xprts[0].fields.values.size(), 27U);
  EXPECT_EQ(m.xprts[0].fields.get("sends"), 10262);
  EXPECT_EQ(m.xprts[0].fields.get("req_u"), 10534);
  EXPECT_EQ(m.xprts[0].fields.get("bklog_u"), 12);
  EXPECT_EQ(m.xprts[0].fields.get("write_chunk_count"), 10240);
  EXPECT_EQ(m.xprts[0].fields.get("mrs_allocated"), 8);
  EXPECT_EQ(m.xprts[0].fields.get("reply_waits_for_send"), 0);
  EXPECT_EQ(m.events.get("shortread"), 7);
  EXPECT_EQ(m.events.values.size(), 27U);
  EXPECT_EQ(m.bytes.get("directreadbytes"), 41943040);
  ASSERT_EQ(m.ops.size(), 3U);
  const RpcOpStats* read = m.op("READ");
  ASSERT_NE(read, nullptr);
  EXPECT_EQ(read->ops, 10240U);
  EXPECT_EQ(read->bytesReceived, 42434560U);
  EXPECT_EQ(read->queueMs, 310U);
  EXPECT_EQ(read->rttMs, 19822U);
  EXPECT_EQ(read->executeMs, 20491U);
  EXPECT_EQ(read->errors, 0U);
  EXPECT_EQ(m.op("GETATTR"), nullptr);
}

TEST(MountStats, NconnectGivesAnXprtLinePerConnection) {
  const auto mounts = parseMountStats(
      "device srv:/e mounted on /mnt/two\\040words with fstype nfs statvers=1.1\n"
      "\txprt:\ttcp 812 1 1 0 3 100 100 0 150 0 2 0 0\n"
      "\txprt:\ttcp 813 1 1 0 3 90 90 0 120 0 2 0 0\n");
  ASSERT_EQ(mounts.size(), 1U);
  EXPECT_EQ(mounts[0].mountPoint, "/mnt/two words");
  ASSERT_EQ(mounts[0].xprts.size(), 2U);
  EXPECT_EQ(mounts[0].xprts[1].fields.get("srcport"), 813);
  EXPECT_EQ(mounts[0].xprts[1].fields.get("pending_u"), 0);
  EXPECT_EQ(mounts[0].xprts[1].fields.values.size(), 13U);
}

TEST(MountStats, FieldsAKernelDidNotPrintAreAbsentAndExtrasKeepTheirPlace) {
  const auto mounts = parseMountStats(
      "device s:/e mounted on /m with fstype nfs4\n"
      "\txprt:\trdma 0 0 1 60 0 5 5\n"
      "\txprt:\twhatever 1 2\n"
      "\tevents:\t" +
      std::string(28 * 2, ' ') +
      "\n"
      "\tbytes:\t1 2 3 4 5 6 7 8 9\n"
      "\tper-op statistics\n"
      "\t        READ: 1 2 3 4 5 6 7 8\n");
  ASSERT_EQ(mounts.size(), 1U);
  const auto& x = mounts[0].xprts;
  EXPECT_EQ(x[0].fields.get("recvs"), 5);
  EXPECT_FALSE(x[0].fields.get("req_u").has_value());  // absent, not 0
  EXPECT_EQ(x[1].fields.get("extra_2"), 2);
  EXPECT_TRUE(mounts[0].events.values.empty());
  EXPECT_EQ(mounts[0].bytes.get("extra_9"), 9);
  ASSERT_NE(mounts[0].op("READ"), nullptr);
  EXPECT_EQ(mounts[0].op("READ")->executeMs, 8U);
  EXPECT_FALSE(mounts[0].op("READ")->errors.has_value());  // an older kernel's line
}

TEST(MountStats, AMalformedLineIsRefusedWithItsNumber) {
  const auto error = [](const std::string& text) {
    try {
      parseMountStats(text);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  EXPECT_EQ(error("device s:/e mounted on /m with fstype nfs4\n\txprt:\trdma 0 x\n"),
            "mountstats line 2: 'x' is not a whole number");
  EXPECT_EQ(error("device s:/e mounted on /m with fstype nfs4\n\tper-op statistics\n\tREAD: 1 2\n"),
            "mountstats line 3: an operation's line needs at least 8 numbers after its name");
  EXPECT_EQ(error("device s:/e mounted on /m\n"),
            "mountstats line 1: expected 'device DEV mounted on DIR with fstype TYPE'");
  EXPECT_EQ(error("device s:/e mounted on /m with fstype nfs4\n\txprt:\n"),
            "mountstats line 2: 'xprt:' needs a transport name");
  // Another file system's lines are not read at all.
  EXPECT_EQ(error("device x mounted on /y with fstype fuse\n\txprt:\tbroken x\n"), "(accepted)");
}

}  // namespace
}  // namespace nfsrdma::counters
