// A cell's sampler: reads its sources at the start, about every interval
// on its own thread while the cell runs, and at the end, into a
// CellSeries. A source that reads nothing at some moment (a file that
// went away, a client not connected yet) has no reading then; a source
// that never read anything has no series at all.
//
// Bounded: at most kMaxReadings per source. A cell that runs longer keeps
// every other reading and samples half as often from then on, so a long
// cell's series still spans the whole cell.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "counters/Series.h"

namespace nfsrdma::counters {

struct CounterSource {
  std::string name;                 // Series::source
  std::vector<std::string> gauges;  // Series::gauges
  std::function<std::optional<NamedValues>()> read;
};

class Sampler {
 public:
  static constexpr std::size_t kMaxReadings = 2048;

  Sampler(std::vector<CounterSource> sources, std::chrono::milliseconds interval);
  ~Sampler();  // stops the thread if stop() was not called
  Sampler(const Sampler&) = delete;
  Sampler& operator=(const Sampler&) = delete;

  // Takes the first reading and starts the thread.
  void start();
  // Takes the last reading after the thread ended; the series, once.
  CellSeries stop();
  // The clock of Reading::seconds: when start() took the first reading.
  std::chrono::steady_clock::time_point startedAt() const { return t0_; }

 private:
  void loop();
  double elapsed() const;  // seconds since start()
  void readAll(double t);
  void thinOut();

  std::vector<CounterSource> sources_;
  std::chrono::milliseconds interval_;
  std::chrono::steady_clock::time_point t0_;
  std::vector<Series> series_;
  double cpuSeconds_ = 0;  // what readAll cost, on whichever thread ran it
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;  // under mu_
  std::thread thread_;
};

}  // namespace nfsrdma::counters
