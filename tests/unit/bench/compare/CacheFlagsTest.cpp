// The cache-flag logic on the figures of a field measurement: a 400 Gb/s
// RoCE setup, 128 jobs x 100 MiB (12.5 GiB) file set. The RDMA reads of
// 16.5 GiB/s (128K) and 42.4 GiB/s (4M) beat the host disk 2.5x and 8x and
// must be flagged as served from the server's page cache; every other
// figure of the table (the 674 MiB/s 4K read among them) must not be.
#include <gtest/gtest.h>

#include "bench/compare/CacheFlags.h"

namespace nfsrdma::bench {
namespace {

constexpr double kMiB = 1048576.0;
constexpr double kGiB = 1073741824.0;
constexpr double kServerRam = 256 * kGiB;         // any server of that class; the file set fits
constexpr double kWorkingSet = 128 * 100 * kMiB;  // 12.5 GiB
constexpr double kRdmaLink = 389.00e9 / 8;        // ib_write_bw average
constexpr double kTcpLink = 23.4e9 / 8;           // iperf3

struct FieldRow {
  const char* profile;
  IoDirection dir;
  double disk, rdma, tcp;  // MiB/s
};

// That measurement's table, 16.5 and 42.4 GiB/s converted to MiB/s.
const FieldRow kField[] = {
    {"4k-randwrite", IoDirection::Write, 1128, 525, 291},
    {"4k-randread", IoDirection::Read, 1441, 674, 311},
    {"128k-write", IoDirection::Write, 3842, 2814, 2249},
    {"128k-read", IoDirection::Read, 6503, 16.5 * 1024, 2556},
    {"4m-write", IoDirection::Write, 3838, 3840, 2520},
    {"4m-read", IoDirection::Read, 5510, 42.4 * 1024, 2754},
};

std::vector<Flag> check(const FieldRow& r, double mibps, double link) {
  FigureCheck c;
  c.profile = r.profile;
  c.direction = r.dir;
  c.bytesPerSecond = mibps * kMiB;
  c.diskBytesPerSecond = r.disk * kMiB;
  c.linkBytesPerSecond = link;
  c.serverMemoryBytes = kServerRam;
  c.workingSetBytes = kWorkingSet;
  return checkFigure(c);
}

std::size_t warnings(const std::vector<Flag>& f) {
  std::size_t n = 0;
  for (const auto& x : f) n += x.severity == FlagSeverity::Warning;
  return n;
}

TEST(CacheFlags, FieldNotesRdmaReadsAboveTheDiskAreServedFromPageCache) {
  for (const auto& r : kField) {
    const auto f = check(r, r.rdma, kRdmaLink);
    const bool expectFlag =
        std::string(r.profile) == "128k-read" || std::string(r.profile) == "4m-read";
    EXPECT_EQ(warnings(f), expectFlag ? 1U : 0U) << r.profile;
    if (expectFlag) {
      ASSERT_FALSE(f.empty());
      EXPECT_EQ(f[0].kind, "server-page-cache");
      EXPECT_NE(f[0].message.find("served from the server's page cache"), std::string::npos)
          << f[0].message;
      EXPECT_NE(f[0].message.find("12.5 GiB"), std::string::npos) << f[0].message;
      EXPECT_NE(f[0].message.find("--drop-server-cache"), std::string::npos);
    }
  }
}

TEST(CacheFlags, The42GiBReadMessageNamesDiskAndFileSet) {
  const auto f = check(kField[5], kField[5].rdma, kRdmaLink);
  ASSERT_GE(f.size(), 1U);
  EXPECT_EQ(f[0].message,
            "4m-read 42.4 GiB/s: above the 5.4 GiB/s of the server's disk and the file set (12.5 "
            "GiB) fits in server "
            "RAM (256 GiB): served from the server's page cache; rerun with --size above server "
            "RAM or with "
            "--drop-server-cache");
}

TEST(CacheFlags, The674MiBRandomReadAndAllTcpFiguresAreNotFlagged) {
  EXPECT_EQ(warnings(check(kField[1], 674, kRdmaLink)), 0U);
  for (const auto& r : kField) EXPECT_EQ(warnings(check(r, r.tcp, kTcpLink)), 0U) << r.profile;
}

TEST(CacheFlags, FourMegWriteTiedWithTheDiskIsDiskBoundNotAWarning) {
  const auto f = check(kField[4], 3840, kRdmaLink);
  ASSERT_EQ(f.size(), 1U);
  EXPECT_EQ(f[0].kind, "disk-bound");
  EXPECT_EQ(f[0].severity, FlagSeverity::Info);
  EXPECT_EQ(f[0].message,
            "4m-write 3.8 GiB/s: disk-bound: 100% of the 3.7 GiB/s the same profile reached on the "
            "server's disk");
  // Well below the disk: something else bounds it.
  EXPECT_TRUE(check(kField[1], 674, kRdmaLink).empty());
}

TEST(CacheFlags, KubernetesRandomReadTenfoldAboveLocalIsFlagged) {
  // 25.1k vs 2.8k IOPS of 4 KiB; a small file set on an ordinary server.
  FigureCheck c;
  c.profile = "4k-randread";
  c.bytesPerSecond = 25100.0 * 4096;
  c.diskBytesPerSecond = 2800.0 * 4096;
  c.serverMemoryBytes = 64 * kGiB;
  c.workingSetBytes = 1 * kGiB;
  const auto f = checkFigure(c);
  ASSERT_EQ(f.size(), 1U);
  EXPECT_EQ(f[0].kind, "server-page-cache");
}

TEST(CacheFlags, AboveDiskWithFileSetBeyondRamBlamesTheDiskFigure) {
  FieldRow r = kField[5];
  FigureCheck c;
  c.profile = r.profile;
  c.bytesPerSecond = r.rdma * kMiB;
  c.diskBytesPerSecond = r.disk * kMiB;
  c.serverMemoryBytes = 8 * kGiB;
  c.workingSetBytes = kWorkingSet;
  const auto f = checkFigure(c);
  ASSERT_EQ(f.size(), 1U);
  EXPECT_EQ(f[0].kind, "above-disk");
  c.serverMemoryBytes.reset();
  EXPECT_NE(checkFigure(c)[0].message.find("--server-mem"), std::string::npos);
}

TEST(CacheFlags, WritesAboveTheDiskAreAbsorbedByTheServerCache) {
  FigureCheck c;
  c.profile = "128k-write";
  c.direction = IoDirection::Write;
  c.bytesPerSecond = 9000 * kMiB;
  c.diskBytesPerSecond = 3842 * kMiB;
  c.serverMemoryBytes = kServerRam;
  c.workingSetBytes = kWorkingSet;
  const auto f = checkFigure(c);
  ASSERT_EQ(f.size(), 1U);
  EXPECT_EQ(f[0].kind, "server-write-cache");
}

TEST(CacheFlags, AboveTheLinkIsImpossibleNearItIsLinkBound) {
  FigureCheck c;
  c.profile = "4m-read";
  c.bytesPerSecond = kTcpLink * 1.5;
  c.linkBytesPerSecond = kTcpLink;
  c.linkSource = "iperf3";
  auto f = checkFigure(c);
  ASSERT_EQ(f.size(), 1U);
  EXPECT_EQ(f[0].kind, "above-link");
  EXPECT_NE(f[0].message.find("23.4 Gb/s"), std::string::npos) << f[0].message;
  c.bytesPerSecond = 2754 * kMiB;  // the field's TCP 4M read: 98.7% of iperf3's figure
  f = checkFigure(c);
  ASSERT_EQ(f.size(), 1U);
  EXPECT_EQ(f[0].kind, "link-bound");
  EXPECT_EQ(f[0].severity, FlagSeverity::Info);
}

TEST(CacheFlags, TheDiskColumnItselfIsNeverFlaggedAgainstItself) {
  FigureCheck c;
  c.profile = "4m-read";
  c.bytesPerSecond = 5510 * kMiB;
  c.diskBytesPerSecond = 1000 * kMiB;
  c.overNetwork = false;
  EXPECT_TRUE(checkFigure(c).empty());
}

TEST(CacheFlags, RatesAndLinksFormatInTheirUnits) {
  EXPECT_EQ(formatRate(674 * kMiB), "674 MiB/s");
  EXPECT_EQ(formatRate(16.5 * kGiB), "16.5 GiB/s");
  EXPECT_EQ(formatGbps(389.0e9 / 8), "389.0 Gb/s");
}

}  // namespace
}  // namespace nfsrdma::bench
