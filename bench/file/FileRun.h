// One cell of the benchmark: a profile run against a target with numjobs
// jobs, each on its own thread with its own engine (connection, context or
// ring). Lays the file set out first when it is missing (shared by every
// profile and target with the same seed and size), brings the server's page
// cache to a known state before a read phase (dropped, or warmed by reading
// the file set once), runs, COMMITs/fsyncs what was written (timed), and
// with --verify reads everything written back and checks it.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "bench/bound/Bound.h"
#include "bench/file/engines/Engine.h"
#include "bench/job/FileJob.h"
#include "bench/job/FileProfile.h"
#include "bench/job/Interrupt.h"
#include "bench/job/RankHooks.h"
#include "bench/ranks/RankReport.h"
#include "counters/Series.h"

namespace nfsrdma::bench {

// The server's page cache when a read phase began.
enum class ServerCache {
  Unmanaged,  // as the previous runs left it (write-only cells; `file` without --drop-server-cache)
  Dropped,    // dropped (the server is this host): the reads start cold
  Warm,       // the whole file set was read once, untimed: the reads start warm
};
const char* serverCacheName(ServerCache c);  // "unmanaged", "dropped", "warm"

// What to do to the server's page cache before a read phase.
enum class CachePrep {
  FromOptions,  // drop it when options.dropServerCache (the `file` command)
  Drop,         // drop it (the caller checked that the server is this host)
  Warm,         // read the whole file set once, untimed
};

struct RunResult {
  std::string target;
  std::string targetDescription;
  std::string profile;
  std::uint32_t blockSize = 0;
  std::uint32_t iodepth = 0;
  // Requests a job could keep on the wire: iodepth, or fewer when the
  // server granted fewer session slots (the lowest of the jobs).
  std::uint32_t effectiveIodepth = 0;
  std::uint32_t numjobs = 0;
  unsigned readPercent = 100;
  FileOptions options;
  DirectionResult dir[2];    // by IoDirection, all jobs
  double seconds = 0;        // longest job's measured window
  double commitSeconds = 0;  // COMMIT/fsync after the writes, not in the window (longest job's)
  double durableSeconds =
      0;  // writes: longest job's window plus its COMMIT/fsync (fio's end_fsync)
  ServerCache serverCache = ServerCache::Unmanaged;  // before the read phase
  // What is known of that cache, in words: "dropped", "warm", "drop failed:
  // <why>", "unmanaged: the file set was just written through the server
  // and may be in its page cache", "n/a: no reads".
  std::string serverCacheDetail;
  VerifyStats verify;     // inline read checks plus the read-back of writes
  bool verified = false;  // --verify was on
  std::uint64_t errors = 0;
  std::string firstError;
  std::vector<std::string> notes;  // "server caches dropped before the read phase", ...
  OutageAccount outage;            // what the jobs rode through (nothing: no outage)
  ClientUse client;                // nfs: per-job or shared, and every connection's counters
  std::string unsupported;  // non-empty: the engine cannot run this profile, and why (nothing ran)
  RankTimeline timeline;    // with RunSettings::rank only
  // The counters read while the jobs ran, trimmed to their measured
  // window (empty with --sample-interval 0).
  counters::CellSeries series;
  // What bounded it, judged from those counters (sampled cells only).
  CellFacts facts;
  Verdict bound;
  bool sampled() const { return !series.series.empty(); }
  // Rank 0 of a many-client run: every client's breakdown (the figures
  // above are then all clients' together); null otherwise.
  std::shared_ptr<const RanksReport> clients;

  bool ok() const { return errors == 0 && verify.mismatches == 0; }
  double mibPerSecond(IoDirection d) const;
  double mbPerSecond(IoDirection d) const;
  double iops(IoDirection d) const;
  bool has(IoDirection d) const { return dir[static_cast<int>(d)].ops > 0; }
};

// The files the runs of a command laid out (created, or found short and
// completed), so that an interrupted command removes them instead of leaving
// a partial file set. Files that were complete before are never in it.
// Also the shared file sets the command laid out, which it lays out once.
class CreatedFiles {
 public:
  // Each file once per directory (a target's localDir, else its location).
  void add(const TargetSpec& target, const std::vector<std::string>& files);
  // True when every one of files is recorded for the target's directory.
  bool holdsAll(const TargetSpec& target, const std::vector<std::string>& files) const;
  // Best effort: a target with a localDir directly, else through its engine
  // with a short timeout. Returns what could not be removed, or empty.
  std::string removeAll();
  std::size_t count() const;
  // After an interrupt: removes what was recorded and says so on stderr as
  // "nfsrdma-bench <command>: interrupted by SIGINT; removed the N file(s) it
  // laid out" (or what could not be removed). Returns the exit status, 128 + signal.
  int reportInterrupted(const char* command, int signal);
  // True the first time the command asks to lay out a shared file set
  // (--shared-file: same place, names, seed, size and jobs of this
  // process); its later cells use what it laid out (its size cannot tell
  // whether this process's ranges are written, so it is not asked). A
  // caller whose layout then fails or is interrupted calls
  // forgetSharedLayout, so that the next cell lays it out again.
  bool claimSharedLayout(const TargetSpec& target, const FileOptions& options);
  void forgetSharedLayout(const TargetSpec& target, const FileOptions& options);

 private:
  mutable std::mutex mu_;
  std::vector<std::pair<TargetSpec, std::vector<std::string>>> entries_;
  std::set<std::string> sharedLayouts_;  // claimSharedLayout's keys
};

// Runs a command's steps so that an interrupt ends it as one: Interrupted,
// and any error once a signal came (e.g. the embedded server's stop, after
// Ctrl-C), go to created.reportInterrupted; other errors go on to the caller.
int runInterruptible(const char* command, CreatedFiles& created, const std::function<int()>& steps);

struct RunSettings {
  bool progress = false;                     // live line on stderr (callers pass isatty)
  std::string label;                         // progress prefix, e.g. "nfs-tcp 4k-randread"
  CachePrep cache = CachePrep::FromOptions;  // before a read phase
  CreatedFiles* created = nullptr;           // where the layout records what it wrote
  RankHooks* rank = nullptr;                 // a client of a many-client run; null: alone
};

// Before a layout: the bytes still to write into dir for the options (files
// that already hold their full size need nothing).
std::uint64_t bytesToLayOut(const std::string& dir, const FileOptions& o);
// Throws std::invalid_argument when toWrite, plus a margin (1% of the file
// system, at least 64 MiB and at most 4 GiB), exceeds freeBytes of dir:
// "--size 1 TiB x 1 job in 1 file = 1 TiB to lay out exceeds the free space of /dir (70 GiB free)".
void checkFreeSpace(const FileOptions& o, const std::string& dir, std::uint64_t toWrite,
                    std::uint64_t freeBytes, std::uint64_t fileSystemBytes);
// bytesToLayOut and checkFreeSpace for a target with a localDir (statvfs);
// nothing for others (a remote server's space is unknown to the client;
// validateOptions' kMaxWorkingSetBytes still caps the set).
void checkLayoutSpace(const TargetSpec& target, const FileOptions& o);

// The session slots to ask for: at least what iodepth requests of blockSize
// need (a request above the client's max I/O size takes one per piece),
// unless the URL set qd=. Other engines: the target unchanged.
TargetSpec withQueueDepthFor(TargetSpec target, std::uint32_t iodepth, std::uint32_t blockSize);

// A job's engine after an interrupt: closed (with commit, made durable as
// finish() does; else abandoned without COMMIT or fsync, for files about to
// be removed or a job that wrote nothing), then throws Interrupted(signal).
[[noreturn]] void stopInterrupted(Engine& engine, int signal, bool commit);

// Runs the cell. Errors of the target (cannot connect, no RDMA transport)
// throw; I/O errors during the run are counted in the result; an interrupt
// throws Interrupted (the files laid out are in settings.created), also when
// an error ended the run after it (e.g. requests still out when the short
// grace after Ctrl-C ran out).
RunResult runFileBenchmark(const TargetSpec& target, const FileProfile& profile,
                           const FileOptions& options, const RunSettings& settings = {});

// Why the engine cannot run the profile, or empty. libnfs 4.0.0 (Debian 12)
// fails to encode NFSv4 WRITEs of 4 KiB and more (its COMPOUND buffer is
// 4 KiB; fixed upstream in sahlberg/libnfs#319), so its write cells are n/a.
std::string unsupportedReason(const TargetSpec& target, const FileProfile& profile);

// Drops this host's page cache (sync, then vm.drop_caches=1). Returns an
// empty string on success, else why not.
std::string dropLocalPageCache();

}  // namespace nfsrdma::bench
