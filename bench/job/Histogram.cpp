#include "bench/job/Histogram.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <stdexcept>
#include <string>

namespace nfsrdma::bench {

std::size_t LatencyHistogram::bucketOf(std::uint64_t ns) {
  constexpr std::uint64_t kLinear = 1ULL << (kSubBits + 1);  // 128
  if (ns < kLinear) return static_cast<std::size_t>(ns);
  const unsigned exponent = static_cast<unsigned>(std::bit_width(ns)) - 1;  // >= 7
  const unsigned shift = exponent - kSubBits;                               // >= 1
  const std::uint64_t sub = (ns >> shift) - (1ULL << kSubBits);             // 0..63
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

LatencyHistogram::State LatencyHistogram::state() const {
  State s;
  for (std::size_t i = 0; i < kBuckets; ++i) {
    if (counts_[i] != 0) s.buckets.emplace_back(i, counts_[i]);
  }
  s.min = min();
  s.max = max_;
  s.sum = sum_;
  s.sumSquares = sumSquares_;
  return s;
}

namespace {

[[noreturn]] void badState(const std::string& what) {
  throw std::invalid_argument("latency histogram: " + what);
}

}  // namespace

LatencyHistogram LatencyHistogram::fromState(const State& s) {
  LatencyHistogram h;
  std::size_t previous = 0;
  for (std::size_t k = 0; k < s.buckets.size(); ++k) {
    const auto [bucket, count] = s.buckets[k];
    if (bucket >= kBuckets)
      badState("bucket " + std::to_string(bucket) + " is out of range, expected 0.." +
               std::to_string(kBuckets - 1));
    if (k > 0 && bucket <= previous)
      badState("bucket " + std::to_string(bucket) + " follows bucket " + std::to_string(previous) +
               ", expected ascending buckets");
    if (count == 0)
      badState("bucket " + std::to_string(bucket) +
               " has count 0, expected only non-empty buckets");
    if (h.count_ + count < h.count_) badState("the counts overflow 64 bits");
    h.counts_[bucket] = count;
    h.count_ += count;
    previous = bucket;
  }
  if (!std::isfinite(s.sum) || !std::isfinite(s.sumSquares) || s.sum < 0 || s.sumSquares < 0) {
    badState("sum and sum of squares must be finite and not negative");
  }
  if (h.count_ == 0) {
    if (s.min != 0 || s.max != 0 || s.sum != 0 || s.sumSquares != 0)
      badState("an empty histogram must have min, max and sums 0");
    return h;
  }
  if (bucketOf(s.min) != s.buckets.front().first)
    badState("min " + std::to_string(s.min) + " is not in the first non-empty bucket");
  if (bucketOf(s.max) != s.buckets.back().first)
    badState("max " + std::to_string(s.max) + " is not in the last non-empty bucket");
  h.min_ = s.min;
  h.max_ = s.max;
  h.sum_ = s.sum;
  h.sumSquares_ = s.sumSquares;
  return h;
}

void LatencyHistogram::clear() {
  *this = LatencyHistogram();
}

double LatencyHistogram::mean() const {
  return count_ ? sum_ / static_cast<double>(count_) : 0;
}

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
      const double mid =
          static_cast<double>(bucketLow(i)) + static_cast<double>(bucketWidth(i) - 1) / 2.0;
      // Never outside what was observed.
      return std::clamp(mid, static_cast<double>(min_), static_cast<double>(max_));
    }
  }
  return static_cast<double>(max_);
}

}  // namespace nfsrdma::bench
