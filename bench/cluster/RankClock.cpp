#include "bench/cluster/RankClock.h"

namespace nfsrdma::bench {
namespace {

struct Anchor {
  std::chrono::steady_clock::time_point steady = std::chrono::steady_clock::now();
  std::int64_t wallNs = std::chrono::duration_cast<std::chrono::nanoseconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count();
};

const Anchor& anchor() {
  static const Anchor a;
  return a;
}

}  // namespace

std::int64_t rankClockNs(std::chrono::steady_clock::time_point t) {
  const Anchor& a = anchor();
  return a.wallNs + std::chrono::duration_cast<std::chrono::nanoseconds>(t - a.steady).count();
}

}  // namespace nfsrdma::bench
