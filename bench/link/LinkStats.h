// Unit conversions and statistics of the link benchmark, kept free of I/O so
// unit tests can check them against perftest's printed rows. Conventions
// (the ones users trip over): 1 Gb/s = 10^9 bit/s; 1 MiB = 2^20 bytes; the
// message rate is messages per second / 10^6 (Mpps).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace nfsrdma::bench {

enum class BandwidthUnit { GbitPerSecond, MiBPerSecond };

inline constexpr double kBytesPerMiB = 1048576.0;

// bytesPerSecond in the chosen unit.
double bandwidthIn(BandwidthUnit unit, double bytesPerSecond);
// Header text of the unit: "Gb/sec" or "MiB/sec".
const char* unitLabel(BandwidthUnit unit);
// JSON key suffix of the unit: "gbps" or "mibps".
const char* unitKey(BandwidthUnit unit);

// One bandwidth measurement (one message size).
struct BandwidthResult {
  std::uint64_t messageBytes = 0;
  std::uint64_t iterations = 0;  // per QP or stream, as perftest's #iterations
  std::uint64_t messages = 0;    // all QPs/streams (and both directions with -b)
  double seconds = 0;
  double peakBytesPerSecond = 0;  // best window; >= average

  double averageBytesPerSecond() const {
    return seconds > 0 ? static_cast<double>(messages) * static_cast<double>(messageBytes) / seconds
                       : 0;
  }
  double messageRateMpps() const {
    return seconds > 0 ? static_cast<double>(messages) / seconds / 1e6 : 0;
  }
};

// -b as perftest reports it: each side's average over its own time, and
// the two summed (peaks summed too). The result's messages are both
// sides', and its seconds the time in which they move at the summed rate,
// so its average and message rate read the sums.
BandwidthResult combineBidirectional(const BandwidthResult& local, std::uint64_t remoteMessages,
                                     double remoteSeconds, double remotePeakBytesPerSecond);

// Peak rate from (time, cumulative messages) samples: the best rate over any
// run of samples spanning at least minWindowMessages. Returns 0 when the
// samples span less than one window (callers then report the average).
struct ProgressSample {
  double seconds;
  std::uint64_t messages;
};
double peakMessagesPerSecond(const std::vector<ProgressSample>& samples,
                             std::uint64_t minWindowMessages);

// Latency summary in microseconds, as ib_send_lat prints it: typical is the
// median; percentiles use the nearest-rank method.
struct LatencyResult {
  std::uint64_t messageBytes = 0;
  std::uint64_t iterations = 0;
  double minUs = 0, maxUs = 0, typicalUs = 0, averageUs = 0, stdevUs = 0, p99Us = 0, p999Us = 0;
};
// samplesUs is sorted in place.
LatencyResult summarizeLatency(std::uint64_t messageBytes, std::vector<double>& samplesUs);

// Message sizes of a sweep (-a): 2, 4, ... up to maxBytes (8 MiB for perftest).
// The banner's Duration: "by -n", "10 s" or, with a margin, which part of
// the run was measured ("10 s, measured 2..8 s").
std::string durationBanner(double durationSeconds, double marginSeconds);

std::vector<std::uint64_t> sweepSizes(std::uint64_t maxBytes = 8u << 20);

}  // namespace nfsrdma::bench
