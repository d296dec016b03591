// The live progress line of a cell on stderr (--progress, a terminal):
// both directions' MiB/s and IOPS over the last half second, and the time
// left. Its thread ends with it.
#pragma once

#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "bench/file/FileRun.h"

namespace nfsrdma::bench::filerun {

class ProgressLine {
 public:
  // Starts the line's thread when s.progress; totalSeconds: the planned run,
  // for the time left (0 with --io-bytes).
  ProgressLine(const RunSettings& s, const JobProgress& p, double totalSeconds);
  ~ProgressLine();

 private:
  void loop();

  std::string label_;
  const JobProgress& p_;
  double total_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

}  // namespace nfsrdma::bench::filerun
