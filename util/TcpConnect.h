// One TCP connect bounded in time: the client's transport, the link
// benchmark and the embedded server's readiness check each waited for a
// non-blocking connect in a loop of their own; this is the one wait.
#pragma once

#include <chrono>

#include "util/SocketAddress.h"

namespace nfsrdma::util {

// Connects the stream socket fd to addr, waiting at most `timeout` (a
// signal does not end the wait early: SO_ERROR reads 0 while a connect is
// still under way, which would pass for success). fd's file status flags
// are as they were afterwards, blocking or not. Returns 0 when connected,
// else the errno of the failure: connect's own (ECONNREFUSED,
// ENETUNREACH, ...), the socket's SO_ERROR, poll's, or ETIMEDOUT when no
// answer came within timeout. The caller names the peer in its message.
int connectWithin(int fd, const SocketAddress& addr, std::chrono::milliseconds timeout) noexcept;

}  // namespace nfsrdma::util
