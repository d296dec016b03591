// compare --baseline (compare/Baseline.cpp): a cell is compared only with a
// baseline cell measured under the same conditions; otherwise its change
// column names what changed. The tests came from reviews that found a
// baseline comparing unlike runs and calling the difference a regression.
#include <gtest/gtest.h>

#include <string>

#include "bench/compare/CompareConditions.h"
#include "bench/compare/CompareMatrix.h"
#include "bench/compare/HtmlReport.h"
#include "bench/file/FileRun.h"
#include "bench/job/FileProfile.h"
#include "bench/report/Json.h"
#include "tests/unit/bench/FieldReport.h"

namespace nfsrdma::bench {
namespace {

// Rerun at iodepth 1 against a baseline at 128: not a -50% regression (a
// baseline compared cells measured at another iodepth, numjobs, block size,
// working set, runtime or direct).
TEST(Baseline, BaselineComparesOnlyCellsMeasuredUnderTheSameConditions) {
  const CompareReport before = testing::fieldNotesReport();
  CompareReport now = testing::fieldNotesReport();
  CompareCell* c = now.cell("4k-randread", IoDirection::Read, "nfs-tcp");
  c->iodepth = 1;
  c->mibPerSecond *= 0.5;
  c->iops *= 0.5;
  CompareCell* same = now.cell("4k-randread", IoDirection::Read, "local");
  same->mibPerSecond *= 0.5;  // same conditions: still a regression
  applyBaseline(now, before, "before.json", 10);
  EXPECT_FALSE(c->regression);
  EXPECT_FALSE(c->baselineMibPerSecond);
  EXPECT_EQ(c->baselineConfigChange, "iodepth 128 -> 1");
  EXPECT_TRUE(same->regression);
  EXPECT_EQ(now.regressions(), 1U);
  const std::string text = formatCompareText(now);
  EXPECT_NE(text.find("config changed (iodepth 128 -> 1)"), std::string::npos) << text;
  EXPECT_EQ(text.find("REGRESSION 4k-randread read nfs-tcp"), std::string::npos) << text;
  EXPECT_NE(text.find("REGRESSION 4k-randread read local"), std::string::npos) << text;

  // Every condition is named; runtime and direct come from the run's banner.
  CompareReport before2 = testing::fieldNotesReport();
  CompareReport now2 = testing::fieldNotesReport();
  before2.config = {
      {"workload",
       "per job 64 MiB in 1 file(s), numjobs 1, iodepth 8, 2.0 s time-based after a 0.3 s ramp, "
       "seed 1"},
      {"direct", "O_DIRECT for path targets; NFS targets bypass the client's cache by design"}};
  now2.config = {
      {"workload",
       "per job 64 MiB in 1 file(s), numjobs 1, iodepth 8, 1 GiB per job after a 0.3 s ramp, "
       "seed 1"},
      {"direct", "buffered"}};
  CompareCell* d = now2.cell("128k-read", IoDirection::Read, "nfs-rdma");
  d->blockSize = 65536;
  d->numjobs = 4;
  d->workingSetBytes *= 2;
  applyBaseline(now2, before2, "before.json", 10);
  EXPECT_EQ(d->baselineConfigChange,
            "block 128 KiB -> 64 KiB, numjobs 128 -> 4, working set 12.5 GiB -> 25 GiB, runtime "
            "2.0 s -> 1 GiB per job, "
            "direct 1 -> 0");
  const CompareCell* other = now2.cell("4m-read", IoDirection::Read, "local");
  EXPECT_EQ(other->baselineConfigChange, "runtime 2.0 s -> 1 GiB per job, direct 1 -> 0");
  EXPECT_EQ(now2.regressions(), 0U);
}

// A read cell that started cold is not compared with one that started warm
// (nor with a baseline that did not record it), and a write figure that
// counts its COMMIT is not compared with one from before it did.
TEST(Baseline, BaselineNamesCacheStateAndCommitCounting) {
  CompareReport before = testing::fieldNotesReport();
  CompareReport now = testing::fieldNotesReport();
  before.cell("4k-randread", IoDirection::Read, "nfs-tcp")->serverCache = "dropped";
  now.cell("4k-randread", IoDirection::Read, "nfs-tcp")->serverCache = "warm";
  now.cell("4k-randread", IoDirection::Read, "local")->serverCache =
      "warm";  // baseline: unrecorded
  CompareCell* write = nullptr;
  for (auto& c : now.cells) {
    if (c.direction == IoDirection::Write && c.ran && write == nullptr) write = &c;
  }
  ASSERT_NE(write, nullptr);
  before.cell(write->profile, IoDirection::Write, write->target)->commitCounted = false;
  applyBaseline(now, before, "before.json", 10);
  EXPECT_EQ(now.cell("4k-randread", IoDirection::Read, "nfs-tcp")->baselineConfigChange,
            "server cache dropped -> warm");
  EXPECT_EQ(now.cell("4k-randread", IoDirection::Read, "local")->baselineConfigChange,
            "server cache unrecorded -> warm");
  EXPECT_EQ(write->baselineConfigChange, "commit counted no -> yes");
  EXPECT_FALSE(write->baselineMibPerSecond);
}

// A cell whose run crossed an outage (a lost connection or a server restart
// the client rode through) measures the outage: it is never compared with a
// baseline, nor is a baseline cell that crossed one; the JSON keeps the flag.
TEST(Baseline, CellsThatCrossedAnOutageAreNotCompared) {
  CompareReport before = testing::fieldNotesReport();
  CompareReport now = testing::fieldNotesReport();
  CompareCell* c = now.cell("4k-randread", IoDirection::Read, "nfs-tcp");
  c->crossedOutage = true;
  c->outageSeconds = 4.2;
  c->mibPerSecond *= 0.5;
  before.cell("4k-randread", IoDirection::Read, "local")->crossedOutage = true;
  applyBaseline(now, before, "before.json", 10);
  EXPECT_EQ(c->baselineConfigChange, "the run crossed a server outage");
  EXPECT_FALSE(c->regression);
  EXPECT_EQ(now.cell("4k-randread", IoDirection::Read, "local")->baselineConfigChange,
            "the baseline crossed a server outage");
  EXPECT_EQ(now.regressions(), 0U);
  const CompareReport back = compareFromJson(parseJson(compareToJson(now)));
  const CompareCell* b = back.cell("4k-randread", IoDirection::Read, "nfs-tcp");
  ASSERT_NE(b, nullptr);
  EXPECT_TRUE(b->crossedOutage);
  EXPECT_DOUBLE_EQ(b->outageSeconds, 4.2);
}

// Jobs on one shared client are another test than a client per job; a
// baseline from before --client was recorded ran per job. The mode survives
// the JSON.
TEST(Baseline, ASharedClientIsNotComparedWithAClientPerJob) {
  CompareReport before = testing::fieldNotesReport();
  CompareReport now = testing::fieldNotesReport();
  CompareCell* c = now.cell("4k-randread", IoDirection::Read, "nfs-tcp");
  c->clientMode = "shared";
  c->mibPerSecond *= 0.5;
  applyBaseline(now, before, "before.json", 10);
  EXPECT_EQ(c->baselineConfigChange, "client per-job -> shared");
  EXPECT_FALSE(c->regression);
  before.cell("4k-randread", IoDirection::Read, "nfs-tcp")->clientMode = "shared";
  applyBaseline(now, before, "before.json", 10);
  EXPECT_EQ(c->baselineConfigChange, "");
  EXPECT_TRUE(c->regression);
  const CompareReport back = compareFromJson(parseJson(compareToJson(now)));
  EXPECT_EQ(back.cell("4k-randread", IoDirection::Read, "nfs-tcp")->clientMode, "shared");
}

// A baseline of another mix, verify, ramp or target is another test.
TEST(Baseline, BaselineComparesMixVerifyRampAndTarget) {
  auto withRandrw = [](unsigned readPercent) {
    CompareReport r = testing::fieldNotesReport();
    r.config = {
        {"workload",
         "per job 64 MiB in 1 file(s), numjobs 1, iodepth 32, 2.0 s time-based after a 0.3 s "
         "ramp, seed 1"},
        {"server", "given with --target"}};
    r.rows.emplace_back("randrw", IoDirection::Read);
    CompareCell c = *r.cell("4k-randread", IoDirection::Read, "nfs-tcp");
    c.profile = "randrw";
    c.readPercent = readPercent;
    r.cells.push_back(c);
    return r;
  };
  const CompareReport before = withRandrw(80);
  CompareReport now = withRandrw(70);
  CompareCell* c = now.cell("randrw", IoDirection::Read, "nfs-tcp");
  c->mibPerSecond *= 0.5;  // the mix explains it: not a regression
  applyBaseline(now, before, "before.json", 10);
  EXPECT_EQ(c->baselineConfigChange, "mix 80/20 -> 70/30");
  EXPECT_FALSE(c->regression);
  EXPECT_EQ(now.regressions(), 0U);
  EXPECT_EQ(rowName(now, "randrw"), "randrw(70/30)");
  EXPECT_EQ(rowName(now, "4k-randread"), "4k-randread");
  const std::string text = formatCompareText(now);
  EXPECT_NE(text.find("| randrw(70/30) | read"), std::string::npos) << text;
  EXPECT_NE(
      text.find("not compared, config changed: randrw(70/30) read nfs-tcp: mix 80/20 -> 70/30"),
      std::string::npos)
      << text;
  EXPECT_NE(renderHtmlReport(now).find("randrw(70/30)"), std::string::npos);
  // Saved and read back with the mix.
  const CompareReport back = compareFromJson(parseJson(compareToJson(now)));
  ASSERT_NE(back.cell("randrw", IoDirection::Read, "nfs-tcp"), nullptr);
  EXPECT_EQ(back.cell("randrw", IoDirection::Read, "nfs-tcp")->readPercent, 70U);
  // A baseline that did not record randrw's mix cannot vouch for it; a pure
  // profile's name says its mix.
  CompareReport unrecorded = withRandrw(80);
  for (auto& x : unrecorded.cells) x.readPercent.reset();
  CompareReport same = withRandrw(80);
  applyBaseline(same, unrecorded, "before.json", 10);
  EXPECT_EQ(same.cell("randrw", IoDirection::Read, "nfs-tcp")->baselineConfigChange,
            "mix unrecorded -> 80/20");
  EXPECT_EQ(same.cell("4k-randread", IoDirection::Read, "nfs-tcp")->baselineConfigChange, "");

  // Verify, ramp and the target.
  CompareReport later = withRandrw(80);
  later.config[0].second =
      "per job 64 MiB in 1 file(s), numjobs 1, iodepth 32, 2.0 s time-based after a 1.0 s ramp, "
      "seed 1";
  later.cell("4k-randread", IoDirection::Read, "local")->verified = true;
  later.targets[2].description = "NFS over TCP to another server";
  applyBaseline(later, before, "before.json", 10);
  EXPECT_EQ(later.cell("4k-randread", IoDirection::Read, "local")->baselineConfigChange,
            "verify off -> on, ramp 0.3 s -> 1.0 s");
  EXPECT_EQ(later.cell("4k-randread", IoDirection::Read, "nfs-tcp")->baselineConfigChange,
            "ramp 0.3 s -> 1.0 s, target NFS over TCP -> NFS over TCP to another server");
  // The embedded server's targets change port and directory every run.
  CompareReport e1 = withRandrw(80), e2 = withRandrw(80);
  e1.config[1].second =
      "nfs-ganesha on 127.0.0.1:40001 (started for this run), exporting /var/tmp/a as /export";
  e2.config[1].second =
      "nfs-ganesha on 127.0.0.1:40002 (started for this run), exporting /var/tmp/b as /export";
  e2.targets[0].description = "path /var/tmp/b (O_DIRECT, io_uring)";
  applyBaseline(e2, e1, "before.json", 10);
  EXPECT_EQ(e2.cell("4k-randread", IoDirection::Read, "local")->baselineConfigChange, "");

  // compare's cells carry the mix the profile ran with.
  FileOptions o;
  o.rwmixread = 70;
  RunResult r;
  r.target = "nfs-tcp";
  const auto cells = cellsOf(r, profileAsRun(profileByName("randrw"), o));
  ASSERT_EQ(cells.size(), 2U);
  EXPECT_EQ(cells[0].readPercent, 70U);
}

}  // namespace
}  // namespace nfsrdma::bench
