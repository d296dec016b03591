#include "tests/unit/client/ScriptedPeer.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <system_error>

#include "client/xdr/XdrDecoder.h"

namespace nfsrdma::testpeer {
namespace {

constexpr std::uint32_t kLastFragment = 0x80000000U;

std::uint32_t be32(const std::uint8_t* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) |
         std::uint32_t{p[3]};
}

[[noreturn]] void throwErrno(const char* what) {
  throw std::system_error(errno, std::generic_category(), what);
}

int remainingMs(std::chrono::steady_clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
  return left.count() < 0 ? 0 : static_cast<int>(left.count()) + 1;
}

void setNonBlocking(int fd) {
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0) throwErrno("fcntl O_NONBLOCK");
}

// The reply header up to (not including) accept_stat / reject_stat.
void putReplyStart(xdr::XdrEncoder& enc, std::uint32_t xid, rpc::ReplyStat stat) {
  enc.putU32(xid);
  enc.putU32(rpc::kMsgReply);
  enc.putU32(static_cast<std::uint32_t>(stat));
}

}  // namespace

Bytes XdrBuilder::bytes() const {
  if (enc_.overflowed()) throw std::length_error("XdrBuilder: capacity exceeded");
  return Bytes(enc_.head().begin(), enc_.head().end());
}

std::optional<RpcCall> parseCall(std::span<const std::uint8_t> message) {
  xdr::XdrDecoder dec(message);
  RpcCall c;
  c.xid = dec.getU32();
  const std::uint32_t type = dec.getU32();
  const std::uint32_t rpcVersion = dec.getU32();
  c.program = dec.getU32();
  c.version = dec.getU32();
  c.procedure = dec.getU32();
  c.credentialFlavor = dec.getU32();
  (void)dec.getOpaque(rpc::kMaxAuthBytes);
  (void)dec.getU32();  // verifier flavor
  (void)dec.getOpaque(rpc::kMaxAuthBytes);
  if (!dec.ok() || type != rpc::kMsgCall || rpcVersion != rpc::kRpcVersion) return std::nullopt;
  const auto rest = dec.rest();
  c.args.assign(rest.begin(), rest.end());
  return c;
}

Bytes successReply(std::uint32_t xid, std::span<const std::uint8_t> results) {
  XdrBuilder b(64);
  putReplyStart(b.enc(), xid, rpc::ReplyStat::kAccepted);
  b.enc().putU32(rpc::kAuthNone);  // verifier
  b.enc().putU32(0);
  b.enc().putU32(static_cast<std::uint32_t>(rpc::AcceptStat::kSuccess));
  Bytes out = b.bytes();
  out.insert(out.end(), results.begin(), results.end());  // verbatim, even if not word-aligned
  return out;
}

Bytes acceptErrorReply(std::uint32_t xid, rpc::AcceptStat stat, std::uint32_t low,
                       std::uint32_t high) {
  XdrBuilder b(64);
  putReplyStart(b.enc(), xid, rpc::ReplyStat::kAccepted);
  b.enc().putU32(rpc::kAuthNone);
  b.enc().putU32(0);
  b.enc().putU32(static_cast<std::uint32_t>(stat));
  if (stat == rpc::AcceptStat::kProgMismatch) {
    b.enc().putU32(low);
    b.enc().putU32(high);
  }
  return b.bytes();
}

Bytes authErrorReply(std::uint32_t xid, std::uint32_t authStat) {
  XdrBuilder b(64);
  putReplyStart(b.enc(), xid, rpc::ReplyStat::kDenied);
  b.enc().putU32(static_cast<std::uint32_t>(rpc::RejectStat::kAuthError));
  b.enc().putU32(authStat);
  return b.bytes();
}

Bytes rpcMismatchReply(std::uint32_t xid, std::uint32_t low, std::uint32_t high) {
  XdrBuilder b(64);
  putReplyStart(b.enc(), xid, rpc::ReplyStat::kDenied);
  b.enc().putU32(static_cast<std::uint32_t>(rpc::RejectStat::kRpcMismatch));
  b.enc().putU32(low);
  b.enc().putU32(high);
  return b.bytes();
}

Bytes word(std::uint32_t v) {
  XdrBuilder b(4);
  b.enc().putU32(v);
  return b.bytes();
}

Bytes concat(std::initializer_list<std::span<const std::uint8_t>> parts) {
  Bytes out;
  for (auto p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

Bytes pattern(std::size_t size, std::uint32_t seed) {
  Bytes out(size);
  std::uint32_t x = seed * 2654435761U + 1;
  for (auto& b : out) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    b = static_cast<std::uint8_t>(x);
  }
  return out;
}

Bytes recordMarker(std::uint32_t length, bool last) {
  return word(length | (last ? kLastFragment : 0U));
}

Bytes frame(std::span<const std::uint8_t> message) {
  const std::size_t sizes[] = {message.size()};
  return frameFragments(message, sizes);
}

Bytes frameFragments(std::span<const std::uint8_t> message, std::span<const std::size_t> sizes) {
  Bytes out;
  std::size_t at = 0;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const std::size_t n = sizes[i];
    if (n > message.size() - at)
      throw std::invalid_argument("frameFragments: sizes exceed the message");
    const Bytes m = recordMarker(static_cast<std::uint32_t>(n), i + 1 == sizes.size());
    out.insert(out.end(), m.begin(), m.end());
    out.insert(out.end(), message.begin() + static_cast<std::ptrdiff_t>(at),
               message.begin() + static_cast<std::ptrdiff_t>(at + n));
    at += n;
  }
  if (at != message.size())
    throw std::invalid_argument("frameFragments: sizes do not cover the message");
  return out;
}

// ------------------------------------------------------------ connections

Connection connectSocketPair() {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) throwErrno("socketpair");
  Connection c;
  c.peer = std::make_unique<ScriptedPeer>(fds[1], true);
  c.transport = transport::TcpTransport::adopt(fds[0], "peer socketpair");
  return c;
}

LoopbackListener::LoopbackListener() : fd_(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
  if (fd_ < 0) throwErrno("socket");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  if (::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd_, 1) != 0 ||
      ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    const int saved = errno;
    ::close(fd_);
    errno = saved;
    throwErrno("listen on 127.0.0.1:0");
  }
  port_ = ntohs(addr.sin_port);
}

LoopbackListener::~LoopbackListener() {
  ::close(fd_);
}

std::unique_ptr<ScriptedPeer> LoopbackListener::accept(std::chrono::milliseconds timeout) {
  pollfd pfd{fd_, POLLIN, 0};
  if (::poll(&pfd, 1, static_cast<int>(timeout.count())) != 1) return nullptr;
  const int fd = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
  if (fd < 0) throwErrno("accept4");
  return std::make_unique<ScriptedPeer>(fd, false);
}

Connection connectTcpLoopback() {
  LoopbackListener listener;
  Connection c;
  c.transport = transport::TcpTransport::connect("127.0.0.1", listener.port(), kPeerWait);
  c.peer = listener.accept();
  if (!c.peer) throw std::runtime_error("loopback peer: the connection never reached accept()");
  return c;
}

// ------------------------------------------------------------ peer

ScriptedPeer::ScriptedPeer(int fd, bool isSocketPair)
    : fd_(fd), stopFd_(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)), isSocketPair_(isSocketPair) {
  if (stopFd_ < 0) {
    ::close(fd_);
    throwErrno("eventfd");
  }
  setNonBlocking(fd_);
}

ScriptedPeer::~ScriptedPeer() {
  stopServing();
  ::close(fd_);
  ::close(stopFd_);
}

int ScriptedPeer::fillRecord(std::chrono::steady_clock::time_point deadline, Bytes& record) {
  for (;;) {
    // A whole record buffered? Walk its fragments.
    std::size_t at = 0;
    bool complete = false;
    while (in_.size() - at >= 4) {
      const std::uint32_t marker = be32(in_.data() + at);
      const std::size_t len = marker & ~kLastFragment;
      if (in_.size() - at - 4 < len) break;
      at += 4 + len;
      if ((marker & kLastFragment) != 0) {
        complete = true;
        break;
      }
    }
    if (complete) {
      record.clear();
      std::size_t pos = 0;
      while (pos < at) {
        const std::size_t len = be32(in_.data() + pos) & ~kLastFragment;
        record.insert(record.end(), in_.begin() + static_cast<std::ptrdiff_t>(pos + 4),
                      in_.begin() + static_cast<std::ptrdiff_t>(pos + 4 + len));
        pos += 4 + len;
      }
      in_.erase(in_.begin(), in_.begin() + static_cast<std::ptrdiff_t>(at));
      return 1;
    }
    std::array<pollfd, 2> fds{{{fd_, POLLIN, 0}, {stopFd_, POLLIN, 0}}};
    const int rc = ::poll(fds.data(), fds.size(), remainingMs(deadline));
    if (rc < 0 && errno != EINTR) return -1;
    if (stop_.load()) return -1;
    if (rc <= 0) {
      if (std::chrono::steady_clock::now() >= deadline) return 0;
      continue;
    }
    std::uint8_t buf[64 * 1024];
    const ssize_t n = ::recv(fd_, buf, sizeof buf, MSG_DONTWAIT);
    if (n == 0) return -1;
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) continue;
      return -1;
    }
    in_.insert(in_.end(), buf, buf + n);
  }
}

std::optional<Bytes> ScriptedPeer::readRecord(std::chrono::milliseconds timeout) {
  Bytes record;
  if (fillRecord(std::chrono::steady_clock::now() + timeout, record) != 1) return std::nullopt;
  return record;
}

std::optional<RpcCall> ScriptedPeer::readCall(std::chrono::milliseconds timeout) {
  auto record = readRecord(timeout);
  if (!record) return std::nullopt;
  return parseCall(*record);
}

bool ScriptedPeer::send(std::span<const std::uint8_t> bytes, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::lock_guard lock(sendMutex_);
  std::size_t at = 0;
  while (at < bytes.size()) {
    const ssize_t n =
        ::send(fd_, bytes.data() + at, bytes.size() - at, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n > 0) {
      at += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) return false;
    pollfd pfd{fd_, POLLOUT, 0};
    if (::poll(&pfd, 1, remainingMs(deadline)) <= 0 &&
        std::chrono::steady_clock::now() >= deadline) {
      return false;
    }
  }
  return true;
}

bool ScriptedPeer::waitConsumed(std::chrono::milliseconds timeout) {
  if (!isSocketPair_) throw std::logic_error("waitConsumed needs a socketpair peer");
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    int queued = 0;
    if (::ioctl(fd_, SIOCOUTQ, &queued) != 0) return false;
    if (queued == 0) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(20));  // polling a condition, bounded
  }
}

bool ScriptedPeer::trickle(std::span<const std::uint8_t> bytes, std::size_t chunk) {
  for (std::size_t at = 0; at < bytes.size(); at += chunk) {
    const auto piece = bytes.subspan(at, std::min(chunk, bytes.size() - at));
    if (!send(piece) || !waitConsumed()) return false;
  }
  return true;
}

void ScriptedPeer::hangUp() {
  ::shutdown(fd_, SHUT_RDWR);
}

void ScriptedPeer::serve(CallHandler onCall, IdleHandler onIdle,
                         std::chrono::milliseconds idleInterval) {
  if (server_.joinable()) throw std::logic_error("ScriptedPeer::serve: already serving");
  stop_.store(false);
  server_ = std::thread([this, onCall = std::move(onCall), onIdle = std::move(onIdle),
                         idleInterval] { serveLoop(onCall, onIdle, idleInterval); });
}

void ScriptedPeer::stopServing() {
  stop_.store(true);
  const std::uint64_t one = 1;
  (void)!::write(stopFd_, &one, sizeof one);
  if (server_.joinable()) server_.join();
  std::uint64_t drain = 0;
  (void)!::read(stopFd_, &drain, sizeof drain);
  stop_.store(false);  // direct reads work again
}

void ScriptedPeer::serveLoop(CallHandler onCall, IdleHandler onIdle,
                             std::chrono::milliseconds idleInterval) {
  Bytes record;
  while (!stop_.load()) {
    const int rc = fillRecord(std::chrono::steady_clock::now() + idleInterval, record);
    if (rc < 0) break;
    if (rc == 0) {
      if (onIdle) onIdle(*this);
      continue;
    }
    auto call = parseCall(record);
    if (!call) {
      ++unparsable_;
      continue;
    }
    ++callsServed_;
    onCall(*this, *call);
  }
}

}  // namespace nfsrdma::testpeer
