// What one rank (an MPI process or a Kubernetes pod) reports for one cell of
// a many-rank run: enough to add the ranks up on one clock afterwards
// (RankAggregate.h) and to carry as one JSON line (RankJson.h).
//
// Times are nanoseconds on the rank's own steady clock, whose epoch is its
// host's boot, so two hosts' times are only comparable after adding
// clockOffsetNs: rank 0's clock minus this rank's clock at one moment,
// measured at the start barrier (0 for rank 0).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bench/job/Histogram.h"
#include "bench/job/Verify.h"

namespace nfsrdma::bench {

// How often a rank records its progress. 100 ms keeps a 60 s run's line
// near 600 samples (a few KiB of JSON) while putting any moment within 50 ms
// of a sample, well inside a ramp, so the interpolated bytes at another
// rank's start or end are off by less than 0.1 s of throughput.
inline constexpr std::int64_t kRankSampleIntervalNs = 100'000'000;

// Bytes and ops moved so far, both directions together, at atNs (own clock).
// The highest rank a result may carry: --clients' limit. A run's clients
// are counted from their ranks, so a larger one would be a bogus run.
inline constexpr std::uint32_t kMaxRank = 4095;

struct ProgressSample {
  std::int64_t atNs = 0;
  std::uint64_t bytes = 0;
  std::uint64_t ops = 0;

  bool operator==(const ProgressSample&) const = default;
};

struct RankDirection {
  std::uint64_t bytes = 0;
  std::uint64_t ops = 0;
  LatencyHistogram latency;
};

struct RankResult {
  std::string cell;  // the cell's label, e.g. "4k-randread nfs-tcp"
  // The build the rank ran (util::versionText()); empty for a line of a
  // build before lines carried it.
  std::string version;
  std::uint32_t rank = 0;
  std::string host;
  // The rank could not run the cell (bad target, server gone): its
  // figures mean nothing and firstError says why.
  bool failed = false;
  std::int64_t clockOffsetNs = 0;
  std::int64_t startNs = 0;
  std::int64_t endNs = 0;
  RankDirection read;
  RankDirection write;
  // I/O errors and verify mismatches (verify.mismatches of them).
  std::uint64_t errors = 0;
  std::string firstError;
  // --verify: what the rank checked (inline reads and the read-back of
  // its writes) and its first mismatches; all zero without --verify.
  VerifyStats verify;
  // Ascending times after startNs; counts never decrease; the last sample
  // is at endNs with the totals. (startNs, 0, 0) is the implicit first
  // point, so a rank that sampled only its end moved at a constant rate.
  std::vector<ProgressSample> samples;

  std::uint64_t bytes() const { return read.bytes + write.bytes; }
  std::uint64_t ops() const { return read.ops + write.ops; }
  std::int64_t startOnRank0() const { return startNs + clockOffsetNs; }
  std::int64_t endOnRank0() const { return endNs + clockOffsetNs; }
};

// "rank 2 (node-c)": how every message names a rank.
std::string rankName(const RankResult& r);

// When the ranks did not all run one build (RankResult::version): "the
// ranks ran different builds: 0.1.0 (commit a) on ranks 0, 1; 0.1.0
// (commit b) on rank 2", builds in the order of their first rank; nullopt
// when they did. A figure added up over two builds may mix two behaviours.
std::optional<std::string> rankBuildsNote(const std::vector<RankResult>& results);

// Why the result cannot be added up, naming the rank and the field; nullopt
// when it is consistent. A failed result is checked only for its error text.
std::optional<std::string> rankResultProblem(const RankResult& r);

// Bytes and ops the rank had moved at atNs on rank 0's clock: 0 before its
// start, its totals after its end, linear between its samples in between
// (a request counts when it completes, so between two samples the count is
// known only to lie between theirs). Requires a consistent result.
struct ProgressAt {
  double bytes = 0;
  double ops = 0;
};
ProgressAt progressAt(const RankResult& r, std::int64_t atNsOnRank0);

}  // namespace nfsrdma::bench
