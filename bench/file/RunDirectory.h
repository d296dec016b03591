// A directory a run makes for itself, named after its process
// (/var/tmp/nfsrdma-bench-PID: the embedded server's export, tens of MiB of
// laid-out files), and what runs that could not remove theirs left behind.
// A run removes its directory when it ends, also after Ctrl-C; after a
// SIGKILL (or a crash, or a power cut) nothing can, so the next run that
// makes one in the same parent sweeps what dead runs left there, and says
// so in one line. Only what is certainly a dead run's goes: the exact name
// PREFIX-PID, a directory (not a symlink) owned by this user, its PID no
// longer running on this host (a live process of any user keeps it), and
// no live run holding its lock (each run holds an flock on its directory
// for its life, which also covers a run of another PID namespace that
// shares the parent, whose PID says nothing here).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "util/UniqueFd.h"

namespace nfsrdma::bench {

// What sweepDeadRunDirectories did.
struct SweptDirectories {
  std::vector<std::string> removed;  // paths
  std::uint64_t bytes = 0;           // what they held
  std::vector<std::string> failed;   // "PATH: why" for one that could not be removed
};

// Removes every parent/PREFIX-PID that is certainly a dead run's (see above).
// ourPid: this process's, whose name no other process on this host can
// hold: a directory of that name is a dead run's that had the same PID.
SweptDirectories sweepDeadRunDirectories(const std::filesystem::path& parent,
                                         std::string_view prefix, int ourPid);

// The one line that says so, or "" when nothing was found: "removed
// /var/tmp/nfsrdma-bench-41 (64 MiB), left by a run that was killed (its
// process is gone)".
std::string sweptLine(const SweptDirectories& swept);

class RunDirectory {
 public:
  // Sweeps parent (saying what it removed on stderr as "nfsrdma-bench:
  // LINE"), then creates parent/PREFIX-PID (parent too when missing) and
  // locks it. Throws std::runtime_error naming the path when it cannot.
  RunDirectory(const std::filesystem::path& parent, std::string_view prefix);
  ~RunDirectory();  // removes it, with everything in it
  RunDirectory(const RunDirectory&) = delete;
  RunDirectory& operator=(const RunDirectory&) = delete;

  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  UniqueFd lock_;  // open on the directory, flock held
};

}  // namespace nfsrdma::bench
