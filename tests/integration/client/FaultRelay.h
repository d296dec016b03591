// A TCP relay between the client and a real server that cuts connections
// on purpose: each connection it accepts on 127.0.0.1 is relayed to the
// server's port, and once a set number of bytes has gone one way (replies
// to the client, or calls to the server) the relay passes exactly that many
// and resets both sides (RST), so the cut lands wherever the count says, in
// the middle of a record too. The client must reconnect and resend; the
// server sees a dropped connection as with a flapping link.
//
// It can also go silent (partitionAfter): for a while it moves no byte either
// way on any connection and accepts none, without closing anything, as a
// link that drops every packet while it stays up; then it carries on.
//
// One thread moves the bytes with non-blocking sockets and poll(), holding
// what a side cannot take yet, so neither peer can stall the other.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <thread>

#include "util/UniqueFd.h"

namespace nfsrdma::testing {

class FaultRelay {
 public:
  // Listens on a free 127.0.0.1 port and relays to 127.0.0.1:serverPort.
  explicit FaultRelay(std::uint16_t serverPort);
  ~FaultRelay();
  FaultRelay(const FaultRelay&) = delete;
  FaultRelay& operator=(const FaultRelay&) = delete;

  std::uint16_t port() const { return port_; }
  // Each connection is cut once toClient bytes went to the client or
  // toServer bytes to the server (0: that way never): the next maxCuts
  // connections accepted are; later ones are left alone.
  void cutAfter(std::size_t toClient, std::size_t toServer, unsigned maxCuts);
  // Once toServer bytes in all went to the server, for this long nothing
  // moves and no connection is accepted (the client's connects still
  // complete in the listen backlog, and what it sends waits in the socket
  // buffers): a silent partition, once.
  void partitionAfter(std::size_t toServer, std::chrono::milliseconds duration);
  bool partitioned() const { return partitionStarted_.load(); }
  unsigned cuts() const { return cuts_.load(); }
  unsigned connections() const { return connections_.load(); }

 private:
  struct Link;
  void run();
  // Counts bytes read for the server; starts the partition at its mark.
  void startPartitionAfter(std::size_t moved);

  UniqueFd listen_;
  std::uint16_t port_ = 0;
  std::uint16_t serverPort_ = 0;
  std::mutex mu_;
  std::size_t toClient_ = 0;
  std::size_t toServer_ = 0;
  unsigned maxCuts_ = 0;
  unsigned armed_ = 0;  // connections accepted with a cut set (mu_)
  std::atomic<unsigned> cuts_{0};
  std::atomic<unsigned> connections_{0};
  std::size_t partitionAt_ = 0;                // bytes to the server in all (mu_); 0: none
  std::chrono::milliseconds partitionFor_{0};  // (mu_)
  std::size_t movedToServer_ = 0;              // relay thread only
  std::chrono::steady_clock::time_point silentUntil_{};  // relay thread only
  std::atomic<bool> partitionStarted_{false};
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace nfsrdma::testing
