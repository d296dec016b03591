// The TCP half of `nfsrdma-bench link`: stream bandwidth between the same two
// hosts, one or more parallel streams like `iperf3 -P`, reported in the same
// columns as the RDMA tests so the two can sit side by side (`--both`). The
// server counts (and with --verify checks) what it received and the client's
// clock stops only when the server confirms the bytes, so the figure is
// delivered bandwidth, not what the send buffers swallowed.
#pragma once

#include <atomic>

#include "bench/link/LinkOptions.h"
#include "bench/link/LinkRdmaBench.h"

namespace nfsrdma::bench {

// Runs the TCP test against options.host:options.port. Throws
// std::runtime_error naming the step and errno text.
LinkRunReport runTcpClient(const LinkOptions& options, bool lastSession);

// Serves TCP sessions until state.finished is set (by a last session here or
// by the RDMA listener) or the whole server has been idle for the timeout.
void runTcpServer(const LinkOptions& options, LinkServerState& state);

}  // namespace nfsrdma::bench
