// ProgressLine: the live line's thread.
#include "bench/file/ProgressLine.h"

#include <chrono>
#include <cstdio>

namespace nfsrdma::bench::filerun {

ProgressLine::ProgressLine(const RunSettings& s, const JobProgress& p, double totalSeconds)
    : label_(s.label), p_(p), total_(totalSeconds) {
  if (s.progress) thread_ = std::thread([this] { loop(); });
}

ProgressLine::~ProgressLine() {
  {
    std::lock_guard lock(mu_);
    done_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) {
    thread_.join();
    std::fprintf(stderr, "\r%-100s\r", "");
  }
}

void ProgressLine::loop() {
  const auto t0 = BenchClock::now();
  std::uint64_t lastBytes[2] = {0, 0}, lastOps[2] = {0, 0};
  auto last = t0;
  std::unique_lock lock(mu_);
  // Bounded by the run: the destructor ends it.
  while (!cv_.wait_for(lock, std::chrono::milliseconds(500), [&] { return done_; })) {
    const auto now = BenchClock::now();
    const double dt = std::chrono::duration<double>(now - last).count();
    const double elapsed = std::chrono::duration<double>(now - t0).count();
    double mib[2], iops[2];
    for (int d = 0; d < 2; ++d) {
      const auto b = p_.bytes[d].load(std::memory_order_relaxed);
      const auto o = p_.ops[d].load(std::memory_order_relaxed);
      mib[d] = dt > 0 ? static_cast<double>(b - lastBytes[d]) / dt / 1048576.0 : 0;
      iops[d] = dt > 0 ? static_cast<double>(o - lastOps[d]) / dt : 0;
      lastBytes[d] = b;
      lastOps[d] = o;
    }
    last = now;
    const double eta = total_ > elapsed ? total_ - elapsed : 0;
    std::fprintf(stderr, "\r[%s] r=%.1fMiB/s,w=%.1fMiB/s r=%.0f,w=%.0f IOPS eta %.0fs   ",
                 label_.c_str(), mib[0], mib[1], iops[0], iops[1], eta);
    std::fflush(stderr);
  }
}

}  // namespace nfsrdma::bench::filerun
