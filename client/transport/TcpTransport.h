// RPC over TCP with record marking (RFC 5531 section 11).
//
// Many calls share one connection: replies are matched by XID above us, so
// this class only frames and moves bytes. Costs are per batch, not per call:
// one recv() takes every reply the socket holds and the sends that reply
// callbacks make on the I/O thread are corked and leave in one writev().
//
// Direct placement: a large READ reply carries its data at the very end of
// the record (READ is the last operation of its COMPOUND), so the transport
// receives the record's tail straight into the caller's buffer and hands the
// rest up as a message whose payload was placed, exactly as RDMA's Write
// chunks do. That saves one copy of every megabyte read. If the reply turns
// out shorter (EOF, an error), the record is put back together and delivered
// whole, so the layers above decode it the ordinary way.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include <sys/uio.h>

#include "client/transport/Transport.h"
#include "verbs/UniqueFd.h"

namespace nfsrdma::transport {

class TcpTransport final : public Transport {
 public:
  // Connects within timeout; throws NfsException naming host, port and errno text.
  // bindAddress: local address to connect from; empty lets routing choose.
  static std::unique_ptr<TcpTransport> connect(const std::string& host, std::uint16_t port,
                                               std::chrono::milliseconds timeout,
                                               const std::string& bindAddress = {});
  // Adopts a connected socket (tests use a socketpair).
  static std::unique_ptr<TcpTransport> adopt(int fd, std::string description);
  ~TcpTransport() override;

  TcpTransport(const TcpTransport&) = delete;
  TcpTransport& operator=(const TcpTransport&) = delete;

  void start(TransportSink& sink) override;
  Error send(const OutgoingMessage& message) override;
  void setMaxIncomingMessage(std::size_t bytes) override { maxIncoming_.store(bytes); }
  void close() override;
  void abandon(std::uint32_t xid) override;
  std::string statsLine() const override;
  // Reply coalescing (on by default): with many calls in flight, the I/O
  // thread waits a little after each batch so the next wakeup takes several
  // replies at once, like a NIC's interrupt moderation. It trades up to
  // kMaxCoalesceMicros of latency for far fewer wakeups per reply; with few
  // calls in flight it never waits.
  void setReplyCoalescing(bool on) { coalesce_ = on; }
  bool onIoThread() const override { return std::this_thread::get_id() == ioThreadId_.load(); }
  std::string describe() const override { return description_; }

 private:
  TcpTransport(int fd, std::string description);
  void run();
  Error readAndDispatch();
  Error sendRecord(::iovec* iov, std::size_t count, std::size_t size);
  Error readLargeRecord(bool& drained);
  ssize_t receiveLargePart();  // readLargeRecord()'s steps
  void deliverPlacedRecord();
  void beginLargeRecord(std::size_t len, bool last, std::size_t have);
  std::span<std::uint8_t> takePlacement(std::uint32_t xid);
  void deliver(std::span<const std::uint8_t> fragment, bool last);
  void setReceiveLowWater(std::size_t bytes);
  std::chrono::microseconds coalesceDelay();
  Error parseRecords();
  Error flushPendingLocked();
  Error flushCork();
  void wake();
  void fail(const Error& e);

  UniqueFd fd_;
  UniqueFd wakeFd_;  // an eventfd: wake() ends the I/O loop's poll
  std::string description_;
  TransportSink* sink_ = nullptr;
  std::thread thread_;
  std::atomic<std::thread::id> ioThreadId_{};
  std::atomic<bool> stopping_{false};
  std::atomic<bool> broken_{false};
  std::atomic<std::size_t> maxIncoming_{1U << 20};

  std::mutex sendMutex_;
  std::vector<std::uint8_t> pendingOut_;  // bytes the socket did not take yet (guarded by sendMutex_)
  std::size_t pendingSent_ = 0;
  std::atomic<bool> hasPendingOut_{false};

  // I/O thread only.
  bool dispatching_ = false;
  std::vector<std::uint8_t> cork_;
  std::vector<std::uint8_t> in_;
  std::size_t inStart_ = 0;
  std::size_t inEnd_ = 0;
  std::vector<std::uint8_t> assembly_;  // multi-fragment records
  bool assembling_ = false;
  // A fragment too large for in_ is received straight into its own buffer,
  // so megabyte READ replies are never shifted around in in_.
  std::vector<std::uint8_t> large_;
  std::size_t largeHave_ = 0;
  bool largeLast_ = false;
  bool largeActive_ = false;
  // Direct placement. send() registers a READ's destination by XID; the
  // record that answers it takes the registration when it starts. The
  // record's bytes are laid out as large_ (everything before the data, i.e.
  // the message handed up), then placeDst_ (the data), then the XDR pad.
  static constexpr std::size_t kMinDirectPlacement = 16 * 1024;
  mutable std::mutex placeMutex_;  // placements_ and placeDst_ (abandon() may redirect it)
  std::unordered_map<std::uint32_t, std::span<std::uint8_t>> placements_;
  std::atomic<std::size_t> placementCount_{0};
  std::span<std::uint8_t> placeDst_;
  std::uint32_t placeXid_ = 0;
  std::size_t placePad_ = 0;
  std::array<std::uint8_t, 4> padScratch_{};
  std::vector<std::uint8_t> discard_;  // receives the data of an abandoned call
  bool placeActive_ = false;
  // While a large record arrives, the socket's SO_RCVLOWAT asks the kernel
  // to wake this thread only once a good part of the rest is queued (at
  // most kMaxReceiveLowWater, and never for its last kLowWaterSlack bytes),
  // not at every segment: a 1 MiB reply then costs a few wakeups, not
  // dozens. Back to 1 between records. I/O thread only. (Waiting for a
  // record's whole remainder stalled 128 KiB replies ~20 ms each: see
  // readLargeRecord.)
  static constexpr std::size_t kMaxReceiveLowWater = 256 * 1024;
  static constexpr std::size_t kMinReceiveLowWater = 32 * 1024;
  static constexpr std::size_t kLowWaterSlack = 128 * 1024;
  std::size_t receiveLowWater_ = 1;
  bool lowWaterUnsupported_ = false;
  std::atomic<std::uint64_t> placedReplies_{0};
  std::atomic<std::uint64_t> placementFallbacks_{0};
  // Reply pacing (I/O thread only).
  bool coalesce_ = true;
  std::size_t repliesInBatch_ = 0;
  double replyGapMicros_ = 0;  // moving average of the time between replies
  std::chrono::steady_clock::time_point lastBatch_{};
};

}  // namespace nfsrdma::transport
