// RunLock: flock on the state directory, taken without waiting.
#include "server/RunLock.h"

#include <sys/file.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

#include "server/HostFiles.h"
#include "util/ErrnoText.h"

namespace nfsrdma::server {

RunLock::RunLock(const HostPaths& paths, bool create)
    : fd_(openHostDir(paths, HostPaths::kStateDir, create)) {
  if (!fd_) return;
  if (::flock(fd_.get(), LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    const std::string dir = paths.display(HostPaths::kStateDir);
    if (err == EWOULDBLOCK) {
      throw std::runtime_error(
          "another nfsrdma-server apply or rollback is running: it holds a lock on " + dir +
          "; run this one when it has finished");
    }
    throw std::runtime_error("flock " + dir + ": " + util::errnoText(err));
  }
}

}  // namespace nfsrdma::server
