// The anchor's host CPU figures: /proc/stat's aggregate line and a
// process's /proc/<pid>/stat, as proc(5) lays them out, and the share of
// the host's busy time left to the rest of the host per operation.
#include <gtest/gtest.h>
#include <unistd.h>

#include "bench/anchor/HostCpu.h"

namespace nfsrdma::bench {
namespace {

TEST(HostCpuTest, ProcStatBusyLeavesOutIdleAndIowaitAndDoesNotCountGuestTwice) {
  // user nice system idle iowait irq softirq steal guest guest_nice
  const auto bt = parseProcStatCpuLine("cpu  100 20 30 400 50 6 7 8 90 10\n", 100);
  ASSERT_TRUE(bt);
  EXPECT_DOUBLE_EQ(bt->first, (100 + 20 + 30 + 6 + 7 + 8) / 100.0);
  EXPECT_DOUBLE_EQ(bt->second, (100 + 20 + 30 + 6 + 7 + 8 + 400 + 50) / 100.0);
}

TEST(HostCpuTest, ProcStatRefusesAPerCpuLineOrATruncatedOne) {
  EXPECT_FALSE(parseProcStatCpuLine("cpu0 1 2 3 4 5 6 7 8", 100));
  EXPECT_FALSE(parseProcStatCpuLine("cpu 1 2 3 4 5", 100));
  EXPECT_FALSE(parseProcStatCpuLine("cpu 1 2 x 4 5 6 7 8", 100));
}

TEST(HostCpuTest, PidStatReadsUtimeAndStimeAfterANameWithSpacesAndParentheses) {
  // pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime
  // ...
  const auto cpu = parseProcPidStatCpu(
      "4242 (ganesha (x) nfsd) S 1 4242 4242 0 -1 4194560 900 0 3 0 250 150 0 0 20 0", 100);
  ASSERT_TRUE(cpu);
  EXPECT_DOUBLE_EQ(*cpu, 4.0);
  EXPECT_FALSE(parseProcPidStatCpu("4242 ganesha S 1", 100));
}

TEST(HostCpuTest, ThisProcessIsSampled) {
  const HostCpuSample s = sampleHostCpu(::getpid());
  EXPECT_GT(s.totalSeconds, 0.0);
  EXPECT_GE(s.totalSeconds, s.busySeconds);
  ASSERT_TRUE(s.processSeconds);
}

TEST(HostCpuTest, ShareChargesTheRestOfTheHostPerOperation) {
  HostCpuSample before{10, 40, 1.0};
  HostCpuSample after{11.6, 42, 1.9};  // 2 CPUs for 1 s: 1.6 s busy, the server 0.9 s
  const auto share = hostCpuShare(before, after, 0.2, 1000);
  ASSERT_TRUE(share);
  EXPECT_NEAR(share->busyFraction, 0.8, 1e-9);
  EXPECT_NEAR(share->othersMicrosPerOp, 1400, 1e-6);
  ASSERT_TRUE(share->serverMicrosPerOp);
  EXPECT_NEAR(*share->serverMicrosPerOp, 900, 1e-6);
  EXPECT_FALSE(hostCpuShare(before, after, 0.2, 0));
  EXPECT_FALSE(hostCpuShare(after, before, 0.2, 1000));
}

}  // namespace
}  // namespace nfsrdma::bench
