// LatencyHistogram's exact merge and its State, which carry clients'
// latencies to rank 0: merged percentiles must be those of one histogram fed
// every sample, never an average of per-client percentiles.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <utility>
#include <vector>

#include "bench/job/Histogram.h"
#include "tests/unit/bench/ErrorOf.h"

namespace nfsrdma::bench {
namespace {

using testing::errorOf;

TEST(HistogramMerge, MergedPercentilesEqualThoseOfOneHistogramFedAllSamples) {
  std::mt19937_64 rng(22);
  std::lognormal_distribution<double> fast(10.0, 0.5);
  std::lognormal_distribution<double> slow(13.0, 1.0);  // a client 20x slower
  LatencyHistogram a, b, all;
  for (int i = 0; i < 50000; ++i) {
    const auto x = static_cast<std::uint64_t>(fast(rng));
    const auto y = static_cast<std::uint64_t>(slow(rng));
    a.record(x);
    b.record(y);
    all.record(x);
    all.record(y);
  }
  LatencyHistogram merged = a;
  merged.merge(b);
  EXPECT_EQ(merged.count(), 100000U);
  EXPECT_EQ(merged.min(), all.min());
  EXPECT_EQ(merged.max(), all.max());
  EXPECT_EQ(merged.state().buckets, all.state().buckets);
  for (double p : {1.0, 50.0, 90.0, 99.0, 99.9, 100.0})
    EXPECT_EQ(merged.percentile(p), all.percentile(p)) << p;
  // What averaging the two clients' p50 would claim instead: far from both.
  const double averaged = (a.percentile(50) + b.percentile(50)) / 2;
  EXPECT_GT(std::abs(averaged - merged.percentile(50)) / merged.percentile(50), 0.5);
}

TEST(HistogramMerge, StateRebuildsAnEqualHistogram) {
  LatencyHistogram h;
  for (std::uint64_t v : {3ULL, 3ULL, 127ULL, 128ULL, 5000ULL, 123456789ULL}) h.record(v);
  const LatencyHistogram back = LatencyHistogram::fromState(h.state());
  EXPECT_EQ(back.state().buckets, h.state().buckets);
  EXPECT_EQ(back.state().buckets.size(), 5U);  // the two 3s share one
  EXPECT_EQ(back.count(), 6U);
  EXPECT_EQ(back.min(), 3U);
  EXPECT_EQ(back.max(), 123456789U);
  EXPECT_EQ(back.mean(), h.mean());
  EXPECT_EQ(back.stdev(), h.stdev());
  EXPECT_EQ(back.percentile(50), h.percentile(50));
  EXPECT_EQ(LatencyHistogram::fromState({}).count(), 0U);
}

TEST(HistogramMerge, StateErrorsNameWhatDoesNotFit) {
  using S = LatencyHistogram::State;
  const std::pair<S, std::string> cases[] = {
      {S{{{3776, 1}}, 0, 0, 0, 0}, "bucket 3776 is out of range, expected 0..3775"},
      {S{{{5, 1}, {5, 1}}, 5, 5, 10, 50}, "bucket 5 follows bucket 5, expected ascending buckets"},
      {S{{{5, 0}}, 5, 5, 0, 0}, "bucket 5 has count 0, expected only non-empty buckets"},
      {S{{{5, 1}}, 6, 5, 5, 25}, "min 6 is not in the first non-empty bucket"},
      {S{{{5, 1}, {9, 1}}, 5, 8, 13, 89}, "max 8 is not in the last non-empty bucket"},
      {S{{}, 1, 0, 0, 0}, "an empty histogram must have min, max and sums 0"},
      {S{{{5, 1}}, 5, 5, -1, 25}, "sum and sum of squares must be finite and not negative"},
      {S{{{5, UINT64_MAX}, {6, 1}}, 5, 6, 0, 0}, "the counts overflow 64 bits"},
  };
  for (const auto& c : cases) {
    // c, not a structured binding: clang 14 cannot capture one.
    EXPECT_EQ(errorOf([&c] { LatencyHistogram::fromState(c.first); }),
              "latency histogram: " + c.second);
  }
}

}  // namespace
}  // namespace nfsrdma::bench
