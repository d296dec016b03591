#include "bench/compare/CacheFlags.h"

#include <cstdio>

namespace nfsrdma::bench {

std::string formatRate(double bps) {
  char buf[48];
  const double mib = bps / 1048576.0;
  if (mib >= 1024.0) {
    std::snprintf(buf, sizeof buf, "%.1f GiB/s", mib / 1024.0);
  } else {
    std::snprintf(buf, sizeof buf, "%.0f MiB/s", mib);
  }
  return buf;
}

std::string formatGbps(double bps) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.1f Gb/s", bps * 8 / 1e9);
  return buf;
}

namespace {

// A figure over the network above the server's disk: which cache served it
// (reads: the server's page cache when the file set fits in its RAM;
// writes: its page cache absorbing UNSTABLE writes), or, when neither can,
// that the disk figure is not this export's.
void addDiskFlag(const FigureCheck& c, const std::string& head, std::vector<Flag>& flags) {
  if (!c.overNetwork || !c.diskBytesPerSecond || *c.diskBytesPerSecond <= 0) return;
  if (c.bytesPerSecond <= *c.diskBytesPerSecond * kAboveBoundFactor) {
    // At the disk's figure, give or take a run's noise: the disk bounds it.
    if (c.bytesPerSecond >= *c.diskBytesPerSecond * kDiskBoundShare) {
      char pct[16];
      std::snprintf(pct, sizeof pct, "%.0f%%", c.bytesPerSecond / *c.diskBytesPerSecond * 100);
      flags.push_back({"disk-bound", FlagSeverity::Info,
                       head + "disk-bound: " + pct + " of the " +
                           formatRate(*c.diskBytesPerSecond) +
                           " the same profile reached on the server's disk"});
    }
    return;
  }
  const std::string ws = formatBytes(c.workingSetBytes);
  const bool fitsInRam = c.serverMemoryBytes && c.workingSetBytes <= *c.serverMemoryBytes;
  const std::string disk =
      "above the " + formatRate(*c.diskBytesPerSecond) + " of the server's disk";
  if (c.direction != IoDirection::Read) {
    flags.push_back({"server-write-cache", FlagSeverity::Warning,
                     head + "writes " + disk +
                         ": absorbed by the server's page cache (UNSTABLE writes or an async "
                         "export), not yet on "
                         "disk; compare with --io-bytes above server RAM"});
  } else if (fitsInRam && !c.serverCacheDropped) {
    flags.push_back({"server-page-cache", FlagSeverity::Warning,
                     head + disk + " and the file set (" + ws + ") fits in server RAM (" +
                         formatBytes(*c.serverMemoryBytes) +
                         "): served from the server's page cache; rerun with --size above "
                         "server RAM or with "
                         "--drop-server-cache"});
  } else if (fitsInRam) {
    flags.push_back({"server-page-cache", FlagSeverity::Warning,
                     head + disk +
                         "; the cache was dropped before the read phase, but the file set (" + ws +
                         ") fits in server RAM (" + formatBytes(*c.serverMemoryBytes) +
                         ") and is cached again as it is read: served from the server's page "
                         "cache; rerun with "
                         "--size above server RAM"});
  } else if (c.serverMemoryBytes) {
    flags.push_back({"above-disk", FlagSeverity::Warning,
                     head + disk + " although the file set (" + ws + ") exceeds server RAM (" +
                         formatBytes(*c.serverMemoryBytes) +
                         "): the disk figure is not this export's disk, or a cache below it (RAID "
                         "controller, array) served the reads"});
  } else {
    flags.push_back({"above-disk", FlagSeverity::Warning,
                     head + disk +
                         "; the server's memory is unknown (give --server-mem): if the file set (" +
                         ws + ") fits in it, the server's page cache served these reads"});
  }
}

// A figure over the network against the link: above it (the bytes did not
// all cross it) or close enough to it that the link bounds the figure.
void addLinkFlag(const FigureCheck& c, const std::string& head, std::vector<Flag>& flags) {
  if (!c.overNetwork || !c.linkBytesPerSecond || *c.linkBytesPerSecond <= 0) return;
  const std::string link = formatGbps(c.linkBytesPerSecond.value());
  const std::string src = c.linkSource.empty() ? "" : " (" + c.linkSource + ")";
  if (c.bytesPerSecond > *c.linkBytesPerSecond * kAboveLinkFactor) {
    flags.push_back({"above-link", FlagSeverity::Warning,
                     head + formatGbps(c.bytesPerSecond) + " is above the link's " + link + src +
                         ": these bytes did not all cross the wire (a client-side cache served "
                         "them) or the link "
                         "figure is not this path's"});
  } else if (c.bytesPerSecond >= *c.linkBytesPerSecond * kLinkBoundShare) {
    char pct[16];
    std::snprintf(pct, sizeof pct, "%.0f%%", c.bytesPerSecond / *c.linkBytesPerSecond * 100);
    flags.push_back({"link-bound", FlagSeverity::Info,
                     head + "link-bound: " + formatGbps(c.bytesPerSecond) + " is " + pct +
                         " of the link's " + link + src});
  }
}

}  // namespace

std::vector<Flag> checkFigure(const FigureCheck& c) {
  std::vector<Flag> flags;
  if (c.bytesPerSecond <= 0) return flags;
  const std::string head = c.profile + " " + formatRate(c.bytesPerSecond) + ": ";
  addDiskFlag(c, head, flags);
  addLinkFlag(c, head, flags);
  return flags;
}

}  // namespace nfsrdma::bench
