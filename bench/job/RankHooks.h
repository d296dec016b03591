// The part of a file benchmark run that makes it one client of many (an MPI
// rank, a Kubernetes pod): the hooks the run calls to start with the others
// and to stop with them, and the timeline it records for adding the
// clients up afterwards (bench/ranks). No I/O here: bench/cluster
// implements the hooks over MPI and over a wall-clock schedule.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace nfsrdma::bench {

// A client of a many-client run: its measured window and its progress on
// the RankHooks' clock (nanoseconds), for adding the clients up afterwards.
struct RankTimeline {
  struct Point {
    std::int64_t atNs = 0;
    std::uint64_t bytes = 0;  // measured, both directions, so far
    std::uint64_t ops = 0;
  };
  std::int64_t startNs = 0;  // the first job's end of ramp
  std::int64_t endNs = 0;    // the last measured completion
  // Ascending, strictly inside (startNs, endNs), then (endNs, the totals).
  std::vector<Point> points;
};

// How the jobs of this process take part in a run of several client
// processes (MPI ranks, Kubernetes pods). Every call comes from the thread
// that called runFileBenchmark, in this order: startTogether once, then
// stopNow every pollInterval while the jobs run (only when it returned
// true), then ended once.
class RankHooks {
 public:
  virtual ~RankHooks() = default;
  // This process's jobs are set up (failure empty) or could not be (its
  // error). Waits for the other clients; true when all are ready and the
  // clocks start now. False abandons the cell: runFileBenchmark then throws
  // std::runtime_error with abandonReason().
  virtual bool startTogether(const std::string& failure) = 0;
  virtual std::string abandonReason() const = 0;
  // True when the jobs must stop issuing now (another client finished
  // first: --stonewall). issuingDone: every job here has stopped issuing.
  virtual bool stopNow(bool issuingDone) = 0;
  virtual std::chrono::milliseconds pollInterval() const = 0;
  virtual void ended() = 0;
  // The timeline's clock: nanoseconds on this client's clock.
  virtual std::int64_t clockNs(std::chrono::steady_clock::time_point t) const = 0;
};

}  // namespace nfsrdma::bench
