// FileLayout: the run's file set, laid out, read whole, and what a command
// created of it (CreatedFiles).
#include "bench/file/FileLayout.h"

#include <sys/stat.h>
#include <sys/statvfs.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <set>

#include "bench/file/DeviceTargets.h"

namespace nfsrdma::bench {

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

int runInterruptible(const char* command, CreatedFiles& created,
                     const std::function<int()>& steps) {
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

namespace filerun {

std::vector<std::string> jobFiles(const FileOptions& o, std::uint32_t job) {
  std::vector<std::string> files;
  for (std::uint32_t f = 0; f < o.nrfiles; ++f) files.push_back(benchFileName(o, job, f));
  return files;
}

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

}  // namespace filerun

namespace {

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

using filerun::jobFiles;
using filerun::jobSpecFor;
using filerun::onJobThreads;

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

}  // namespace

namespace filerun {

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

std::vector<VerifyStats> readWholeFileSet(
    const TargetSpec& target, const FileOptions& o, std::uint32_t blockSize, std::uint32_t iodepth,
    const std::string& what, std::uint64_t generation,
    const std::vector<std::shared_ptr<const std::vector<bool>>>& written) {
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

}  // namespace filerun

}  // namespace nfsrdma::bench
