// CommandRunner: the staging stand-in used under --root, and the helpers
// around running host tools.
#include "server/CommandRunner.h"

#include <stdexcept>

#include "server/HostFiles.h"
#include "server/HostState.h"

namespace nfsrdma::server {
namespace fs = std::filesystem;

void runOrThrow(CommandRunner& runner, const std::vector<std::string>& argv) {
  CommandResult r = runner.run(argv);
  if (r.exitStatus != 0) {
    throw std::runtime_error("`" + shellJoin(argv) + "` failed (exit " +
                             std::to_string(r.exitStatus) + "): " + trimmed(r.output));
  }
}

namespace {
// Where findHostTool looks, in this order.
constexpr const char* kToolDirs[] = {"/usr/sbin", "/sbin", "/usr/bin", "/bin", "/usr/local/sbin"};
}  // namespace

bool isHostToolPath(const std::string& path, const std::string& name) {
  for (const char* dir : kToolDirs) {
    if (path == std::string(dir) + "/" + name) return true;
  }
  return false;
}

std::string findHostTool(const HostPaths& paths, const std::string& name) {
  for (const char* dir : kToolDirs) {
    const std::string host = std::string(dir) + "/" + name;
    // Looked at inside the root (links resolved there), like every host path.
    // An execute bit on a regular file is what access(X_OK) asks of root.
    const auto st = orAbsent(host, [&] { return hostPathStatus(paths, host); });
    constexpr auto exec = fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec;
    if (st && fs::is_regular_file(*st) && (st->permissions() & exec) != fs::perms::none)
      return host;
  }
  return "";
}

CommandResult StagedCommandRunner::run(const std::vector<std::string>& argv) {
  history_.push_back(argv);
  if (argv.empty()) return {127, "empty command"};
  const std::string tool = fs::path(argv[0]).filename().string();
  if (tool == "modprobe") {
    for (std::size_t i = 1; i < argv.size(); ++i) {
      if (argv[i].empty() || argv[i][0] == '-') continue;
      try {  // made like every host path: inside the root, through no symlink
        openHostDir(paths_, fs::path(HostPaths::kSysModule) / argv[i], true);
      } catch (const std::exception& e) {
        return {1, "staged modprobe " + argv[i] + ": " + e.what()};
      }
    }
    return {0, "staged: " + shellJoin(argv) + " (module marked loaded under " +
                   paths_.root().string() + ")"};
  }
  return {0, "staged: " + shellJoin(argv) + " (not run: --root " + paths_.root().string() + ")"};
}

}  // namespace nfsrdma::server
