// GaneshaWorkDir: making, filling and sweeping ganesha's work directories.
// Files are made relative to the open directory with O_EXCL | O_NOFOLLOW, so
// a link put where one of them goes is never followed; the record in each
// directory ties it to one process of one boot and PID namespace, because a
// pid alone means nothing across a reboot or a container.
#include "server/ganesha/GaneshaWorkDir.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <system_error>
#include <vector>

#include "util/ErrnoText.h"

namespace nfsrdma::server {
namespace fs = std::filesystem;
namespace {

constexpr std::string_view kTemporaryPrefix = "nfsrdma-ganesha-";
constexpr std::size_t kTemporarySuffix = 6;  // mkdtemp's XXXXXX
constexpr std::size_t kMaxPidDigits = 7;     // pid_max is at most 4194304
// In every work directory: which process used it last, in which boot and
// PID namespace.
constexpr const char* kRunRecord = kGaneshaRunRecordName;
constexpr std::size_t kMaxSmallFile = 256;
// More than the names a run puts in a work directory.
constexpr std::size_t kEntriesShown = 7;

using util::errnoText;

[[noreturn]] void fail(const std::string& what) {
  throw std::runtime_error(what);
}

// This boot and PID namespace; "" when either cannot be read (then no
// record matches, and nothing is swept).
std::string runScope() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string boot;
  struct stat ns {};
  if (!std::getline(in, boot) || boot.empty() || ::stat("/proc/self/ns/pid", &ns) != 0) return "";
  return "boot " + boot + "\npid namespace " + std::to_string(ns.st_dev) + ":" +
         std::to_string(ns.st_ino) + "\n";
}

std::string runRecord(pid_t pid, const std::string& scope) {
  return "pid " + std::to_string(pid) + "\n" + scope;
}

// True when `pid` runs, or when that cannot be ruled out.
bool processRuns(pid_t pid) {
  return pid <= 0 || ::kill(pid, 0) == 0 || errno != ESRCH;
}

// A small regular file in `dirFd`, not through a link; nullopt otherwise.
std::optional<std::string> readSmallFile(int dirFd, const char* name) {
  UniqueFd fd(::openat(dirFd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  struct stat st {};
  if (!fd || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) ||
      static_cast<std::size_t>(st.st_size) > kMaxSmallFile)
    return std::nullopt;
  std::array<char, kMaxSmallFile + 1> buf{};
  const ssize_t n = ::read(fd.get(), buf.data(), buf.size());
  if (n < 0 || static_cast<std::size_t>(n) > kMaxSmallFile) return std::nullopt;
  return std::string(buf.data(), static_cast<std::size_t>(n));
}

bool allDigits(std::string_view s) {
  return !s.empty() &&
         std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
}

// Whether the ganesha whose pid the directory's pid file holds may still
// run: it does, or the file holds something else than a pid (*text: what it
// holds). An absent or empty file: no ganesha wrote it.
bool ganeshaMayRun(int dirFd, std::string* text) {
  const std::optional<std::string> held = readSmallFile(dirFd, kGaneshaPidFileName);
  if (!held || held->empty()) return false;
  *text = *held;
  if (text->back() == '\n') text->pop_back();
  return !allDigits(*text) || text->size() > kMaxPidDigits ||
         processRuns(static_cast<pid_t>(std::stol(*text)));
}

// The pid in a name nfsrdma-ganesha-<pid>-XXXXXX exactly, else 0.
pid_t pidOfTemporaryName(std::string_view name) {
  if (name.substr(0, kTemporaryPrefix.size()) != kTemporaryPrefix) return 0;
  name.remove_prefix(kTemporaryPrefix.size());
  const auto dash = name.find('-');
  if (dash == std::string_view::npos) return 0;
  const std::string_view digits = name.substr(0, dash);
  const std::string_view suffix = name.substr(dash + 1);
  const bool suffixOk = suffix.size() == kTemporarySuffix &&
                        std::all_of(suffix.begin(), suffix.end(),
                                    [](unsigned char c) { return std::isalnum(c) != 0; });
  if (!allDigits(digits) || digits.size() > kMaxPidDigits || digits.front() == '0' || !suffixOk)
    return 0;
  return static_cast<pid_t>(std::stol(std::string(digits)));
}

// Whether the temporary work directory `name` in `parentFd` was left by a
// run that has ended (see sweepEndedGaneshaWorkDirs for every condition).
bool isLeftover(int parentFd, const std::string& name, pid_t pid, const std::string& scope) {
  UniqueFd dir(::openat(parentFd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  struct stat st {};
  if (!dir || ::fstat(dir.get(), &st) != 0 || st.st_uid != ::geteuid()) return false;
  if (readSmallFile(dir.get(), kRunRecord) != runRecord(pid, scope) || processRuns(pid))
    return false;
  // ganesha outlives a killed parent only until its death signal is handled.
  std::string ganesha;
  return !ganeshaMayRun(dir.get(), &ganesha);
}

// "nfs-ganesha work directory of a run that" or "... directories of runs that".
std::string whatWasLeft(std::size_t n) {
  return n == 1 ? "nfs-ganesha work directory left by a run that ended without removing it"
                : "nfs-ganesha work directories left by runs that ended without removing them";
}

// The items, comma-separated, with ", ..." when there are `more`.
std::string listed(const std::vector<std::string>& items, bool more = false) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : ", ") + i;
  return out + (more ? ", ..." : "");
}

std::string sweepLine(const std::vector<std::string>& removed,
                      const std::vector<std::string>& failed) {
  std::string line;
  if (!removed.empty())
    line = "removed the " + whatWasLeft(removed.size()) + ": " + listed(removed);
  if (!failed.empty()) {
    line += (line.empty() ? "could not remove the " + whatWasLeft(failed.size())
                          : "; could not remove") +
            ": " + listed(failed);
  }
  return line.empty() ? "" : "note: " + line;
}

// Up to `limit` names in the directory (".", ".." aside), and whether there
// are more.
std::vector<std::string> someEntries(int dirFd, std::size_t limit, bool* more) {
  std::vector<std::string> names;
  *more = false;
  const int dup = ::fcntl(dirFd, F_DUPFD_CLOEXEC, 0);
  DIR* d = dup < 0 ? nullptr : ::fdopendir(dup);
  if (d == nullptr) {
    if (dup >= 0) ::close(dup);
    fail("cannot list a directory: " + errnoText(errno));
  }
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    if (names.size() == limit) {
      *more = true;
      break;
    }
    names.push_back(name);
  }
  ::closedir(d);
  return names;
}

const std::string kGiveAnother =
    "; give a new directory (it is made), an empty one or one an earlier run of ours used: " +
    std::string(kGaneshaConfigFileName) + ", " + kGaneshaLogFileName + ", " + kGaneshaPidFileName +
    ", " + kGaneshaStdoutFileName + ", " + kGaneshaRecoveryDirName + "/ and " + kRunRecord +
    " are written there";

// A directory we did not make: ours and writable by us alone.
void requireOursAlone(int fd, const std::string& what) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) fail(what + errnoText(errno));
  if (st.st_uid != ::geteuid()) {
    fail(what + "it is owned by uid " + std::to_string(st.st_uid) + ", not by us (uid " +
         std::to_string(::geteuid()) + ")" + kGiveAnother);
  }
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    std::array<char, 8> mode{};
    std::snprintf(mode.data(), mode.size(), "%04o", static_cast<unsigned>(st.st_mode & 07777));
    fail(what + "others may write in it (mode " + mode.data() +
         "), so they could put a link where ganesha writes; give a new directory (it is made) "
         "or one only we may write");
  }
}

// The pid in `record` when it was written in this boot and PID namespace.
std::optional<pid_t> recordedPid(const std::string& record) {
  const auto nl = record.find('\n');
  if (record.rfind("pid ", 0) != 0 || nl == std::string::npos) return std::nullopt;
  const std::string digits = record.substr(4, nl - 4);
  const std::string scope = runScope();
  if (!allDigits(digits) || digits.size() > kMaxPidDigits || scope.empty() ||
      record.substr(nl + 1) != scope)
    return std::nullopt;
  return static_cast<pid_t>(std::stol(digits));
}

// A directory with something in it: what an earlier run of ours left there
// (its record, and only the names a run puts there), with neither that run
// nor its ganesha still running.
void requireLeftByAnEndedRun(int fd, const std::vector<std::string>& names, bool more,
                             const std::string& what) {
  const std::optional<std::string> record = readSmallFile(fd, kRunRecord);
  if (!record) {
    fail(what + "it is not empty (holds " + listed(names, more) +
         ") and no run of ours used it (no " + kRunRecord + " in it)" + kGiveAnother);
  }
  std::vector<std::string> foreign;
  for (const auto& n : names) {
    const bool ours = n == kRunRecord || n == kGaneshaConfigFileName || n == kGaneshaLogFileName ||
                      n == kGaneshaPidFileName || n == kGaneshaStdoutFileName ||
                      n == kGaneshaRecoveryDirName;
    if (!ours) foreign.push_back(n);
  }
  if (!foreign.empty() || more)
    fail(what + "it holds " + listed(foreign, more) + ", which no run of ours puts there" +
         kGiveAnother);
  if (std::string ganesha; ganeshaMayRun(fd, &ganesha)) {
    fail(what + "the nfs-ganesha in its " + kGaneshaPidFileName + " (" + ganesha +
         ") still runs; stop it first, or give another directory");
  }
  const std::optional<pid_t> user = recordedPid(*record);
  if (user && *user != ::getpid() && processRuns(*user))
    fail(what + "process " + std::to_string(*user) +
         ", which ran nfs-ganesha there, still runs; stop it first, or give another directory");
}

// An existing directory we did not make: ours alone, and empty or what an
// ended run of ours left.
void requireUsableExisting(const fs::path& p, int fd) {
  const std::string what = "cannot use '" + p.string() + "' as nfs-ganesha's work directory: ";
  requireOursAlone(fd, what);
  bool more = false;
  const std::vector<std::string> names = someEntries(fd, kEntriesShown, &more);
  if (!names.empty()) requireLeftByAnEndedRun(fd, names, more, what);
}

}  // namespace

GaneshaWorkDir makeTemporaryGaneshaWorkDir(const fs::path& parent) {
  std::string tmpl =
      (parent / (std::string(kTemporaryPrefix) + std::to_string(::getpid()) + "-XXXXXX")).string();
  if (::mkdtemp(tmpl.data()) == nullptr)
    fail("cannot create a temporary ganesha work directory in " + parent.string() + ": " +
         errnoText(errno));
  GaneshaWorkDir d;
  d.path = tmpl;
  d.temporary = true;
  d.fd.reset(::open(tmpl.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!d.fd) {
    const int err = errno;
    ::rmdir(tmpl.c_str());
    fail("cannot open the temporary ganesha work directory " + tmpl + ": " + errnoText(err));
  }
  writeWorkFile(d, kRunRecord, runRecord(::getpid(), runScope()));
  return d;
}

GaneshaWorkDir useGivenGaneshaWorkDir(const fs::path& dir) {
  fs::path p = fs::absolute(dir).lexically_normal();
  if (p.filename().empty()) p = p.parent_path();
  std::error_code ec;
  fs::create_directories(p.parent_path(), ec);
  const bool made = ::mkdir(p.c_str(), 0700) == 0;
  if (!made && errno != EEXIST)
    fail("cannot create ganesha work directory '" + p.string() + "': " + errnoText(errno));
  GaneshaWorkDir d;
  d.path = p;
  d.fd.reset(::open(p.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!d.fd) {
    const int err = errno;
    fail("cannot use '" + p.string() + "' as nfs-ganesha's work directory: " + errnoText(err) +
         (err == ENOTDIR ? " (expected a directory)" : ""));
  }
  if (!made) requireUsableExisting(p, d.fd.get());
  writeWorkFile(d, kRunRecord, runRecord(::getpid(), runScope()));
  return d;
}

UniqueFd makeWorkFile(const GaneshaWorkDir& dir, const std::string& name, mode_t mode) {
  const std::string where = (dir.path / name).string();
  if (::unlinkat(dir.fd.get(), name.c_str(), 0) != 0 && errno != ENOENT)
    fail("cannot replace " + where + ": " + errnoText(errno));
  UniqueFd fd(::openat(dir.fd.get(), name.c_str(),
                       O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode));
  if (!fd) fail("cannot create " + where + ": " + errnoText(errno));
  return fd;
}

void writeWorkFile(const GaneshaWorkDir& dir, const std::string& name,
                   const std::string& contents) {
  const UniqueFd fd = makeWorkFile(dir, name);
  std::size_t done = 0;
  while (done < contents.size()) {  // each round writes at least a byte or fails
    const ssize_t n = ::write(fd.get(), contents.data() + done, contents.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      fail("cannot write " + (dir.path / name).string() + ": " + errnoText(n < 0 ? errno : EIO));
    done += static_cast<std::size_t>(n);
  }
}

void makeWorkSubdir(const GaneshaWorkDir& dir, const std::string& name) {
  if (::mkdirat(dir.fd.get(), name.c_str(), 0755) == 0) return;
  const int err = errno;
  struct stat st {};
  if (err == EEXIST && ::fstatat(dir.fd.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
      S_ISDIR(st.st_mode))
    return;
  fail("cannot create directory " + (dir.path / name).string() + ": " + errnoText(err));
}

std::string sweepEndedGaneshaWorkDirs(const fs::path& parent) noexcept {
  try {
    const std::string scope = runScope();
    UniqueFd parentFd(::open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (scope.empty() || !parentFd) return "";
    std::vector<std::string> removed, failed;
    std::error_code ec;
    for (fs::directory_iterator it(parent, ec), end; !ec && it != end; it.increment(ec)) {
      const std::string name = it->path().filename().string();
      const pid_t pid = pidOfTemporaryName(name);
      if (pid <= 0 || !isLeftover(parentFd.get(), name, pid, scope)) continue;
      std::error_code rm;
      fs::remove_all(parent / name, rm);
      const std::string entry = (parent / name).string() + " (pid " + std::to_string(pid) + ")";
      if (rm) {
        failed.push_back(entry + ": " + rm.message());
      } else {
        removed.push_back(entry);
      }
    }
    return sweepLine(removed, failed);
  } catch (...) {
    return "";
  }
}

}  // namespace nfsrdma::server
