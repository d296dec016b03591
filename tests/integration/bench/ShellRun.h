// The commands' end-to-end tests run the tools as a user does: a shell
// command line, its exit status and its output (stdout and stderr), under
// `timeout` so that a hung run fails the test instead of the suite.
#pragma once

#include <filesystem>
#include <string>

namespace nfsrdma::bench {

struct Ran {
  int status = -1;  // the exit status; -1 when it did not exit (a signal)
  std::string out;  // stdout and stderr, interleaved
  double seconds = 0;
};

// Runs cmd with bash -c under `timeout timeoutSeconds`.
Ran runShell(const std::string& cmd, int timeoutSeconds = 300);

// A directory of the test's own under the temp directory (PREFIX-PID),
// removed with what is in it when the test ends.
struct ScratchDir {
  std::filesystem::path path;
  explicit ScratchDir(const std::string& prefix);
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
};

// `mpirun -np RANKS` of Debian's OpenMPI with the flags a root shell on a
// loopback-only host needs (README "Many clients"): shared memory between
// the ranks, no cross-memory attach, no binding to cores of a 2-core
// machine, root allowed. The program and its arguments follow.
std::string mpirunRanks(int ranks);

// The text in single quotes for a shell (a quote inside as '\'').
std::string shellQuoted(const std::string& s);

}  // namespace nfsrdma::bench
