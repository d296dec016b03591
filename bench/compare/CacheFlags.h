// Results that explain themselves: each figure is checked against the
// limits that bound it and flagged when it exceeds one, with the reason in
// words. Limits: the backing disk (the same profile and direction measured
// on the export's disk by the path engine), the link (from `nfsrdma-bench
// link --json`, or the RDMA device's reported speed), and the server's
// memory against the working set (a file set that fits in RAM is served
// from the server's page cache after the first touch, however the client
// opens it: O_DIRECT bypasses the client's cache, not the server's). Pure
// functions over numbers, unit-tested on a field measurement (a 400 Gb/s
// RoCE setup whose NFS reads beat its disk: CacheFlagsTest.cpp).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "bench/job/FileProfile.h"

namespace nfsrdma::bench {

// A figure more than this factor above a bound counts as above it: runs of
// the same disk vary by several percent, and 3840 vs 3838 MiB/s is a tie.
inline constexpr double kAboveBoundFactor = 1.15;
// Above the link by more than this is impossible over the wire.
inline constexpr double kAboveLinkFactor = 1.05;
// At or above this share of the link, a figure is link-bound (an info note).
inline constexpr double kLinkBoundShare = 0.9;
// At or above this share of the disk's figure (and not above it), a figure
// over the network is disk-bound (an info note).
inline constexpr double kDiskBoundShare = 0.85;

enum class FlagSeverity { Info, Warning };

struct Flag {
  std::string kind;  // "server-page-cache", "above-disk", "server-write-cache", "above-link",
                     // "link-bound", "disk-bound"
  FlagSeverity severity = FlagSeverity::Warning;
  std::string message;
};

struct FigureCheck {
  std::string profile;  // "4m-read"
  IoDirection direction = IoDirection::Read;
  double bytesPerSecond = 0;
  bool overNetwork = true;                   // false for the local-disk column itself
  std::optional<double> diskBytesPerSecond;  // same profile and direction on the backing disk
  std::optional<double> linkBytesPerSecond;  // the link this target's bytes cross
  std::string linkSource;                    // "nfsrdma-bench link (TCP)", "mlx5_0 port 1"
  std::optional<double> serverMemoryBytes;
  double workingSetBytes = 0;
  bool serverCacheDropped = false;  // --drop-server-cache took effect before the phase
};

std::vector<Flag> checkFigure(const FigureCheck& c);

// "42.4 GiB/s" at or above 1 GiB/s, "674 MiB/s" below.
std::string formatRate(double bytesPerSecond);
// "389.0 Gb/s": links are quoted in bits.
std::string formatGbps(double bytesPerSecond);

}  // namespace nfsrdma::bench
