// The RPC layer's counters for one connection (rpc::RpcClient::stats). A
// plain struct in base/, below the layers, so that the public API
// (Client.h's ConnectionStats) reports them without including rpc/.
#pragma once

#include <cstdint>

namespace nfsrdma::rpc {

struct RpcStats {
  std::uint64_t calls = 0;
  std::uint64_t replies = 0;
  std::uint64_t timeouts = 0;
  std::uint64_t unknownXids = 0;
  std::uint64_t malformedReplies = 0;
  std::uint64_t bytesSent = 0;
  std::uint64_t bytesReceived = 0;
  std::uint64_t connectionsLost = 0;  // transport failures that ended calls in flight
  std::uint64_t reconnects = 0;       // new connections made by reconnect()

  // Several connections' counters together.
  RpcStats& operator+=(const RpcStats& o) {
    calls += o.calls;
    replies += o.replies;
    timeouts += o.timeouts;
    unknownXids += o.unknownXids;
    malformedReplies += o.malformedReplies;
    bytesSent += o.bytesSent;
    bytesReceived += o.bytesReceived;
    connectionsLost += o.connectionsLost;
    reconnects += o.reconnects;
    return *this;
  }
};

}  // namespace nfsrdma::rpc
