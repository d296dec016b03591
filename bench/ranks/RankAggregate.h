// How the results of N ranks of one cell add up, on rank 0's clock (every
// rank's times shifted by its measured offset):
//   aggregate   IOR's figure: all bytes and ops from the first start to the
//               last end ("last done" in elbencho's terms);
//   firstDone   elbencho's stonewall: every rank's bytes and ops up to the
//               moment the first rank finished (read from its progress
//               samples), over the time from the first start to that moment;
//   overlap     warp's merge of ranks: only the window in which all ran,
//               from the last start to the first end, with what each moved
//               inside it; none when some rank's window misses another's;
// plus per-rank rows, percentiles of the merged histograms and the clock
// offsets. A run that lost a rank has no figures at all, only the lines
// saying which rank and why: a total without it would look complete.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bench/job/Histogram.h"
#include "bench/ranks/RankResult.h"

namespace nfsrdma::bench {

struct RankAggregateOptions {
  // A rank below this share of the median rank's MiB/s is a straggler.
  // 0.5: with a fixed amount to move, such a rank needs twice the median
  // time and so alone sets IOR's window; the ordinary spread between
  // ranks of one server (links, NUMA, cache luck, some 10-30%) stays well
  // above it, so the flag marks a cause worth finding, not noise.
  double stragglerFraction = 0.5;
  // The run's ramp: a clock offset beyond it gets a warning.
  std::int64_t rampNs = 0;
};

// Bytes and ops over [fromNs, toNs) on rank 0's clock.
struct RankWindow {
  std::int64_t fromNs = 0;
  std::int64_t toNs = 0;
  double bytes = 0;
  double ops = 0;

  double seconds() const { return static_cast<double>(toNs - fromNs) / 1e9; }
  double mibPerSec() const { return bytes / (1024.0 * 1024.0) / seconds(); }
  double iops() const { return ops / seconds(); }
};

struct RankOverlap {
  // Every rank's window meets every other's (the last start is before
  // the first end); window and rankBytes are set only then.
  bool overlaps = false;
  std::string reason;  // why there is no overlap window, naming the ranks
  RankWindow window;
  std::vector<double> rankBytes;  // per rank, in rank order
};

struct RankRow {
  std::uint32_t rank = 0;
  std::string host;
  double mibPerSec = 0;  // over the rank's own start..end
  double iops = 0;
  double p50Ns = 0;  // from its own histogram, both directions
  double p99Ns = 0;
  std::uint64_t bytes = 0;
  std::uint64_t ops = 0;
  std::uint64_t errors = 0;
  bool straggler = false;
  bool overlapsAll = true;  // its window meets every other rank's
};

struct RankClocks {
  std::int64_t maxAbsOffsetNs = 0;
  std::uint32_t rank = 0;  // whose offset that is
  std::string warning;     // empty unless it exceeds the ramp
};

// The percentiles a many-rank cell reports of its merged histograms.
inline constexpr double kRankPercentiles[] = {50, 90, 99, 99.9};

struct RankTotals {
  RankWindow aggregate;
  RankWindow firstDone;
  RankOverlap overlap;
  std::vector<RankRow> rows;  // in rank order
  double medianMibPerSec = 0;
  LatencyHistogram read;  // merged bins of every rank
  LatencyHistogram write;
  LatencyHistogram all;
  // all's kRankPercentiles in microseconds, as the reports print them (a
  // report read back from JSON has these and no bins).
  std::vector<std::pair<double, double>> latencyUsec;
  // --verify: what every rank checked, and the first mismatches of all
  // (in rank order); all zero without --verify.
  VerifyStats verify;
  RankClocks clocks;
};

struct RankAggregate {
  std::vector<std::string> errors;   // "rank 2 (hostc): ..." per lost client
  std::optional<RankTotals> totals;  // none when a rank was lost
};

// results: one per rank, in any order; expectedRanks: how many ranks the
// run started (ranks 0..expectedRanks-1, at most kMaxRank + 1). Throws
// std::invalid_argument for an inconsistent result (rankResultProblem), a
// rank out of range or given twice, expectedRanks 0 or above the limit, or
// a straggler fraction outside (0, 1].
RankAggregate aggregateRanks(std::vector<RankResult> results, std::uint32_t expectedRanks,
                             const RankAggregateOptions& options = {});

}  // namespace nfsrdma::bench
