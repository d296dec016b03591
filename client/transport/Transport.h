// The transport interface seen by the RPC layer (like the kernel's
// rpc_xprt_ops): it moves whole RPC messages and knows nothing of NFS.
// TCP frames them with record marking; RPC-over-RDMA (RFC 8166) moves bulk
// payloads into chunks. Each transport runs one I/O thread that delivers
// replies and ticks to its TransportSink.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "client/base/Error.h"
#include "client/xdr/XdrDecoder.h"
#include "client/xdr/XdrEncoder.h"

namespace nfsrdma::transport {

// The XID of an RPC message, its first word (RFC 5531); false if the
// message is shorter. Here, below the RPC layer, because transports read it
// too: RPC-over-RDMA checks it against its own header's XID.
inline bool peekXid(std::span<const std::uint8_t> message, std::uint32_t& xid) {
  xdr::XdrDecoder dec(message);
  xid = dec.getU32();
  return dec.ok();
}

// Receives what a transport reads; every call comes from the transport's I/O thread.
class TransportSink {
 public:
  virtual ~TransportSink() = default;
  // One complete RPC message; the view is valid for the duration of the call.
  virtual void onMessage(std::span<const std::uint8_t> message) = 0;
  // The same, from a transport that placed some payloads directly into the
  // caller's buffers (RDMA Write chunks): 'placed' holds how many bytes went
  // to each, in call order, and those bytes are absent from the message.
  virtual void onMessage(std::span<const std::uint8_t> message,
                         std::span<const std::uint32_t> placed) {
    (void)placed;
    onMessage(message);
  }
  // The connection failed or was closed by the peer; no message follows.
  virtual void onTransportError(const Error& error) = 0;
  // One call failed at the transport level (e.g. RDMA_ERROR for its XID)
  // while the connection stays up. By default the whole connection fails.
  virtual void onCallError(std::uint32_t xid, const Error& error) {
    (void)xid;
    onTransportError(error);
  }
  // About every kTickInterval: timeouts and other timers run here.
  virtual void onTick() = 0;
  // Calls sent and not yet answered; transports use it to pace their wakeups.
  virtual std::size_t callsInFlight() const = 0;
};

// One RPC call message: the XDR stream as segments in order, and which of
// them are bulk payloads (for transports that move those separately).
struct OutgoingMessage {
  std::span<const xdr::ConstBuffer> segments;
  std::span<const xdr::BulkSegment> bulk;
  std::size_t size = 0;  // total bytes of the stream
  std::uint32_t xid = 0;
  // Where the reply's DDP-eligible payloads (READ data) should land, in
  // order; transports without direct placement ignore it. The memory stays
  // valid until the call completes.
  std::span<const std::span<std::uint8_t>> directReplies;
  // The largest reply expected, direct payloads excluded (sizes RDMA's Reply chunk).
  std::size_t maxReplySize = 0;
};

class Transport {
 public:
  // How often the I/O loop calls TransportSink::onTick (call deadlines).
  static constexpr int kTickIntervalMs = 50;

  virtual ~Transport() = default;
  // Starts the I/O thread; sink must outlive the transport.
  virtual void start(TransportSink& sink) = 0;
  // Sends one message. Thread-safe, never blocks on the network. When it
  // returns, the transport no longer references the segments' memory.
  virtual Error send(const OutgoingMessage& message) = 0;
  // Largest message the transport accepts from the peer.
  virtual void setMaxIncomingMessage(std::size_t bytes) = 0;
  // Stops serving the connection and closes it; idempotent. On the I/O
  // thread only from a loop callback (a tick or an event: the loop skips
  // the connection from then on).
  virtual void close() = 0;
  // The RPC layer gave up on a call (timeout): release what the transport
  // holds for it, so the server can no longer reach its buffers.
  virtual void abandon(std::uint32_t xid) { (void)xid; }
  virtual bool onIoThread() const = 0;
  // Whether a send made on the I/O thread from any connection's reply
  // callback waits for the end of the loop's round and leaves with the
  // round's other sends (TCP: one sendmsg() for them all). Without it each
  // such send leaves at once (RDMA: a posted send each).
  virtual bool corksRounds() const { return false; }
  // e.g. "tcp 127.0.0.1:2049"
  virtual std::string describe() const = 0;
  // Counters as "name=value" pairs after the transport's name, in the spirit
  // of the kernel's "xprt:" line in /proc/self/mountstats.
  virtual std::string statsLine() const { return "xprt: " + describe(); }
  // How many calls the transport itself lets be in flight at once (RPC-over-
  // RDMA: the credits the server granted); none of its own: UINT32_MAX.
  virtual std::uint32_t callLimit() const { return UINT32_MAX; }
};

}  // namespace nfsrdma::transport
