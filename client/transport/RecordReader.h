// The receive side of RPC over TCP: record marking (RFC 5531 section 11)
// and direct placement, as a byte-fed state machine with no socket. The TCP
// transport receives into the places it names and then lets it deliver; the
// fuzz harness and the unit tests feed it bytes (tests/fuzz/TcpRecordsHarness,
// tests/unit/client/transport/RecordReaderTest.cpp).
//
// Small records are received into one buffer and handed up from there. A
// fragment too large for it gets a buffer of its own, so megabyte READ
// replies are never shifted around. Direct placement: a large READ reply
// carries its data at the very end of the record (READ is the last operation
// of its COMPOUND), so the record's tail is received straight into the
// buffer the caller registered for its XID and the rest is handed up as a
// message whose payload was placed, exactly as RDMA's Write chunks do. If
// the reply turns out shorter (EOF, an error), the record is put back
// together and delivered whole, so the layers above decode it as usual.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "client/base/Error.h"

namespace nfsrdma::transport {

class RecordSink {
 public:
  virtual ~RecordSink() = default;
  // A whole record. `placed`: the data lengths received into the caller's
  // registered buffer (one at most; empty for a record handed up whole).
  virtual void onRecord(std::span<const std::uint8_t> record,
                        std::span<const std::uint32_t> placed) = 0;
  // True once the owner is closing: no further record is handed up.
  virtual bool stopping() const { return false; }
};

// Where the next received bytes belong, in order (at most three places).
struct ReceiveTargets {
  std::array<std::span<std::uint8_t>, 3> parts{};
  std::size_t count = 0;
  std::size_t bytes() const;
};

class RecordReader {
 public:
  // Placement is worth a buffer of its own only for data at least this large.
  static constexpr std::size_t kMinDirectPlacement = 16 * 1024;

  // The buffer small records are received into starts at initialBuffer
  // bytes and doubles when one record alone fills it; fragments over half of
  // it get a buffer of their own. The default suits a mount's traffic; the
  // fuzz harness starts small, so every input exercises both paths cheaply.
  static constexpr std::size_t kInitialBuffer = 256 * 1024;
  explicit RecordReader(std::string description, std::size_t initialBuffer = kInitialBuffer);

  // Any thread.
  void setMaxIncoming(std::size_t bytes) { maxIncoming_.store(bytes); }
  // The reply to xid may place its READ data into dst.
  void addPlacement(std::uint32_t xid, std::span<std::uint8_t> dst);
  // Ends xid's registration; returns its buffer (empty if none).
  std::span<std::uint8_t> takePlacement(std::uint32_t xid);
  // The caller of xid gave up: its buffer is never written from now on.
  void abandon(std::uint32_t xid);
  std::uint64_t placedReplies() const { return placedReplies_.load(); }
  std::uint64_t placementFallbacks() const { return placementFallbacks_.load(); }

  // The receiving thread. receive(targets) fills some of the targets from
  // the peer and returns the bytes it wrote (or <= 0, passed back as is);
  // the bytes are then the reader's, to hand up with dispatch().
  template <class Receive>
  auto receiveWith(Receive&& receive);
  Error dispatch(RecordSink& sink);
  // receiveWith() and dispatch() over bytes already in memory, in the pieces
  // the targets take; stops at the first error.
  Error feed(std::span<const std::uint8_t> bytes, RecordSink& sink);
  // The peer closed the stream: the error that says so, with how much of
  // an unfinished record had arrived.
  Error endOfStream() const;

  bool inLargeRecord() const { return largeActive_; }
  // Bytes of the large record still missing (0 outside one).
  std::size_t largeOwed() const;

 private:
  ReceiveTargets targets();
  void received(std::size_t n);
  Error parseRecords(RecordSink& sink);
  Error checkSize(std::size_t len) const;
  void beginLargeRecord(std::size_t len, bool last, std::size_t have);
  void finishLargeRecord(RecordSink& sink);
  void deliverPlacedRecord(RecordSink& sink);
  void deliver(RecordSink& sink, std::span<const std::uint8_t> fragment, bool last);
  bool placing() const { return placementCount_.load(std::memory_order_relaxed) > 0; }

  std::string description_;
  std::atomic<std::size_t> maxIncoming_{1U << 20};

  std::vector<std::uint8_t> in_;  // small records, received at inEnd_
  std::size_t inStart_ = 0;
  std::size_t inEnd_ = 0;
  std::vector<std::uint8_t> assembly_;  // multi-fragment records
  bool assembling_ = false;
  // A fragment too large for in_ is received straight into its own buffer.
  std::vector<std::uint8_t> large_;
  std::size_t largeHave_ = 0;
  bool largeLast_ = false;
  bool largeActive_ = false;
  // Direct placement. The record's bytes are laid out as large_ (everything
  // before the data: the message handed up), then placeDst_ (the data),
  // then the XDR pad.
  mutable std::mutex placeMutex_;  // placements_ and placeDst_ (abandon() may redirect it)
  std::unordered_map<std::uint32_t, std::span<std::uint8_t>> placements_;
  std::atomic<std::size_t> placementCount_{0};
  std::span<std::uint8_t> placeDst_;
  std::size_t placeSize_ = 0;  // placeDst_'s size, which abandon() keeps: read without the lock
  std::uint32_t placeXid_ = 0;
  std::size_t placePad_ = 0;
  std::array<std::uint8_t, 4> padScratch_{};
  std::vector<std::uint8_t> discard_;  // receives the data of an abandoned call
  bool placeActive_ = false;
  std::atomic<std::uint64_t> placedReplies_{0};
  std::atomic<std::uint64_t> placementFallbacks_{0};
};

template <class Receive>
auto RecordReader::receiveWith(Receive&& receive) {
  // abandon() must not free the destination while bytes go into it.
  std::unique_lock lock(placeMutex_, std::defer_lock);
  if (placeActive_) lock.lock();
  const ReceiveTargets t = targets();
  const auto n = receive(t);
  if (n > 0) received(static_cast<std::size_t>(n));
  return n;
}

}  // namespace nfsrdma::transport
