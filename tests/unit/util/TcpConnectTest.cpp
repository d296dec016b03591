// connectWithin (util/TcpConnect.h) against real sockets on loopback only:
// a listener, a closed port and a listener whose accept queue is full
// (the kernel drops further SYNs, so the connect gets no answer).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cerrno>
#include <chrono>
#include <vector>

#include "util/ErrnoText.h"
#include "util/TcpConnect.h"
#include "util/UniqueFd.h"

namespace nfsrdma::util {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// A loopback listener on a port the kernel picks, with the given backlog.
struct Listener {
  UniqueFd fd;
  SocketAddress addr;
};

Listener listenOnLoopback(int backlog) {
  Listener l;
  l.fd.reset(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  EXPECT_TRUE(l.fd);
  l.addr = *parseNumericAddress("127.0.0.1", 0, false);
  EXPECT_EQ(::bind(l.fd.get(), l.addr.get(), l.addr.length), 0) << errnoText(errno);
  EXPECT_EQ(::listen(l.fd.get(), backlog), 0) << errnoText(errno);
  l.addr.length = sizeof l.addr.storage;
  EXPECT_EQ(::getsockname(l.fd.get(), reinterpret_cast<sockaddr*>(&l.addr.storage), &l.addr.length),
            0);
  return l;
}

UniqueFd tcpSocket(int extraFlags = 0) {
  return UniqueFd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | extraFlags, 0));
}

TEST(TcpConnect, ConnectsToAListenerAndKeepsTheSocketsFlags) {
  const Listener l = listenOnLoopback(4);
  const UniqueFd blocking = tcpSocket();
  EXPECT_EQ(connectWithin(blocking.get(), l.addr, 2s), 0);
  EXPECT_EQ(::fcntl(blocking.get(), F_GETFL) & O_NONBLOCK, 0);  // blocking again after
  const UniqueFd nonBlocking = tcpSocket(SOCK_NONBLOCK);
  EXPECT_EQ(connectWithin(nonBlocking.get(), l.addr, 2s), 0);
  EXPECT_NE(::fcntl(nonBlocking.get(), F_GETFL) & O_NONBLOCK, 0);
}

TEST(TcpConnect, AClosedPortIsRefused) {
  SocketAddress closed;
  {
    const Listener l = listenOnLoopback(1);
    closed = l.addr;
  }  // the port is closed now; nothing else listens on it this soon
  const UniqueFd fd = tcpSocket();
  const int err = connectWithin(fd.get(), closed, 2s);
  EXPECT_EQ(err, ECONNREFUSED);
  EXPECT_EQ(errnoText(err), "Connection refused");
}

// A listener that never accepts: once its queue is full, the kernel drops
// further SYNs and the connect waits for a SYN-ACK that does not come.
TEST(TcpConnect, NoAnswerEndsAtTheTimeout) {
  const Listener l = listenOnLoopback(0);
  std::vector<UniqueFd> queued;
  int err = 0;
  Clock::duration took{};
  for (int i = 0; i < 16 && err == 0; ++i) {  // the queue holds backlog + 1
    queued.push_back(tcpSocket());
    const auto start = Clock::now();
    err = connectWithin(queued.back().get(), l.addr, 300ms);
    took = Clock::now() - start;
  }
  ASSERT_EQ(err, ETIMEDOUT) << errnoText(err);
  EXPECT_GE(took, 300ms);
  EXPECT_LT(took, 3s);
  EXPECT_EQ(errnoText(err), "Connection timed out");
}

TEST(TcpConnect, ABadDescriptorIsAnError) {
  const SocketAddress a = *parseNumericAddress("127.0.0.1", 9, false);
  EXPECT_EQ(connectWithin(-1, a, 100ms), EBADF);
}

}  // namespace
}  // namespace nfsrdma::util
