// LinkStats: conversions, peak windows and latency percentiles.
#include "bench/link/LinkStats.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

namespace nfsrdma::bench {

double bandwidthIn(BandwidthUnit unit, double bytesPerSecond) {
  return unit == BandwidthUnit::GbitPerSecond ? bytesPerSecond * 8.0 / 1e9
                                              : bytesPerSecond / kBytesPerMiB;
}

const char* unitLabel(BandwidthUnit unit) {
  return unit == BandwidthUnit::GbitPerSecond ? "Gb/sec" : "MiB/sec";
}

const char* unitKey(BandwidthUnit unit) {
  return unit == BandwidthUnit::GbitPerSecond ? "gbps" : "mibps";
}

BandwidthResult combineBidirectional(const BandwidthResult& local, std::uint64_t remoteMessages,
                                     double remoteSeconds, double remotePeakBytesPerSecond) {
  BandwidthResult both = local;
  both.messages = local.messages + remoteMessages;
  const double localRate =
      local.seconds > 0 ? static_cast<double>(local.messages) / local.seconds : 0;
  const double remoteRate =
      remoteSeconds > 0 ? static_cast<double>(remoteMessages) / remoteSeconds : 0;
  const double rate = localRate + remoteRate;
  both.seconds = rate > 0 ? static_cast<double>(both.messages) / rate : 0;
  both.peakBytesPerSecond = local.peakBytesPerSecond + remotePeakBytesPerSecond;
  return both;
}

double peakMessagesPerSecond(const std::vector<ProgressSample>& s, std::uint64_t minWindow) {
  double best = 0;
  std::size_t j = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (j <= i) j = i + 1;
    while (j < s.size() && s[j].messages - s[i].messages < minWindow) ++j;
    if (j >= s.size()) break;
    const double dt = s[j].seconds - s[i].seconds;
    if (dt > 0) best = std::max(best, static_cast<double>(s[j].messages - s[i].messages) / dt);
  }
  return best;
}

std::string durationBanner(double durationSeconds, double marginSeconds) {
  if (durationSeconds <= 0) return "by -n";
  char buf[96];
  if (marginSeconds > 0) {
    std::snprintf(buf, sizeof buf, "%g s, measured %g..%g s", durationSeconds, marginSeconds,
                  durationSeconds - marginSeconds);
  } else {
    std::snprintf(buf, sizeof buf, "%g s", durationSeconds);
  }
  return buf;
}

LatencyResult summarizeLatency(std::uint64_t messageBytes, std::vector<double>& v) {
  LatencyResult r;
  r.messageBytes = messageBytes;
  r.iterations = v.size();
  if (v.empty()) return r;
  std::sort(v.begin(), v.end());
  const auto n = v.size();
  r.minUs = v.front();
  r.maxUs = v.back();
  r.typicalUs = n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  r.averageUs = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(n);
  double sq = 0;
  for (const double x : v) sq += (x - r.averageUs) * (x - r.averageUs);
  r.stdevUs = std::sqrt(sq / static_cast<double>(n));
  const auto rank = [&](double p) {
    // nearest rank: ceil(p * n), 1-based
    auto k = static_cast<std::size_t>(std::ceil(p * static_cast<double>(n)));
    k = std::clamp<std::size_t>(k, 1, n);
    return v[k - 1];
  };
  r.p99Us = rank(0.99);
  r.p999Us = rank(0.999);
  return r;
}

std::vector<std::uint64_t> sweepSizes(std::uint64_t maxBytes) {
  std::vector<std::uint64_t> out;
  for (std::uint64_t s = 2; s <= maxBytes; s *= 2) out.push_back(s);
  return out;
}

}  // namespace nfsrdma::bench
