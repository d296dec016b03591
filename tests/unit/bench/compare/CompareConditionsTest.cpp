// The conditions of `compare` without a server: every read cell of every
// target prepared the same way (the run is a double that records what it
// was asked), a path on an NFS mount treated as over the network (link
// bound, not this host's RAM, no claim to drop its server's cache), and
// write cells that count their COMMIT/fsync.
#include <gtest/gtest.h>

#include <cmath>

#include "bench/compare/CompareConditions.h"
#include "bench/compare/HtmlReport.h"

namespace nfsrdma::bench {
namespace {

constexpr double kGiB = 1073741824.0;

std::vector<TargetSpec> embeddedLike() {
  return {TargetSpec::parse("local", "path:/var/tmp"),
          TargetSpec::parse("nfs-tcp", "nfs:nfs://127.0.0.1:2049/export"),
          TargetSpec::parse("libnfs", "libnfs:nfs://127.0.0.1:2049/export")};
}

// A kernel NFS mount given as a path (what statfs would say of /mnt/nfs).
TargetSpec knfs(const std::string& proto = "tcp") {
  TargetSpec t = TargetSpec::parse("knfs", "path:/mnt/nfs");
  t.onNfs = true;
  t.mountProto = proto;
  return t;
}

// The double: a run that reports the cache state it was asked to reach, and
// 100 MiB of reads or writes in one second.
struct RecordingRun {
  std::vector<std::pair<std::string, CachePrep>> calls;
  CellRunner runner() {
    return [this](const TargetSpec& t, const FileProfile& p, const FileOptions& o,
                  const RunSettings& s) {
      calls.emplace_back(t.name + " " + p.name, s.cache);
      RunResult r;
      r.target = t.name;
      r.profile = p.name;
      r.options = o;
      r.seconds = 1;
      r.durableSeconds = 1;
      if (p.reads()) {
        r.serverCache = s.cache == CachePrep::Warm   ? ServerCache::Warm
                        : s.cache == CachePrep::Drop ? ServerCache::Dropped
                                                     : ServerCache::Unmanaged;
      }
      for (int d = 0; d < 2; ++d) {
        r.dir[d].ops = 100;
        r.dir[d].bytes = 100ULL << 20;
      }
      return r;
    };
  }
};

TEST(CompareConditions, EveryReadCellOfEveryTargetStartsWarmWithoutDrop) {
  const auto specs = embeddedLike();
  const ServerCachePlan plan = planServerCache(specs, false, "", 64.0 * 1048576, 16 * kGiB);
  EXPECT_EQ(plan.prep, CachePrep::Warm);
  EXPECT_NE(plan.description.find("warm before every read cell"), std::string::npos)
      << plan.description;

  RecordingRun run;
  CompareReport report;
  const std::vector<FileProfile> profiles = {profileByName("4k-randread"), profileByName("randrw")};
  EXPECT_FALSE(runCompareMatrix(report, specs, {true, true, true}, profiles, FileOptions{}, plan,
                                false, run.runner()));
  ASSERT_EQ(run.calls.size(), 6U);
  for (const auto& [what, prep] : run.calls) EXPECT_EQ(prep, CachePrep::Warm) << what;
  for (const auto& c : report.cells) {
    if (c.direction == IoDirection::Read) {
      EXPECT_EQ(c.serverCache, "warm") << c.target << " " << c.profile;
    }
  }
  // The state of each cell is in the JSON and reads back.
  const std::string json = compareToJson(report);
  EXPECT_NE(json.find("\"server_cache\": \"warm\""), std::string::npos) << json;
  EXPECT_EQ(compareFromJson(parseJson(json)).cells.at(0).serverCache, "warm");
}

TEST(CompareConditions, DropWhenAskedAndTheServerIsThisHostOtherwiseWarmAndSayWhy) {
  const auto specs = embeddedLike();
  const ServerCachePlan drop = planServerCache(specs, true, "", 64.0 * 1048576, 16 * kGiB);
  EXPECT_EQ(drop.prep, CachePrep::Drop);
  RecordingRun run;
  CompareReport report;
  runCompareMatrix(report, specs, {true, true, true}, {profileByName("4k-randread")}, FileOptions{},
                   drop, false, run.runner());
  for (const auto& [what, prep] : run.calls) EXPECT_EQ(prep, CachePrep::Drop) << what;
  for (const auto& c : report.cells)
    EXPECT_TRUE(c.cacheDropped && c.serverCache == "dropped") << c.target;

  const ServerCachePlan notRoot =
      planServerCache(specs, true, "needs root", 64.0 * 1048576, 16 * kGiB);
  EXPECT_EQ(notRoot.prep, CachePrep::Warm);
  EXPECT_NE(notRoot.description.find("needs root"), std::string::npos) << notRoot.description;

  auto mixed = specs;
  mixed.push_back(TargetSpec::parse("remote", "nfs:nfs://10.0.0.1/export"));
  const ServerCachePlan remote = planServerCache(mixed, true, "", 64.0 * 1048576, 16 * kGiB);
  EXPECT_EQ(remote.prep, CachePrep::Warm) << "one target cold and another warm is not a comparison";
  EXPECT_NE(remote.description.find("remote (server 10.0.0.1) is not this host"), std::string::npos)
      << remote.description;

  const ServerCachePlan unknownRam =
      planServerCache(mixed, false, "", 64.0 * 1048576, std::nullopt);
  EXPECT_EQ(unknownRam.prep, CachePrep::Warm);
  EXPECT_NE(unknownRam.description.find("the server's RAM is unknown (give --server-mem)"),
            std::string::npos)
      << unknownRam.description;

  const ServerCachePlan huge = planServerCache(specs, false, "", 64 * kGiB, 16 * kGiB);
  EXPECT_EQ(huge.prep, CachePrep::FromOptions);
  EXPECT_NE(huge.description.find("larger than the server's RAM"), std::string::npos)
      << huge.description;
}

TEST(CompareConditions, ACellThatMissedThePlannedStateIsNoted) {
  RecordingRun run;
  CellRunner base = run.runner();
  CellRunner failsToWarm = [&](const TargetSpec& t, const FileProfile& p, const FileOptions& o,
                               const RunSettings& s) {
    RunResult r = base(t, p, o, s);
    if (t.name == "libnfs") {
      r.serverCache = ServerCache::Unmanaged;
      r.notes.push_back("--drop-server-cache: needs root");
    }
    return r;
  };
  CompareReport report;
  const auto specs = embeddedLike();
  runCompareMatrix(report, specs, {true, true, true}, {profileByName("4k-randread")}, FileOptions{},
                   planServerCache(specs, false, "", 1e6, 1e9), false, failsToWarm);
  ASSERT_EQ(report.notes.size(), 1U);
  EXPECT_NE(report.notes[0].find("libnfs 4k-randread: the server's cache was unmanaged, not warm"),
            std::string::npos)
      << report.notes[0];
}

TEST(CompareConditions, PathOnNfsIsNotLocal) {
  EXPECT_FALSE(pathIsOnNfs("/var/tmp"));  // the embedded export's parent: a local disk
  EXPECT_FALSE(TargetSpec::parse("local", "path:/var/tmp").onNfs);
  EXPECT_TRUE(TargetSpec::parse("local", "path:/var/tmp").serverIsLocal());
  const TargetSpec k = knfs();
  EXPECT_FALSE(k.serverIsLocal());
  EXPECT_TRUE(k.overNfs());
  EXPECT_NE(k.describe().find("on NFS (proto=tcp)"), std::string::npos) << k.describe();

  // Its server's RAM is not this host's.
  const std::vector<TargetSpec> specs = {TargetSpec::parse("local", "path:/var/tmp"), knfs()};
  const ServerMemory unknown = serverMemoryOf(specs, std::nullopt, 24 * kGiB);
  EXPECT_FALSE(unknown.bytes);
  EXPECT_NE(unknown.source.find("knfs (/mnt/nfs is on NFS)"), std::string::npos) << unknown.source;
  EXPECT_NE(unknown.source.find("--server-mem"), std::string::npos);
  EXPECT_EQ(serverMemoryOf(specs, 256 * kGiB, 24 * kGiB).bytes, 256 * kGiB);
  EXPECT_EQ(serverMemoryOf({specs[0]}, std::nullopt, 24 * kGiB).bytes, 24 * kGiB);

  // --drop-server-cache cannot reach its server: every target starts warm instead.
  const ServerCachePlan plan = planServerCache(specs, true, "", 1e6, std::nullopt);
  EXPECT_EQ(plan.prep, CachePrep::Warm);
  EXPECT_NE(plan.description.find("knfs (/mnt/nfs is on NFS) is not this host"), std::string::npos)
      << plan.description;
}

TEST(CompareConditions, PathOnNfsGetsTheLinkBoundAndItsAboveLinkFlag) {
  LinkBounds link;
  link.figures.tcpBytesPerSecond = 1.25e9;  // 10 Gb/s
  link.figures.rdmaBytesPerSecond = 12.5e9;
  link.source = "nfsrdma-bench link, link.json";
  CompareTarget local, tcp, rdma;
  attachLinkBound(local, TargetSpec::parse("local", "path:/var/tmp"), link);
  attachLinkBound(tcp, knfs("tcp"), link);
  attachLinkBound(rdma, knfs("rdma"), link);
  EXPECT_FALSE(local.linkBytesPerSecond);
  ASSERT_TRUE(tcp.linkBytesPerSecond);
  EXPECT_DOUBLE_EQ(*tcp.linkBytesPerSecond, 1.25e9);
  EXPECT_NE(tcp.linkSource.find("TCP"), std::string::npos);
  EXPECT_DOUBLE_EQ(rdma.linkBytesPerSecond.value_or(0), 12.5e9);

  // A kernel client's page cache serving 3 GiB/s over a 10 Gb/s link is flagged.
  CompareReport r;
  r.diskTarget = "local";
  tcp.name = "knfs";
  r.targets = {tcp};
  CompareCell c;
  c.profile = "4m-read";
  c.target = "knfs";
  c.ran = true;
  c.mibPerSecond = 3 * 1024;
  r.cells = {c};
  computeFlags(r);
  ASSERT_EQ(r.cells[0].flags.size(), 1U);
  EXPECT_EQ(r.cells[0].flags[0].kind, "above-link");
}

TEST(CompareConditions, DirectZeroWarnsThatTheDiskBoundIsThePageCache) {
  FileOptions o;
  const std::vector<TargetSpec> specs = {TargetSpec::parse("local", "path:/var/tmp"), knfs()};
  EXPECT_TRUE(conditionWarnings(specs, o, "local").empty());
  o.direct = false;
  const auto w = conditionWarnings(specs, o, "local");
  ASSERT_EQ(w.size(), 2U);
  EXPECT_NE(w[0].find("the disk bound every figure is checked against is the page cache's"),
            std::string::npos)
      << w[0];
  EXPECT_NE(w[1].find("knfs"), std::string::npos) << w[1];
}

// The reviewer's figures: 1.0009 s of 4m-write at 919 MiB/s, then a 137 ms COMMIT: 808 MiB/s
// durable.
TEST(CompareConditions, WriteCellsCountTheirCommit) {
  RunResult r;
  r.target = "nfs-tcp";
  r.seconds = 1.0009;
  r.commitSeconds = 0.137;
  r.durableSeconds = 1.0009 + 0.137;
  r.dir[1].bytes = static_cast<std::uint64_t>(919.0 * 1048576 * 1.0009);
  r.dir[1].ops = r.dir[1].bytes / (4 << 20);
  const auto cells = cellsOf(r, profileByName("4m-write"));
  ASSERT_EQ(cells.size(), 1U);
  const CompareCell& w = cells[0];
  EXPECT_NEAR(w.mibPerSecond, 808.3, 0.1);
  EXPECT_NEAR(w.iops, static_cast<double>(r.dir[1].ops) / 1.1379, 1e-6);
  EXPECT_NEAR(w.commitSeconds, 0.137, 1e-9);
  EXPECT_DOUBLE_EQ(w.seconds, 1.0009);

  CompareReport report;
  report.targets = {
      CompareTarget{"nfs-tcp", "nfs", "", true, "", true, std::nullopt, "", "tcp", 1}};
  report.rows = {{"4m-write", IoDirection::Write}};
  report.cells = cells;
  const std::string json = compareToJson(report);
  EXPECT_NEAR(parseJson(json).find("results")->array.at(0).num("commit_s", -1), 0.137, 1e-9)
      << json;
  EXPECT_NEAR(compareFromJson(parseJson(json)).cells.at(0).commitSeconds, 0.137, 1e-9);
  const std::string text = formatCompareText(report);
  EXPECT_NE(text.find("nfs-tcp 4m-write: 1.001 s of writes + 137 ms COMMIT/fsync"),
            std::string::npos)
      << text;
  // The HTML report says the same.
  const std::string html = renderHtmlReport(report);
  EXPECT_NE(html.find("<li>nfs-tcp 4m-write: 1.001 s of writes + 137 ms COMMIT/fsync</li>"),
            std::string::npos)
      << html;

  // The read side of a mixed run is not stretched by the writes' COMMIT.
  r.dir[0] = r.dir[1];
  const auto mixed = cellsOf(r, profileByName("randrw"));
  ASSERT_EQ(mixed.size(), 2U);
  EXPECT_NEAR(mixed[0].mibPerSecond, 919.0, 0.1);
  EXPECT_EQ(mixed[0].commitSeconds, 0);
}

}  // namespace
}  // namespace nfsrdma::bench
