// CommandRunner: how the doctors and the knfsd backend run host tools (dcb,
// modprobe, exportfs, nfsdctl): a bounded child process with its output
// captured. An interface, so that a staged host (server/'s
// StagedCommandRunner) and tests answer in the tool's place.
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace nfsrdma::hostcheck {

struct CommandResult {
  int exitStatus = 0;  // 0 success; 127 not found; 124 timed out
  std::string output;  // stdout and stderr, merged
};

class CommandRunner {
 public:
  virtual ~CommandRunner() = default;
  // Runs argv[0] (an absolute path or a name looked up in PATH) with a
  // bounded run time. Never throws for a failing command: see exitStatus.
  virtual CommandResult run(const std::vector<std::string>& argv) = 0;
};

class SystemCommandRunner final : public CommandRunner {
 public:
  explicit SystemCommandRunner(std::chrono::seconds timeout = std::chrono::seconds(60))
      : timeout_(timeout) {}
  CommandResult run(const std::vector<std::string>& argv) override;

 private:
  std::chrono::seconds timeout_;
};

// Quotes argv for display ("exportfs -ra").
std::string shellJoin(const std::vector<std::string>& argv);

}  // namespace nfsrdma::hostcheck
