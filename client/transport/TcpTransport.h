// RPC over TCP with record marking (RFC 5531 section 11).
//
// Many calls share one connection: replies are matched by XID above us, so
// this class only frames and moves bytes. Costs are per batch, not per call:
// one recv() takes every reply the socket holds and the sends that reply
// callbacks make on the I/O thread are corked and leave in one writev().
//
// Receiving is RecordReader's (record marking and direct placement of READ
// data into the caller's buffer, which saves one copy of every megabyte
// read); this class moves the bytes: one recvmsg() into the places the
// reader names, then the reader hands up what is whole.
#pragma once

#include <sys/uio.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "client/transport/IoLoop.h"
#include "client/transport/RecordReader.h"
#include "client/transport/Transport.h"
#include "util/UniqueFd.h"

namespace nfsrdma::transport {

class TcpTransport final : public Transport, private IoLoop::Member {
 public:
  // Connects within timeout; throws NfsException naming host, port and errno text.
  // bindAddress: local address to connect from; empty lets routing choose.
  // loop: the I/O thread to run on, shared with other connections; null: its own.
  static std::unique_ptr<TcpTransport> connect(const std::string& host, std::uint16_t port,
                                               std::chrono::milliseconds timeout,
                                               const std::string& bindAddress = {},
                                               std::shared_ptr<IoLoop> loop = nullptr);
  // Adopts a connected socket (tests use a socketpair).
  static std::unique_ptr<TcpTransport> adopt(int fd, std::string description,
                                             std::shared_ptr<IoLoop> loop = nullptr);
  ~TcpTransport() override;

  TcpTransport(const TcpTransport&) = delete;
  TcpTransport& operator=(const TcpTransport&) = delete;

  void start(TransportSink& sink) override;
  Error send(const OutgoingMessage& message) override;
  void setMaxIncomingMessage(std::size_t bytes) override { reader_.setMaxIncoming(bytes); }
  void close() override;
  void abandon(std::uint32_t xid) override;
  std::string statsLine() const override;
  // Reply coalescing (on by default): with many calls in flight, the I/O
  // thread waits a little after each batch so the next wakeup takes several
  // replies at once, like a NIC's interrupt moderation. It trades up to
  // kMaxCoalesceMicros of latency for far fewer wakeups per reply; with few
  // calls in flight it never waits.
  // (The loop's: on a shared loop it applies to all of its connections.)
  void setReplyCoalescing(bool on) { loop_->setCoalescing(on); }
  bool onIoThread() const override { return loop_->onThread(); }
  bool corksRounds() const override { return true; }
  // numa=auto: the loop's thread goes to node, the NUMA node of the
  // interface holding localAddress() (nullopt: none known, 'what' says
  // whose); statsLine then says where. The client looks the node up
  // (transport/rdma/DeviceNuma.h): this layer does not link verbs.
  void placeOn(std::optional<int> node, std::string what);
  // This connection's local IP address (getsockname), or "".
  std::string localAddress() const;
  std::string describe() const override { return description_; }

 private:
  TcpTransport(int fd, std::string description, std::shared_ptr<IoLoop> loop);
  // IoLoop::Member: what the loop's thread does for this connection.
  int pollFd() const override { return broken_.load() ? -1 : fd_.get(); }
  short pollEvents() const override {
    return static_cast<short>(POLLIN | (hasPendingOut_.load() ? POLLOUT : 0));
  }
  void onEvents(short revents) override;
  void onTick() override { sink_->onTick(); }
  std::size_t takeReplies() override { return std::exchange(repliesInBatch_, 0); }
  std::size_t callsInFlight() const override { return sink_->callsInFlight(); }
  bool inLargeRecord() const override { return reader_.inLargeRecord(); }
  void onRoundEnd() override;
  class Delivery;  // hands the reader's records to the sink, counting them
  Error readAndDispatch();
  ssize_t receiveInto(const ReceiveTargets& t);  // one recvmsg() into what the reader names
  Error afterReceive(bool wasLarge);
  Error sendRecord(::iovec* iov, std::size_t count, std::size_t size);
  void setReceiveLowWater(std::size_t bytes);
  Error flushPendingLocked();
  Error flushCork();
  void wake();
  void fail(const Error& e);

  UniqueFd fd_;
  std::shared_ptr<IoLoop> loop_;
  std::string description_;
  std::atomic<bool> placed_{false};  // placeOn() was asked
  TransportSink* sink_ = nullptr;
  bool started_ = false;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> broken_{false};

  std::mutex sendMutex_;
  std::vector<std::uint8_t>
      pendingOut_;  // bytes the socket did not take yet (guarded by sendMutex_)
  std::size_t pendingSent_ = 0;
  std::atomic<bool> hasPendingOut_{false};

  // I/O thread only.
  bool dispatching_ = false;
  std::vector<std::uint8_t> cork_;
  RecordReader reader_;  // its placement calls are for any thread
  // While a large record arrives, the socket's SO_RCVLOWAT asks the kernel
  // to wake this thread only once a good part of the rest is queued (at
  // most kMaxReceiveLowWater, and never for its last kLowWaterSlack bytes),
  // not at every segment: a 1 MiB reply then costs a few wakeups, not
  // dozens. Back to 1 between records. I/O thread only. (Waiting for a
  // record's whole remainder stalled 128 KiB replies ~20 ms each: see
  // lowWaterFor.)
  static constexpr std::size_t kMaxReceiveLowWater = 256 * 1024;
  static constexpr std::size_t kMinReceiveLowWater = 32 * 1024;
  static constexpr std::size_t kLowWaterSlack = 128 * 1024;
  std::size_t receiveLowWater_ = 1;
  bool lowWaterUnsupported_ = false;
  std::size_t repliesInBatch_ = 0;  // for the loop's reply pacing (I/O thread only)
};

}  // namespace nfsrdma::transport
