#include "bench/FileRun.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <exception>
#include <fstream>
#include <memory>
#include <mutex>
#include <random>
#include <thread>

namespace nfsrdma::bench {

double RunResult::mibPerSecond(IoDirection d) const {
  return seconds > 0 ? static_cast<double>(dir[static_cast<int>(d)].bytes) / seconds / 1048576.0 : 0;
}
double RunResult::mbPerSecond(IoDirection d) const {
  return seconds > 0 ? static_cast<double>(dir[static_cast<int>(d)].bytes) / seconds / 1e6 : 0;
}
double RunResult::iops(IoDirection d) const {
  return seconds > 0 ? static_cast<double>(dir[static_cast<int>(d)].ops) / seconds : 0;
}

const char* serverCacheName(ServerCache c) {
  switch (c) {
    case ServerCache::Unmanaged: return "unmanaged";
    case ServerCache::Dropped: return "dropped";
    case ServerCache::Warm: return "warm";
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
    return "libnfs 4.0.0 cannot encode NFSv4 WRITEs of 4 KiB or more (fixed upstream in sahlberg/libnfs#319); "
           "libnfs is the read anchor only";
  }
  return {};
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

// Creates each job's files with the verify pattern unless they already hold
// the full size (names carry seed and size, so an existing full file is ours).
void ensureLayout(const TargetSpec& given, const FileOptions& o) {
  const std::uint64_t bytes = fileBytes(o, kVerifyUnit);
  // libnfs cannot write (see unsupportedReason): our client lays its files out on the same server.
  TargetSpec target = given;
  if (target.engine == EngineKind::Libnfs) target.engine = EngineKind::Nfs;
  onJobThreads(o.numjobs, [&](std::uint32_t j) {
    auto engine = makeEngine(target);
    const auto files = jobFiles(o, j);
    const auto sizes = engine->open(files, true);
    bool complete = true;
    for (auto s : sizes) complete = complete && s == bytes;
    if (!complete) {
      JobSpec spec;
      spec.profile = profileByName("128k-write");
      spec.options = o;
      spec.job = j;
      spec.iodepth = 4;
      spec.files = files;
      spec.fileBytes = bytes;
      spec.layout = true;
      spec.fileIdBase = j * o.nrfiles;
      JobDriver d(spec, nullptr);
      engine->run(d);
      const JobResult r = d.result();
      if (r.errors) throw std::runtime_error("laying out " + files.front() + ": " + r.firstError);
    }
    engine->finish();
  });
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
    auto engine = makeEngine(target);
    JobSpec spec;
    spec.profile = profileByName("128k-read");
    spec.profile.blockSize = blockSize;
    spec.options = o;
    spec.options.ramp = std::chrono::milliseconds(0);
    spec.options.ioBytes = bytes * o.nrfiles;
    spec.options.rwmixread.reset();
    spec.job = j;
    spec.iodepth = iodepth;
    spec.files = jobFiles(o, j);
    spec.fileBytes = bytes;
    spec.fileIdBase = j * o.nrfiles;
    spec.generation = generation;
    if (j < written.size()) spec.writtenBlocks = written[j];
    engine->open(spec.files, false);
    JobDriver d(spec, nullptr);
    engine->run(d);
    const JobResult r = d.result();
    if (r.errors) throw std::runtime_error(what + ": " + r.firstError);
    stats[j] = r.verify;
    engine->finish();
  });
  return stats;
}

// Drops the page cache of the target's server when it is this host; notes what happened.
ServerCache dropServerCache(const TargetSpec& target, std::vector<std::string>& notes) {
  if (target.engine == EngineKind::Path && target.onNfs) {
    // The server of an NFS mount is elsewhere: only this host's cache (the NFS client's) can go.
    const auto why = dropLocalPageCache();
    notes.push_back(why.empty() ? "--drop-server-cache: " + target.location +
                                      " is on NFS: dropped this host's page cache (the NFS client's), not the "
                                      "server's (drop it on the server)"
                                : "--drop-server-cache: " + target.location + " is on NFS; " + why);
    return ServerCache::Unmanaged;
  }
  if (!target.serverIsLocal()) {
    notes.push_back("--drop-server-cache: server " + target.nfs.host +
                    " is not on this host; caches not dropped (run the bench on the server or drop them there)");
    return ServerCache::Unmanaged;
  }
  if (auto why = dropLocalPageCache(); !why.empty()) {
    notes.push_back("--drop-server-cache: " + why);
    return ServerCache::Unmanaged;
  }
  notes.push_back("server page cache dropped before the read phase");
  return ServerCache::Dropped;
}

// Reads the whole file set once, untimed, so the read phase starts with it in
// the server's page cache. A path target not on NFS is read buffered (its
// page cache is the server's when it is the export's disk); an NFS mount
// with O_DIRECT, so the NFS client's cache stays as it was.
ServerCache warmServerCache(const TargetSpec& given, const FileOptions& o, std::vector<std::string>& notes) {
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
      std::fprintf(stderr, "\r[%s] r=%.1fMiB/s,w=%.1fMiB/s r=%.0f,w=%.0f IOPS eta %.0fs   ", label_.c_str(), mib[0],
                   mib[1], iops[0], iops[1], eta);
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

RunResult runFileBenchmark(const TargetSpec& target, const FileProfile& profile, const FileOptions& options,
                           const RunSettings& settings) {
  validateOptions(options, profile);
  RunResult result;
  result.target = target.name;
  result.targetDescription = target.describe();
  result.profile = profile.name;
  result.blockSize = profile.blockSize;
  result.iodepth = options.iodepth ? options.iodepth : profile.defaultIodepth;
  result.numjobs = options.numjobs;
  result.readPercent = readPercentOf(profile, options);
  result.options = options;
  result.verified = options.verify;
  if (target.engine == EngineKind::Nfs) {
    result.notes.push_back("numjobs " + std::to_string(options.numjobs) +
                           ": one thread per job, each with its own connection and session");
  } else if (target.engine == EngineKind::Libnfs) {
    result.notes.push_back("numjobs " + std::to_string(options.numjobs) + ": one thread per job, each with its own libnfs context");
  } else {
    result.notes.push_back("numjobs " + std::to_string(options.numjobs) + ": one thread per job, each with its own io_uring");
  }

  result.unsupported = unsupportedReason(target, profile);
  if (!result.unsupported.empty()) return result;
  ensureLayout(target, options);
  if (profile.reads()) {
    const bool drop = settings.cache == CachePrep::Drop || (settings.cache == CachePrep::FromOptions && options.dropServerCache);
    if (drop) {
      result.serverCache = dropServerCache(target, result.notes);
    } else if (settings.cache == CachePrep::Warm) {
      result.serverCache = warmServerCache(target, options, result.notes);
    }
  }

  // A --verify write run stamps its own generation into what it writes, so
  // that its read-back can tell a lost write from the data already there.
  std::uint64_t generation = 0;
  if (options.verify && profile.writes()) {
    std::random_device rd;
    while (generation == 0) generation = (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
  }
  JobProgress progress;
  std::vector<JobResult> jobs(options.numjobs);
  std::vector<double> commit(options.numjobs, 0);
  const std::uint64_t bytes = fileBytes(options, profile.blockSize);
  {
    const double total = std::chrono::duration<double>(options.ramp + options.runtime).count();
    ProgressLine line(settings, progress, options.ioBytes ? 0 : total);
    onJobThreads(options.numjobs, [&](std::uint32_t j) {
      auto engine = makeEngine(target);
      JobSpec spec;
      spec.profile = profile;
      spec.options = options;
      spec.job = j;
      spec.iodepth = result.iodepth;
      spec.files = jobFiles(options, j);
      spec.fileBytes = bytes;
      spec.fileIdBase = j * options.nrfiles;
      spec.generation = generation;
      engine->open(spec.files, false);
      JobDriver d(spec, &progress);
      try {
        engine->run(d);
      } catch (const std::exception& e) {
        jobs[j] = d.result();
        ++jobs[j].errors;
        if (jobs[j].firstError.empty()) jobs[j].firstError = e.what();
        return;
      }
      jobs[j] = d.result();
      if (profile.writes()) {
        // The end of the write phase: until the data is durable (UNSTABLE writes need their COMMIT).
        const auto c0 = BenchClock::now();
        engine->commit();
        commit[j] = std::chrono::duration<double>(BenchClock::now() - c0).count();
      }
      engine->finish();
    });
  }
  for (std::uint32_t j = 0; j < options.numjobs; ++j) {
    const JobResult& r = jobs[j];
    for (int d = 0; d < 2; ++d) result.dir[d].merge(r.dir[d]);
    result.seconds = std::max(result.seconds, r.seconds);
    result.commitSeconds = std::max(result.commitSeconds, commit[j]);
    result.durableSeconds = std::max(result.durableSeconds, r.seconds + commit[j]);
    result.verify.merge(r.verify);
    result.errors += r.errors;
    if (result.firstError.empty()) result.firstError = r.firstError;
  }

  // Read back everything written and check it: a write run's --verify.
  if (options.verify && profile.writes() && result.errors == 0) {
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
  return result;
}

}  // namespace nfsrdma::bench
