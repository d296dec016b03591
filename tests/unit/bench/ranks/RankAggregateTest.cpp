// How N clients' results add up (bench/ranks/RankAggregate.h), on hand-made
// clients whose figures are chosen so every expected number is exact.
#include <gtest/gtest.h>

#include <utility>
#include <vector>

#include "bench/ranks/RankAggregate.h"
#include "tests/unit/bench/ErrorOf.h"

namespace nfsrdma::bench {
namespace {

using testing::errorOf;

constexpr std::int64_t kSec = 1'000'000'000;
constexpr std::uint64_t kMiB = 1024 * 1024;

// A client that read one op per MiB; samples are (seconds on its own clock,
// MiB so far), the last one its end and totals.
RankResult client(std::uint32_t rank, std::string host, std::int64_t offsetNs, double startS,
                  std::vector<std::pair<double, std::uint64_t>> samples) {
  RankResult r;
  r.cell = "1m-read nfs-tcp";
  r.rank = rank;
  r.host = std::move(host);
  r.clockOffsetNs = offsetNs;
  r.startNs = static_cast<std::int64_t>(startS * kSec);
  for (const auto& [s, mib] : samples)
    r.samples.push_back({static_cast<std::int64_t>(s * kSec), mib * kMiB, mib});
  r.endNs = r.samples.back().atNs;
  r.read.bytes = r.samples.back().bytes;
  r.read.ops = r.samples.back().ops;
  for (std::uint64_t i = 0; i < r.read.ops; ++i) r.read.latency.record(1000 * (rank + 1) + i);
  return r;
}

// A client at a constant rate: only its end sample.
RankResult steady(std::uint32_t rank, std::string host, std::int64_t offsetNs, double startS,
                  double endS, std::uint64_t mib) {
  return client(rank, std::move(host), offsetNs, startS, {{endS, mib}});
}

TEST(RankAggregate, IorWindowUsesTheMeasuredOffsets) {
  // Three hosts booted at different times: rank 1's clock is 500 s behind
  // rank 0's, rank 2's 2000 s ahead. On rank 0's clock they ran 1000..1010,
  // 1001..1011 and 1000.5..1010.
  std::vector<RankResult> ranks = {steady(0, "a", 0, 1000, 1010, 1000),
                                   steady(1, "b", 500 * kSec, 501, 511, 1100),
                                   steady(2, "c", -2000 * kSec, 3000.5, 3010, 950)};
  const RankAggregate a = aggregateRanks(ranks, 3);
  ASSERT_TRUE(a.errors.empty());
  ASSERT_TRUE(a.totals.has_value());
  const RankWindow& w = a.totals->aggregate;
  EXPECT_EQ(w.fromNs, 1000 * kSec);
  EXPECT_EQ(w.toNs, 1011 * kSec);
  EXPECT_EQ(w.seconds(), 11.0);
  EXPECT_EQ(w.bytes, 3050.0 * kMiB);
  EXPECT_EQ(w.ops, 3050.0);
  EXPECT_DOUBLE_EQ(w.mibPerSec(), 3050.0 / 11);
  EXPECT_DOUBLE_EQ(w.iops(), 3050.0 / 11);
  // IOR's reduction of the raw clocks (MPI_MIN of starts, MPI_MAX of ends)
  // would span 501..3010 s: 2509 s, a figure 228 times too low.
  for (RankResult& r : ranks) r.clockOffsetNs = 0;
  const RankWindow raw = aggregateRanks(ranks, 3).totals->aggregate;
  EXPECT_EQ(raw.fromNs, 501 * kSec);
  EXPECT_EQ(raw.toNs, 3010 * kSec);
  EXPECT_DOUBLE_EQ(raw.mibPerSec(), 3050.0 / 2509);
}

TEST(RankAggregate, LateClientShrinksTheOverlapWindow) {
  // Rank 1 starts 3 s late (its clock 0.25 s behind): overlap 3..10 s.
  const std::vector<RankResult> ranks = {
      client(0, "a", 0, 0, {{2, 200}, {4, 400}, {6, 600}, {8, 800}, {10, 1000}}),
      client(1, "b", kSec / 4, 2.75,
             {{4.75, 100}, {6.75, 200}, {8.75, 300}, {10.75, 400}, {11.75, 450}})};
  const RankTotals t = *aggregateRanks(ranks, 2).totals;
  ASSERT_TRUE(t.overlap.overlaps);
  EXPECT_EQ(t.overlap.reason, "");
  EXPECT_EQ(t.overlap.window.fromNs, 3 * kSec);
  EXPECT_EQ(t.overlap.window.toNs, 10 * kSec);
  ASSERT_EQ(t.overlap.rankBytes.size(), 2U);
  EXPECT_EQ(t.overlap.rankBytes[0], 700.0 * kMiB);  // 300 MiB at 3 s to 1000 at 10 s
  EXPECT_EQ(t.overlap.rankBytes[1], 350.0 * kMiB);  // 0 at its start to 350 at 10 s
  EXPECT_EQ(t.overlap.window.bytes, 1050.0 * kMiB);
  EXPECT_DOUBLE_EQ(t.overlap.window.mibPerSec(), 150.0);
  // IOR's window still spans both: 0..12 s.
  EXPECT_EQ(t.aggregate.fromNs, 0);
  EXPECT_EQ(t.aggregate.toNs, 12 * kSec);
  EXPECT_EQ(t.aggregate.bytes, 1450.0 * kMiB);
  EXPECT_TRUE(t.rows[0].overlapsAll);
  EXPECT_TRUE(t.rows[1].overlapsAll);
}

TEST(RankAggregate, ClientThatNeverOverlapsIsFlaggedAndIorStillAddsUp) {
  // Rank 2 started after rank 0 had finished; rank 1 met both.
  const std::vector<RankResult> ranks = {
      steady(0, "a", 0, 0, 5, 500), steady(1, "b", 0, 0, 10, 1000), steady(2, "c", 0, 6, 10, 400)};
  const RankTotals t = *aggregateRanks(ranks, 3).totals;
  EXPECT_FALSE(t.overlap.overlaps);
  EXPECT_EQ(t.overlap.reason,
            "rank 2 (c) started at +6.000 s, not before rank 0 (a) ended at +5.000 s (rank 0's "
            "clock, from the first "
            "start): there is no window in which all clients ran");
  EXPECT_TRUE(t.overlap.rankBytes.empty());
  EXPECT_EQ(t.overlap.window.bytes, 0.0);
  EXPECT_FALSE(t.rows[0].overlapsAll);
  EXPECT_TRUE(t.rows[1].overlapsAll);
  EXPECT_FALSE(t.rows[2].overlapsAll);
  EXPECT_EQ(t.aggregate.seconds(), 10.0);
  EXPECT_DOUBLE_EQ(t.aggregate.mibPerSec(), 190.0);
}

TEST(RankAggregate, FirstDoneCountsEachClientUpToTheFirstEndInterpolated) {
  // Rank 0 ends first, at 4 s. Rank 1 (uneven: 50 MiB in its first second,
  // then 150, then 200 a second) had 600 MiB then, between its samples at 2
  // and 6 s; its average rate would say 666.67. Rank 2's clock runs 100 s
  // ahead: at rank 0's 4 s it is at 104 s, half way from 100 to 500 MiB.
  const std::vector<RankResult> ranks = {
      client(0, "a", 0, 0, {{1, 100}, {2, 300}, {3, 600}, {4, 1000}}),
      client(1, "b", 0, 0, {{1, 50}, {2, 200}, {6, 1000}}),
      client(2, "c", -100 * kSec, 100, {{103, 100}, {105, 500}, {107, 700}})};
  const RankTotals t = *aggregateRanks(ranks, 3).totals;
  EXPECT_EQ(t.firstDone.fromNs, 0);
  EXPECT_EQ(t.firstDone.toNs, 4 * kSec);
  EXPECT_EQ(t.firstDone.bytes, 1900.0 * kMiB);
  EXPECT_EQ(t.firstDone.ops, 1900.0);
  EXPECT_DOUBLE_EQ(t.firstDone.mibPerSec(), 475.0);
  EXPECT_DOUBLE_EQ(t.firstDone.iops(), 475.0);
  // Last done is IOR's: everything over 0..7 s.
  EXPECT_EQ(t.aggregate.bytes, 2700.0 * kMiB);
  EXPECT_EQ(t.aggregate.toNs, 7 * kSec);
}

TEST(RankAggregate, StragglerIsBelowTheFractionOfTheMedian) {
  std::vector<RankResult> ranks;
  const std::uint64_t mibIn10s[] = {1000, 900, 1100, 480, 400};  // 100, 90, 110, 48, 40 MiB/s
  for (std::uint32_t i = 0; i < 5; ++i)
    ranks.push_back(steady(i, "h" + std::to_string(i), 0, 0, 10, mibIn10s[i]));
  const RankTotals t = *aggregateRanks(ranks, 5).totals;
  EXPECT_DOUBLE_EQ(t.medianMibPerSec, 90.0);
  std::vector<bool> flagged;
  for (const RankRow& row : t.rows) flagged.push_back(row.straggler);
  EXPECT_EQ(flagged, (std::vector<bool>{false, false, false, false, true}));  // 48 >= 45 > 40
  RankAggregateOptions strict;
  strict.stragglerFraction = 0.6;  // 54 MiB/s
  flagged.clear();
  const RankTotals strictTotals = *aggregateRanks(ranks, 5, strict).totals;
  for (const RankRow& row : strictTotals.rows) flagged.push_back(row.straggler);
  EXPECT_EQ(flagged, (std::vector<bool>{false, false, false, true, true}));
  strict.stragglerFraction = 1.5;
  EXPECT_EQ(errorOf([&] { aggregateRanks(ranks, 5, strict); }),
            "straggler fraction 1.5: expected a share in (0, 1]");
}

TEST(RankAggregate, RowsAndMergedPercentilesComeFromTheBins) {
  const std::vector<RankResult> ranks = {steady(0, "a", 0, 0, 4, 400),
                                         steady(1, "b", 0, 0, 8, 200)};
  const RankTotals t = *aggregateRanks(ranks, 2).totals;
  ASSERT_EQ(t.rows.size(), 2U);
  const RankRow& b = t.rows[1];
  EXPECT_EQ(b.rank, 1U);
  EXPECT_EQ(b.host, "b");
  EXPECT_DOUBLE_EQ(b.mibPerSec, 25.0);
  EXPECT_DOUBLE_EQ(b.iops, 25.0);
  EXPECT_EQ(b.bytes, 200 * kMiB);
  EXPECT_EQ(b.ops, 200U);
  EXPECT_EQ(b.p50Ns, ranks[1].read.latency.percentile(50));
  EXPECT_EQ(b.p99Ns, ranks[1].read.latency.percentile(99));
  LatencyHistogram all;
  for (const RankResult& r : ranks) {
    for (std::uint64_t i = 0; i < r.read.ops; ++i) all.record(1000 * (r.rank + 1) + i);
  }
  EXPECT_EQ(t.all.count(), 600U);
  EXPECT_EQ(t.read.count(), 600U);
  EXPECT_EQ(t.write.count(), 0U);
  for (double p : {50.0, 99.0, 99.9}) EXPECT_EQ(t.all.percentile(p), all.percentile(p)) << p;
}

TEST(RankAggregate, ClockOffsetBeyondTheRampWarns) {
  const std::vector<RankResult> ranks = {steady(0, "a", 0, 0, 10, 100),
                                         steady(1, "b", 3 * kSec / 1000, 0, 10, 100),
                                         steady(2, "c", -12 * kSec / 1000, 0, 10, 100)};
  RankAggregateOptions o;
  o.rampNs = 5 * kSec / 1000;
  const RankClocks c = aggregateRanks(ranks, 3, o).totals->clocks;
  EXPECT_EQ(c.maxAbsOffsetNs, 12 * kSec / 1000);
  EXPECT_EQ(c.rank, 2U);
  EXPECT_EQ(c.warning,
            "the clock of rank 2 (c) is -12.000 ms off rank 0's, more than the ramp (5.000 ms): "
            "its times were shifted "
            "by the offset measured at the barrier; a figure that takes every client's clock as it "
            "is (IOR's) would "
            "misplace its window by that much");
  o.rampNs = 12 * kSec / 1000;
  EXPECT_EQ(aggregateRanks(ranks, 3, o).totals->clocks.warning, "");
}

TEST(RankAggregate, LostClientGivesNoTotalsOnlyItsErrors) {
  RankResult failed;
  failed.rank = 1;
  failed.host = "b";
  failed.failed = true;
  failed.firstError = "open nfs://10.0.0.9/export/f1: NFS4ERR_NOENT (no such file or directory)";
  const std::vector<RankResult> ranks = {steady(0, "a", 0, 0, 10, 100),
                                         failed};  // rank 2 never reported
  const RankAggregate a = aggregateRanks(ranks, 3);
  EXPECT_FALSE(a.totals.has_value());
  EXPECT_EQ(
      a.errors,
      (std::vector<std::string>{
          "rank 1 (b): open nfs://10.0.0.9/export/f1: NFS4ERR_NOENT (no such file or directory)",
          "rank 2: no result: the client was lost before it reported"}));
}

// Ranks of one build give no note; of several, each build with its ranks,
// a line without a version (an earlier build's) as a build of its own.
TEST(RankAggregate, RanksOfDifferentBuildsAreNamed) {
  std::vector<RankResult> results = {steady(2, "c", 0, 0, 1, 4), steady(0, "a", 0, 0, 1, 4),
                                     steady(1, "b", 0, 0, 1, 4)};
  EXPECT_EQ(rankBuildsNote(results), std::nullopt) << "none named a build";
  for (auto& r : results) r.version = "0.1.0 (commit aaaaaaaaaaaa)";
  EXPECT_EQ(rankBuildsNote(results), std::nullopt);
  results[0].version = "0.1.0 (commit bbbbbbbbbbbb)";  // rank 2
  EXPECT_EQ(rankBuildsNote(results),
            "the ranks ran different builds: 0.1.0 (commit aaaaaaaaaaaa) on ranks 0, 1; 0.1.0 "
            "(commit bbbbbbbbbbbb) on rank 2");
  results[1].version.clear();  // rank 0
  EXPECT_EQ(rankBuildsNote(results),
            "the ranks ran different builds: an unnamed build on rank 0; 0.1.0 (commit "
            "aaaaaaaaaaaa) on rank 1; 0.1.0 (commit bbbbbbbbbbbb) on rank 2");
}

TEST(RankAggregate, InconsistentResultsAreRefusedNamingTheRank) {
  const RankResult a = steady(0, "a", 0, 0, 10, 100);
  EXPECT_EQ(errorOf([&] {
              aggregateRanks({a, a}, 2);
            }),
            "rank 0 (a): a second result for this rank");
  EXPECT_EQ(errorOf([&] {
              aggregateRanks({a, steady(3, "d", 0, 0, 1, 1)}, 2);
            }),
            "rank 3 (d): rank out of range, expected 0..1");
  RankResult backwards = a;
  backwards.startNs = backwards.endNs;
  EXPECT_EQ(errorOf([&] { aggregateRanks({backwards}, 1); }),
            "rank 0 (a): end_ns 10000000000 is not after start_ns 10000000000");
  RankResult shortSamples = client(0, "a", 0, 0, {{5, 50}, {10, 100}});
  shortSamples.samples.pop_back();
  EXPECT_EQ(errorOf([&] { aggregateRanks({shortSamples}, 1); }),
            "rank 0 (a): samples: the last one must be at end_ns 10000000000 with the totals "
            "(104857600 bytes, 100 ops)");
  RankResult shrinking = client(0, "a", 0, 0, {{5, 50}, {6, 40}, {10, 100}});
  EXPECT_EQ(errorOf([&] { aggregateRanks({shrinking}, 1); }),
            "rank 0 (a): samples[1]: bytes or ops decrease");
  EXPECT_EQ(errorOf([&] { aggregateRanks({a}, 0); }),
            "expected ranks 0: a run has at least one client");
}

// `aggregate --clients 4000000000` made a lost line for every client it was
// told of and ran the host out of memory: the count has the ranks' limit.
TEST(RankAggregate, MoreClientsThanRanksCanNumberAreRefused) {
  const RankResult a = steady(0, "a", 0, 0, 10, 100);
  EXPECT_EQ(errorOf([&] { aggregateRanks({a}, 4'000'000'000U); }),
            "expected ranks 4000000000: a run has at most 4096 clients (ranks 0..4095)");
  const RankAggregate most = aggregateRanks({a}, kMaxRank + 1);
  EXPECT_EQ(most.errors.size(), kMaxRank) << "every other rank is lost, and said so";
}

}  // namespace
}  // namespace nfsrdma::bench
