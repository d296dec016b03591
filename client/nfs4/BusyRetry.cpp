#include "client/nfs4/BusyRetry.h"

#include <algorithm>

#include "client/nfs4/Nfs4Status.h"

namespace nfsrdma::nfs4 {

BusyRetry::BusyRetry(std::chrono::milliseconds budget, Clock::time_point firstBusyAnswer,
                     std::chrono::milliseconds maxPause)
    : budget_(budget),
      deadline_(firstBusyAnswer + budget),
      maxPause_(std::max(maxPause, kFirstPause)) {}

bool BusyRetry::busy(std::uint32_t status) {
  return status == kErrDelay || status == kErrGrace;
}

bool BusyRetry::busy(const Error& error) {
  return error.code.category() == nfs4Category() &&
         busy(static_cast<std::uint32_t>(error.code.value()));
}

bool BusyRetry::retryable(std::uint32_t status, std::uint32_t failedAt,
                          std::uint32_t firstNonIdempotent) {
  return busy(status) && failedAt <= firstNonIdempotent;
}

bool BusyRetry::resendable(const Error& error, bool decoded, std::uint32_t compoundStatus,
                           std::uint32_t resultCount, std::uint32_t firstNonIdempotent) {
  if (!error) return false;
  std::uint32_t status = compoundStatus;
  std::uint32_t failedAt = resultCount > 0 ? resultCount - 1 : 0;
  if (!decoded) {
    if (error.code.category() != nfs4Category()) return false;
    status = static_cast<std::uint32_t>(error.code.value());
    failedAt = 0;
  }
  return error.code == statusError(status) && retryable(status, failedAt, firstNonIdempotent);
}

std::optional<std::chrono::milliseconds> BusyRetry::nextPause(Clock::time_point now) {
  if (now >= deadline_) return std::nullopt;
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline_ - now);
  const std::chrono::milliseconds pause = std::min(pause_, left);
  pause_ = std::min(pause_ * 2, maxPause_);
  ++retries_;
  return pause;
}

}  // namespace nfsrdma::nfs4
