#include "util/TcpConnect.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>

namespace nfsrdma::util {
namespace {

using Clock = std::chrono::steady_clock;

// Waits for a connect under way on the non-blocking fd until the deadline;
// the errno of how it ended, 0 when connected.
int waitConnected(int fd, Clock::time_point deadline) noexcept {
  pollfd pfd{fd, POLLOUT, 0};
  int rc = 0;
  for (;;) {  // ends at the deadline: each round waits for what is left of it
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
    rc = ::poll(&pfd, 1, static_cast<int>(std::max<std::int64_t>(left.count(), 0)));
    if (rc >= 0 || errno != EINTR) break;
  }
  if (rc < 0) return errno;
  if (rc == 0) return ETIMEDOUT;
  int soError = 0;
  socklen_t len = sizeof soError;
  if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &soError, &len) != 0) return errno;
  return soError;
}

}  // namespace

int connectWithin(int fd, const SocketAddress& addr, std::chrono::milliseconds timeout) noexcept {
  const auto deadline = Clock::now() + timeout;
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0) return errno;
  const bool wasBlocking = (flags & O_NONBLOCK) == 0;
  if (wasBlocking && ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0) return errno;
  int err = 0;
  if (::connect(fd, addr.get(), addr.length) != 0) {
    err = errno == EINPROGRESS ? waitConnected(fd, deadline) : errno;
  }
  if (wasBlocking && ::fcntl(fd, F_SETFL, flags) != 0 && err == 0) err = errno;
  return err;
}

}  // namespace nfsrdma::util
