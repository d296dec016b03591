#include "bench/file/RunDirectory.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <system_error>

#include "bench/job/FileProfile.h"
#include "util/ErrnoText.h"

namespace nfsrdma::bench {
namespace fs = std::filesystem;

namespace {

// The PID in "PREFIX-PID" (digits only, no leading zero, a pid_t), or nullopt.
std::optional<int> pidOf(std::string_view name, std::string_view prefix) {
  if (name.size() <= prefix.size() + 1 || name.substr(0, prefix.size()) != prefix ||
      name[prefix.size()] != '-') {
    return std::nullopt;
  }
  const std::string_view digits = name.substr(prefix.size() + 1);
  if (digits.front() == '0' || digits.find_first_not_of("0123456789") != std::string_view::npos)
    return std::nullopt;
  int pid = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), pid);
  if (ec != std::errc() || end != digits.data() + digits.size() || pid <= 0) return std::nullopt;
  return pid;
}

// No process of that PID on this host: ESRCH. EPERM is a live process of
// another user: kept.
bool processGone(int pid, int ourPid) {
  if (pid == ourPid) return true;  // ours is not made yet: the name is a dead run's
  return ::kill(pid, 0) != 0 && errno == ESRCH;
}

// The directory opened and locked when it is this user's own and no live
// run holds its lock; an empty fd otherwise.
UniqueFd lockIfOurs(const fs::path& dir) {
  struct stat named {};
  if (::lstat(dir.c_str(), &named) != 0 || !S_ISDIR(named.st_mode) || named.st_uid != ::geteuid())
    return {};
  UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  struct stat opened {};
  if (!fd || ::fstat(fd.get(), &opened) != 0 || opened.st_ino != named.st_ino ||
      opened.st_dev != named.st_dev || ::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
    return {};
  }
  return fd;
}

// Bytes of the regular files below dir (links not followed).
std::uint64_t bytesBelow(const fs::path& dir) {
  std::uint64_t bytes = 0;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    struct stat st {};
    if (::lstat(it->path().c_str(), &st) == 0 && S_ISREG(st.st_mode))
      bytes += static_cast<std::uint64_t>(st.st_size);
  }
  return bytes;
}

}  // namespace

SweptDirectories sweepDeadRunDirectories(const fs::path& parent, std::string_view prefix,
                                         int ourPid) {
  SweptDirectories out;
  std::error_code ec;
  for (fs::directory_iterator it(parent, ec), end; !ec && it != end; it.increment(ec)) {
    const std::optional<int> pid = pidOf(it->path().filename().string(), prefix);
    if (!pid || !processGone(*pid, ourPid)) continue;
    const UniqueFd lock = lockIfOurs(it->path());
    if (!lock) continue;
    const std::uint64_t bytes = bytesBelow(it->path());
    std::error_code removeError;
    fs::remove_all(it->path(), removeError);
    if (removeError) {
      out.failed.push_back(it->path().string() + ": " + removeError.message());
      continue;
    }
    out.removed.push_back(it->path().string());
    out.bytes += bytes;
  }
  return out;
}

std::string sweptLine(const SweptDirectories& swept) {
  std::string line;
  if (!swept.removed.empty()) {
    line = "removed ";
    for (std::size_t i = 0; i < swept.removed.size(); ++i) {
      if (i > 0) line += i + 1 == swept.removed.size() ? " and " : ", ";
      line += swept.removed[i];
    }
    line += " (" + formatBytes(static_cast<double>(swept.bytes)) + "), left by " +
            (swept.removed.size() == 1 ? "a run that was killed (its process is gone)"
                                       : "runs that were killed (their processes are gone)");
  }
  for (const auto& f : swept.failed) {
    line +=
        (line.empty() ? "" : "; ") + std::string("could not remove what a killed run left: ") + f;
  }
  return line;
}

RunDirectory::RunDirectory(const fs::path& parent, std::string_view prefix)
    : path_(parent / (std::string(prefix) + "-" + std::to_string(::getpid()))) {
  std::error_code ec;
  fs::create_directories(parent, ec);
  if (ec) throw std::runtime_error("cannot create " + parent.string() + ": " + ec.message());
  const std::string line = sweptLine(sweepDeadRunDirectories(parent, prefix, ::getpid()));
  if (!line.empty()) std::fprintf(stderr, "nfsrdma-bench: %s\n", line.c_str());
  // Not create_directories: a directory of this name that is still there
  // is another run's (another PID namespace) or another user's.
  if (::mkdir(path_.c_str(), 0755) != 0) {
    throw std::runtime_error("cannot create " + path_.string() + ": " + util::errnoText(errno) +
                             (errno == EEXIST ? " (held by a live run or another user)" : ""));
  }
  lock_.reset(::open(path_.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!lock_ || ::flock(lock_.get(), LOCK_EX | LOCK_NB) != 0) {
    const std::string why = util::errnoText(errno);
    fs::remove(path_, ec);
    throw std::runtime_error("cannot lock " + path_.string() + ": " + why);
  }
}

RunDirectory::~RunDirectory() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

}  // namespace nfsrdma::bench
