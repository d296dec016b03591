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

#include "client/Error.h"
#include "client/xdr/XdrEncoder.h"

namespace nfsrdma::transport {

// Receives what a transport reads; every call comes from the transport's I/O thread.
class TransportSink {
 public:
  virtual ~TransportSink() = default;
  // One complete RPC message; the view is valid for the duration of the call.
  virtual void onMessage(std::span<const std::uint8_t> message) = 0;
  // The connection failed or was closed by the peer; no message follows.
  virtual void onTransportError(const Error& error) = 0;
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
};

class Transport {
 public:
  static constexpr int kTickIntervalMs = 50;

  virtual ~Transport() = default;
  // Starts the I/O thread; sink must outlive the transport.
  virtual void start(TransportSink& sink) = 0;
  // Sends one message. Thread-safe, never blocks on the network. When it
  // returns, the transport no longer references the segments' memory.
  virtual Error send(const OutgoingMessage& message) = 0;
  // Largest message the transport accepts from the peer.
  virtual void setMaxIncomingMessage(std::size_t bytes) = 0;
  // Stops the I/O thread and closes the connection; idempotent; not from the I/O thread.
  virtual void close() = 0;
  virtual bool onIoThread() const = 0;
  // e.g. "tcp 127.0.0.1:2049"
  virtual std::string describe() const = 0;
};

}  // namespace nfsrdma::transport
