// The RDMA half of `nfsrdma-bench link`: client and server of RDMA WRITE and
// READ bandwidth and SEND/RECV latency over rdma_cm RC connections (one per
// QP). Parameters travel in the connect private data; each message size is
// one step of GO/READY ... END/FIN control SENDs on QP 0, which lets the
// server zero and check its buffer per step (--verify), run its own writes
// (-b) and report them. The data path mirrors ib_write_bw: a fixed table of
// pre-built WRs per QP, posted as chains up to the TX depth, one signaled
// completion every --cq-mod sends, the CQ polled in batches; nothing else
// (no allocation, no syscalls, no locks) happens in the loop.
// The code: LinkRdmaEndpoint.h (one QP's resources, the control messages),
// LinkRdmaLoops.h (the bandwidth loop and the ping-pong), LinkRdmaClient.cpp
// and LinkRdmaServer.cpp.
#pragma once

#include <atomic>
#include <optional>
#include <string>
#include <vector>

#include "bench/link/LinkOptions.h"
#include "bench/link/LinkServerState.h"
#include "bench/link/LinkStats.h"
#include "bench/report/ReportTable.h"
#include "verbs/DeviceDiscovery.h"

namespace nfsrdma::bench {

struct LinkRunReport {
  std::string title;  // "RDMA_Write BW Test"
  std::string key;    // "rdma_write_bw"
  BannerItems banner;
  std::vector<BandwidthResult> bandwidth;  // write/read (and TCP) tests
  std::vector<LatencyResult> latency;      // latency test
  std::string verify;                      // "" when not asked, else the outcome
  // Sleeps on CQ events over all sizes (the client's loop); nullopt when it polled.
  std::optional<std::uint64_t> eventWaits;
};

// Runs the client side of options.test against options.host. lastSession
// tells the server to exit after this session. Throws NoDeviceError,
// std::system_error (verbs) or std::runtime_error (peer, verify).
LinkRunReport runRdmaClient(const LinkOptions& options, bool lastSession);

// Serves RDMA sessions until one marked last ends (sets state.finished), the
// server has been idle for options.idleTimeout, or state.finished is set by
// the TCP listener. Progress lines go to stderr ("listening on ..."), which
// scripts wait for. Throws on setup errors.
void runRdmaServer(const LinkOptions& options, LinkServerState& state);
// What sysfs says of an RDMA device (NUMA node, software or not); nullopt
// when it is not there.
std::optional<verbs::DeviceInfo> sysfsDeviceInfo(const std::string& device);

}  // namespace nfsrdma::bench
