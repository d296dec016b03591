// AtomicFile: temp + fsync + rename, so files we own are never torn.
#include "server/AtomicFile.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <ctime>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <system_error>

namespace nfsrdma::server {
namespace fs = std::filesystem;
namespace {

[[noreturn]] void fail(const std::string& what, const fs::path& path, int err) {
  throw std::runtime_error(what + " " + path.string() + ": " +
                           std::error_code(err, std::generic_category()).message());
}

void writeAll(int fd, const std::string& data, const fs::path& path) {
  std::size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail("cannot write", path, errno);
    }
    done += static_cast<std::size_t>(n);
  }
}

void fsyncDir(const fs::path& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) fail("cannot open directory", dir, errno);
  int rc = ::fsync(fd);
  int err = errno;
  ::close(fd);
  if (rc != 0) fail("cannot fsync directory", dir, err);
}

// Where a chain of symlinks at path ends. Absolute targets are read inside
// root, so a --root staging tree never leads a write to the live host; a
// chain that leaves root, dangles or loops is an error naming the link.
fs::path followSymlinks(const fs::path& path, const fs::path& root) {
  std::error_code ec;
  if (!fs::is_symlink(path, ec)) return path;
  const fs::path first = fs::read_symlink(path, ec);
  fs::path p = path;
  for (int hop = 0; hop < 40; ++hop) {
    if (!fs::is_symlink(p, ec)) {
      if (!fs::exists(p, ec)) {
        throw std::runtime_error("cannot write " + path.string() + ": it is a symlink to " + first.string() +
                                 ", which cannot be resolved (No such file or directory)");
      }
      return p;
    }
    const fs::path target = fs::read_symlink(p, ec);
    if (ec) fail("cannot read symlink", p, ec.value());
    p = (target.is_absolute() ? root / target.relative_path() : p.parent_path() / target).lexically_normal();
    const fs::path inside = p.lexically_relative(root);
    if (inside.empty() || *inside.begin() == "..") {
      throw std::runtime_error("cannot write " + path.string() + ": it is a symlink to " + first.string() +
                               ", which leads outside " + root.string());
    }
  }
  throw std::runtime_error("cannot write " + path.string() + ": too many levels of symbolic links");
}

}  // namespace

std::optional<std::string> readFileIfExists(const fs::path& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("cannot read", path, errno);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void writeFileAtomically(const fs::path& linkOrPath, const std::string& content, fs::perms mode,
                         const fs::path& root) {
  // Through a symlink (an /etc/nfs.conf kept elsewhere by the admin or by
  // configuration management) the file it points to is replaced, next to
  // itself: renaming over the link would turn it into a copy.
  const fs::path path = followSymlinks(linkOrPath, root);
  std::error_code ec;
  const fs::path dir = path.parent_path();
  fs::create_directories(dir, ec);
  if (ec) throw std::runtime_error("cannot create directory " + dir.string() + ": " + ec.message());
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) mode = static_cast<fs::perms>(st.st_mode & 07777);

  std::string tmpl = (dir / ("." + path.filename().string() + ".nfsrdma-XXXXXX")).string();
  int fd = ::mkstemp(tmpl.data());
  if (fd < 0) fail("cannot create a temporary file next to", path, errno);
  const fs::path tmp = tmpl;
  try {
    writeAll(fd, content, tmp);
    if (::fchmod(fd, static_cast<mode_t>(mode)) != 0) fail("cannot chmod", tmp, errno);
    if (::fsync(fd) != 0) fail("cannot fsync", tmp, errno);
    if (::close(fd) != 0) {
      fd = -1;
      fail("cannot close", tmp, errno);
    }
    fd = -1;
    if (::rename(tmp.c_str(), path.c_str()) != 0) fail("cannot rename into place", path, errno);
    fsyncDir(dir);
  } catch (...) {
    if (fd >= 0) ::close(fd);
    fs::remove(tmp, ec);
    throw;
  }
}

fs::path firstUnusedPath(const fs::path& base) {
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(base, ec))) return base;
  // Bounded: a directory with this many runs in one second is not a real host.
  for (int i = 1; i <= 100000; ++i) {
    fs::path candidate = base;
    candidate += "." + std::to_string(i);
    if (!fs::exists(fs::symlink_status(candidate, ec))) return candidate;
  }
  throw std::runtime_error("no free name for " + base.string() + " (tried .1 to .100000)");
}

std::optional<fs::path> backupFile(const fs::path& path, const fs::path& backupDir,
                                   const std::string& timestamp) {
  auto content = readFileIfExists(path);
  if (!content) return std::nullopt;
  const fs::path target = firstUnusedPath(backupDir / (path.filename().string() + "." + timestamp));
  writeFileAtomically(target, *content, fs::perms(0600));
  return target;
}

void writeProcValue(const fs::path& path, const std::string& value, bool append) {
  int flags = O_WRONLY | O_CLOEXEC | (append ? O_APPEND : O_TRUNC);
  int fd = ::open(path.c_str(), flags);
  if (fd < 0) fail("cannot open", path, errno);
  try {
    writeAll(fd, value, path);
  } catch (...) {
    ::close(fd);
    throw;
  }
  if (::close(fd) != 0) fail("cannot write", path, errno);
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
