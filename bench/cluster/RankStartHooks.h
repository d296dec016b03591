// The two ways a rank starts a cell with the others (RankHooks):
//   MpiRankHooks       at MPI's barrier, after measuring each rank's clock
//                      against rank 0's; with --stonewall every rank stops
//                      when the first has run its time or finished its bytes;
//   ScheduledRankHooks at a wall-clock time known to every rank in advance
//                      (a Kubernetes pod's rendered start time), with no
//                      channel between the ranks and so no stonewall.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "bench/cluster/Cluster.h"
#include "bench/job/RankHooks.h"

namespace nfsrdma::bench {

// Why a rank that was ready did not start: another could not. Rank 0 leaves
// such ranks out of its error lines when it has the real one.
inline constexpr std::string_view kAbandonedByAnother =
    "not started: another rank could not set up this cell (rank 0 prints why)";

class MpiRankHooks final : public RankHooks {
 public:
  // cell: the cell's number in the run (the same on every rank);
  // stonewallNs: 0 for none, else how long after the ramp the first rank
  // stops every rank (it also stops them when it finishes first).
  MpiRankHooks(Cluster& cluster, std::uint32_t cell, std::int64_t rampNs, std::int64_t stonewallNs);

  bool startTogether(const std::string& failure) override;
  std::string abandonReason() const override { return abandonReason_; }
  bool stopNow(bool issuingDone) override;
  std::chrono::milliseconds pollInterval() const override;
  void ended() override;
  std::int64_t clockNs(std::chrono::steady_clock::time_point t) const override;

  // startTogether was called (the rank took part in the barrier's vote).
  bool joined() const { return joined_; }
  // At rank 0 after startTogether: every rank's clock against rank 0's.
  const std::vector<ClockOffset>& offsets() const { return offsets_; }

 private:
  Cluster& cluster_;
  std::uint32_t cell_;
  std::int64_t rampNs_;
  std::int64_t stonewallNs_;
  bool joined_ = false;
  bool started_ = false;
  bool doneSent_ = false;
  std::chrono::steady_clock::time_point startedAt_;
  std::vector<ClockOffset> offsets_;
  std::string abandonReason_;
};

class ScheduledRankHooks final : public RankHooks {
 public:
  // startAtNs: the cell's start on the client clock (ClientClock.h).
  explicit ScheduledRankHooks(std::int64_t startAtNs) : startAtNs_(startAtNs) {}

  bool startTogether(const std::string& failure) override;
  std::string abandonReason() const override { return abandonReason_; }
  bool stopNow(bool) override { return false; }
  std::chrono::milliseconds pollInterval() const override { return std::chrono::milliseconds(100); }
  void ended() override {}
  std::int64_t clockNs(std::chrono::steady_clock::time_point t) const override;

 private:
  std::int64_t startAtNs_;
  std::string abandonReason_;
};

// How late a scheduled rank may be and still start: beyond it its window
// would miss the others' start by more than a ramp's share.
inline constexpr std::int64_t kScheduledLateNs = 1'000'000'000;

}  // namespace nfsrdma::bench
