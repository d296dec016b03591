// One cell of the benchmark: a profile run against a target with numjobs
// jobs, each on its own thread with its own engine (connection, context or
// ring). Lays the file set out first when it is missing (shared by every
// profile and target with the same seed and size), brings the server's page
// cache to a known state before a read phase (dropped, or warmed by reading
// the file set once), runs, COMMITs/fsyncs what was written (timed), and
// with --verify reads everything written back and checks it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bench/Engine.h"
#include "bench/FileJob.h"
#include "bench/FileProfile.h"

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
  std::uint32_t numjobs = 0;
  unsigned readPercent = 100;
  FileOptions options;
  DirectionResult dir[2];       // by IoDirection, all jobs
  double seconds = 0;           // longest job's measured window
  double commitSeconds = 0;     // COMMIT/fsync after the writes, not in the window (longest job's)
  double durableSeconds = 0;    // writes: longest job's window plus its COMMIT/fsync (fio's end_fsync)
  ServerCache serverCache = ServerCache::Unmanaged;  // before the read phase
  VerifyStats verify;           // inline read checks plus the read-back of writes
  bool verified = false;        // --verify was on
  std::uint64_t errors = 0;
  std::string firstError;
  std::vector<std::string> notes;  // "server caches dropped before the read phase", ...
  std::string unsupported;         // non-empty: the engine cannot run this profile, and why (nothing ran)

  bool ok() const { return errors == 0 && verify.mismatches == 0; }
  double mibPerSecond(IoDirection d) const;
  double mbPerSecond(IoDirection d) const;
  double iops(IoDirection d) const;
  bool has(IoDirection d) const { return dir[static_cast<int>(d)].ops > 0; }
};

struct RunSettings {
  bool progress = false;  // live line on stderr (callers pass isatty)
  std::string label;      // progress prefix, e.g. "nfs-tcp 4k-randread"
  CachePrep cache = CachePrep::FromOptions;  // before a read phase
};

// Runs the cell. Errors of the target (cannot connect, no RDMA transport)
// throw; I/O errors during the run are counted in the result.
RunResult runFileBenchmark(const TargetSpec& target, const FileProfile& profile, const FileOptions& options,
                           const RunSettings& settings = {});

// Why the engine cannot run the profile, or empty. libnfs 4.0.0 (Debian 12)
// fails to encode NFSv4 WRITEs of 4 KiB and more (its COMPOUND buffer is
// 4 KiB; fixed upstream in sahlberg/libnfs#319), so its write cells are n/a.
std::string unsupportedReason(const TargetSpec& target, const FileProfile& profile);

// Drops this host's page cache (sync, then vm.drop_caches=1). Returns an
// empty string on success, else why not.
std::string dropLocalPageCache();

}  // namespace nfsrdma::bench
