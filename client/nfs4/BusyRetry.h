// When a server answers "not now", the request goes again later.
//
// NFS4ERR_DELAY means the server is busy (a reply cache entry in progress, a
// delegation being recalled, memory short); NFS4ERR_GRACE means it restarted
// and, for its grace period (90 s by default on Linux and nfs-ganesha),
// refuses OPEN, REMOVE and RENAME so that earlier clients can reclaim their
// state first. Neither is an answer a user wants passed on: the Linux client
// waits and resends (nfs4_delay: 0.1 s, doubling). Unlike it, this client
// gives up after a budget, so a command never hangs on a server that stays
// busy.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

#include "client/base/Error.h"

namespace nfsrdma::nfs4 {

class BusyRetry {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::milliseconds kFirstPause{100};
  // Capped lower than Linux's 15 s: a grace period that ends is noticed
  // within a second, at the cost of a few small calls per second.
  static constexpr std::chrono::milliseconds kMaxPause{1000};

  // budget: the longest time, from the first busy answer, that the request
  // is sent again; zero sends it once only.
  // maxPause: where the doubling stops (a reconnect backs off further).
  BusyRetry(std::chrono::milliseconds budget, Clock::time_point firstBusyAnswer,
            std::chrono::milliseconds maxPause = kMaxPause);

  // DELAY or GRACE: the server's "not now". As an Error: one carrying that
  // NFS4ERR_ status.
  static bool busy(std::uint32_t status);
  static bool busy(const Error& error);

  // Whether a COMPOUND that failed with status at operation index failedAt
  // (SEQUENCE is 0) may be sent again unchanged: the status is DELAY or
  // GRACE, and no operation before failedAt had an effect that a second
  // execution would repeat (firstNonIdempotent, from CompoundEncoder).
  static bool retryable(std::uint32_t status, std::uint32_t failedAt,
                        std::uint32_t firstNonIdempotent);
  // The same decision for a COMPOUND's outcome as a synchronous call sees
  // it: error is what the call returned; decoded says whether the results
  // got past SEQUENCE (then compoundStatus and resultCount are the
  // COMPOUND4res header's); when SEQUENCE itself failed, the error's status
  // is SEQUENCE's (operation 0). Only an error that is that NFS4ERR_ status
  // counts: a malformed reply or a client-side error is never resent.
  static bool resendable(const Error& error, bool decoded, std::uint32_t compoundStatus,
                         std::uint32_t resultCount, std::uint32_t firstNonIdempotent);

  // The pause before the next attempt at time now, or nullopt once the
  // budget is spent. Pauses double from kFirstPause to maxPause and the last
  // one ends at the budget's end.
  std::optional<std::chrono::milliseconds> nextPause(Clock::time_point now);

  unsigned retries() const { return retries_; }
  std::chrono::milliseconds budget() const { return budget_; }

 private:
  std::chrono::milliseconds budget_;
  Clock::time_point deadline_;
  std::chrono::milliseconds maxPause_;
  std::chrono::milliseconds pause_ = kFirstPause;
  unsigned retries_ = 0;
};

}  // namespace nfsrdma::nfs4
