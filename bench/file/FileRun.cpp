// FileRun: one cell, from its description to its merged result. Its parts
// are files of their own: the file set (FileLayout), the server's cache
// (FileCache), the jobs on their threads (CellJobs) and the progress line.
#include "bench/file/FileRun.h"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <memory>
#include <random>

#include "bench/file/CellBound.h"
#include "bench/file/CellCounters.h"
#include "bench/file/CellJobs.h"
#include "bench/file/DeviceTargets.h"
#include "bench/file/FileCache.h"
#include "bench/file/FileLayout.h"

namespace nfsrdma::bench {

double RunResult::mibPerSecond(IoDirection d) const {
  return seconds > 0 ? static_cast<double>(dir[static_cast<int>(d)].bytes) / seconds / 1048576.0
                     : 0;
}

double RunResult::mbPerSecond(IoDirection d) const {
  return seconds > 0 ? static_cast<double>(dir[static_cast<int>(d)].bytes) / seconds / 1e6 : 0;
}

double RunResult::iops(IoDirection d) const {
  return seconds > 0 ? static_cast<double>(dir[static_cast<int>(d)].ops) / seconds : 0;
}

std::string unsupportedReason(const TargetSpec& target, const FileProfile& profile) {
  if (target.engine == EngineKind::Libnfs && profile.writes()) {
    return "libnfs 4.0.0 cannot encode NFSv4 WRITEs of 4 KiB or more (fixed upstream in "
           "sahlberg/libnfs#319); "
           "libnfs is the read anchor only";
  }
  return {};
}

TargetSpec withQueueDepthFor(TargetSpec target, std::uint32_t iodepth, std::uint32_t blockSize) {
  // A URL's qd= is what it asked for; else a run asks for at least its
  // iodepth, so that slots do not cap the requests in flight.
  if (target.engine != EngineKind::Nfs || target.nfs.givenQueueDepth) return target;
  const std::uint64_t maxIo = std::max<std::uint32_t>(target.nfs.maxIoSize, 1);
  const std::uint64_t pieces = (blockSize + maxIo - 1) / maxIo;
  const std::uint64_t want =
      std::min<std::uint64_t>(std::uint64_t{iodepth} * pieces, 1024);  // qd='s range
  target.nfs.queueDepth =
      std::max<std::uint32_t>(target.nfs.queueDepth, static_cast<std::uint32_t>(want));
  return target;
}

void stopInterrupted(Engine& engine, int signal, bool commit) {
  try {
    // Data about to be removed need not be made durable first (a COMMIT or
    // fsync of a large write phase can take long while the user waits).
    if (commit) {
      engine.finish();
    } else {
      engine.abandon();
    }
  } catch (const std::exception&) {
    // The run is abandoned either way; the interrupt is what the command reports.
  }
  throw Interrupted(signal);
}

namespace {

using filerun::CellJobs;
using filerun::ensureLayout;
using filerun::prepareServerCache;
using filerun::readWholeFileSet;
using filerun::sharesClient;

// What a cell is before it runs: its target, profile and options, and the
// notes that say how its jobs are made.
RunResult describeCell(const TargetSpec& target, const FileProfile& profile,
                       const FileOptions& options, std::uint32_t iodepth) {
  RunResult result;
  result.iodepth = iodepth;
  result.effectiveIodepth = result.iodepth;
  result.target = target.name;
  result.targetDescription = target.describe(sharesClient(target, options));
  result.profile = profile.name;
  result.blockSize = profile.blockSize;
  result.numjobs = options.numjobs;
  result.readPercent = readPercentOf(profile, options);
  result.options = options;
  result.verified = options.verify;
  const std::string jobs = "numjobs " + std::to_string(options.numjobs) + ": one thread per job";
  if (sharesClient(target, options)) {
    result.notes.push_back(jobs + ", all on one client (--client shared: one session, " +
                           std::to_string(target.nfs.nconnect) + " connection(s), " +
                           std::to_string(target.nfs.queueDepth) + " slots asked for)");
  } else {
    const char* each = target.engine == EngineKind::Nfs      ? "its own connection and session"
                       : target.engine == EngineKind::Libnfs ? "its own libnfs context"
                                                             : "its own io_uring";
    result.notes.push_back(jobs + ", each with " + each);
    if (options.sharedClient) {
      result.notes.push_back("--client shared: the " + std::string(engineName(target.engine)) +
                             " engine has no shared client; its jobs ran as --client per-job");
    }
  }
  if (target.isDevice()) {
    result.notes.push_back("dev: the " + std::to_string(options.sharingJobs) + " job(s) work on " +
                           "disjoint ranges of " + target.location + ", " +
                           formatBytes(static_cast<double>(options.sizeBytes)) + " each" +
                           (target.deviceWritable ? "" : "; read-only (nothing is written)"));
  } else if (options.sharedFile) {
    result.notes.push_back("--shared-file: the " + std::to_string(options.sharingJobs) +
                           " jobs of the run work on disjoint ranges of one file set of " +
                           std::to_string(options.nrfiles) + " file(s)");
  }
  if (options.ioBytes > 0 && ioBytesPerJob(options, profile.blockSize) != options.ioBytes) {
    result.notes.push_back(
        "--io-bytes " + formatBytes(static_cast<double>(options.ioBytes)) + " rounded down to " +
        formatBytes(static_cast<double>(ioBytesPerJob(options, profile.blockSize))) +
        " per job: whole " + formatBytes(profile.blockSize) + " blocks");
  }
  return result;
}

// A --verify write run stamps its own generation into what it writes, so
// that its read-back can tell a lost write from the data already there.
std::uint64_t writeGeneration(const FileOptions& options, const FileProfile& profile) {
  std::uint64_t generation = 0;
  if (options.verify && profile.writes()) {
    std::random_device rd;
    while (generation == 0) generation = (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
  }
  return generation;
}

// As fio would show it: the figures are for this depth, not the one asked for.
void noteEffectiveIodepth(RunResult& result, const TargetSpec& target, const FileProfile& profile,
                          const FileOptions& options) {
  if (result.effectiveIodepth >= result.iodepth) return;
  // On a shared client the slots are the session's, divided among the jobs:
  // the URL's qd= or the 1024 cap may be what limits them, not the server.
  const std::string who =
      sharesClient(target, options)
          ? "the shared client's session (" + std::to_string(target.nfs.queueDepth) +
                " slots asked for: qd= or numjobs x the slots a job needs, at most 1024; what the "
                "server granted; RDMA credits) divided among " +
                std::to_string(options.numjobs) + " jobs allows fewer calls in flight"
          : std::string("the server allows fewer calls in flight (session slots, RDMA credits)");
  const std::string note =
      target.name + ": " + who + " than --iodepth " + std::to_string(result.iodepth) +
      " needs: at most " + std::to_string(result.effectiveIodepth) + " requests of " +
      formatBytes(profile.blockSize) + " on the wire per job (effective_iodepth " +
      std::to_string(result.effectiveIodepth) +
      "); the rest wait in the client's queue and their latency includes the wait";
  std::fprintf(stderr, "nfsrdma-bench: note: %s\n", note.c_str());
  result.notes.push_back(note);
}

// The outages the jobs rode through, as a note. Unstable data a restart may
// have lost is an error unless --verify's read-back is to check it.
void noteOutages(RunResult& result, const std::vector<OutageAccount>& jobs, bool readBack) {
  for (const auto& a : jobs) result.outage.merge(a);
  if (result.outage.any()) result.notes.push_back(result.outage.describe());
  const std::string& lost = result.outage.unstableLost;
  if (lost.empty()) return;
  if (readBack) {
    result.notes.push_back(lost + "; the verify read-back checks every block this run wrote");
    return;
  }
  ++result.errors;
  if (result.firstError.empty())
    result.firstError = lost + " (--verify would check what the server kept)";
}

void mergeJobs(RunResult& result, const std::vector<JobResult>& jobs,
               const std::vector<double>& commit) {
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    const JobResult& r = jobs[j];
    for (int d = 0; d < 2; ++d) result.dir[d].merge(r.dir[d]);
    result.seconds = std::max(result.seconds, r.seconds);
    result.commitSeconds = std::max(result.commitSeconds, commit[j]);
    result.durableSeconds = std::max(result.durableSeconds, r.seconds + commit[j]);
    result.verify.merge(r.verify);
    result.errors += r.errors;
    if (result.firstError.empty()) result.firstError = r.firstError;
  }
}

// Read back everything written and check it: a write run's --verify.
void verifyReadBack(RunResult& result, const TargetSpec& target, const FileOptions& options,
                    const FileProfile& profile, std::uint64_t generation,
                    std::vector<JobResult>& jobs) {
  std::vector<std::shared_ptr<const std::vector<bool>>> written;
  std::uint64_t ours = 0, all = 0;
  for (auto& j : jobs) {
    ours += static_cast<std::uint64_t>(
        std::count(j.writtenBlocks.begin(), j.writtenBlocks.end(), true));
    all += j.writtenBlocks.size();
    written.push_back(std::make_shared<const std::vector<bool>>(std::move(j.writtenBlocks)));
  }
  const auto back = readWholeFileSet(target, options, profile.blockSize,
                                     std::min<std::uint32_t>(result.iodepth, 8), "verify read-back",
                                     generation, written);
  for (const auto& v : back) result.verify.merge(v);
  result.notes.push_back(
      "verify: the whole file set read back after the run; the " + std::to_string(ours) + " of " +
      std::to_string(all) +
      " blocks this run wrote must hold its data (a lost write shows as stale); the other "
      "blocks pass with any intact data in their place");
}

// The jobs, with the cell's counters read while they run; the series
// keep the measured window (the jobs' earliest start to latest end).
void runSampled(CellJobs& cell, RunResult& result, const TargetSpec& target,
                const FileOptions& options, std::uint32_t iodepth) {
  if (options.sampleInterval.count() == 0) {
    cell.runAll();
    return;
  }
  counters::Sampler sampler(cellSources(
                                target, [&cell] { return cell.live(); }, iodepth * options.numjobs),
                            options.sampleInterval);
  sampler.start();
  cell.runAll();
  result.series = sampler.stop();
  std::optional<BenchClock::time_point> from, to;
  for (const auto& j : cell.jobs()) {
    if (j.measuredFrom == BenchClock::time_point{}) continue;
    if (!from || j.measuredFrom < *from) from = j.measuredFrom;
    if (!to || j.measuredTo > *to) to = j.measuredTo;
  }
  if (!from) return;
  const auto at = [&](BenchClock::time_point t) {
    return std::chrono::duration<double>(t - sampler.startedAt()).count();
  };
  for (auto& s : result.series.series) counters::trimToWindow(s, at(*from), at(*to));
}

RunResult runCell(const TargetSpec& given, const FileProfile& profile, const FileOptions& options,
                  const RunSettings& settings) {
  validateOptions(options, profile);
  if (const int sig = interruptSignal()) throw Interrupted(sig);
  const std::uint32_t iodepth = options.iodepth ? options.iodepth : profile.defaultIodepth;
  const TargetSpec target = withQueueDepthFor(given, iodepth, profile.blockSize);
  // The measured jobs' target: one client for all of them (--client shared)
  // or, as the layout, warm-up and read-back always, a client per job.
  const TargetSpec jobsTarget =
      sharesClient(target, options) ? withSharedClientFor(target, options.numjobs) : target;
  RunResult result = describeCell(jobsTarget, profile, options, iodepth);
  result.unsupported = unsupportedReason(target, profile);
  if (!result.unsupported.empty()) return result;
  const bool laidOut = ensureLayout(target, options, settings.created);
  prepareServerCache(result, target, profile, options, settings, laidOut);
  if (const int sig = interruptSignal()) throw Interrupted(sig);
  const std::uint64_t generation = writeGeneration(options, profile);
  CellJobs cell(jobsTarget, profile, options, settings, result, generation);
  runSampled(cell, result, jobsTarget, options, iodepth);
  result.effectiveIodepth = cell.effectiveIodepth();
  if (const int sig = interruptSignal()) throw Interrupted(sig);
  noteEffectiveIodepth(result, jobsTarget, profile, options);
  mergeJobs(result, cell.jobs(), cell.commitSeconds());
  noteOutages(result, cell.outages(), options.verify && profile.writes());
  result.client = cell.clientUse();
  cell.finishTimeline(result);
  if (result.sampled()) {
    result.facts = cellFacts(jobsTarget, result);
    result.bound = judgeCell(result.facts, result.series);
  }
  if (options.verify && profile.writes() && result.errors == 0) {
    verifyReadBack(result, target, options, profile, generation, cell.jobs());
  }
  return result;
}

}  // namespace

RunResult runFileBenchmark(const TargetSpec& target, const FileProfile& profile,
                           const FileOptions& options, const RunSettings& settings) {
  try {
    return runCell(target, profile, target.isDevice() ? optionsOnDevice(target, options) : options,
                   settings);
  } catch (const Interrupted&) {
    throw;
  } catch (const std::exception&) {
    // After Ctrl-C an error is its consequence (the straggler grace ran
    // out, the connection was closed under a request): the command must
    // clean up and exit 130/143, not report a failed run.
    if (const int sig = interruptSignal()) throw Interrupted(sig);
    throw;
  }
}

}  // namespace nfsrdma::bench
