#include "bench/ranks/RankAggregate.h"

#include <algorithm>
#include <cstdlib>
#include <stdexcept>

#include "bench/report/Format.h"
#include "bench/report/Median.h"

namespace nfsrdma::bench {

namespace {

// Sorts by rank and refuses what cannot be added up at all.
void checkResults(std::vector<RankResult>& results, std::uint32_t expectedRanks,
                  const RankAggregateOptions& options) {
  if (!(options.stragglerFraction > 0 && options.stragglerFraction <= 1)) {
    throw std::invalid_argument(
        fmt("straggler fraction %g: expected a share in (0, 1]", options.stragglerFraction));
  }
  if (expectedRanks == 0)
    throw std::invalid_argument("expected ranks 0: a run has at least one client");
  // Each expected rank gets a row or a lost line: the count bounds memory.
  if (expectedRanks > kMaxRank + 1) {
    throw std::invalid_argument("expected ranks " + std::to_string(expectedRanks) +
                                ": a run has at most " + std::to_string(kMaxRank + 1) +
                                " clients (ranks 0.." + std::to_string(kMaxRank) + ")");
  }
  std::sort(results.begin(), results.end(),
            [](const RankResult& a, const RankResult& b) { return a.rank < b.rank; });
  for (std::size_t i = 0; i < results.size(); ++i) {
    const RankResult& r = results[i];
    if (r.rank >= expectedRanks) {
      throw std::invalid_argument(rankName(r) + ": rank out of range, expected 0.." +
                                  std::to_string(expectedRanks - 1));
    }
    if (i > 0 && results[i - 1].rank == r.rank)
      throw std::invalid_argument(rankName(r) + ": a second result for this rank");
    if (auto problem = rankResultProblem(r)) throw std::invalid_argument(*problem);
  }
}

std::vector<std::string> lostRanks(const std::vector<RankResult>& results,
                                   std::uint32_t expectedRanks) {
  std::vector<std::string> errors;
  std::size_t next = 0;
  for (std::uint32_t rank = 0; rank < expectedRanks; ++rank) {
    if (next < results.size() && results[next].rank == rank) {
      const RankResult& r = results[next++];
      if (r.failed) errors.push_back(rankName(r) + ": " + r.firstError);
    } else {
      errors.push_back("rank " + std::to_string(rank) +
                       ": no result: the client was lost before it reported");
    }
  }
  return errors;
}

RankWindow windowBetween(const std::vector<RankResult>& results, std::int64_t from,
                         std::int64_t to) {
  RankWindow w{from, to, 0, 0};
  for (const RankResult& r : results) {
    const ProgressAt a = progressAt(r, from);
    const ProgressAt b = progressAt(r, to);
    w.bytes += b.bytes - a.bytes;
    w.ops += b.ops - a.ops;
  }
  return w;
}

// Seconds from the first start, for messages.
std::string at(std::int64_t ns, std::int64_t firstStart) {
  return fmt("+%.3f s", static_cast<double>(ns - firstStart) / 1e9);
}

RankOverlap overlapOf(const std::vector<RankResult>& results, std::int64_t firstStart) {
  const auto last = std::max_element(
      results.begin(), results.end(),
      [](const RankResult& a, const RankResult& b) { return a.startOnRank0() < b.startOnRank0(); });
  const auto first = std::min_element(
      results.begin(), results.end(),
      [](const RankResult& a, const RankResult& b) { return a.endOnRank0() < b.endOnRank0(); });
  RankOverlap o;
  if (last->startOnRank0() >= first->endOnRank0()) {
    o.reason =
        rankName(*last) + " started at " + at(last->startOnRank0(), firstStart) + ", not before " +
        rankName(*first) + " ended at " + at(first->endOnRank0(), firstStart) +
        " (rank 0's clock, from the first start): there is no window in which all clients ran";
    return o;
  }
  o.overlaps = true;
  o.window = windowBetween(results, last->startOnRank0(), first->endOnRank0());
  for (const RankResult& r : results) {
    o.rankBytes.push_back(progressAt(r, o.window.toNs).bytes -
                          progressAt(r, o.window.fromNs).bytes);
  }
  return o;
}

bool overlapsAll(const RankResult& r, const std::vector<RankResult>& results) {
  return std::all_of(results.begin(), results.end(), [&r](const RankResult& o) {
    return r.startOnRank0() < o.endOnRank0() && o.startOnRank0() < r.endOnRank0();
  });
}

std::vector<RankRow> rowsOf(const std::vector<RankResult>& results, double fraction,
                            double& medianMibPerSec) {
  std::vector<RankRow> rows;
  std::vector<double> rates;
  for (const RankResult& r : results) {
    LatencyHistogram both = r.read.latency;
    both.merge(r.write.latency);
    const RankWindow own{r.startNs, r.endNs, static_cast<double>(r.bytes()),
                         static_cast<double>(r.ops())};
    rows.push_back({r.rank, r.host, own.mibPerSec(), own.iops(), both.percentile(50),
                    both.percentile(99), r.bytes(), r.ops(), r.errors, false,
                    overlapsAll(r, results)});
    rates.push_back(own.mibPerSec());
  }
  medianMibPerSec = median(rates);
  for (RankRow& row : rows) row.straggler = row.mibPerSec < fraction * medianMibPerSec;
  return rows;
}

RankClocks clocksOf(const std::vector<RankResult>& results, std::int64_t rampNs) {
  RankClocks c;
  const RankResult* worst = &results.front();
  for (const RankResult& r : results) {
    if (std::llabs(r.clockOffsetNs) > std::llabs(worst->clockOffsetNs)) worst = &r;
  }
  c.maxAbsOffsetNs = std::llabs(worst->clockOffsetNs);
  c.rank = worst->rank;
  if (c.maxAbsOffsetNs > rampNs) {
    c.warning = fmt(
        "the clock of %s is %.3f ms off rank 0's, more than the ramp (%.3f ms): its times were "
        "shifted "
        "by the offset measured at the barrier; a figure that takes every client's clock as it is "
        "(IOR's) would misplace its window by that much",
        rankName(*worst).c_str(), static_cast<double>(worst->clockOffsetNs) / 1e6,
        static_cast<double>(rampNs) / 1e6);
  }
  return c;
}

RankTotals totalsOf(const std::vector<RankResult>& results, const RankAggregateOptions& options) {
  RankTotals t;
  std::int64_t firstStart = results.front().startOnRank0();
  std::int64_t lastEnd = results.front().endOnRank0();
  std::int64_t firstEnd = lastEnd;
  for (const RankResult& r : results) {
    firstStart = std::min(firstStart, r.startOnRank0());
    lastEnd = std::max(lastEnd, r.endOnRank0());
    firstEnd = std::min(firstEnd, r.endOnRank0());
    t.read.merge(r.read.latency);
    t.write.merge(r.write.latency);
    t.verify.merge(r.verify);
  }
  t.all = t.read;
  t.all.merge(t.write);
  for (double p : kRankPercentiles) t.latencyUsec.emplace_back(p, t.all.percentile(p) / 1e3);
  t.aggregate = windowBetween(results, firstStart, lastEnd);
  t.firstDone = windowBetween(results, firstStart, firstEnd);
  t.overlap = overlapOf(results, firstStart);
  t.rows = rowsOf(results, options.stragglerFraction, t.medianMibPerSec);
  t.clocks = clocksOf(results, options.rampNs);
  return t;
}

}  // namespace

RankAggregate aggregateRanks(std::vector<RankResult> results, std::uint32_t expectedRanks,
                             const RankAggregateOptions& options) {
  checkResults(results, expectedRanks, options);
  RankAggregate a;
  a.errors = lostRanks(results, expectedRanks);
  if (a.errors.empty()) a.totals = totalsOf(results, options);
  return a;
}

}  // namespace nfsrdma::bench
