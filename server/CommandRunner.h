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

#include "hostcheck/CommandRunner.h"
#include "server/HostPaths.h"

namespace nfsrdma::server {

// The runner interface and the live one are hostcheck's (the client's
// doctor runs host tools too); the staged one is the server's.
using hostcheck::CommandResult;
using hostcheck::CommandRunner;
using hostcheck::shellJoin;
using hostcheck::SystemCommandRunner;

class StagedCommandRunner final : public CommandRunner {
 public:
  explicit StagedCommandRunner(HostPaths paths) : paths_(std::move(paths)) {}
  CommandResult run(const std::vector<std::string>& argv) override;
  const std::vector<std::vector<std::string>>& history() const { return history_; }

 private:
  HostPaths paths_;
  std::vector<std::vector<std::string>> history_;
};

// Runs argv with `runner`; throws std::runtime_error naming the command, its
// exit status and its output when it exits non-zero.
void runOrThrow(CommandRunner& runner, const std::vector<std::string>& argv);

// The absolute host path of a tool found in the root's sbin/bin dirs, or "".
std::string findHostTool(const HostPaths& paths, const std::string& name);

// Whether `path` is one findHostTool can return for `name` ("/usr/sbin/exportfs").
bool isHostToolPath(const std::string& path, const std::string& name);

}  // namespace nfsrdma::server
