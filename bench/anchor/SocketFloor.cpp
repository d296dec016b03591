#include "bench/anchor/SocketFloor.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <span>
#include <thread>
#include <vector>

#include "util/ErrnoText.h"
#include "util/UniqueFd.h"

namespace nfsrdma::bench {
namespace {

using Clock = std::chrono::steady_clock;

// An NFSv4.1 READ reply before its data: RPC reply header (24 bytes),
// COMPOUND status, empty tag and result count (12), SEQUENCE (44), PUTFH (8),
// READ status, eof and data length (12).
constexpr std::size_t kReplyHeadBytes = 100;

double threadCpuSeconds() {
  rusage ru{};
  ::getrusage(RUSAGE_THREAD, &ru);
  auto secs = [](const timeval& tv) {
    return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6;
  };
  return secs(ru.ru_utime) + secs(ru.ru_stime);
}

// Receives exactly buf.size() bytes; false at end of stream or on error.
bool receiveAll(int fd, std::span<std::uint8_t> buf) {
  std::size_t got = 0;
  while (got < buf.size()) {
    const ssize_t n = ::recv(fd, buf.data() + got, buf.size() - got, 0);
    if (n > 0) {
      got += static_cast<std::size_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      return false;
    }
  }
  return true;
}

// Sends one record (head, then the block); false once the connection is gone.
bool sendRecord(int fd, std::vector<std::uint8_t>& head, std::vector<std::uint8_t>& block) {
  std::array<iovec, 2> iov{{{head.data(), head.size()}, {block.data(), block.size()}}};
  std::size_t left = head.size() + block.size();
  msghdr msg{};
  msg.msg_iov = iov.data();
  msg.msg_iovlen = iov.size();
  while (left > 0) {
    const ssize_t n = ::sendmsg(fd, &msg, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    left -= static_cast<std::size_t>(n);
    // Advance the iovecs past what went out.
    auto sent = static_cast<std::size_t>(n);
    while (sent > 0 && msg.msg_iovlen > 0) {
      const std::size_t take = std::min(sent, msg.msg_iov[0].iov_len);
      msg.msg_iov[0].iov_base = static_cast<std::uint8_t*>(msg.msg_iov[0].iov_base) + take;
      msg.msg_iov[0].iov_len -= take;
      sent -= take;
      if (msg.msg_iov[0].iov_len == 0) {
        ++msg.msg_iov;
        --msg.msg_iovlen;
      }
    }
  }
  return true;
}

// The server's side: sends records on schedule until stop is set or the
// connection goes away.
void sendRecords(int listener, std::size_t pieceSize, std::size_t pieces, double opsPerSecond,
                 const std::atomic<Clock::rep>& startAt, const std::atomic<bool>& stop) {
  UniqueFd fd(::accept(listener, nullptr, nullptr));
  if (fd.get() < 0) return;
  // The schedule starts when the receiver's window does: a record sent
  // before it would be counted in a window that did not pay for its wait.
  while (startAt.load() == 0) {
    if (stop.load()) return;
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  std::vector<std::uint8_t> head(4 + kReplyHeadBytes, 0);
  const auto recordLength = static_cast<std::uint32_t>(kReplyHeadBytes + pieceSize);
  const std::uint32_t mark = htonl(0x80000000U | recordLength);  // last fragment
  std::memcpy(head.data(), &mark, sizeof mark);
  std::vector<std::uint8_t> block(pieceSize, 0x5a);
  const auto interval = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(1.0 / opsPerSecond));
  auto next = Clock::time_point(Clock::duration(startAt.load()));
  while (!stop.load(std::memory_order_relaxed)) {
    const auto now = Clock::now();
    if (next > now) std::this_thread::sleep_until(next);
    // A receiver that fell behind is not sent a burst of everything it missed.
    next = std::max(next + interval, now - std::chrono::milliseconds(100));
    for (std::size_t p = 0; p < pieces; ++p) {
      if (!sendRecord(fd.get(), head, block)) return;
    }
  }
}

// A listening TCP socket on 127.0.0.1 at a port the kernel picks (in addr).
UniqueFd listenOnLoopback(sockaddr_in& addr, std::string& error) {
  UniqueFd listener(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (listener.get() < 0) {
    error = util::errnoMessage("socket floor: socket");
    return listener;
  }
  addr = {};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (::bind(listener.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(listener.get(), 1) != 0 ||
      ::getsockname(listener.get(), reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    error = util::errnoMessage("socket floor: listen on 127.0.0.1");
    return UniqueFd();
  }
  return listener;
}

// Receives whole replies (each block in pieces, each piece behind a reply
// head) for the workload's runtime; counts them into m.
void receiveReplies(int fd, const ReadWorkload& w, std::size_t piece, std::size_t pieces,
                    std::atomic<Clock::rep>& startAt, ReadMeasurement& m) {
  std::vector<std::uint8_t> head(4 + kReplyHeadBytes);
  std::vector<std::uint8_t> block(w.blockSize);
  const double cpu0 = threadCpuSeconds();
  const auto start = Clock::now();
  startAt.store(std::max<Clock::rep>(start.time_since_epoch().count(), 1));
  const auto deadline = start + w.runtime;
  while (Clock::now() < deadline) {
    errno = 0;  // recv at end of stream returns 0 and leaves errno alone
    bool whole = true;
    for (std::size_t p = 0; p < pieces && whole; ++p) {
      whole = receiveAll(fd, head) &&
              receiveAll(fd, std::span(block).subspan(p * piece,
                                                      std::min(piece, block.size() - p * piece)));
    }
    if (!whole) {
      m.error = errno != 0 ? util::errnoMessage("socket floor: recv")
                           : "socket floor: the sender closed the connection";
      break;
    }
    ++m.ops;
    m.bytes += w.blockSize;
  }
  m.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  m.cpuSeconds = threadCpuSeconds() - cpu0;
}

}  // namespace

ReadMeasurement runSocketFloor(const ReadWorkload& w, double opsPerSecond, std::size_t maxRead) {
  ReadMeasurement m;
  m.client = "socket-floor";
  if (!(opsPerSecond > 0) || w.blockSize == 0) {
    m.error = "socket floor: needs a positive rate and block size";
    return m;
  }
  sockaddr_in addr{};
  UniqueFd listener = listenOnLoopback(addr, m.error);
  if (listener.get() < 0) return m;
  const std::size_t piece = maxRead > 0 ? std::min<std::size_t>(w.blockSize, maxRead) : w.blockSize;
  const std::size_t pieces = (w.blockSize + piece - 1) / piece;
  std::atomic<bool> stop{false};
  std::atomic<Clock::rep> startAt{0};
  std::thread sender(sendRecords, listener.get(), piece, pieces, opsPerSecond, std::cref(startAt),
                     std::cref(stop));
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (fd.get() < 0 || ::connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    m.error = util::errnoMessage("socket floor: connect to 127.0.0.1");
    stop = true;
    ::shutdown(listener.get(), SHUT_RDWR);  // ends a sender still waiting in accept()
    sender.join();
    return m;
  }
  int one = 1;
  ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  receiveReplies(fd.get(), w, piece, pieces, startAt, m);
  stop = true;
  ::shutdown(fd.get(), SHUT_RDWR);  // a sender blocked in sendmsg fails out of it
  sender.join();
  return m;
}

}  // namespace nfsrdma::bench
