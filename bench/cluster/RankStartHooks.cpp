#include "bench/cluster/RankStartHooks.h"

#include <thread>

#include "bench/cluster/RankClock.h"
#include "bench/job/Interrupt.h"
#include "bench/report/Format.h"

namespace nfsrdma::bench {

MpiRankHooks::MpiRankHooks(Cluster& cluster, std::uint32_t cell, std::int64_t rampNs,
                           std::int64_t stonewallNs)
    : cluster_(cluster), cell_(cell), rampNs_(rampNs), stonewallNs_(stonewallNs) {}

bool MpiRankHooks::startTogether(const std::string& failure) {
  joined_ = true;
  if (!cluster_.allOk(failure.empty())) {
    abandonReason_ = failure.empty() ? std::string(kAbandonedByAnother) : failure;
    return false;
  }
  // Offsets first, then the barrier: the ping-pongs of rank 0 with one rank
  // after another end at different times, the barrier's exit does not.
  offsets_ = cluster_.measureOffsets([] { return rankClockNowNs(); });
  cluster_.barrier();
  started_ = true;
  startedAt_ = std::chrono::steady_clock::now();
  return true;
}

bool MpiRankHooks::stopNow(bool issuingDone) {
  if (stonewallNs_ == 0) return false;
  const auto ran = std::chrono::duration_cast<std::chrono::nanoseconds>(
                       std::chrono::steady_clock::now() - startedAt_)
                       .count();
  if (!doneSent_ &&
      (issuingDone || ran >= rampNs_ + stonewallNs_ || cluster_.doneNotices(cell_) > 0)) {
    cluster_.sendDone(cell_);
    doneSent_ = true;
  }
  return doneSent_;
}

std::chrono::milliseconds MpiRankHooks::pollInterval() const {
  // With --stonewall the first rank's notice must stop the others at once:
  // 2 ms is a few hundred 4 KiB requests at most, well inside a window.
  return std::chrono::milliseconds(stonewallNs_ ? 2 : 100);
}

void MpiRankHooks::ended() {
  if (stonewallNs_ == 0 || !started_) return;
  if (!doneSent_) {
    cluster_.sendDone(cell_);
    doneSent_ = true;
  }
  cluster_.awaitDoneNotices(cell_);
}

std::int64_t MpiRankHooks::clockNs(std::chrono::steady_clock::time_point t) const {
  return rankClockNs(t);
}

bool ScheduledRankHooks::startTogether(const std::string& failure) {
  if (!failure.empty()) {
    abandonReason_ = failure;
    return false;
  }
  const std::int64_t late = rankClockNowNs() - startAtNs_;
  if (late > kScheduledLateNs) {
    abandonReason_ =
        fmt("not ready at the cell's start time: late by %.1f s (the set-up or the layout took "
            "longer than the slot allows: give a longer --cell-slot, or a later --start-at)",
            static_cast<double>(late) / 1e9);
    return false;
  }
  // In slices: an interrupt ends the wait, as it ends a job's.
  while (rankClockNowNs() < startAtNs_) {
    if (interruptSignal() != 0) {
      abandonReason_ = "interrupted before the cell's start time";
      return false;
    }
    const std::int64_t left = startAtNs_ - rankClockNowNs();
    std::this_thread::sleep_for(std::chrono::nanoseconds(std::min<std::int64_t>(left, 50'000'000)));
  }
  return true;
}

std::int64_t ScheduledRankHooks::clockNs(std::chrono::steady_clock::time_point t) const {
  return rankClockNs(t);
}

}  // namespace nfsrdma::bench
