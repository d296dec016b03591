#include "bench/file/FileRun.h"

#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <thread>

#include "bench/file/DeviceTargets.h"

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

const char* serverCacheName(ServerCache c) {
  switch (c) {
    case ServerCache::Unmanaged:
      return "unmanaged";
    case ServerCache::Dropped:
      return "dropped";
    case ServerCache::Warm:
      return "warm";
  }
  return "?";
}

std::string dropLocalPageCache() {
  ::sync();
  std::ofstream f("/proc/sys/vm/drop_caches");
  if (!f) return "cannot open /proc/sys/vm/drop_caches (needs root)";
  f << "1\n";
  f.flush();
  if (!f) return "writing /proc/sys/vm/drop_caches failed";
  return {};
}

std::string unsupportedReason(const TargetSpec& target, const FileProfile& profile) {
  if (target.engine == EngineKind::Libnfs && profile.writes()) {
    return "libnfs 4.0.0 cannot encode NFSv4 WRITEs of 4 KiB or more (fixed upstream in "
           "sahlberg/libnfs#319); "
           "libnfs is the read anchor only";
  }
  return {};
}

namespace {

// Targets that name one directory: the embedded server's local, nfs and
// libnfs targets share its export directory.
std::string placeOf(const TargetSpec& t) {
  return t.localDir.empty() ? t.location : t.localDir;
}

}  // namespace

void CreatedFiles::add(const TargetSpec& target, const std::vector<std::string>& files) {
  std::lock_guard lock(mu_);
  for (const auto& f : files) {
    // Once each: the count in the interrupt line is of files, not of layouts.
    const bool known = std::any_of(entries_.begin(), entries_.end(), [&](const auto& e) {
      return placeOf(e.first) == placeOf(target) &&
             std::find(e.second.begin(), e.second.end(), f) != e.second.end();
    });
    if (known) continue;
    if (entries_.empty() || placeOf(entries_.back().first) != placeOf(target)) {
      entries_.emplace_back(target, std::vector<std::string>{});
    }
    entries_.back().second.push_back(f);
  }
}

bool CreatedFiles::holdsAll(const TargetSpec& target, const std::vector<std::string>& files) const {
  std::lock_guard lock(mu_);
  return std::all_of(files.begin(), files.end(), [&](const std::string& f) {
    return std::any_of(entries_.begin(), entries_.end(), [&](const auto& e) {
      return placeOf(e.first) == placeOf(target) &&
             std::find(e.second.begin(), e.second.end(), f) != e.second.end();
    });
  });
}

std::size_t CreatedFiles::count() const {
  std::lock_guard lock(mu_);
  std::size_t n = 0;
  for (const auto& e : entries_) n += e.second.size();
  return n;
}

int CreatedFiles::reportInterrupted(const char* command, int signal) {
  const std::size_t n = count();
  const std::string left = removeAll();
  std::string what;
  if (!left.empty()) {
    what = "; could not remove what it laid out: " + left;
  } else if (n > 0) {
    what = "; removed the " + std::to_string(n) + " file(s) it laid out";
  }
  std::fprintf(stderr, "nfsrdma-bench %s: interrupted by %s%s\n", command,
               signalName(signal).c_str(), what.c_str());
  return 128 + signal;
}

int runInterruptible(const char* command, CreatedFiles& created, const std::function<int()>& steps) {
  try {
    return steps();
  } catch (const Interrupted& e) {
    return created.reportInterrupted(command, e.signal());
  } catch (const std::exception&) {
    if (const int sig = interruptSignal()) return created.reportInterrupted(command, sig);
    throw;
  }
}

std::string CreatedFiles::removeAll() {
  std::lock_guard lock(mu_);
  std::string failed;
  for (const auto& [given, files] : entries_) {
    try {
      if (!given.localDir.empty()) {
        for (const auto& f : files) {
          std::error_code ec;
          std::filesystem::remove(std::filesystem::path(given.localDir) / f, ec);
          if (ec)
            throw std::runtime_error("remove " + given.localDir + "/" + f + ": " + ec.message());
        }
        continue;
      }
      TargetSpec t = given;
      if (t.engine == EngineKind::Libnfs) t.engine = EngineKind::Nfs;  // as the layout wrote them
      // The user is waiting: a server that does not answer is given up on soon.
      t.nfs.timeout = std::chrono::seconds(5);
      t.nfs.busyTimeout = std::chrono::milliseconds(0);
      makeEngine(t)->remove(files);
    } catch (const std::exception& e) {
      if (failed.empty()) failed = e.what();
    }
  }
  entries_.clear();
  sharedLayouts_.clear();  // what they laid out is gone
  return failed;
}

std::uint64_t bytesToLayOut(const std::string& dir, const FileOptions& o) {
  const std::uint64_t bytes = fileBytes(o, kVerifyUnit);
  std::uint64_t need = 0;
  for (std::uint32_t j = 0; j < o.numjobs; ++j) {
    for (std::uint32_t f = 0; f < o.nrfiles; ++f) {
      struct stat st {};
      const std::string p = (std::filesystem::path(dir) / benchFileName(o, j, f)).string();
      const std::uint64_t have =
          !o.sharedFile && ::stat(p.c_str(), &st) == 0
              ? std::min<std::uint64_t>(static_cast<std::uint64_t>(st.st_size), bytes)
              : 0;
      need += bytes - have;
    }
  }
  return need;
}

void checkFreeSpace(const FileOptions& o, const std::string& dir, std::uint64_t toWrite,
                    std::uint64_t freeBytes, std::uint64_t fileSystemBytes) {
  // A full disk fails the other users of it too, not only this run. 1% of
  // the file system, capped at 4 GiB: 1% of a 1 PiB file system (10 TiB)
  // would refuse a small layout on a disk with terabytes free.
  // toWrite comes from the files' sizes: a sparse file at full size counts
  // as written, although its holes will take space when written.
  const std::uint64_t margin = std::max<std::uint64_t>(
      64ULL << 20, std::min<std::uint64_t>(fileSystemBytes / 100, 4ULL << 30));
  if (toWrite == 0 || (toWrite <= freeBytes && freeBytes - toWrite >= margin)) return;
  const auto fb = [](std::uint64_t b) { return formatBytes(static_cast<double>(b)); };
  throw std::invalid_argument("--size " + fb(o.sizeBytes) + " x " + std::to_string(o.numjobs) +
                              (o.numjobs == 1 ? " job" : " jobs") + " in " +
                              std::to_string(o.nrfiles) + (o.nrfiles == 1 ? " file" : " files") +
                              " each = " + fb(o.workingSetBytes()) + " file set (" + fb(toWrite) +
                              " still to write) exceeds the free space of " + dir + " (" +
                              fb(freeBytes) + " free, " + fb(margin) + " kept spare)");
}

void checkLayoutSpace(const TargetSpec& target, const FileOptions& o) {
  if (target.localDir.empty()) return;
  struct statvfs st {};
  // Unknown free space: the layout's own error names the problem if there is one.
  if (::statvfs(target.localDir.c_str(), &st) != 0) return;
  checkFreeSpace(o, target.localDir, bytesToLayOut(target.localDir, o),
                 static_cast<std::uint64_t>(st.f_bavail) * st.f_frsize,
                 static_cast<std::uint64_t>(st.f_blocks) * st.f_frsize);
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

std::vector<std::string> jobFiles(const FileOptions& o, std::uint32_t job) {
  std::vector<std::string> files;
  for (std::uint32_t f = 0; f < o.nrfiles; ++f) files.push_back(benchFileName(o, job, f));
  return files;
}

// Runs body(job) on numjobs threads; the first exception is rethrown.
template <typename Body>
void onJobThreads(std::uint32_t numjobs, Body body) {
  std::vector<std::thread> threads;
  std::mutex mu;
  std::exception_ptr first;
  for (std::uint32_t j = 0; j < numjobs; ++j) {
    threads.emplace_back([&, j] {
      try {
        body(j);
      } catch (...) {
        std::lock_guard lock(mu);
        if (!first) first = std::current_exception();
      }
    });
  }
  for (auto& t : threads) t.join();
  if (first) std::rethrow_exception(first);
}

// Job j's spec over its own files: what every job of a run shares but its number.
JobSpec jobSpecFor(const FileProfile& profile, const FileOptions& o, std::uint32_t j,
                   std::uint32_t iodepth, std::uint64_t fileBytes) {
  JobSpec spec;
  spec.profile = profile;
  spec.options = o;
  spec.job = o.jobBase + j;
  spec.iodepth = iodepth;
  spec.files = jobFiles(o, j);
  spec.fileBytes = fileBytes;
  spec.fileOffset = sharedRangeOffset(o, j);
  // Shared files are one set: the pattern's file ids are its, and the
  // ranges keep the jobs' offsets apart.
  spec.fileIdBase = o.sharedFile ? 0 : (o.jobBase + j) * o.nrfiles;
  return spec;
}

// The bytes of a shared file once every job of every client laid its range
// out: up to the end of the last range.
std::uint64_t sharedFileBytes(const FileOptions& o) {
  const std::uint64_t per = o.sizeBytes / (o.nrfiles ? o.nrfiles : 1);
  return std::uint64_t{std::max(o.sharingJobs, 1U) - 1} * per + fileBytes(o, kVerifyUnit);
}

std::string sharedLayoutKey(const TargetSpec& t, const FileOptions& o) {
  return placeOf(t) + "\n" + benchFileName(o, 0, 0) + " n" + std::to_string(o.nrfiles) + " j" +
         std::to_string(o.jobBase) + "+" + std::to_string(o.numjobs);
}

}  // namespace

bool CreatedFiles::claimSharedLayout(const TargetSpec& target, const FileOptions& options) {
  std::lock_guard lock(mu_);
  return sharedLayouts_.insert(sharedLayoutKey(target, options)).second;
}

void CreatedFiles::forgetSharedLayout(const TargetSpec& target, const FileOptions& options) {
  std::lock_guard lock(mu_);
  sharedLayouts_.erase(sharedLayoutKey(target, options));
}

namespace {

// Creates each job's files with the verify pattern unless they already hold
// the full size (names carry seed and size, so an existing full file is ours).
// Records in created the files it writes, and only those: a file that was
// complete before is neither rewritten nor removed after an interrupt (a
// shared one is rewritten, once per command, with the same data).
// True when it wrote any.
bool layOutFileSet(const TargetSpec& given, const FileOptions& o, CreatedFiles* created) {
  const std::uint64_t bytes = fileBytes(o, kVerifyUnit);
  // libnfs cannot write (see unsupportedReason): our client lays its files out on the same server.
  TargetSpec target = given;
  if (target.engine == EngineKind::Libnfs) target.engine = EngineKind::Nfs;
  checkLayoutSpace(target, o);
  std::atomic<bool> wrote{false};
  onJobThreads(o.numjobs, [&](std::uint32_t j) {
    // Declared before the engine, so that it outlives it: the engine's
    // requests (an io_uring's, the client's registrations) use its buffers.
    std::unique_ptr<JobDriver> d;
    auto engine = makeEngine(target);
    const auto files = jobFiles(o, j);
    std::vector<std::uint32_t> toLayOut;
    for (std::uint32_t f = 0; f < files.size(); ++f) {
      if (const int sig = interruptSignal()) throw Interrupted(sig);
      // One at a time: a file created here is recorded before the next
      // open can fail or be interrupted. As bytesToLayOut: a file at full
      // size (or more) is complete.
      // A shared file's size says nothing of this job's range (another
      // job may have written past it): the range is laid out (once per
      // command, ensureLayout), and the file is this run's to remove only when
      // it was short of the whole set (else an earlier run completed it).
      const std::uint64_t had = engine->open({files[f]}, true).at(0);
      if (had >= bytes && !o.sharedFile) continue;
      toLayOut.push_back(f);
      // Before writing: an interrupt in the middle must find it.
      if (created != nullptr && (!o.sharedFile || had < sharedFileBytes(o)))
        created->add(target, {files[f]});
    }
    if (!toLayOut.empty()) {
      wrote = true;
      JobSpec spec = jobSpecFor(profileByName("128k-write"), o, j, 4, bytes);
      spec.layout = true;
      spec.layoutFiles = toLayOut;
      d = std::make_unique<JobDriver>(spec, nullptr);
      engine->run(*d);
      // Everything it wrote is in created, and goes (unless there is no created to record it in).
      if (const int sig = interruptSignal()) stopInterrupted(*engine, sig, created == nullptr);
      const JobResult r = d->result();
      if (r.errors)
        throw std::runtime_error("laying out " + files[toLayOut.front()] + ": " + r.firstError);
    }
    engine->finish();
  });
  return wrote;
}

// The file set laid out as layOutFileSet does; on a device only when the run
// may write it, and once per run (claimDeviceLayout). What the layout wrote
// on a device stays: there is nothing to remove after an interrupt. A
// shared file set is laid out once per command too (claimSharedLayout): its
// size cannot say whether this process's ranges are written.
bool ensureLayout(const TargetSpec& given, const FileOptions& o, CreatedFiles* created) {
  if (!given.isDevice() && o.sharedFile && created != nullptr) {
    if (!created->claimSharedLayout(given, o)) return false;
    try {
      return layOutFileSet(given, o, created);
    } catch (...) {
      created->forgetSharedLayout(given, o);
      throw;
    }
  }
  if (!given.isDevice()) return layOutFileSet(given, o, created);
  if (!given.deviceWritable || !claimDeviceLayout(given, o)) return false;
  try {
    return layOutFileSet(given, o, nullptr);
  } catch (...) {
    forgetDeviceLayout(given, o);
    throw;
  }
}

// Reads each job's whole files once, sequentially, on numjobs threads: the
// verify read-back of a write run (verify on) and the cache warm-up (off).
std::vector<VerifyStats> readWholeFileSet(
    const TargetSpec& target, const FileOptions& o, std::uint32_t blockSize, std::uint32_t iodepth,
    const std::string& what, std::uint64_t generation = 0,
    const std::vector<std::shared_ptr<const std::vector<bool>>>& written = {}) {
  const std::uint64_t bytes = fileBytes(o, blockSize);
  std::vector<VerifyStats> stats(o.numjobs);
  onJobThreads(o.numjobs, [&](std::uint32_t j) {
    JobSpec spec = jobSpecFor(profileByName("128k-read"), o, j, iodepth, bytes);
    spec.profile.blockSize = blockSize;
    spec.options.ramp = std::chrono::milliseconds(0);
    spec.options.ioBytes = bytes * o.nrfiles;
    spec.options.rwmixread.reset();
    spec.generation = generation;
    if (j < written.size()) spec.writtenBlocks = written[j];
    // Before the engine: it must outlive it (see ensureLayout).
    JobDriver d(spec, nullptr);
    auto engine = makeEngine(target);
    engine->open(spec.files, false);
    engine->run(d);
    // Closed as after any read (these files are kept): an NFS engine's
    // abandon() sends no CLOSE, which would leave the opens on the server
    // for a lease. A reading engine has nothing to COMMIT.
    if (const int sig = interruptSignal()) stopInterrupted(*engine, sig, true);
    const JobResult r = d.result();
    if (r.errors) throw std::runtime_error(what + ": " + r.firstError);
    stats[j] = r.verify;
    engine->finish();
  });
  return stats;
}

// Drops the page cache of the target's server when it is this host; notes
// what happened, and in detail what the cache now is ("drop failed: ..." unless dropped).
ServerCache dropServerCache(const TargetSpec& target, std::vector<std::string>& notes,
                            std::string& detail) {
  if (target.engine == EngineKind::Path && target.onNfs) {
    // The server of an NFS mount is elsewhere: only this host's cache (the NFS client's) can go.
    const auto why = dropLocalPageCache();
    notes.push_back(
        why.empty() ? "--drop-server-cache: " + target.location +
                          " is on NFS: dropped this host's page cache (the NFS client's), not the "
                          "server's (drop it on the server)"
                    : "--drop-server-cache: " + target.location + " is on NFS; " + why);
    detail =
        "drop failed: " + target.location + " is on NFS and its server is not this host" +
        (why.empty() ? " (this host's page cache, the NFS client's, was dropped)" : "; " + why);
    return ServerCache::Unmanaged;
  }
  if (!target.serverIsLocal()) {
    notes.push_back("--drop-server-cache: server " + target.nfs.host +
                    " is not on this host; caches not dropped (run the bench on the server or drop "
                    "them there)");
    detail = "drop failed: server " + target.nfs.host + " is not on this host";
    return ServerCache::Unmanaged;
  }
  if (auto why = dropLocalPageCache(); !why.empty()) {
    notes.push_back("--drop-server-cache: " + why);
    detail = "drop failed: " + why;
    return ServerCache::Unmanaged;
  }
  notes.push_back("server page cache dropped before the read phase");
  detail = "dropped";
  return ServerCache::Dropped;
}

// Reads the whole file set once, untimed, so the read phase starts with it in
// the server's page cache. A path target not on NFS is read buffered (its
// page cache is the server's when it is the export's disk); an NFS mount
// with O_DIRECT, so the NFS client's cache stays as it was.
ServerCache warmServerCache(const TargetSpec& given, const FileOptions& o,
                            std::vector<std::string>& notes) {
  TargetSpec target = given;
  if (target.engine == EngineKind::Path) target.direct = target.onNfs;
  FileOptions w = o;
  w.verify = false;
  constexpr std::uint32_t kWarmBlock = 128 * 1024;
  const std::uint32_t block = fileBytes(o, kWarmBlock) > 0 ? kWarmBlock : kVerifyUnit;
  readWholeFileSet(target, w, block, 8, "warming the server's cache");
  notes.push_back("server page cache warmed before the read phase: the file set (" +
                  formatBytes(static_cast<double>(o.workingSetBytes())) + ") read once, untimed");
  return ServerCache::Warm;
}

class ProgressLine {
 public:
  ProgressLine(const RunSettings& s, const JobProgress& p, double totalSeconds)
      : label_(s.label), p_(p), total_(totalSeconds) {
    if (s.progress) thread_ = std::thread([this] { loop(); });
  }
  ~ProgressLine() {
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

 private:
  void loop() {
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

  std::string label_;
  const JobProgress& p_;
  double total_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

}  // namespace

namespace {

// --client shared on our client: the cell's jobs issue on one client.
bool sharesClient(const TargetSpec& target, const FileOptions& o) {
  return o.sharedClient && target.engine == EngineKind::Nfs;
}

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

// Before a read phase: the server cache as the settings ask (dropped,
// warmed), or a note saying what state the run finds it in.
void prepareServerCache(RunResult& result, const TargetSpec& target, const FileProfile& profile,
                        const FileOptions& options, const RunSettings& settings, bool laidOut) {
  if (!profile.reads()) {
    result.serverCacheDetail = "n/a: no reads";
    return;
  }
  const bool drop = settings.cache == CachePrep::Drop ||
                    (settings.cache == CachePrep::FromOptions && options.dropServerCache);
  if (drop) {
    result.serverCache = dropServerCache(target, result.notes, result.serverCacheDetail);
  } else if (settings.cache == CachePrep::Warm) {
    result.serverCache = warmServerCache(target, options, result.notes);
    result.serverCacheDetail = serverCacheName(result.serverCache);
  } else {
    // Not a neutral state: the layout has just put (part of) the set where reads will find it.
    const std::string where = target.overNfs() ? "through the server and may be in its page cache"
                                               : "and may be in this host's page cache";
    result.serverCacheDetail =
        laidOut ? "unmanaged: the file set was just written " + where
                : "unmanaged: as earlier runs left it; the file set may be in the " +
                      std::string(target.overNfs() ? "server's" : "host's") + " page cache";
    result.notes.push_back("server cache " + result.serverCacheDetail +
                           " (--drop-server-cache drops it when the server is this host)");
  }
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

// The jobs of one cell, each on its own thread: set up, wait at the gate so
// every clock starts together, run, make durable, close.
class CellJobs {
 public:
  CellJobs(const TargetSpec& target, const FileProfile& profile, const FileOptions& options,
           const RunSettings& settings, const RunResult& result, std::uint64_t generation)
      : target_(target),
        profile_(profile),
        options_(options),
        settings_(settings),
        iodepth_(result.iodepth),
        readPercent_(result.readPercent),
        generation_(generation),
        bytes_(fileBytes(options, profile.blockSize)),
        effectiveIodepth_(result.iodepth),
        jobs_(options.numjobs),
        commit_(options.numjobs, 0),
        outages_(options.numjobs),
        connections_(options.numjobs),
        drivers_(options.numjobs) {}

  void runAll() {
    const double total = std::chrono::duration<double>(options_.ramp + options_.runtime).count();
    ProgressLine line(settings_, progress_, options_.ioBytes ? 0 : total);
    if (settings_.rank == nullptr) {
      onJobThreads(options_.numjobs, [&](std::uint32_t j) { runJob(j); });
      return;
    }
    // The jobs on their threads, this thread the client's part in the run:
    // every RankHooks call stays on the caller's thread (MPI's FUNNELED).
    std::exception_ptr jobsError;
    std::thread jobs([&] {
      try {
        onJobThreads(options_.numjobs, [&](std::uint32_t j) { runJob(j); });
      } catch (...) {
        jobsError = std::current_exception();
      }
    });
    bool started = false;
    try {
      started = coordinate(*settings_.rank);
    } catch (...) {
      // The hooks failed (MPI): the jobs end before the error goes on.
      gate_.fail();
      stopDrivers();
      jobs.join();
      throw;
    }
    jobs.join();
    if (jobsError) std::rethrow_exception(jobsError);
    if (!started) throw std::runtime_error(settings_.rank->abandonReason());
  }

  // Fills the result's timeline from the jobs' windows and the samples.
  void finishTimeline(RunResult& result) const {
    if (settings_.rank == nullptr) return;
    RankTimeline& t = result.timeline;
    bool any = false;
    BenchClock::time_point from{}, to{};
    for (const auto& j : jobs_) {
      // A job whose engine failed before its clock started has no window.
      if (j.measuredFrom == BenchClock::time_point{}) continue;
      if (!any || j.measuredFrom < from) from = j.measuredFrom;
      if (!any || j.measuredTo > to) to = j.measuredTo;
      any = true;
    }
    if (!any) from = to = BenchClock::now();
    t.startNs = settings_.rank->clockNs(from);
    // A window of at least 1 ns: a client that measured nothing still has one.
    t.endNs = std::max(t.startNs + 1, settings_.rank->clockNs(to));
    for (const auto& p : samples_) {
      if (p.atNs > t.startNs && p.atNs < t.endNs) t.points.push_back(p);
    }
    const auto& d = result.dir;
    t.points.push_back({t.endNs, d[0].bytes + d[1].bytes, d[0].ops + d[1].ops});
  }

  std::uint32_t effectiveIodepth() const { return effectiveIodepth_; }
  std::vector<JobResult>& jobs() { return jobs_; }
  const std::vector<double>& commitSeconds() const { return commit_; }
  // The jobs' outages; a shared client's once, closed first (every job is done).
  std::vector<OutageAccount> outages() {
    std::vector<OutageAccount> all = outages_;
    if (share_) {
      all.push_back(share_->outages());
      shareConnections_ = share_->connections();
      share_->close();
    }
    return all;
  }
  // How the jobs reached the server (after outages()); nfs targets only.
  ClientUse clientUse() const {
    ClientUse u;
    if (target_.engine != EngineKind::Nfs) return u;
    u.mode = shared_ ? "shared" : "per-job";
    if (shared_) {
      u.sessions = 1;
      u.perConnection = shareConnections_;
    } else {
      // The jobs that got as far as a client (a failed set-up has none).
      for (const auto& c : connections_) {
        u.sessions += c.empty() ? 0U : 1U;
        u.perConnection.insert(u.perConnection.end(), c.begin(), c.end());
      }
    }
    u.connections = static_cast<std::uint32_t>(u.perConnection.size());
    return u;
  }

 private:
  // The driver lives in drivers_, so that it outlives the engine (whose
  // requests, an io_uring's or the client's registrations, use its buffers)
  // and a stop request cannot meet a driver that is gone.
  struct Job {
    JobDriver* driver = nullptr;
    std::unique_ptr<Engine> engine;
  };

  JobSpec specOf(std::uint32_t j) const {
    JobSpec spec = jobSpecFor(profile_, options_, j, iodepth_, bytes_);
    spec.generation = generation_;
    return spec;
  }

  // The cell's shared client, connected by the first job to need it (its
  // error is every job's: they all fail their set-up alike).
  std::shared_ptr<EngineShare> share() {
    std::lock_guard lock(shareMu_);
    if (!share_ && shareError_.empty()) {
      try {
        share_ = makeEngineShare(target_, options_.numjobs);
      } catch (const std::exception& e) {
        shareError_ = e.what();
      }
    }
    if (!share_) throw std::runtime_error(shareError_);
    return share_;
  }

  void setUp(Job& job, std::uint32_t j) {
    job.engine = shared_ ? makeEngine(target_, share()) : makeEngine(target_);
    // A connect can take long (a server that does not answer): an
    // interrupt meanwhile opens nothing more.
    if (const int sig = interruptSignal()) throw Interrupted(sig);
    const JobSpec spec = specOf(j);
    job.engine->open(spec.files, false);
    {
      std::lock_guard lock(driversMu_);
      drivers_[j] = std::make_unique<JobDriver>(spec, &progress_);
      job.driver = drivers_[j].get();
    }
    const std::uint32_t e = job.engine->effectiveIodepth(iodepth_, profile_.blockSize, readPercent_);
    std::lock_guard lock(effectiveMu_);
    effectiveIodepth_ = std::min(effectiveIodepth_, e);
  }

  void runJob(std::uint32_t j) {
    const JobEnd end(*this);
    Job job;
    try {
      setUp(job, j);
    } catch (const std::exception& e) {
      failSetUp(e.what());
      throw;
    }
    // Every clock starts together: one job's window must not start while
    // others still connect.
    if (!gate_.arriveAndWait()) return;
    try {
      job.engine->run(*job.driver);
    } catch (const std::exception& e) {
      recordConnections(*job.engine, j);
      jobs_[j] = job.driver->result();
      ++jobs_[j].errors;
      if (jobs_[j].firstError.empty()) jobs_[j].firstError = e.what();
      return;
    }
    jobs_[j] = job.driver->result();
    end.issuingDone();
    finishJob(*job.engine, j);
  }

  void failSetUp(const std::string& why) {
    {
      std::lock_guard lock(runMu_);
      if (setUpError_.empty()) setUpError_ = why;
    }
    gate_.fail();
  }

  // Counts a job out: issuingDone() once it stops issuing, the rest when
  // its thread is done with the cell. The coordinator waits on both.
  class JobEnd {
   public:
    explicit JobEnd(CellJobs& c) : c_(c) {}
    ~JobEnd() {
      issuingDone();
      std::lock_guard lock(c_.runMu_);
      ++c_.finished_;
      c_.runCv_.notify_all();
    }
    void issuingDone() const {
      if (counted_) return;
      counted_ = true;
      std::lock_guard lock(c_.runMu_);
      ++c_.issuingDone_;
      c_.runCv_.notify_all();
    }

   private:
    CellJobs& c_;
    mutable bool counted_ = false;
  };

  // This client's part: start with the others, sample the progress, stop
  // when the hooks say so. False: the cell was abandoned.
  bool coordinate(RankHooks& hooks) {
    std::string failure;
    try {
      if (!gate_.awaitJobs()) failure = setUpFailure();
    } catch (const std::exception& e) {
      failure = e.what();
    }
    if (!hooks.startTogether(failure)) {
      gate_.fail();
      hooks.ended();
      return false;
    }
    gate_.open();
    watchRun(hooks);
    hooks.ended();
    return true;
  }

  std::string setUpFailure() {
    std::lock_guard lock(runMu_);
    if (!setUpError_.empty()) return setUpError_;
    return interruptSignal() != 0 ? "interrupted" : "a job's set-up failed";
  }

  // Until every job is done: a progress sample every kSampleInterval, and
  // the hooks asked every pollInterval whether to stop. Bounded by the
  // jobs' own bounds (runtime or io bytes, then their hard stop).
  void watchRun(RankHooks& hooks) {
    constexpr auto kSampleInterval = std::chrono::milliseconds(100);
    const auto poll = std::min<std::chrono::milliseconds>(hooks.pollInterval(), kSampleInterval);
    auto nextSample = BenchClock::now() + kSampleInterval;
    bool stopped = false;
    std::unique_lock lock(runMu_);
    while (finished_ < options_.numjobs) {
      runCv_.wait_for(lock, poll);
      const auto now = BenchClock::now();
      if (now >= nextSample) {
        sample(hooks, now);
        nextSample += kSampleInterval;
      }
      const bool done = issuingDone_ >= options_.numjobs;
      lock.unlock();
      if (hooks.stopNow(done) && !stopped) {
        stopped = true;
        stopDrivers();
      }
      lock.lock();
    }
  }

  void sample(const RankHooks& hooks, BenchClock::time_point now) {
    RankTimeline::Point p;
    p.atNs = hooks.clockNs(now);
    for (int d = 0; d < 2; ++d) {
      p.bytes += progress_.bytes[d].load(std::memory_order_relaxed);
      p.ops += progress_.ops[d].load(std::memory_order_relaxed);
    }
    samples_.push_back(p);
  }

  void stopDrivers() {
    std::lock_guard lock(driversMu_);
    for (auto& d : drivers_) {
      if (d) d->requestStop();
    }
  }

  // The job's own client's connections, while it is open.
  void recordConnections(const Engine& engine, std::uint32_t j) {
    connections_[j] = engine.connections();
    for (auto& c : connections_[j]) c.job = j;
  }

  void finishJob(Engine& engine, std::uint32_t j) {
    if (const int sig = interruptSignal()) {
      // Files this command laid out are removed next: what was written
      // into them need not be made durable first.
      const bool removed = settings_.created != nullptr &&
                           settings_.created->holdsAll(target_, jobFiles(options_, j));
      stopInterrupted(engine, sig, !removed);
    }
    if (profile_.writes()) {
      // The end of the write phase: until the data is durable (UNSTABLE writes need their
      // COMMIT).
      const auto c0 = BenchClock::now();
      engine.commit();
      commit_[j] = std::chrono::duration<double>(BenchClock::now() - c0).count();
    }
    recordConnections(engine, j);
    engine.finish();
    outages_[j] = engine.outages();
  }

  const TargetSpec& target_;
  const FileProfile& profile_;
  const FileOptions& options_;
  const RunSettings& settings_;
  const std::uint32_t iodepth_;
  const unsigned readPercent_;
  const std::uint64_t generation_;
  const std::uint64_t bytes_;
  JobProgress progress_;
  // Long enough for connects (30 s) and OPENs held by a grace period (the client retries them 120
  // s).
  StartGate gate_{options_.numjobs, std::chrono::seconds(180), settings_.rank != nullptr};
  std::mutex effectiveMu_;
  std::uint32_t effectiveIodepth_;  // under effectiveMu_ while the jobs set up
  std::vector<JobResult> jobs_;
  std::vector<double> commit_;
  std::vector<OutageAccount> outages_;
  std::vector<std::vector<ConnectionUse>> connections_;  // by job: its own client's
  // With RankHooks: the jobs' progress as the coordinator sees it.
  std::mutex runMu_;
  std::condition_variable runCv_;
  std::uint32_t issuingDone_ = 0;  // under runMu_
  std::uint32_t finished_ = 0;     // under runMu_
  std::string setUpError_;         // under runMu_: the first job's set-up error
  std::vector<RankTimeline::Point> samples_;  // the coordinator's only
  std::mutex driversMu_;
  std::vector<std::unique_ptr<JobDriver>> drivers_;  // by job; under driversMu_
  // --client shared: the one client every job issues on. After drivers_,
  // so that it goes first: closing it ends its requests before the jobs'
  // buffers go (an error or interrupt path that never reached outages()).
  const bool shared_ = sharesClient(target_, options_);
  std::mutex shareMu_;
  std::shared_ptr<EngineShare> share_;  // under shareMu_ until the jobs are set up
  std::string shareError_;              // under shareMu_
  std::vector<ConnectionUse> shareConnections_;
};

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
      target.name + ": " + who + " than --iodepth " +
      std::to_string(result.iodepth) + " needs: at most " +
      std::to_string(result.effectiveIodepth) + " requests of " + formatBytes(profile.blockSize) +
      " on the wire per job (effective_iodepth " + std::to_string(result.effectiveIodepth) +
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
  if (result.firstError.empty()) result.firstError = lost + " (--verify would check what the server kept)";
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
                                     std::min<std::uint32_t>(result.iodepth, 8),
                                     "verify read-back", generation, written);
  for (const auto& v : back) result.verify.merge(v);
  result.notes.push_back(
      "verify: the whole file set read back after the run; the " + std::to_string(ours) + " of " +
      std::to_string(all) +
      " blocks this run wrote must hold its data (a lost write shows as stale); the other "
      "blocks pass with any intact data in their place");
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
  cell.runAll();
  result.effectiveIodepth = cell.effectiveIodepth();
  if (const int sig = interruptSignal()) throw Interrupted(sig);
  noteEffectiveIodepth(result, jobsTarget, profile, options);
  mergeJobs(result, cell.jobs(), cell.commitSeconds());
  noteOutages(result, cell.outages(), options.verify && profile.writes());
  result.client = cell.clientUse();
  cell.finishTimeline(result);
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
