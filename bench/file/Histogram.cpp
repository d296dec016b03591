#include "bench/file/Histogram.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace nfsrdma::bench {

std::size_t LatencyHistogram::bucketOf(std::uint64_t ns) {
  constexpr std::uint64_t kLinear = 1ULL << (kSubBits + 1);  // 128
  if (ns < kLinear) return static_cast<std::size_t>(ns);
  const unsigned exponent = static_cast<unsigned>(std::bit_width(ns)) - 1;  // >= 7
  const unsigned shift = exponent - kSubBits;                                // >= 1
  const std::uint64_t sub = (ns >> shift) - (1ULL << kSubBits);              // 0..63
  return static_cast<std::size_t>((shift + 1) * (1U << kSubBits) + sub);
}

std::uint64_t LatencyHistogram::bucketLow(std::size_t bucket) {
  if (bucket < (1U << (kSubBits + 1))) return bucket;
  const std::size_t shift = bucket / (1U << kSubBits) - 1;
  const std::uint64_t sub = bucket % (1U << kSubBits) + (1U << kSubBits);
  return sub << shift;
}

std::uint64_t LatencyHistogram::bucketWidth(std::size_t bucket) {
  if (bucket < (1U << (kSubBits + 1))) return 1;
  return 1ULL << (bucket / (1U << kSubBits) - 1);
}

void LatencyHistogram::record(std::uint64_t ns) {
  ++counts_[bucketOf(ns)];
  ++count_;
  min_ = std::min(min_, ns);
  max_ = std::max(max_, ns);
  const auto v = static_cast<double>(ns);
  sum_ += v;
  sumSquares_ += v * v;
}

void LatencyHistogram::merge(const LatencyHistogram& other) {
  for (std::size_t i = 0; i < kBuckets; ++i) counts_[i] += other.counts_[i];
  count_ += other.count_;
  min_ = std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
  sum_ += other.sum_;
  sumSquares_ += other.sumSquares_;
}

void LatencyHistogram::clear() { *this = LatencyHistogram(); }

double LatencyHistogram::mean() const { return count_ ? sum_ / static_cast<double>(count_) : 0; }

double LatencyHistogram::stdev() const {
  if (count_ < 2) return 0;
  const double n = static_cast<double>(count_);
  const double var = (sumSquares_ - sum_ * sum_ / n) / (n - 1);
  return var > 0 ? std::sqrt(var) : 0;
}

double LatencyHistogram::percentile(double p) const {
  if (count_ == 0) return 0;
  p = std::clamp(p, 0.0, 100.0);
  auto rank = static_cast<std::uint64_t>(std::ceil(p / 100.0 * static_cast<double>(count_)));
  rank = std::clamp<std::uint64_t>(rank, 1, count_);
  std::uint64_t seen = 0;
  for (std::size_t i = 0; i < kBuckets; ++i) {
    seen += counts_[i];
    if (seen >= rank) {
      const double mid = static_cast<double>(bucketLow(i)) + static_cast<double>(bucketWidth(i) - 1) / 2.0;
      // Never outside what was observed.
      return std::clamp(mid, static_cast<double>(min_), static_cast<double>(max_));
    }
  }
  return static_cast<double>(max_);
}

}  // namespace nfsrdma::bench
