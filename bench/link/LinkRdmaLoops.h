// The RDMA link test's measuring loops over connected endpoints: the
// bandwidth loop (WRITE or READ on every QP, perftest's post lists and CQ
// moderation, -D's measured window, sleeping on CQ events or spinning) and
// the latency test's ping-pong. Internal to bench/link.
#pragma once

#include <chrono>
#include <cstdint>
#include <vector>

#include "bench/link/LinkRdmaEndpoint.h"

namespace nfsrdma::bench::linkrdma {

// One step of the bandwidth loop, from the options and the step's size.
struct LoopParams {
  ibv_wr_opcode opcode;
  std::uint64_t size;
  std::uint64_t iterations;           // per QP; ignored when duration > 0
  std::chrono::nanoseconds duration;  // the whole -D run, margins included
  std::uint32_t txDepth;
  std::uint32_t cqModeration;
  std::uint32_t postList;              // WRs per ibv_post_send call
  bool warmUp = false;                 // untimed TX depth first (--perform_warm_up)
  std::chrono::nanoseconds margin{0};  // -D: left out of the measurement at each end
  bool useEvents = false;              // sleep on the send CQs' events instead of spinning (CqWait)
};

// What the bandwidth loop measured, on all QPs together.
struct LoopResult {
  std::uint64_t messages = 0;
  double seconds = 0;
  double peakMessagesPerSecond = 0;
  std::uint64_t eventWaits = 0;  // sleeps on the send CQs' events
};

// Posts p.opcode on every endpoint until -n messages per QP or -D's time,
// and times the measured part. Throws on a failed verb or completion.
LoopResult runBandwidthLoop(const Endpoints& eps, const LoopParams& p);

// Client: ping, wait for the pong; one-way latency = round trip / 2.
std::vector<double> runPingLoop(Endpoint& ep, std::uint32_t size, std::uint64_t iterations);

// Server: wait for each ping and answer it, iterations times.
void runPongLoop(Endpoint& ep, std::uint32_t size, std::uint64_t iterations);

}  // namespace nfsrdma::bench::linkrdma
