#include "bench/compare/CompareConditions.h"

#include <unistd.h>

#include <cstdio>

#include "bench/file/FileReport.h"

namespace nfsrdma::bench {
namespace {

// "nfs-tcp (server 10.0.0.1)", "knfs (/mnt/nfs is on NFS)": why a target's server is not this host.
std::string remoteServer(const TargetSpec& t) {
  if (t.engine == EngineKind::Path) return t.name + " (" + t.location + " is on NFS)";
  return t.name + " (server " + t.nfs.host + ")";
}

const TargetSpec* firstRemote(const std::vector<TargetSpec>& targets) {
  for (const auto& t : targets) {
    if (!t.serverIsLocal()) return &t;
  }
  return nullptr;
}

}  // namespace

std::string dropCachesBlocked() {
  if (::access("/proc/sys/vm/drop_caches", W_OK) == 0) return {};
  return "/proc/sys/vm/drop_caches is not writable (needs root)";
}

ServerCachePlan planServerCache(const std::vector<TargetSpec>& targets, bool dropRequested,
                                const std::string& dropBlocked, double workingSetBytes,
                                std::optional<double> serverMemoryBytes) {
  const TargetSpec* remote = firstRemote(targets);
  if (dropRequested && remote == nullptr && dropBlocked.empty()) {
    return {CachePrep::Drop,
            "dropped before every read cell of every target (--drop-server-cache; the server is "
            "this host)"};
  }
  std::string why;
  if (dropRequested) {
    why = "; --drop-server-cache cannot make them start cold: " +
          (remote != nullptr ? "the server of " + remoteServer(*remote) + " is not this host"
                             : dropBlocked);
  }
  if (serverMemoryBytes && workingSetBytes > *serverMemoryBytes) {
    return {CachePrep::FromOptions, "not managed: the file set (" + formatBytes(workingSetBytes) +
                                        ") is larger than the server's RAM (" +
                                        formatBytes(*serverMemoryBytes) +
                                        "), so no target can start with it cached" + why};
  }
  // Unknown RAM (a remote server without --server-mem): the warm-up is still
  // done, but that the set then stays cached is an assumption, said so.
  const std::string unknownRam =
      serverMemoryBytes ? ""
                        : "; the server's RAM is unknown (give --server-mem): a file set "
                          "larger than it cannot stay cached, and 'warm' then overstates";
  return {
      CachePrep::Warm,
      "warm before every read cell of every target: the file set (" + formatBytes(workingSetBytes) +
          ") is read once, untimed, so each starts with it in the server's page cache" +
          (dropRequested ? why
                         : " (with --drop-server-cache every target would start cold instead)") +
          unknownRam};
}

ServerMemory serverMemoryOf(const std::vector<TargetSpec>& targets, std::optional<double> given,
                            std::optional<double> thisHostBytes) {
  if (given) return {given, "--server-mem"};
  if (const TargetSpec* remote = firstRemote(targets)) {
    return {std::nullopt, "unknown: the server of " + remoteServer(*remote) +
                              " is not this host (give --server-mem)"};
  }
  if (thisHostBytes) return {thisHostBytes, "this host's /proc/meminfo (the server is local)"};
  return {std::nullopt, "unknown: /proc/meminfo unreadable (give --server-mem)"};
}

void attachLinkBound(CompareTarget& t, const TargetSpec& s, const LinkBounds& link) {
  if (!s.overNfs()) return;
  const bool isRdma = s.nfsTransport() == "rdma";
  const std::string how = s.engine == EngineKind::Path ? ", the NFS mount's transport" : "";
  if (isRdma && link.figures.rdmaBytesPerSecond) {
    t.linkBytesPerSecond = link.figures.rdmaBytesPerSecond;
    t.linkSource = link.source + " (RDMA" + how + ")";
  } else if (isRdma && link.rdmaDeviceGbps > 0) {
    t.linkBytesPerSecond = link.rdmaDeviceGbps * 1e9 / 8;
    t.linkSource = link.rdmaDevice + " reported speed";
  } else if (!isRdma && link.figures.tcpBytesPerSecond) {
    t.linkBytesPerSecond = link.figures.tcpBytesPerSecond;
    t.linkSource = link.source + " (TCP" + how + ")";
  }
}

std::vector<std::string> conditionWarnings(const std::vector<TargetSpec>& targets,
                                           const FileOptions& options,
                                           const std::string& diskTarget) {
  std::vector<std::string> out;
  if (options.direct) return out;
  for (const auto& t : targets) {
    if (t.engine != EngineKind::Path) continue;
    if (t.name == diskTarget && !t.onNfs) {
      out.push_back("warning: --direct 0: " + t.name + " (" + t.location +
                    ") reads and writes through this host's page cache, so the disk bound every "
                    "figure is checked "
                    "against is the page cache's, not the disk's: flags against it mean little "
                    "(use --direct 1)");
    } else if (t.onNfs) {
      out.push_back("warning: --direct 0: " + t.name + " (" + t.location +
                    " on NFS) can read from this host's page cache (the NFS client's), so its "
                    "reads may not cross "
                    "the link (use --direct 1)");
    }
  }
  return out;
}

std::vector<CompareCell> cellsOf(const RunResult& r, const FileProfile& p) {
  std::vector<CompareCell> out;
  for (IoDirection d : {IoDirection::Read, IoDirection::Write}) {
    if ((d == IoDirection::Read && !p.reads()) || (d == IoDirection::Write && !p.writes()))
      continue;
    CompareCell c;
    c.profile = p.name;
    c.direction = d;
    c.target = r.target;
    const DirectionResult& x = r.dir[static_cast<int>(d)];
    c.ran = r.errors == 0 && x.ops > 0;
    c.mibPerSecond = r.mibPerSecond(d);
    c.mbPerSecond = r.mbPerSecond(d);
    c.iops = r.iops(d);
    if (d == IoDirection::Write && r.durableSeconds > r.seconds) {
      // Durable, as fio's end_fsync=1 counts it: the COMMIT/fsync is part of the write phase.
      c.commitSeconds = r.durableSeconds - r.seconds;
      const double secs = r.durableSeconds;
      c.mibPerSecond = static_cast<double>(x.bytes) / secs / 1048576.0;
      c.mbPerSecond = static_cast<double>(x.bytes) / secs / 1e6;
      c.iops = static_cast<double>(x.ops) / secs;
    }
    c.ops = x.ops;
    c.bytes = x.bytes;
    c.seconds = r.seconds;
    c.latUs = {{"min", static_cast<double>(x.lat.min()) / 1e3},
               {"mean", x.lat.mean() / 1e3},
               {"max", static_cast<double>(x.lat.max()) / 1e3},
               {"stdev", x.lat.stdev() / 1e3}};
    for (double q : kPercentiles) c.latUs.emplace_back(percentileKey(q), x.lat.percentile(q) / 1e3);
    c.blockSize = r.blockSize;
    c.iodepth = r.iodepth;
    c.numjobs = r.numjobs;
    c.clientMode = r.client.mode;
    c.effectiveIodepth = r.effectiveIodepth;
    c.readPercent = p.readPercent;  // the profile as run: --rwmixread applied
    c.workingSetBytes = static_cast<double>(r.options.workingSetBytes());
    c.verified = r.verified;
    c.verifyMismatches = r.verify.mismatches;
    c.crossedOutage = r.outage.any();
    c.outageSeconds = static_cast<double>(r.outage.outageMillis) / 1e3;
    c.errors = r.errors;
    c.firstError = r.firstError;
    if (r.sampled()) {
      c.series = std::make_shared<const counters::CellSeries>(r.series);
      c.facts = r.facts;
      c.bound = r.bound;
    }
    c.cacheDropped = r.serverCache == ServerCache::Dropped;
    c.serverCache = serverCacheName(r.serverCache);
    c.unsupported = r.unsupported;
    c.clients = r.clients;
    out.push_back(std::move(c));
  }
  return out;
}

bool runCompareMatrix(CompareReport& report, const std::vector<TargetSpec>& targets,
                      const std::vector<bool>& usable, const std::vector<FileProfile>& profiles,
                      const FileOptions& options, const ServerCachePlan& plan, bool progress,
                      const CellRunner& run, CreatedFiles* created) {
  bool anyFailure = false;
  const ServerCache planned = plan.prep == CachePrep::Drop   ? ServerCache::Dropped
                              : plan.prep == CachePrep::Warm ? ServerCache::Warm
                                                             : ServerCache::Unmanaged;
  for (const auto& p : profiles) {
    for (std::size_t i = 0; i < targets.size(); ++i) {
      if (!usable[i]) continue;
      const auto& s = targets[i];
      RunSettings rs;
      rs.progress = progress;
      rs.label = s.name + " " + p.name;
      rs.cache = plan.prep;
      rs.created = created;
      // Unmanaged: the matrix leaves the cache alone whatever --drop-server-cache says (the plan
      // said why).
      FileOptions o = options;
      if (plan.prep == CachePrep::FromOptions) o.dropServerCache = false;
      try {
        const RunResult r = run(s, p, o, rs);
        for (auto& c : cellsOf(r, p)) report.cells.push_back(std::move(c));
        if (p.reads() && r.unsupported.empty() && r.serverCache != planned) {
          std::string why = r.notes.empty() ? std::string() : ": " + r.notes.back();
          report.notes.push_back(s.name + " " + p.name + ": the server's cache was " +
                                 serverCacheName(r.serverCache) + ", not " +
                                 serverCacheName(planned) + " as for the other targets" + why);
        }
        if (!r.ok() && r.unsupported.empty()) anyFailure = true;
        if (progress) {
          std::fprintf(stderr, "  %-10s %-14s %s\n", s.name.c_str(), p.name.c_str(),
                       r.ok() ? "done" : ("FAILED: " + r.firstError).c_str());
        }
      } catch (const Interrupted&) {
        throw;  // not a failed cell: the user stopped the whole matrix
      } catch (const std::exception& e) {
        // After Ctrl-C a failed cell is the interrupt's doing: the matrix stops.
        if (const int sig = interruptSignal()) throw Interrupted(sig);
        RunResult failed;
        failed.target = s.name;
        failed.errors = 1;
        failed.firstError = e.what();
        failed.options = options;
        for (auto& c : cellsOf(failed, p)) report.cells.push_back(std::move(c));
        anyFailure = true;
      }
    }
  }
  return anyFailure;
}

}  // namespace nfsrdma::bench
