// The hooks that start a cell on every client together and the cell's
// gathering, over a double of the cluster (one process that plays every
// step of the collective: a cluster of one, or a peer whose notices are
// scripted). The real MPI launch is bench_many_clients_integration.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "bench/cluster/ClusterCell.h"
#include "bench/cluster/RankClock.h"
#include "bench/cluster/RankStartHooks.h"
#include "bench/ranks/RankJson.h"
#include "util/Version.h"

namespace nfsrdma::bench {
namespace {

using namespace std::chrono_literals;

// A cluster of `size` in which this process is rank 0; the others'
// answers are scripted: whether they are ready, and their done notices.
class ScriptedCluster final : public Cluster {
 public:
  explicit ScriptedCluster(std::uint32_t size) : size_(size) {}
  std::uint32_t rank() const override { return 0; }
  std::uint32_t size() const override { return size_; }
  std::string host() const override { return "host-a"; }
  std::vector<std::string> gather(const std::string& mine) override {
    std::vector<std::string> all{mine};
    for (const auto& l : othersLines) all.push_back(l);
    return all;
  }
  std::string broadcast(const std::string& s) override { return s; }
  bool allOk(bool ok) override { return ok && othersOk; }
  void barrier() override { ++barriers; }
  std::vector<ClockOffset> measureOffsets(const std::function<std::int64_t()>&) override {
    std::vector<ClockOffset> o(size_);
    for (std::uint32_t r = 1; r < size_; ++r) o[r] = {static_cast<std::int64_t>(r) * 1000, 50};
    return o;
  }
  void sendDone(std::uint32_t) override { ++sent; }
  std::uint32_t doneNotices(std::uint32_t) override { return noticesArrived; }
  void awaitDoneNotices(std::uint32_t) override { ++awaited; }
  [[noreturn]] void abortAll(int) override { std::abort(); }

  bool othersOk = true;
  std::uint32_t noticesArrived = 0;
  std::vector<std::string> othersLines;
  int barriers = 0, sent = 0, awaited = 0;

 private:
  std::uint32_t size_;
};

TEST(MpiRankHooks, ARankThatIsNotReadyAbandonsTheCellEverywhere) {
  ScriptedCluster c(3);
  c.othersOk = false;
  MpiRankHooks hooks(c, 0, 0, 0);
  EXPECT_FALSE(hooks.startTogether(""));
  EXPECT_EQ(hooks.abandonReason(),
            "not started: another rank could not set up this cell (rank 0 prints why)");
  EXPECT_EQ(c.barriers, 0) << "no barrier after a failed vote";
  MpiRankHooks own(c, 0, 0, 0);
  EXPECT_FALSE(own.startTogether("path /x: not a directory"));
  EXPECT_EQ(own.abandonReason(), "path /x: not a directory");
}

TEST(MpiRankHooks, WithoutStonewallNoNoticeIsSentOrAwaited) {
  ScriptedCluster c(2);
  MpiRankHooks hooks(c, 0, 0, 0);
  ASSERT_TRUE(hooks.startTogether(""));
  EXPECT_EQ(c.barriers, 1);
  EXPECT_EQ(hooks.offsets()[1].offsetNs, 1000);
  EXPECT_FALSE(hooks.stopNow(true));
  hooks.ended();
  EXPECT_EQ(c.sent, 0);
  EXPECT_EQ(c.awaited, 0);
}

TEST(MpiRankHooks, StonewallSendsOneNoticeWhenThisRankFinishesFirst) {
  ScriptedCluster c(3);
  MpiRankHooks hooks(c, 0, 0, 60'000'000'000);
  ASSERT_TRUE(hooks.startTogether(""));
  EXPECT_FALSE(hooks.stopNow(false));
  EXPECT_TRUE(hooks.stopNow(true));
  EXPECT_TRUE(hooks.stopNow(true));
  hooks.ended();
  EXPECT_EQ(c.sent, 1) << "exactly one notice per rank per cell";
  EXPECT_EQ(c.awaited, 1) << "and the others' notices are taken in before the next cell";
}

TEST(MpiRankHooks, StonewallStopsThisRankOnAnotherRanksNotice) {
  ScriptedCluster c(3);
  MpiRankHooks hooks(c, 0, 0, 60'000'000'000);
  ASSERT_TRUE(hooks.startTogether(""));
  c.noticesArrived = 1;
  EXPECT_TRUE(hooks.stopNow(false));
  hooks.ended();
  EXPECT_EQ(c.sent, 1);
}

TEST(MpiRankHooks, StonewallStopsEveryRankAfterItsSecondsPastTheRamp) {
  ScriptedCluster c(2);
  MpiRankHooks hooks(c, 0, 50'000'000, 100'000'000);  // ramp 50 ms, stonewall 100 ms
  ASSERT_TRUE(hooks.startTogether(""));
  EXPECT_FALSE(hooks.stopNow(false));
  std::this_thread::sleep_for(200ms);
  EXPECT_TRUE(hooks.stopNow(false));
}

RankOutcome ranOneSecond() {
  RankOutcome o;
  const std::int64_t t0 = rankClockNowNs();
  o.timeline.startNs = t0;
  o.timeline.endNs = t0 + 1'000'000'000;
  o.timeline.points = {{t0 + 500'000'000, 4096 * 50, 50}, {o.timeline.endNs, 4096 * 100, 100}};
  o.dir[0].ops = 100;
  o.dir[0].bytes = 4096 * 100;
  for (int i = 0; i < 100; ++i) o.dir[0].lat.record(1000);
  return o;
}

TEST(ClusterCell, RankZeroAddsUpEveryRanksLineWithItsOffset) {
  ScriptedCluster c(2);
  RankResult other = rankResultOf(ranOneSecond(), {1, "host-b"}, "4k-randread here");
  // Rank 1's clock is 1000 ns behind (the scripted offset): shifted back on rank 0's.
  other.startNs -= 1000;
  other.endNs -= 1000;
  for (auto& s : other.samples) s.atNs -= 1000;
  c.othersLines = {rankToJsonLine(other)};
  bool allRan = false;
  const auto cell = runClusterCell(
      c, 0, "4k-randread here", {0, 0, 0.5},
      [](RankHooks& h) {
        EXPECT_TRUE(h.startTogether(""));
        RankOutcome o = ranOneSecond();
        h.ended();
        return o;
      },
      allRan);
  EXPECT_TRUE(allRan);
  ASSERT_TRUE(cell.has_value());
  ASSERT_TRUE(cell->aggregate.totals.has_value());
  EXPECT_EQ(cell->results[1].clockOffsetNs, 1000);
  EXPECT_DOUBLE_EQ(cell->aggregate.totals->aggregate.bytes, 2 * 4096 * 100);
  EXPECT_EQ(cell->aggregate.totals->all.count(), 200U) << "the merged histogram holds both";
}

// Each rank's result names the build it ran, and rank 0 reads it back
// from the gathered line.
TEST(ClusterCell, EachResultNamesTheBuildTheRankRan) {
  const RankResult r = rankResultOf(ranOneSecond(), {1, "host-b"}, "cell");
  EXPECT_EQ(r.version, util::versionText());
  EXPECT_EQ(rankFromJsonLine(rankToJsonLine(r), "rank 1").version, util::versionText());
  RankOutcome failed;
  failed.failure = "layout: no space";
  EXPECT_EQ(rankResultOf(failed, {1, "host-b"}, "cell").version, util::versionText());
}

TEST(ClusterCell, ACellThatFailedBeforeItsBarrierStillVotes) {
  ScriptedCluster c(2);
  RankResult other = rankResultOf(ranOneSecond(), {1, "host-b"}, "cell");
  c.othersLines = {rankToJsonLine(other)};
  bool allRan = true;
  const auto cell = runClusterCell(
      c, 0, "cell", {0, 0, 0.5},
      [](RankHooks&) {
        RankOutcome failed;
        failed.failure = "layout: no space";
        return failed;
      },
      allRan);
  EXPECT_FALSE(allRan);
  ASSERT_TRUE(cell.has_value());
  EXPECT_FALSE(cell->aggregate.totals.has_value());
  ASSERT_EQ(cell->aggregate.errors.size(), 1U);
  EXPECT_EQ(cell->aggregate.errors[0], "rank 0 (host-a): layout: no space");
}

TEST(ScheduledRankHooks, StartsAtItsTimeAndRefusesToStartLate) {
  ScheduledRankHooks onTime(rankClockNowNs() + 200'000'000);
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_TRUE(onTime.startTogether(""));
  EXPECT_GE(std::chrono::steady_clock::now() - t0, 190ms);
  ScheduledRankHooks late(rankClockNowNs() - 3'000'000'000);
  EXPECT_FALSE(late.startTogether(""));
  EXPECT_EQ(late.abandonReason().rfind("not ready at the cell's start time: late by 3.0 s", 0), 0U)
      << late.abandonReason();
}

}  // namespace
}  // namespace nfsrdma::bench
