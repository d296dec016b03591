// /proc/self/mountstats, read: the NFS mounts of this host with what the
// kernel client counts for each (net/sunrpc/stats.c, fs/nfs/super.c's
// nfs_show_stats): the transports' `xprt:` lines, the per-operation RPC
// statistics and the `events:` and `bytes:` counters. A pure parser over
// the file's text, so tests feed it recorded files and the fuzz target feeds
// it anything.
//
// A counter the kernel did not print is absent, never zero: older kernels
// print fewer fields on a line and newer ones append some, so each line
// keeps the fields it has, named in the kernel's order (extras `extra_N`).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "counters/NamedValues.h"

namespace nfsrdma::counters {

// One `xprt:` line: "rdma", "tcp", "udp" or "local", and its fields
// (rdma: srcport, bind_count, connect_count, ..., sends, recvs, ..., req_u,
// bklog_u, ...). A mount with nconnect=N has N of them.
struct XprtStats {
  std::string proto;
  NamedValues fields;
};

// One line of "per-op statistics": cumulative since the mount; times in ms.
// Queue time runs from the call's start to its transmission (slot, credit
// and backlog waits), RTT from transmission to reply, execute time the whole.
struct RpcOpStats {
  std::uint64_t ops = 0;
  std::uint64_t transmissions = 0;
  std::uint64_t majorTimeouts = 0;
  std::uint64_t bytesSent = 0;
  std::uint64_t bytesReceived = 0;
  std::uint64_t queueMs = 0;
  std::uint64_t rttMs = 0;
  std::uint64_t executeMs = 0;
  std::optional<std::uint64_t> errors;  // absent before the kernel printed it (4.x)
};

struct NfsMountStats {
  std::string device;      // "server:/export"
  std::string mountPoint;  // unescaped ("\040" is a space)
  std::string fstype;      // "nfs" or "nfs4"
  std::string options;     // the `opts:` line as the kernel printed it
  NamedValues events;      // inoderevalidate, ..., shortread, shortwrite, delay, ...
  NamedValues bytes;       // normalreadbytes, ..., serverreadbytes, serverwrittenbytes, ...
  std::vector<XprtStats> xprts;
  std::vector<std::pair<std::string, RpcOpStats>>
      ops;  // "READ", "WRITE", ... in the kernel's order
  const RpcOpStats* op(std::string_view name) const;
};

// The NFS mounts (fstype nfs or nfs4) in the file's order; other mounts are
// skipped. Throws std::invalid_argument "mountstats line N: ..." naming what
// was expected when a line of an NFS mount's section is malformed. Lines of
// kinds it does not know are left alone (a newer kernel adds some).
std::vector<NfsMountStats> parseMountStats(std::string_view text);

}  // namespace nfsrdma::counters
