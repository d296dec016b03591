// The file set of a run (FileRun.cpp, CellJobs.cpp): each job's files and
// spec, the threads the jobs run on, the layout (ensureLayout) and the whole
// set read once (the cache warm-up, a write run's --verify read-back).
// CreatedFiles (FileRun.h) is defined in FileLayout.cpp with them.
#pragma once

#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "bench/file/FileRun.h"

namespace nfsrdma::bench::filerun {

// Job job's files, by name (benchFileName), nrfiles of them.
std::vector<std::string> jobFiles(const FileOptions& o, std::uint32_t job);

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
                   std::uint32_t iodepth, std::uint64_t fileBytes);

// The file set laid out as layOutFileSet does; on a device only when the run
// may write it, and once per run (claimDeviceLayout). What the layout wrote
// on a device stays: there is nothing to remove after an interrupt. A
// shared file set is laid out once per command too (claimSharedLayout): its
// size cannot say whether this process's ranges are written.
bool ensureLayout(const TargetSpec& given, const FileOptions& o, CreatedFiles* created);

// Reads each job's whole files once, sequentially, on numjobs threads: the
// verify read-back of a write run (verify on) and the cache warm-up (off).
std::vector<VerifyStats> readWholeFileSet(
    const TargetSpec& target, const FileOptions& o, std::uint32_t blockSize, std::uint32_t iodepth,
    const std::string& what, std::uint64_t generation = 0,
    const std::vector<std::shared_ptr<const std::vector<bool>>>& written = {});

}  // namespace nfsrdma::bench::filerun
