#include "client/transport/TcpTransport.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <limits>

#include "util/SocketAddress.h"
#include "util/TcpConnect.h"

namespace nfsrdma::transport {
namespace {

constexpr std::uint32_t kLastFragment = 0x80000000U;
// Calls up to this size made from reply callbacks are corked (copied) and
// leave together; larger ones (WRITE payloads) go straight to the socket.
constexpr std::size_t kCorkLimit = 16 * 1024;
// Rounds per wakeup: a receive of small records is one, and so is a large
// record once it is whole.
constexpr int kMaxReadsPerWakeup = 16;
// Receives into one large record in one wakeup: only a peer that trickles
// its bytes reaches it, and then the loop goes back to poll() in between.
constexpr int kMaxReceivesPerLargeRecord = 4096;

void putBe32(std::uint8_t* p, std::uint32_t v) {
  p[0] = static_cast<std::uint8_t>(v >> 24);
  p[1] = static_cast<std::uint8_t>(v >> 16);
  p[2] = static_cast<std::uint8_t>(v >> 8);
  p[3] = static_cast<std::uint8_t>(v);
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

void appendIov(std::vector<std::uint8_t>& out, const iovec* iov, std::size_t count,
               std::size_t skip) {
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

// Binds fd to the numeric source address bindAddress of the given family.
void bindSource(int fd, int family, const std::string& bindAddress, const std::string& what) {
  const auto local = util::parseNumericAddress(bindAddress, 0, false);
  if (!local || local->family() != family) {
    throw NfsException(
        makeError(ClientErrc::kInvalidArgument,
                  what + ": bind address '" + bindAddress + "' is not a numeric address"));
  }
  if (::bind(fd, local->get(), local->length) != 0) {
    throw NfsException(errnoError(errno, what + ": bind to " + bindAddress));
  }
}

}  // namespace

std::unique_ptr<TcpTransport> TcpTransport::connect(const std::string& host, std::uint16_t port,
                                                    std::chrono::milliseconds timeout,
                                                    const std::string& bindAddress,
                                                    std::shared_ptr<IoLoop> loop) {
  const std::string what = "connect tcp " + host + ":" + std::to_string(port);
  const util::ResolvedAddresses resolved = util::resolveAddresses(host, port, false);
  if (resolved.addresses.empty()) {
    throw NfsException(makeError(ClientErrc::kInvalidArgument,
                                 what + ": cannot resolve host (" + resolved.error + ")"));
  }
  int lastErr = EHOSTUNREACH;
  for (const util::SocketAddress& addr : resolved.addresses) {
    UniqueFd fd(::socket(addr.family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!fd) {
      lastErr = errno;
      continue;
    }
    if (!bindAddress.empty()) bindSource(fd.get(), addr.family(), bindAddress, what);
    if (const int err = util::connectWithin(fd.get(), addr, timeout); err != 0) {
      lastErr = err;
      continue;
    }
    int one = 1;
    ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return std::unique_ptr<TcpTransport>(new TcpTransport(
        fd.release(), "tcp " + host + ":" + std::to_string(port), std::move(loop)));
  }
  throw NfsException(errnoError(lastErr, what));
}

std::unique_ptr<TcpTransport> TcpTransport::adopt(int fd, std::string description,
                                                  std::shared_ptr<IoLoop> loop) {
  return std::unique_ptr<TcpTransport>(
      new TcpTransport(fd, std::move(description), std::move(loop)));
}

TcpTransport::TcpTransport(int fd, std::string description, std::shared_ptr<IoLoop> loop)
    : fd_(fd),
      loop_(loop ? std::move(loop) : std::make_shared<IoLoop>()),
      description_(std::move(description)),
      reader_(description_) {}

TcpTransport::~TcpTransport() {
  close();
}

void TcpTransport::start(TransportSink& sink) {
  sink_ = &sink;
  started_ = true;
  loop_->add(*this);
}

void TcpTransport::close() {
  if (stopping_.exchange(true))
    return;  // closed already (RpcClient::presumeDead, then reconnect())
  // From here on the loop does not touch this connection (from a callback
  // on the loop's thread: from the current round on).
  if (started_) loop_->remove(*this);
  std::lock_guard lock(sendMutex_);
  fd_.reset();
}

void TcpTransport::wake() {
  loop_->wake();
}

Error TcpTransport::send(const OutgoingMessage& message) {
  if (message.size > 0x7fffffffU) {
    return makeError(ClientErrc::kEncodeOverflow,
                     "tcp send: message of " + std::to_string(message.size) + " bytes");
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
  const bool placing = message.directReplies.size() == 1 &&
                       message.directReplies[0].size() >= RecordReader::kMinDirectPlacement;
  if (placing) reader_.addPlacement(message.xid, message.directReplies[0]);
  Error e = sendRecord(iov.data(), count, message.size);
  if (e && placing) reader_.takePlacement(message.xid);
  return e;
}

Error TcpTransport::sendRecord(iovec* iov, std::size_t count, std::size_t size) {
  if (size <= kCorkLimit && onIoThread() && (dispatching_ || loop_->inRound())) {
    // From another connection's callback: this one's cork leaves when the
    // loop's round ends (its own receive may not come this round).
    if (!dispatching_ && cork_.empty()) loop_->flushAfterRound(*this);
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

void TcpTransport::abandon(std::uint32_t xid) {
  reader_.abandon(xid);
}

std::string TcpTransport::statsLine() const {
  std::string line = "xprt: " + description_ +
                     " direct_replies=" + std::to_string(reader_.placedReplies()) +
                     " direct_fallbacks=" + std::to_string(reader_.placementFallbacks());
  if (placed_.load()) {
    const NumaPlacement p = loop_->placement();
    line += p.detail.empty() ? " numa=pending" : p.statsField();
  }
  return line;
}

void TcpTransport::placeOn(std::optional<int> node, std::string what) {
  placed_.store(true);
  loop_->place(node, std::move(what));
}

std::string TcpTransport::localAddress() const {
  return localAddressOf(fd_.get());
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

void TcpTransport::onRoundEnd() {
  if (broken_.load()) {
    cork_.clear();  // its calls fail with the connection
    return;
  }
  if (Error e = flushCork()) fail(e);
}

void TcpTransport::fail(const Error& e) {
  if (broken_.exchange(true)) return;
  sink_->onTransportError(e);
}

void TcpTransport::onEvents(short revents) {
  if (broken_.load()) return;
  if (revents & (POLLIN | POLLERR | POLLHUP)) {
    if (Error e = readAndDispatch()) {
      fail(e);
      return;
    }
  }
  if (revents & POLLOUT) {
    Error e;
    {
      std::lock_guard lock(sendMutex_);
      e = flushPendingLocked();
    }
    if (e) fail(e);  // outside the lock: the sink may send
  }
}

// The reader's records go up to the sink; each counts for reply pacing.
class TcpTransport::Delivery final : public RecordSink {
 public:
  explicit Delivery(TcpTransport& t) : t_(t) {}
  void onRecord(std::span<const std::uint8_t> record,
                std::span<const std::uint32_t> placed) override {
    ++t_.repliesInBatch_;
    if (placed.empty()) {
      t_.sink_->onMessage(record);
    } else {
      t_.sink_->onMessage(record, placed);
    }
  }
  bool stopping() const override { return t_.stopping_.load(); }

 private:
  TcpTransport& t_;
};

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

// Receives until the socket is drained (or the wakeup's rounds are spent),
// handing up every record that is whole. A receive into a large record does
// not end the loop when it comes back short: the rest may be queued already.
Error TcpTransport::readAndDispatch() {
  int rounds = 0;
  int intoRecord = 0;  // receives into the current large record
  while (rounds < kMaxReadsPerWakeup && !stopping_.load()) {
    if (intoRecord == kMaxReceivesPerLargeRecord) {
      setReceiveLowWater(1);  // what is queued already wakes the next poll()
      return {};
    }
    const bool wasLarge = reader_.inLargeRecord();
    std::size_t room = 0;
    const ssize_t n = reader_.receiveWith([&](const ReceiveTargets& t) {
      room = t.bytes();
      return receiveInto(t);
    });
    if (n == 0) return reader_.endOfStream();
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        if (reader_.inLargeRecord()) {
          setReceiveLowWater(lowWaterFor(reader_.largeOwed(), kLowWaterSlack, kMinReceiveLowWater,
                                         kMaxReceiveLowWater));
        }
        return {};
      }
      return errnoError(errno, "recv on " + description_);
    }
    if (Error e = afterReceive(wasLarge)) return e;
    if (!wasLarge) {
      ++rounds;
      if (static_cast<std::size_t>(n) < room) break;  // socket drained
    } else if (reader_.inLargeRecord()) {
      ++intoRecord;
    } else {
      ++rounds;  // the record is whole
      intoRecord = 0;
    }
  }
  return {};
}

ssize_t TcpTransport::receiveInto(const ReceiveTargets& t) {
  std::array<iovec, 3> iov{};
  for (std::size_t i = 0; i < t.count; ++i) iov[i] = {t.parts[i].data(), t.parts[i].size()};
  msghdr msg{};
  msg.msg_iov = iov.data();
  msg.msg_iovlen = t.count;
  return ::recvmsg(fd_.get(), &msg, MSG_DONTWAIT);
}

// Hands up what is whole; the sends its callbacks make leave together.
Error TcpTransport::afterReceive(bool wasLarge) {
  Delivery delivery(*this);
  dispatching_ = true;
  Error e = reader_.dispatch(delivery);
  dispatching_ = false;
  if (wasLarge && !reader_.inLargeRecord()) setReceiveLowWater(1);
  if (Error f = flushCork(); !e) e = f;
  return e;
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

}  // namespace nfsrdma::transport
