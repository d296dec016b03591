#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "bench/job/Histogram.h"

namespace nfsrdma::bench {
namespace {

TEST(LatencyHistogram, BucketsAreContiguousAndCoverTheirValues) {
  std::uint64_t expectedLow = 0;
  for (std::size_t b = 0; b < 40 * 64; ++b) {
    ASSERT_EQ(LatencyHistogram::bucketLow(b), expectedLow) << "bucket " << b;
    expectedLow += LatencyHistogram::bucketWidth(b);
  }
  for (std::uint64_t v : std::initializer_list<std::uint64_t>{0, 1, 127, 128, 129, 255, 256, 1000,
                                                              123456789, UINT64_MAX}) {
    const std::size_t b = LatencyHistogram::bucketOf(v);
    ASSERT_LT(b, LatencyHistogram::kBuckets);
    EXPECT_LE(LatencyHistogram::bucketLow(b), v);
    EXPECT_LE(v - LatencyHistogram::bucketLow(b), LatencyHistogram::bucketWidth(b) - 1);
  }
}

TEST(LatencyHistogram, PercentilesWithinOneBucketOfTheExactNearestRank) {
  std::mt19937_64 rng(7);
  std::lognormal_distribution<double> dist(11.0, 1.0);  // ~60 us median, long tail
  std::vector<std::uint64_t> samples;
  LatencyHistogram h;
  for (int i = 0; i < 200000; ++i) {
    const auto v = static_cast<std::uint64_t>(dist(rng));
    samples.push_back(v);
    h.record(v);
  }
  std::sort(samples.begin(), samples.end());
  for (double p : {50.0, 90.0, 99.0, 99.9, 99.99}) {
    const auto rank =
        static_cast<std::size_t>(std::ceil(p / 100.0 * static_cast<double>(samples.size())));
    const double exact = static_cast<double>(samples[rank - 1]);
    EXPECT_NEAR(h.percentile(p), exact, exact / 64.0 + 1) << "p" << p;
  }
  EXPECT_EQ(h.min(), samples.front());
  EXPECT_EQ(h.max(), samples.back());
  EXPECT_EQ(h.count(), samples.size());
}

TEST(LatencyHistogram, MergeEqualsRecordingEverything) {
  LatencyHistogram a, b, all;
  for (std::uint64_t v = 1; v < 5000; v += 7) {
    (v % 2 ? a : b).record(v * 13);
    all.record(v * 13);
  }
  a.merge(b);
  EXPECT_EQ(a.count(), all.count());
  EXPECT_DOUBLE_EQ(a.percentile(99), all.percentile(99));
  EXPECT_DOUBLE_EQ(a.mean(), all.mean());
  EXPECT_EQ(a.max(), all.max());
}

TEST(LatencyHistogram, EmptyIsZero) {
  LatencyHistogram h;
  EXPECT_EQ(h.percentile(99), 0);
  EXPECT_EQ(h.min(), 0U);
  EXPECT_EQ(h.mean(), 0);
}

}  // namespace
}  // namespace nfsrdma::bench
