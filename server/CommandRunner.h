// CommandRunner: how the knfsd backend runs host tools (modprobe, exportfs,
// nfsdctl). On the live host they really run; under --root DIR nothing may
// touch the real kernel, so StagedCommandRunner records the command and
// emulates its visible effect inside the tree (modprobe X creates
// DIR/sys/module/X), which keeps apply idempotent and testable in a tree.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "server/HostPaths.h"

namespace nfsrdma::server {

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

class StagedCommandRunner final : public CommandRunner {
 public:
  explicit StagedCommandRunner(HostPaths paths) : paths_(std::move(paths)) {}
  CommandResult run(const std::vector<std::string>& argv) override;
  const std::vector<std::vector<std::string>>& history() const { return history_; }

 private:
  HostPaths paths_;
  std::vector<std::vector<std::string>> history_;
};

// Quotes argv for display ("exportfs -ra").
std::string shellJoin(const std::vector<std::string>& argv);

// Runs argv with `runner`; throws std::runtime_error naming the command, its
// exit status and its output when it exits non-zero.
void runOrThrow(CommandRunner& runner, const std::vector<std::string>& argv);

// The absolute host path of a tool found in the root's sbin/bin dirs, or "".
std::string findHostTool(const HostPaths& paths, const std::string& name);

// Whether `path` is one findHostTool can return for `name` ("/usr/sbin/exportfs").
bool isHostToolPath(const std::string& path, const std::string& name);

}  // namespace nfsrdma::server
