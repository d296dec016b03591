#include "client/transport/TcpTransport.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <limits>

namespace nfsrdma::transport {
namespace {

constexpr std::uint32_t kLastFragment = 0x80000000U;
constexpr std::size_t kInitialInBuffer = 256 * 1024;
// Calls up to this size made from reply callbacks are corked (copied) and
// leave together; larger ones (WRITE payloads) go straight to the socket.
constexpr std::size_t kCorkLimit = 16 * 1024;
constexpr int kMaxReadsPerWakeup = 16;
// With a READ's buffer waiting, a receive at a record boundary takes no more
// than a reply header's worth: the rest of a READ reply then goes straight
// to the caller's buffer instead of through in_ (a READ reply's header is
// about 110 bytes; a larger reply just takes one more receive).
constexpr std::size_t kHeaderReceive = 512;
// Coalescing: only with this many calls in flight, aiming to collect a
// quarter of them per wakeup, never waiting longer than the maximum.
constexpr std::size_t kCoalesceMinInFlight = 16;
constexpr std::int64_t kMaxCoalesceMicros = 1000;
constexpr std::int64_t kMinCoalesceMicros = 50;

void putBe32(std::uint8_t* p, std::uint32_t v) {
  p[0] = static_cast<std::uint8_t>(v >> 24);
  p[1] = static_cast<std::uint8_t>(v >> 16);
  p[2] = static_cast<std::uint8_t>(v >> 8);
  p[3] = static_cast<std::uint8_t>(v);
}

std::uint32_t getBe32(const std::uint8_t* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) |
         std::uint32_t{p[3]};
}

// Writes as much of iov as the socket takes without blocking; returns bytes
// written or -errno.
ssize_t sendSome(int fd, iovec* iov, std::size_t count) {
  msghdr msg{};
  msg.msg_iov = iov;
  msg.msg_iovlen = count;
  for (int attempt = 0; attempt < 100; ++attempt) {
    ssize_t n = ::sendmsg(fd, &msg, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n >= 0) return n;
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return 0;
    return -errno;
  }
  return 0;
}

void appendIov(std::vector<std::uint8_t>& out, const iovec* iov, std::size_t count, std::size_t skip) {
  for (std::size_t i = 0; i < count; ++i) {
    const auto* base = static_cast<const std::uint8_t*>(iov[i].iov_base);
    std::size_t len = iov[i].iov_len;
    if (skip >= len) {
      skip -= len;
      continue;
    }
    out.insert(out.end(), base + skip, base + len);
    skip = 0;
  }
}

}  // namespace

std::unique_ptr<TcpTransport> TcpTransport::connect(const std::string& host, std::uint16_t port,
                                                    std::chrono::milliseconds timeout,
                                                    const std::string& bindAddress) {
  const std::string what = "connect tcp " + host + ":" + std::to_string(port);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  const std::string service = std::to_string(port);
  if (int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &res); rc != 0) {
    throw NfsException(makeError(ClientErrc::kInvalidArgument,
                                 what + ": cannot resolve host (" + ::gai_strerror(rc) + ")"));
  }
  std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> guard(res, ::freeaddrinfo);
  int lastErr = EHOSTUNREACH;
  for (addrinfo* ai = res; ai != nullptr; ai = ai->ai_next) {
    UniqueFd fd(::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol));
    if (!fd) {
      lastErr = errno;
      continue;
    }
    if (!bindAddress.empty()) {
      addrinfo bhints{};
      bhints.ai_family = ai->ai_family;
      bhints.ai_socktype = SOCK_STREAM;
      bhints.ai_flags = AI_NUMERICHOST;
      addrinfo* local = nullptr;
      if (::getaddrinfo(bindAddress.c_str(), nullptr, &bhints, &local) != 0) {
        throw NfsException(makeError(ClientErrc::kInvalidArgument,
                                     what + ": bind address '" + bindAddress + "' is not a numeric address"));
      }
      const int brc = ::bind(fd.get(), local->ai_addr, local->ai_addrlen);
      const int berr = errno;
      ::freeaddrinfo(local);
      if (brc != 0) {
        throw NfsException(errnoError(berr, what + ": bind to " + bindAddress));
      }
    }
    int rc = ::connect(fd.get(), ai->ai_addr, ai->ai_addrlen);
    if (rc != 0 && errno == EINPROGRESS) {
      // A signal must not end the wait early: SO_ERROR reads 0 while the
      // connect is still in progress, which would pass for success.
      const auto deadline = std::chrono::steady_clock::now() + timeout;
      pollfd pfd{fd.get(), POLLOUT, 0};
      for (;;) {
        const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        rc = ::poll(&pfd, 1, static_cast<int>(std::max<std::int64_t>(left.count(), 0)));
        if (rc >= 0 || errno != EINTR) break;
      }
      if (rc < 0) {
        lastErr = errno;
        continue;
      }
      if (rc == 0) {
        lastErr = ETIMEDOUT;
        continue;
      }
      int soErr = 0;
      socklen_t len = sizeof soErr;
      ::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &soErr, &len);
      rc = soErr == 0 ? 0 : -1;
      errno = soErr;
    }
    if (rc != 0) {
      lastErr = errno;
      continue;
    }
    int one = 1;
    ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return std::unique_ptr<TcpTransport>(
        new TcpTransport(fd.release(), "tcp " + host + ":" + std::to_string(port)));
  }
  throw NfsException(errnoError(lastErr, what));
}

std::unique_ptr<TcpTransport> TcpTransport::adopt(int fd, std::string description) {
  return std::unique_ptr<TcpTransport>(new TcpTransport(fd, std::move(description)));
}

TcpTransport::TcpTransport(int fd, std::string description)
    : fd_(fd), wakeFd_(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)), description_(std::move(description)) {
  if (!wakeFd_) {
    int err = errno;
    throw NfsException(errnoError(err, "eventfd for " + description_));
  }
  in_.resize(kInitialInBuffer);
}

TcpTransport::~TcpTransport() {
  close();
}

void TcpTransport::start(TransportSink& sink) {
  sink_ = &sink;
  thread_ = std::thread([this] { run(); });
}

void TcpTransport::close() {
  stopping_.store(true);
  wake();
  if (thread_.joinable()) {
    if (std::this_thread::get_id() == thread_.get_id()) {
      thread_.detach();  // the owner closes from a callback; the loop sees stopping_
    } else {
      thread_.join();
    }
  }
  std::lock_guard lock(sendMutex_);
  fd_.reset();
}

void TcpTransport::wake() {
  std::uint64_t one = 1;
  (void)!::write(wakeFd_.get(), &one, sizeof one);
}

Error TcpTransport::send(const OutgoingMessage& message) {
  if (message.size > 0x7fffffffU) {
    return makeError(ClientErrc::kEncodeOverflow, "tcp send: message of " +
                                                      std::to_string(message.size) + " bytes");
  }
  if (broken_.load()) return makeError(ClientErrc::kConnectionClosed, "send on " + description_);
  std::array<std::uint8_t, 4> marker{};
  putBe32(marker.data(), kLastFragment | static_cast<std::uint32_t>(message.size));
  std::array<iovec, xdr::XdrEncoder::kMaxSegments + 1> iov{};
  iov[0] = {marker.data(), 4};
  std::size_t count = 1;
  for (const auto& s : message.segments) {
    iov[count++] = {const_cast<std::uint8_t*>(s.data), s.size};
  }

  // Registered before the call leaves: its reply may come back at once.
  const bool placing = message.directReplies.size() == 1 && message.directReplies[0].size() >= kMinDirectPlacement;
  if (placing) {
    std::lock_guard lock(placeMutex_);
    placements_[message.xid] = message.directReplies[0];
    placementCount_.store(placements_.size(), std::memory_order_relaxed);
  }
  Error e = sendRecord(iov.data(), count, message.size);
  if (e && placing) takePlacement(message.xid);
  return e;
}

Error TcpTransport::sendRecord(iovec* iov, std::size_t count, std::size_t size) {
  if (onIoThread() && dispatching_ && size <= kCorkLimit) {
    appendIov(cork_, iov, count, 0);
    return {};
  }
  std::lock_guard lock(sendMutex_);
  if (!fd_) return makeError(ClientErrc::kConnectionClosed, "send on " + description_);
  if (!pendingOut_.empty()) {
    appendIov(pendingOut_, iov, count, 0);
    return {};
  }
  const ssize_t n = sendSome(fd_.get(), iov, count);
  if (n < 0) return errnoError(static_cast<int>(-n), "send on " + description_);
  const auto written = static_cast<std::size_t>(n);
  if (written < size + 4) {
    appendIov(pendingOut_, iov, count, written);
    hasPendingOut_.store(true);
    if (!onIoThread()) wake();
  }
  return {};
}

std::span<std::uint8_t> TcpTransport::takePlacement(std::uint32_t xid) {
  std::lock_guard lock(placeMutex_);
  auto it = placements_.find(xid);
  if (it == placements_.end()) return {};
  const std::span<std::uint8_t> dst = it->second;
  placements_.erase(it);
  placementCount_.store(placements_.size(), std::memory_order_relaxed);
  return dst;
}

void TcpTransport::abandon(std::uint32_t xid) {
  std::lock_guard lock(placeMutex_);
  if (placements_.erase(xid) != 0) placementCount_.store(placements_.size(), std::memory_order_relaxed);
  // Its record is arriving now: the rest goes to scratch, never to a buffer
  // the caller is about to free.
  if (placeActive_ && placeXid_ == xid && placeDst_.data() != discard_.data()) {
    discard_.assign(placeDst_.size(), 0);
    placeDst_ = discard_;
  }
}

std::string TcpTransport::statsLine() const {
  return "xprt: " + description_ + " direct_replies=" + std::to_string(placedReplies_.load()) +
         " direct_fallbacks=" + std::to_string(placementFallbacks_.load());
}

Error TcpTransport::flushPendingLocked() {
  while (pendingSent_ < pendingOut_.size()) {
    iovec iov{pendingOut_.data() + pendingSent_, pendingOut_.size() - pendingSent_};
    const ssize_t n = sendSome(fd_.get(), &iov, 1);
    if (n < 0) return errnoError(static_cast<int>(-n), "send on " + description_);
    if (n == 0) return {};
    pendingSent_ += static_cast<std::size_t>(n);
  }
  pendingOut_.clear();
  pendingSent_ = 0;
  hasPendingOut_.store(false);
  return {};
}

Error TcpTransport::flushCork() {
  if (cork_.empty()) return {};
  std::lock_guard lock(sendMutex_);
  if (!fd_) return makeError(ClientErrc::kConnectionClosed, "send on " + description_);
  if (pendingOut_.empty()) {
    iovec iov{cork_.data(), cork_.size()};
    const ssize_t n = sendSome(fd_.get(), &iov, 1);
    if (n < 0) return errnoError(static_cast<int>(-n), "send on " + description_);
    if (static_cast<std::size_t>(n) < cork_.size()) {
      pendingOut_.assign(cork_.begin() + n, cork_.end());
      hasPendingOut_.store(true);
    }
  } else {
    pendingOut_.insert(pendingOut_.end(), cork_.begin(), cork_.end());
  }
  cork_.clear();
  return {};
}

void TcpTransport::fail(const Error& e) {
  if (broken_.exchange(true)) return;
  sink_->onTransportError(e);
}

void TcpTransport::run() {
  ioThreadId_.store(std::this_thread::get_id());
  auto nextTick = std::chrono::steady_clock::now() + std::chrono::milliseconds(kTickIntervalMs);
  while (!stopping_.load()) {
    const bool wantOut = hasPendingOut_.load();
    std::array<pollfd, 2> fds{{{fd_.get(), static_cast<short>(POLLIN | (wantOut ? POLLOUT : 0)), 0},
                               {wakeFd_.get(), POLLIN, 0}}};
    if (broken_.load()) fds[0].fd = -1;  // keep ticking (timeouts) but stop reading
    const auto now = std::chrono::steady_clock::now();
    const auto waitMs =
        std::chrono::duration_cast<std::chrono::milliseconds>(nextTick - now).count();
    const int rc = ::poll(fds.data(), fds.size(), waitMs < 0 ? 0 : static_cast<int>(waitMs) + 1);
    if (rc < 0 && errno != EINTR) {
      fail(errnoError(errno, "poll on " + description_));
    }
    if (rc > 0) {
      if (fds[1].revents & POLLIN) {
        std::uint64_t v;
        (void)!::read(wakeFd_.get(), &v, sizeof v);
      }
      if (stopping_.load()) break;
      if (fds[0].revents & (POLLIN | POLLERR | POLLHUP)) {
        if (Error e = readAndDispatch()) {
          fail(e);
        } else if (auto delay = coalesceDelay(); delay.count() > 0) {
          // Sleep on the wake fd only: a send from another thread or close() still wakes us.
          pollfd wakeOnly{wakeFd_.get(), POLLIN, 0};
          ::poll(&wakeOnly, 1, 0);  // drop a stale wake first
          struct timespec ts{0, static_cast<long>(delay.count()) * 1000};
          ::ppoll(&wakeOnly, 1, &ts, nullptr);
        }
      }
      if (!broken_.load() && (fds[0].revents & POLLOUT)) {
        Error e;
        {
          std::lock_guard lock(sendMutex_);
          e = flushPendingLocked();
        }
        if (e) fail(e);  // outside the lock: the sink may send
      }
    }
    if (std::chrono::steady_clock::now() >= nextTick) {
      sink_->onTick();
      nextTick = std::chrono::steady_clock::now() + std::chrono::milliseconds(kTickIntervalMs);
    }
  }
}

std::chrono::microseconds TcpTransport::coalesceDelay() {
  const auto now = std::chrono::steady_clock::now();
  if (repliesInBatch_ > 0 && lastBatch_.time_since_epoch().count() != 0) {
    const double gap = std::chrono::duration<double, std::micro>(now - lastBatch_).count() /
                       static_cast<double>(repliesInBatch_);
    replyGapMicros_ = replyGapMicros_ == 0 ? gap : 0.8 * replyGapMicros_ + 0.2 * gap;
  }
  if (repliesInBatch_ > 0) lastBatch_ = now;
  repliesInBatch_ = 0;
  const std::size_t inFlight = sink_->callsInFlight();
  if (!coalesce_ || inFlight < kCoalesceMinInFlight || largeActive_) return std::chrono::microseconds(0);
  auto want = static_cast<std::int64_t>(replyGapMicros_ * static_cast<double>(inFlight) / 4);
  if (want < kMinCoalesceMicros) return std::chrono::microseconds(0);
  return std::chrono::microseconds(std::min(want, kMaxCoalesceMicros));
}

void TcpTransport::deliver(std::span<const std::uint8_t> fragment, bool last) {
  ++repliesInBatch_;
  if (!assembling_ && last) {
    sink_->onMessage(fragment);
    return;
  }
  assembly_.insert(assembly_.end(), fragment.begin(), fragment.end());
  assembling_ = !last;
  if (last) {
    // A record whose first fragment was too short to hold the XID ends its
    // call's registration only now; left behind, a later record with that
    // XID (a duplicate reply) would be placed into a buffer its caller freed.
    if (assembly_.size() >= 4 && placementCount_.load(std::memory_order_relaxed) > 0) {
      takePlacement(getBe32(assembly_.data()));
    }
    sink_->onMessage(assembly_);
    assembly_.clear();
  }
}

namespace {
// How much SO_RCVLOWAT asks for while 'owed' bytes of a record are missing.
// The last kLowWaterSlack bytes of a record are waited for one segment at a
// time: the sender may hold its last short segment (Nagle) until this side
// acknowledges, and this side acknowledges promptly only when it reads.
std::size_t lowWaterFor(std::size_t owed, std::size_t slack, std::size_t min, std::size_t max) {
  std::size_t want = owed > slack ? std::min(owed - slack, max) : 1;
  if (want < min) want = 1;
  return want;
}
}  // namespace

// The steps of a large record: receive what the socket holds of it until it
// is whole (or the socket is drained), then hand it up.
Error TcpTransport::readLargeRecord(bool& drained) {
  drained = false;
  const std::size_t total = large_.size() + placeDst_.size() + placePad_;
  while (largeHave_ < total) {
    const ssize_t n = receiveLargePart();
    if (n == 0) {
      return makeError(ClientErrc::kConnectionClosed,
                       description_ + " closed in the middle of a reply (" + std::to_string(largeHave_) + " of " +
                           std::to_string(total) + " bytes received)");
    }
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        drained = true;
        setReceiveLowWater(lowWaterFor(total - largeHave_, kLowWaterSlack, kMinReceiveLowWater,
                                       kMaxReceiveLowWater));
        return {};
      }
      return errnoError(errno, "recv on " + description_);
    }
    largeHave_ += static_cast<std::size_t>(n);
  }
  setReceiveLowWater(1);
  largeActive_ = false;
  dispatching_ = true;
  if (placeActive_) {
    deliverPlacedRecord();
  } else {
    deliver(std::span<const std::uint8_t>(large_.data(), large_.size()), largeLast_);
  }
  dispatching_ = false;
  return flushCork();
}

// One recvmsg() into what is still missing of: large_, the caller's buffer,
// the pad. Returns its result (errno set when negative).
ssize_t TcpTransport::receiveLargePart() {
  std::array<iovec, 3> iov{};
  std::size_t count = 0;
  std::size_t skip = largeHave_;
  auto add = [&](std::uint8_t* base, std::size_t len) {
    if (skip >= len) {
      skip -= len;
      return;
    }
    iov[count++] = {base + skip, len - skip};
    skip = 0;
  };
  std::unique_lock lock(placeMutex_, std::defer_lock);
  if (placeActive_) lock.lock();  // abandon() must not free the destination under us
  add(large_.data(), large_.size());
  add(placeDst_.data(), placeDst_.size());
  add(padScratch_.data(), placePad_);
  msghdr msg{};
  msg.msg_iov = iov.data();
  msg.msg_iovlen = count;
  return ::recvmsg(fd_.get(), &msg, MSG_DONTWAIT);
}

// A whole record whose tail was received into a caller's buffer.
void TcpTransport::deliverPlacedRecord() {
  std::span<std::uint8_t> dst;
  {
    std::lock_guard lock(placeMutex_);
    dst = placeDst_;
    placeDst_ = {};
    placeActive_ = false;
  }
  const std::size_t head = large_.size();
  // The data's XDR length is the last word before the tail: it says whether
  // the server sent as much as was asked for.
  if (getBe32(large_.data() + head - 4) == dst.size()) {
    ++placedReplies_;
    ++repliesInBatch_;
    const std::array<std::uint32_t, 1> placed{static_cast<std::uint32_t>(dst.size())};
    sink_->onMessage(std::span<const std::uint8_t>(large_.data(), head), placed);
  } else {
    // A shorter reply: its tail is not the data. Put the record back
    // together and let the decoder find the data itself.
    ++placementFallbacks_;
    large_.insert(large_.end(), dst.begin(), dst.end());
    large_.insert(large_.end(), padScratch_.begin(),
                  padScratch_.begin() + static_cast<std::ptrdiff_t>(placePad_));
    deliver(std::span<const std::uint8_t>(large_.data(), large_.size()), true);
  }
  placePad_ = 0;
}

void TcpTransport::setReceiveLowWater(std::size_t bytes) {
  if (bytes == receiveLowWater_ || lowWaterUnsupported_) return;
  const int value = static_cast<int>(bytes);
  if (::setsockopt(fd_.get(), SOL_SOCKET, SO_RCVLOWAT, &value, sizeof value) != 0) {
    // Only the number of wakeups depends on it: every receive is
    // non-blocking and takes what is there, so go on without it.
    lowWaterUnsupported_ = true;
    return;
  }
  receiveLowWater_ = bytes;
}

void TcpTransport::beginLargeRecord(std::size_t len, bool last, std::size_t have) {
  const std::uint8_t* body = in_.data() + inStart_ + 4;
  std::span<std::uint8_t> dst;
  if (!assembling_ && placementCount_.load(std::memory_order_relaxed) > 0) dst = takePlacement(getBe32(body));
  const std::size_t padded = (dst.size() + 3) & ~std::size_t{3};
  // Placement needs a single-fragment record that can hold the data plus a
  // reply header in front of it; anything else is received whole.
  if (!dst.empty() && last && len >= padded + 8) {
    large_.resize(len - padded);
    {
      std::lock_guard lock(placeMutex_);
      placeDst_ = dst;
      placeXid_ = getBe32(body);
      placeActive_ = true;
    }
    placePad_ = padded - dst.size();
    // Scatter what already arrived over the same three parts.
    std::size_t done = 0;
    const auto part = [&](std::uint8_t* to, std::size_t size) {
      const std::size_t n = std::min(size, have - done);
      if (n > 0) std::memcpy(to, body + done, n);
      done += n;
    };
    part(large_.data(), large_.size());
    part(dst.data(), dst.size());
    part(padScratch_.data(), placePad_);
  } else {
    large_.resize(len);
    std::memcpy(large_.data(), body, have);
  }
  largeHave_ = have;
  largeLast_ = last;
  largeActive_ = true;
  inStart_ = inEnd_ = 0;
}

Error TcpTransport::readAndDispatch() {
  for (int round = 0; round < kMaxReadsPerWakeup && !stopping_.load(); ++round) {
    if (largeActive_) {
      bool drained = false;
      if (Error e = readLargeRecord(drained)) return e;
      if (drained) break;
      continue;
    }
    if (inEnd_ == in_.size()) {
      // Make room: move the partial record to the front, then grow if it alone fills the buffer.
      if (inStart_ > 0) {
        std::memmove(in_.data(), in_.data() + inStart_, inEnd_ - inStart_);
        inEnd_ -= inStart_;
        inStart_ = 0;
      }
      if (inEnd_ == in_.size()) in_.resize(in_.size() * 2);
    }
    std::size_t room = in_.size() - inEnd_;
    if (inStart_ == inEnd_ && !assembling_ && placementCount_.load(std::memory_order_relaxed) > 0) {
      room = std::min(room, kHeaderReceive);
    }
    const ssize_t n = ::recv(fd_.get(), in_.data() + inEnd_, room, MSG_DONTWAIT);
    if (n == 0) {
      if (inEnd_ > inStart_ || assembling_) {
        return makeError(ClientErrc::kConnectionClosed,
                         description_ + " closed in the middle of a reply (" +
                             std::to_string(inEnd_ - inStart_) + " bytes of it received)");
      }
      return makeError(ClientErrc::kConnectionClosed, description_);
    }
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) break;
      return errnoError(errno, "recv on " + description_);
    }
    inEnd_ += static_cast<std::size_t>(n);
    dispatching_ = true;
    Error e = parseRecords();
    dispatching_ = false;
    if (Error f = flushCork(); !e) e = f;
    if (e) return e;
    if (static_cast<std::size_t>(n) < room) break;  // socket drained
  }
  return {};
}

Error TcpTransport::parseRecords() {
  const std::size_t maxIncoming = maxIncoming_.load();
  while (inEnd_ - inStart_ >= 4 && !stopping_.load()) {
    const std::uint32_t marker = getBe32(in_.data() + inStart_);
    const bool last = (marker & kLastFragment) != 0;
    const std::size_t len = marker & ~kLastFragment;
    if (len > maxIncoming || assembly_.size() + len > maxIncoming) {
      return makeError(ClientErrc::kRecordTooLarge,
                       description_ + ": record fragment of " + std::to_string(len) +
                           " bytes exceeds the negotiated maximum of " + std::to_string(maxIncoming));
    }
    if (inEnd_ - inStart_ < 4 + len) {
      // Large and incomplete: move what we have to its own buffer once and
      // let the rest arrive there (or in the caller's buffer). Waits for
      // the XID first, which says whether a caller's buffer awaits the data.
      const std::size_t have = inEnd_ - inStart_ - 4;
      if (have >= 4 && (4 + len > in_.size() / 2 || (len >= kMinDirectPlacement && !assembling_ &&
                                                      placementCount_.load(std::memory_order_relaxed) > 0))) {
        beginLargeRecord(len, last, have);
      }
      break;
    }
    std::span<const std::uint8_t> fragment(in_.data() + inStart_ + 4, len);
    // A reply that arrived whole ends its call's registration, if any.
    if (!assembling_ && len >= 4 && placementCount_.load(std::memory_order_relaxed) > 0) {
      takePlacement(getBe32(fragment.data()));
    }
    inStart_ += 4 + len;
    deliver(fragment, last);
  }
  if (inStart_ == inEnd_) inStart_ = inEnd_ = 0;
  return {};
}

}  // namespace nfsrdma::transport
