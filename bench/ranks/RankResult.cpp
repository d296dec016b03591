#include "bench/ranks/RankResult.h"

#include <algorithm>

namespace nfsrdma::bench {

std::string rankName(const RankResult& r) {
  return "rank " + std::to_string(r.rank) + " (" + r.host + ")";
}

std::optional<std::string> rankBuildsNote(const std::vector<RankResult>& results) {
  std::vector<const RankResult*> byRank;
  for (const auto& r : results) byRank.push_back(&r);
  std::sort(byRank.begin(), byRank.end(),
            [](const RankResult* a, const RankResult* b) { return a->rank < b->rank; });
  std::vector<std::pair<std::string, std::vector<std::uint32_t>>> builds;
  for (const RankResult* r : byRank) {
    const std::string build = r->version.empty() ? "an unnamed build" : r->version;
    auto it =
        std::find_if(builds.begin(), builds.end(), [&](const auto& b) { return b.first == build; });
    if (it == builds.end()) it = builds.insert(builds.end(), {build, {}});
    it->second.push_back(r->rank);
  }
  if (builds.size() < 2) return std::nullopt;
  std::string note = "the ranks ran different builds:";
  for (std::size_t i = 0; i < builds.size(); ++i) {
    const auto& [build, ranks] = builds[i];
    note += std::string(i ? ";" : "") + " " + build + " on rank" + (ranks.size() > 1 ? "s" : "");
    for (std::size_t k = 0; k < ranks.size(); ++k)
      note += std::string(k ? ", " : " ") + std::to_string(ranks[k]);
  }
  return note;
}

namespace {

std::optional<std::string> sampleProblem(const RankResult& r) {
  if (r.samples.empty()) return rankName(r) + ": samples: expected at least the sample at its end";
  std::int64_t previousAt = r.startNs;
  ProgressSample previous;
  for (std::size_t i = 0; i < r.samples.size(); ++i) {
    const ProgressSample& s = r.samples[i];
    const std::string at = rankName(r) + ": samples[" + std::to_string(i) + "]: ";
    if (s.atNs <= previousAt)
      return at + "time " + std::to_string(s.atNs) + " is not after " + std::to_string(previousAt);
    if (s.bytes < previous.bytes || s.ops < previous.ops) return at + "bytes or ops decrease";
    previousAt = s.atNs;
    previous = s;
  }
  if (previous != ProgressSample{r.endNs, r.bytes(), r.ops()}) {
    return rankName(r) + ": samples: the last one must be at end_ns " + std::to_string(r.endNs) +
           " with the totals (" + std::to_string(r.bytes()) + " bytes, " + std::to_string(r.ops()) +
           " ops)";
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> rankResultProblem(const RankResult& r) {
  if (r.failed) {
    if (r.firstError.empty()) return rankName(r) + ": failed without an error text";
    return std::nullopt;
  }
  if (r.endNs <= r.startNs) {
    return rankName(r) + ": end_ns " + std::to_string(r.endNs) + " is not after start_ns " +
           std::to_string(r.startNs);
  }
  if (r.errors > 0 && r.firstError.empty())
    return rankName(r) + ": " + std::to_string(r.errors) + " errors without a first error text";
  if (r.read.latency.count() > r.read.ops || r.write.latency.count() > r.write.ops) {
    return rankName(r) + ": more latency samples than ops";
  }
  if (r.verify.mismatches > r.errors) {
    return rankName(r) + ": " + std::to_string(r.verify.mismatches) +
           " verify mismatches, more than its " + std::to_string(r.errors) + " errors";
  }
  if (r.verify.first.size() >
      std::min<std::uint64_t>(r.verify.mismatches, VerifyStats::kMaxReported)) {
    return rankName(r) + ": " + std::to_string(r.verify.first.size()) +
           " mismatches described, expected at most " +
           std::to_string(std::min<std::uint64_t>(r.verify.mismatches, VerifyStats::kMaxReported));
  }
  return sampleProblem(r);
}

ProgressAt progressAt(const RankResult& r, std::int64_t atNsOnRank0) {
  const std::int64_t at = atNsOnRank0 - r.clockOffsetNs;
  if (at <= r.startNs) return {};
  if (at >= r.endNs) return {static_cast<double>(r.bytes()), static_cast<double>(r.ops())};
  const auto next =
      std::upper_bound(r.samples.begin(), r.samples.end(), at,
                       [](std::int64_t t, const ProgressSample& s) { return t < s.atNs; });
  // next exists: the last sample is at endNs > at.
  const ProgressSample before =
      next == r.samples.begin() ? ProgressSample{r.startNs, 0, 0} : *(next - 1);
  const double share =
      static_cast<double>(at - before.atNs) / static_cast<double>(next->atNs - before.atNs);
  const auto lerp = [share](std::uint64_t a, std::uint64_t b) {
    return static_cast<double>(a) + share * (static_cast<double>(b) - static_cast<double>(a));
  };
  return {lerp(before.bytes, next->bytes), lerp(before.ops, next->ops)};
}

}  // namespace nfsrdma::bench
