#include "client/nfs4/BusyRetry.h"

#include <algorithm>

#include "client/nfs4/Nfs4Status.h"

namespace nfsrdma::nfs4 {

BusyRetry::BusyRetry(std::chrono::milliseconds budget, Clock::time_point firstBusyAnswer)
    : budget_(budget), deadline_(firstBusyAnswer + budget) {}

bool BusyRetry::retryable(std::uint32_t status, std::uint32_t failedAt,
                          std::uint32_t firstNonIdempotent) {
  return (status == kErrDelay || status == kErrGrace) && failedAt <= firstNonIdempotent;
}

std::optional<std::chrono::milliseconds> BusyRetry::nextPause(Clock::time_point now) {
  if (now >= deadline_) return std::nullopt;
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline_ - now);
  const std::chrono::milliseconds pause = std::min(pause_, left);
  pause_ = std::min(pause_ * 2, kMaxPause);
  ++retries_;
  return pause;
}

}  // namespace nfsrdma::nfs4
