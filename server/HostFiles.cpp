// HostFiles: host files reached from the root one real directory at a time,
// and written by temp + fsync + rename, so files we own are never torn and
// never reached through a link.
#include "server/HostFiles.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <random>
#include <string_view>
#include <system_error>

#include "util/ErrnoText.h"

namespace nfsrdma::server {
namespace fs = std::filesystem;

const char* fileKindName(fs::file_type type) {
  switch (type) {
    case fs::file_type::regular:
      return "regular file";
    case fs::file_type::directory:
      return "directory";
    case fs::file_type::symlink:
      return "symlink";
    case fs::file_type::fifo:
      return "FIFO";
    case fs::file_type::socket:
      return "socket";
    case fs::file_type::character:
      return "character device";
    case fs::file_type::block:
      return "block device";
    default:
      return "file of unknown kind";
  }
}

namespace {

[[noreturn]] void fail(const std::string& what, const std::string& name, int err) {
  throw std::runtime_error(what + " " + name + ": " + util::errnoText(err));
}

// fail() with errno as the failed call left it: read first, before the
// display string is built.
[[noreturn]] void failAt(const char* what, const HostPaths& paths, const fs::path& hostPath) {
  const int err = errno;
  fail(what, paths.display(hostPath), err);
}

fs::file_type fileTypeOf(mode_t mode) {
  if (S_ISREG(mode)) return fs::file_type::regular;
  if (S_ISDIR(mode)) return fs::file_type::directory;
  if (S_ISLNK(mode)) return fs::file_type::symlink;
  if (S_ISFIFO(mode)) return fs::file_type::fifo;
  if (S_ISSOCK(mode)) return fs::file_type::socket;
  if (S_ISCHR(mode)) return fs::file_type::character;
  return fs::file_type::block;
}

const char* kindName(mode_t mode) {
  return fileKindName(fileTypeOf(mode));
}

std::string readLinkAt(int dir, const std::string& name) {
  char buf[4096];
  const ssize_t n = ::readlinkat(dir, name.c_str(), buf, sizeof buf);
  return n < 0 ? std::string("?") : std::string(buf, static_cast<std::size_t>(n));
}

// What is at `name` in `dir` (not following a link); nullopt when nothing is.
std::optional<struct stat> statAt(int dir, const std::string& name, const std::string& shown) {
  struct stat st {};
  if (::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) return st;
  if (errno == ENOENT) return std::nullopt;
  fail("cannot stat", shown, errno);
}

// `hostPath` (the entry `name` in `dir`) is of kind `mode` where `expected` belongs.
[[noreturn]] void refuseKind(const HostPaths& paths, const fs::path& hostPath, mode_t mode, int dir,
                             const std::string& name, const std::string& expected) {
  std::string msg = paths.display(hostPath) + " is a " + kindName(mode);
  if (S_ISLNK(mode)) msg += " (to " + readLinkAt(dir, name) + ")";
  msg += "; expected " + expected;
  if (S_ISLNK(mode)) {
    msg += " (nfsrdma-server follows no symlink to its own files or to the kernel's /proc files)";
  }
  throw PathRefused(msg);
}

// Unless nothing is at `name`, it must be of kind `type` (S_IFREG, S_IFDIR).
void requireKindOrAbsent(const HostPaths& paths, const fs::path& hostPath, int dir,
                         const std::string& name, mode_t type) {
  const auto st = statAt(dir, name, paths.display(hostPath));
  if (st && (st->st_mode & S_IFMT) != type) {
    refuseKind(paths, hostPath, st->st_mode, dir, name,
               type == S_IFDIR ? "a directory" : "a regular file");
  }
}

UniqueFd openRoot(const HostPaths& paths) {
  const int fd = ::open(paths.root().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) failAt("cannot open the root directory", paths, "/");
  return UniqueFd(fd);
}

// A host path's components below the root ("/etc/nfs.conf" -> etc, nfs.conf).
std::vector<std::string> componentsOf(const fs::path& hostPath) {
  if (!hostPath.is_absolute()) {
    throw std::invalid_argument("host path '" + hostPath.string() + "' must be absolute");
  }
  std::vector<std::string> out;
  for (const auto& c : hostPath.lexically_normal().relative_path()) {
    if (c.empty() || c == ".") continue;
    if (c == "..") throw std::invalid_argument("host path '" + hostPath.string() + "' has '..'");
    out.push_back(c.string());
  }
  if (out.empty()) throw std::invalid_argument("host path '/' is the root, not a file");
  return out;
}

// The directory `name` in `dir` (host path `hostPath`), never through a
// link; -1 when it does not exist (and `create` is false).
int openDirAt(const HostPaths& paths, int dir, const std::string& name, const fs::path& hostPath,
              bool create) {
  const int flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
  int fd = ::openat(dir, name.c_str(), flags);
  if (fd < 0 && errno == ENOENT && create) {
    if (::mkdirat(dir, name.c_str(), 0755) != 0 && errno != EEXIST) {
      failAt("cannot create directory", paths, hostPath);
    }
    fd = ::openat(dir, name.c_str(), flags);
  }
  if (fd >= 0) return fd;
  const int err = errno;
  if (err == ENOENT) return -1;
  if (err == ENOTDIR || err == ELOOP) requireKindOrAbsent(paths, hostPath, dir, name, S_IFDIR);
  fail("cannot open directory", paths.display(hostPath), err);
}

// How far a walk from the root got: the deepest real directory reached (and
// its host path), and whether that is the directory holding the path (whose
// last component is `name`).
struct Walk {
  UniqueFd dir;
  bool complete = false;
  std::string name;
  fs::path at = "/";
};

// Walks from the root to the directory holding `hostPath`, opening each
// component relative to the one before without following links, so no
// rename or link elsewhere can redirect it. Throws PathRefused naming the
// first component that is a symlink or not a directory.
Walk walkToParent(const HostPaths& paths, const fs::path& hostPath, bool create) {
  const std::vector<std::string> parts = componentsOf(hostPath);
  Walk w{openRoot(paths), false, parts.back()};
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    const fs::path host = w.at / parts[i];
    const int fd = openDirAt(paths, w.dir.get(), parts[i], host, create);
    if (fd < 0) return w;
    w.dir = UniqueFd(fd);
    w.at = host;
  }
  w.complete = true;
  return w;
}

// Where a LastInRoot path (/etc/nfs.conf) ends: itself, or the host path
// its chain of links ends at (see Links::LastInRoot).
fs::path followLastLink(const HostPaths& paths, const fs::path& hostPath) {
  fs::path p = hostPath.lexically_normal();
  std::string first;  // the first link's target, as errors name it
  for (int hop = 0; hop <= 40; ++hop) {
    const Walk w = walkToParent(paths, p, false);
    const auto st = w.complete ? statAt(w.dir.get(), w.name, paths.display(p)) : std::nullopt;
    if (!st || !S_ISLNK(st->st_mode)) {
      if (!st && hop > 0) {
        throw PathRefused(
            paths.display(hostPath) + " is a symlink to " + first + ", which cannot be resolved" +
            (paths.isLiveHost() ? "" : " inside the root") + " (No such file or directory)");
      }
      return p;
    }
    const fs::path target = readLinkAt(w.dir.get(), w.name);
    if (first.empty()) first = target.string();
    const fs::path next =
        (target.is_absolute() ? target.relative_path() : p.parent_path().relative_path() / target)
            .lexically_normal();
    if (next.empty() || *next.begin() == "..") {
      throw PathRefused(paths.display(hostPath) + " is a symlink to " + first +
                        ", which leads outside the root " + paths.root().string());
    }
    p = fs::path("/") / next;
  }
  throw PathRefused(paths.display(hostPath) + " is a chain of more than 40 symlinks");
}

// The walk to the file a host path names (after a LastInRoot link), and that file's host path.
struct Target {
  fs::path host;
  Walk walk;
};

// The host path of the file a host path names (after a LastInRoot link).
fs::path followed(const HostPaths& paths, const fs::path& hostPath) {
  return HostPaths::linksFor(hostPath) == Links::LastInRoot ? followLastLink(paths, hostPath)
                                                            : hostPath.lexically_normal();
}

Target locate(const HostPaths& paths, const fs::path& hostPath, bool create) {
  fs::path host = followed(paths, hostPath);
  Walk walk = walkToParent(paths, host, create);
  return {std::move(host), std::move(walk)};
}

// openat2 with the root as "/"; -1 (errno set) when it fails.
int openat2InRoot(const HostPaths& paths, const fs::path& hostPath, std::uint64_t flags) {
  const UniqueFd root = openRoot(paths);
  open_how how{};
  how.flags = flags | O_CLOEXEC;
  how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
  const std::string rel = hostPath.lexically_normal().relative_path().string();
  long fd = -1;
  // EAGAIN: a rename elsewhere raced the lookup (openat2(2) says retry); bounded.
  for (int attempt = 0; attempt < 8; ++attempt) {
    fd = ::syscall(SYS_openat2, root.get(), rel.c_str(), &how, sizeof how);
    if (fd >= 0 || errno != EAGAIN) break;
  }
  if (fd < 0 && (errno == ENOSYS || errno == EPERM)) {
    // EPERM: a seccomp filter (older Docker, systemd SystemCallFilter=) that
    // does not know openat2. Either way reads cannot be confined, and a
    // probe must not report that as "absent".
    throw ConfinementUnavailable(
        "openat2 is unavailable (kernel older than 5.6, or blocked by a seccomp filter or "
        "container): cannot confine reads of " +
        hostPath.lexically_normal().string() + " to --root " + paths.root().string());
  }
  return static_cast<int>(fd);
}

// Pre-flight: the directory `dir` (host path `at`: the deepest one that
// exists on the way to a target) is not on a read-only mount and, when files
// are to be `created` in it, writable by us (as root that is mostly the
// read-only mount again, but not always: an immutable directory, an
// unprivileged run). Returns its file system's figures for the space check.
struct statvfs requireWritableDir(const HostPaths& paths, int dir, const fs::path& at,
                                  bool created) {
  struct statvfs vfs {};
  if (::fstatvfs(dir, &vfs) != 0) failAt("cannot stat the file system of", paths, at);
  if ((vfs.f_flag & ST_RDONLY) != 0) {
    throw std::runtime_error(paths.display(at) +
                             " is on a read-only file system; expected a writable one");
  }
  if (created && ::faccessat(dir, ".", W_OK, AT_EACCESS) != 0) {
    const int err = errno;
    throw std::runtime_error(paths.display(at) + " is not writable (" + util::errnoText(err) +
                             "); expected a directory apply can create files in; apply changes "
                             "nothing");
  }
  return vfs;
}

// A read-only probe path (Links::InRoot), opened with the root as "/"; an
// empty fd when it does not exist. On the live host the root is "/" already,
// so plain openat confines as much and works where openat2 is filtered.
UniqueFd openInRoot(const HostPaths& paths, const fs::path& hostPath, std::uint64_t flags) {
  const int fd = paths.isLiveHost() ? ::openat(AT_FDCWD, hostPath.lexically_normal().c_str(),
                                               static_cast<int>(flags) | O_CLOEXEC)
                                    : openat2InRoot(paths, hostPath, flags);
  if (fd >= 0) return UniqueFd(fd);
  if (errno == ENOENT || errno == ENOTDIR) return {};
  failAt("cannot open", paths, hostPath);
}

// A host path opened for reading (O_NONBLOCK: a FIFO must not hang the
// probe) or, with O_DIRECTORY, listing; an empty fd when it does not exist.
UniqueFd openForRead(const HostPaths& paths, const fs::path& hostPath, int extra) {
  const int flags = O_RDONLY | O_NOCTTY | O_NONBLOCK | extra;
  if (HostPaths::linksFor(hostPath) == Links::InRoot)
    return openInRoot(paths, hostPath, static_cast<std::uint64_t>(flags));
  const Target t = locate(paths, hostPath, false);
  if (!t.walk.complete) return {};
  const int fd = ::openat(t.walk.dir.get(), t.walk.name.c_str(), flags | O_NOFOLLOW | O_CLOEXEC);
  if (fd >= 0) return UniqueFd(fd);
  const int err = errno;
  if (err == ENOENT) return {};
  if (err == ELOOP || err == ENOTDIR) {
    requireKindOrAbsent(paths, t.host, t.walk.dir.get(), t.walk.name,
                        (extra & O_DIRECTORY) ? S_IFDIR : S_IFREG);
  }
  fail("cannot open", paths.display(t.host), err);
}

void writeAll(int fd, const std::string& data, const std::string& shown) {
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail("cannot write", shown, errno);
    }
    done += static_cast<std::size_t>(n);
  }
}

// A temporary file's name: "." + the name of the file it replaces +
// kTempMarker + kTempDigits lowercase hex digits (temporaryTarget reads it).
constexpr std::string_view kTempMarker = ".nfsrdma-";
constexpr std::size_t kTempDigits = 16;

// A new temporary file beside `name` in `dir`: its name and open fd.
std::pair<std::string, UniqueFd> createTempAt(int dir, const std::string& name,
                                              const std::string& shown) {
  static std::mt19937_64 rng{std::random_device{}()};
  static_assert(kTempDigits == 16, "the suffix is one 64-bit number in hex");
  for (int attempt = 0; attempt < 100; ++attempt) {
    char suffix[kTempDigits + 1];
    std::snprintf(suffix, sizeof suffix, "%016llx", static_cast<unsigned long long>(rng()));
    std::string tmp = "." + name + std::string(kTempMarker) + suffix;
    const int fd =
        ::openat(dir, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd >= 0) return {std::move(tmp), UniqueFd(fd)};
    if (errno != EEXIST) fail("cannot create a temporary file next to", shown, errno);
  }
  throw std::runtime_error("cannot create a temporary file next to " + shown + ": 100 names taken");
}

}  // namespace

std::optional<std::string> readHostFile(const HostPaths& paths, const fs::path& hostPath) {
  const UniqueFd fd = openForRead(paths, hostPath, 0);
  if (!fd) return std::nullopt;
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) failAt("cannot stat", paths, hostPath);
  if (!S_ISREG(st.st_mode)) {
    throw PathRefused(paths.display(hostPath) + " is a " + kindName(st.st_mode) +
                      "; expected a regular file");
  }
  std::string out;
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) failAt("cannot read", paths, hostPath);
    if (n == 0) return out;
    out.append(buf, static_cast<std::size_t>(n));
  }
}

namespace {

// The sorted names in the open directory `dir` (host path `hostPath`);
// `dir` stays open.
std::vector<std::string> namesIn(const HostPaths& paths, int dir, const fs::path& hostPath) {
  UniqueFd own(::fcntl(dir, F_DUPFD_CLOEXEC, 0));
  if (!own) failAt("cannot list", paths, hostPath);
  DIR* d = ::fdopendir(own.get());
  if (d == nullptr) failAt("cannot list", paths, hostPath);
  own.release();  // closedir closes it
  ::rewinddir(d);
  std::vector<std::string> out;
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name != "." && name != "..") out.push_back(name);
  }
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

std::vector<std::string> listHostDir(const HostPaths& paths, const fs::path& hostPath) {
  const UniqueFd fd = openForRead(paths, hostPath, O_DIRECTORY);
  if (!fd) return {};
  return namesIn(paths, fd.get(), hostPath);
}

std::optional<fs::file_status> hostPathStatus(const HostPaths& paths, const fs::path& hostPath) {
  std::optional<struct stat> st;
  if (HostPaths::linksFor(hostPath) == Links::InRoot) {
    // O_PATH alone: openat2 refuses it with any other open flag.
    const UniqueFd fd = openInRoot(paths, hostPath, std::uint64_t{O_PATH});
    if (!fd) return std::nullopt;
    st.emplace();
    if (::fstat(fd.get(), &*st) != 0) failAt("cannot stat", paths, hostPath);
  } else {
    const Target t = locate(paths, hostPath, false);
    if (t.walk.complete) st = statAt(t.walk.dir.get(), t.walk.name, paths.display(t.host));
  }
  if (!st) return std::nullopt;
  return fs::file_status(fileTypeOf(st->st_mode), static_cast<fs::perms>(st->st_mode & 07777));
}

bool hostPathExists(const HostPaths& paths, const fs::path& hostPath) {
  return hostPathStatus(paths, hostPath).has_value();
}

void rethrowUnlessAbsence(const fs::path& hostPath) {
  try {
    throw;
  } catch (const ConfinementUnavailable&) {
    throw;
  } catch (const PathRefused&) {
    // On a probe path (InRoot) links are resolved inside the root, so a
    // refusal there only says "not a regular file": absent, as nfs-utils
    // and the kernel would treat it. Anywhere else it is a link we refuse.
    if (HostPaths::linksFor(hostPath) != Links::InRoot) throw;
  } catch (const std::exception&) {
  }
}

std::optional<std::string> readHostFileOrAbsent(const HostPaths& paths, const fs::path& hostPath) {
  return orAbsent(hostPath, [&] { return readHostFile(paths, hostPath); });
}

std::vector<std::string> listHostDirOrAbsent(const HostPaths& paths, const fs::path& hostPath) {
  return orAbsent(hostPath, [&] { return listHostDir(paths, hostPath); });
}

UniqueFd openHostDir(const HostPaths& paths, const fs::path& hostPath, bool create) {
  const Walk w = walkToParent(paths, hostPath, create);
  if (!w.complete) return {};
  return UniqueFd(openDirAt(paths, w.dir.get(), w.name, hostPath.lexically_normal(), create));
}

void writeHostFile(const HostPaths& paths, const fs::path& hostPath, const std::string& content,
                   fs::perms mode) {
  // procfs has no rename: a temp file there fails, or in a staged tree
  // replaces the pseudo-file with a regular one. writeProcValue writes those.
  // Checked where an /etc/nfs.conf link ends too, before any mkdir.
  const fs::path host = followed(paths, hostPath);
  if (HostPaths::isWithin(host, "/proc")) {
    throw PathRefused(paths.display(host) +
                      " is a kernel file; expected a file that can be replaced (temp file and "
                      "rename are never used under /proc)");
  }
  const Target t{host, walkToParent(paths, host, true)};
  const std::string shown = paths.display(t.host);
  if (!t.walk.complete) {  // a directory vanished between mkdir and open: never write into a parent
    throw std::runtime_error("cannot write " + shown + ": the directories on the way to it " +
                             "could not be created (" + paths.display(t.walk.at) + " is the " +
                             "deepest one there)");
  }
  const int dir = t.walk.dir.get();
  if (const auto st = statAt(dir, t.walk.name, shown)) {
    if (!S_ISREG(st->st_mode))
      refuseKind(paths, t.host, st->st_mode, dir, t.walk.name, "a regular file");
    mode = static_cast<fs::perms>(st->st_mode & 07777);
  }
  auto [tmp, fd] = createTempAt(dir, t.walk.name, shown);
  try {
    writeAll(fd.get(), content, shown);
    if (::fchmod(fd.get(), static_cast<mode_t>(mode)) != 0)
      fail("cannot chmod the copy of", shown, errno);
    if (::fsync(fd.get()) != 0) fail("cannot fsync the copy of", shown, errno);
    if (::close(fd.release()) != 0) fail("cannot write the copy of", shown, errno);
    if (::renameat(dir, tmp.c_str(), dir, t.walk.name.c_str()) != 0) {
      fail("cannot rename into place", shown, errno);
    }
  } catch (...) {
    ::unlinkat(dir, tmp.c_str(), 0);
    throw;
  }
  if (::fsync(dir) != 0) fail("cannot fsync the directory of", shown, errno);
}

fs::path hostFileTarget(const HostPaths& paths, const fs::path& hostPath) {
  return followed(paths, hostPath);
}

std::optional<std::string> temporaryTarget(const std::string& name) {
  const std::size_t suffix = kTempMarker.size() + kTempDigits;
  if (name.size() <= 1 + suffix || name.front() != '.') return std::nullopt;
  const std::string_view tail = std::string_view(name).substr(name.size() - suffix);
  const bool digits = tail.substr(kTempMarker.size()).find_first_not_of("0123456789abcdef") ==
                      std::string_view::npos;
  if (tail.substr(0, kTempMarker.size()) != kTempMarker || !digits) return std::nullopt;
  return name.substr(1, name.size() - 1 - suffix);
}

std::vector<fs::path> removeLeftTemporaries(const HostPaths& paths, const fs::path& dir,
                                            const std::function<bool(const std::string&)>& owns,
                                            bool dryRun) {
  const UniqueFd fd = openHostDir(paths, dir, false);
  std::vector<fs::path> out;
  if (!fd) return out;
  for (const std::string& name : namesIn(paths, fd.get(), dir)) {
    const std::optional<std::string> target = temporaryTarget(name);
    if (!target || !owns(*target)) continue;
    const fs::path host = dir / name;
    // Made by O_CREAT|O_EXCL|O_NOFOLLOW as this user: a regular file of ours.
    const auto st = statAt(fd.get(), name, paths.display(host));
    if (!st || !S_ISREG(st->st_mode) || st->st_uid != ::geteuid()) continue;
    if (!dryRun && ::unlinkat(fd.get(), name.c_str(), 0) != 0 && errno != ENOENT)
      failAt("cannot remove", paths, host);
    out.push_back(host);
  }
  return out;
}

void removeHostFile(const HostPaths& paths, const fs::path& hostPath) {
  const Walk w = walkToParent(paths, hostPath, false);
  if (!w.complete) return;
  requireKindOrAbsent(paths, hostPath, w.dir.get(), w.name, S_IFREG);
  if (::unlinkat(w.dir.get(), w.name.c_str(), 0) != 0 && errno != ENOENT) {
    failAt("cannot remove", paths, hostPath);
  }
}

void renameHostFile(const HostPaths& paths, const fs::path& from, const fs::path& to) {
  if (from.parent_path() != to.parent_path()) {
    throw std::invalid_argument("rename " + from.string() + " to " + to.string() +
                                ": not in one directory");
  }
  const Walk w = walkToParent(paths, from, false);
  const std::string name = to.filename().string();
  // RENAME_NOREPLACE: a record retired earlier keeps its name.
  const int rc = w.complete ? ::renameat2(w.dir.get(), w.name.c_str(), w.dir.get(), name.c_str(),
                                          RENAME_NOREPLACE)
                            : -1;
  const int err = w.complete ? errno : ENOENT;
  if (rc != 0) fail("cannot rename " + paths.display(from) + " to", to.string(), err);
}

fs::path firstUnusedHostPath(const HostPaths& paths, const fs::path& base) {
  const Walk w = walkToParent(paths, base, false);
  if (!w.complete) return base;
  // Bounded: a directory with this many runs in one second is not a real host.
  for (int i = 0; i <= 100000; ++i) {
    const std::string name = i == 0 ? w.name : w.name + "." + std::to_string(i);
    if (!statAt(w.dir.get(), name, paths.display(base))) return base.parent_path() / name;
  }
  throw std::runtime_error("no free name for " + paths.display(base) + " (tried .1 to .100000)");
}

std::optional<fs::path> backupHostFile(const HostPaths& paths, const fs::path& hostPath,
                                       const std::string& timestamp) {
  const auto content = readHostFile(paths, hostPath);
  if (!content) return std::nullopt;
  const fs::path target = firstUnusedHostPath(
      paths, fs::path(HostPaths::kBackupDir) / (hostPath.filename().string() + "." + timestamp));
  writeHostFile(paths, target, *content, fs::perms(0600));
  return target;
}

void writeProcValue(const HostPaths& paths, const fs::path& hostPath, const std::string& value,
                    bool append) {
  const std::string shown = paths.display(hostPath);
  const Walk w = walkToParent(paths, hostPath, false);
  if (!w.complete) fail("cannot open", shown, ENOENT);
  const int flags = O_WRONLY | O_NOFOLLOW | O_CLOEXEC | (append ? O_APPEND : O_TRUNC);
  UniqueFd fd(::openat(w.dir.get(), w.name.c_str(), flags));
  if (!fd) {
    const int err = errno;
    if (err == ELOOP) requireKindOrAbsent(paths, hostPath, w.dir.get(), w.name, S_IFREG);
    fail("cannot open", shown, err);
  }
  writeAll(fd.get(), value, shown);
  if (::close(fd.release()) != 0) fail("cannot write", shown, errno);
}

void checkHostFileWritable(const HostPaths& paths, const fs::path& hostPath, std::uintmax_t bytes) {
  const Target t = locate(paths, hostPath, false);
  if (t.walk.complete) requireKindOrAbsent(paths, t.host, t.walk.dir.get(), t.walk.name, S_IFREG);
  const struct statvfs vfs = requireWritableDir(paths, t.walk.dir.get(), t.walk.at, true);
  const std::uintmax_t avail = static_cast<std::uintmax_t>(vfs.f_bavail) * vfs.f_frsize;
  if (avail < bytes) {
    throw std::runtime_error("not enough free space for " + paths.display(t.host) + ": " +
                             std::to_string(bytes) + " bytes needed, " + std::to_string(avail) +
                             " available");
  }
}

void checkHostPathKind(const HostPaths& paths, const fs::path& hostPath, bool directory) {
  const Walk w = walkToParent(paths, hostPath, false);
  if (w.complete) {
    requireKindOrAbsent(paths, hostPath, w.dir.get(), w.name, directory ? S_IFDIR : S_IFREG);
  }
  if (!directory) {  // a kernel file, written in place: only a read-only mount stops that
    requireWritableDir(paths, w.dir.get(), w.at, false);
    return;
  }
  // Files are made in the directory itself once it exists, else where it will be made.
  const UniqueFd self(w.complete ? openDirAt(paths, w.dir.get(), w.name, hostPath, false) : -1);
  if (self) {
    requireWritableDir(paths, self.get(), hostPath.lexically_normal(), true);
  } else {
    requireWritableDir(paths, w.dir.get(), w.at, true);
  }
}

void checkNoLinkOnTheWay(const HostPaths& paths, const fs::path& hostPath, bool directory) {
  const Target t = locate(paths, hostPath, false);
  if (!t.walk.complete) return;
  const auto st = statAt(t.walk.dir.get(), t.walk.name, paths.display(t.host));
  if (st && S_ISLNK(st->st_mode)) {
    refuseKind(paths, t.host, st->st_mode, t.walk.dir.get(), t.walk.name,
               directory ? "a directory" : "a regular file");
  }
}

std::string utcTimestamp() {
  std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  ::gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", &tm);
  return buf;
}

}  // namespace nfsrdma::server
