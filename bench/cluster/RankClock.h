// The clock a rank's times are given in: nanoseconds of the wall clock
// (CLOCK_REALTIME), read once per process and carried forward by the steady
// clock, so that a step of the wall clock during a run (NTP) does not bend
// a window. Hosts' wall clocks are NTP-synchronised to milliseconds, so
// pods, which have no barrier to measure offsets at, still share a clock
// roughly; MPI ranks measure their offsets to rank 0 on it as well.
#pragma once

#include <chrono>
#include <cstdint>

namespace nfsrdma::bench {

std::int64_t rankClockNs(std::chrono::steady_clock::time_point t);
inline std::int64_t rankClockNowNs() {
  return rankClockNs(std::chrono::steady_clock::now());
}

}  // namespace nfsrdma::bench
