// The two rdma_cm flows every RDMA user needs, written once: a client that
// resolves address and route, lets the caller build its QP on the resolved
// device, connects with private data and returns the server's private data;
// and a listener that hands out connect requests (with the client's private
// data) and accepts them with its own. Every wait is bounded by a timeout and
// every failure names the peer, the step and the rdma_cm event or errno.
#pragma once

#include <sys/socket.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "verbs/CmEventChannel.h"
#include "verbs/CmId.h"

namespace nfsrdma::verbs {

struct CmClientOptions {
  std::string host;
  std::uint16_t port = 0;
  std::string bindAddress;  // source address; empty lets routing choose
  std::chrono::milliseconds timeout{5000};
  std::uint8_t initiatorDepth = 16;      // outstanding RDMA READs we issue
  std::uint8_t responderResources = 16;  // outstanding RDMA READs we serve
  // How errors name the peer ("no <peerName> at host:port (...)") and what
  // they suggest when it rejects the connection: the caller knows what
  // should be listening there, this layer does not.
  std::string peerName = "RDMA listener";
  std::string rejectedHint;
};

// Client step 1: resolve address and route for id (waits for the events).
// Afterwards id.verbs() names the device to build PD/CQ/QP on.
void cmResolve(CmEventChannel& channel, CmId& id, const CmClientOptions& options);

// Client step 2: connect (the QP must exist on id) with privateData (at most
// 56 bytes) and wait for ESTABLISHED. Returns the server's private data.
// Throws std::runtime_error: "no <peerName> at host:port (rdma_connect:
// connection rejected (...); <rejectedHint>)" etc.
std::vector<std::byte> cmConnect(CmEventChannel& channel, CmId& id,
                                 std::span<const std::byte> privateData,
                                 const CmClientOptions& options);

class CmListener {
 public:
  // Binds and listens. Throws NoDeviceError / std::system_error.
  static CmListener listen(CmEventChannel& channel, const std::string& bindAddress,
                           std::uint16_t port, int backlog = 16);

  struct Request {
    CmId id;
    std::vector<std::byte> privateData;
  };

  // Next connect request, or nullopt on timeout.
  std::optional<Request> waitRequest(std::chrono::milliseconds timeout);
  // Accepts the id of a request (its QP must exist) with up to 196 bytes of
  // private data and waits for ESTABLISHED. Throws std::runtime_error.
  void accept(CmId& id, std::span<const std::byte> privateData, std::chrono::milliseconds timeout,
              std::uint8_t responderResources = 16, std::uint8_t initiatorDepth = 16);
  // Processes events for up to timeout; returns true once id has seen
  // DISCONNECTED (or was already seen).
  bool waitDisconnected(rdma_cm_id* id, std::chrono::milliseconds timeout);
  std::uint16_t port() const noexcept;

 private:
  CmListener(CmEventChannel& channel, CmId id) : channel_(&channel), id_(std::move(id)) {}
  // Handles one event; returns false on timeout.
  bool pump(std::chrono::milliseconds timeout);

  CmEventChannel* channel_;
  CmId id_;
  std::deque<Request> requests_;
  std::set<rdma_cm_id*> established_;
  std::set<rdma_cm_id*> disconnected_;
  std::set<rdma_cm_id*> failed_;
};

}  // namespace nfsrdma::verbs
