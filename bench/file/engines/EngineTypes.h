// The values the file benchmark's engines take and report (Engine.h has the
// interface): where a run goes (TargetSpec, with the NFS mount look-ups a
// path target's parse makes), what riding through outages cost a job
// (OutageAccount), and how a cell's jobs reached the server (ConnectionUse,
// ClientUse). Defined in Engine.cpp.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bench/file/engines/BlockDevice.h"
#include "client/ClientOptions.h"

namespace nfsrdma::bench {

enum class EngineKind { Nfs, Libnfs, Path, Device };
const char* engineName(EngineKind k);

// Where a run goes: an engine and its location.
struct TargetSpec {
  std::string name;  // column name in reports: "local", "nfs-tcp", ...
  EngineKind engine = EngineKind::Path;
  std::string
      location;  // nfs/libnfs: nfs://host[:port]/export[?...]; path: a directory; dev: the device
  ClientOptions nfs;  // parsed location of nfs and libnfs targets
  // A directory on this host holding the target's files (a path target's
  // location, the embedded server's export directory), or empty: what the
  // free-space check measures, and where an interrupted run removes the
  // files it laid out without going through a server that may be gone.
  std::string localDir;
  bool direct = true;  // path: O_DIRECT
  // path: the directory is on an NFS mount (statfs f_type NFS_SUPER_MAGIC),
  // e.g. a kernel client's /mnt/nfs; its server is elsewhere, not this host.
  bool onNfs = false;
  std::string mountProto;  // path on NFS: the mount's proto= ("tcp", "rdma"), "tcp" when not given
  BlockDeviceInfo device;  // dev: what inspectBlockDevice found
  // dev: the run may write (the device passed writeRefusal); else it is
  // opened read-only and never laid out.
  bool deviceWritable = false;

  // "nfs" / "libnfs" / "path" / "dev" followed by ':' and the location, e.g.
  // "nfs:nfs://10.0.0.1/export?proto=rdma", "path:/mnt/disk", "dev:/dev/sdb".
  // The name defaults to the engine's ("nfs-tcp", "nfs-rdma", "libnfs",
  // "path", "dev"). A wrong form or URL throws tool::UsageError; a path or
  // device the host cannot inspect, what the inspection throws.
  static TargetSpec parse(const std::string& name, const std::string& spec);
  // True when the server is on this host (loopback address; a path target
  // not on NFS), so its caches can be dropped and its RAM is this host's.
  bool serverIsLocal() const;
  // True when the target's bytes cross a network to an NFS server (nfs,
  // libnfs, a path on an NFS mount): a link bounds its figures.
  bool overNfs() const {
    return engine == EngineKind::Nfs || engine == EngineKind::Libnfs || onNfs;
  }
  // The transport of an NFS target: "tcp" or "rdma" (a path on NFS: its mount's).
  std::string nfsTransport() const {
    return engine == EngineKind::Path ? mountProto : std::string(transportName(nfs.proto));
  }
  bool isDevice() const { return engine == EngineKind::Device; }
  // sharedClient: the nfs engine's jobs share one client (--client shared).
  std::string describe(bool sharedClient = false) const;
};

// What riding through lost connections and server restarts cost a job
// (the nfs engine's client counts it; other engines have none to report).
struct OutageAccount {
  std::uint64_t outages = 0;  // connection or session losses
  std::uint64_t reconnects = 0;
  std::uint64_t newSessions = 0;   // the server had restarted (or dropped the session)
  std::uint64_t replayed = 0;      // calls resent on their own slots
  std::uint64_t resent = 0;        // calls sent again on a new session
  std::uint64_t unrecovered = 0;   // outages that ended in an error
  std::uint64_t outageMillis = 0;  // time without service (the longest job's)
  std::uint64_t reclaimedOpens = 0;
  std::uint64_t reopenedOpens = 0;
  std::uint64_t rewrittenBytes = 0;  // UNSTABLE data written again after a restart
  // The first COMMIT that found a new write verifier: UNSTABLE data the job
  // wrote may be gone (its buffers were the job's: the client kept no copy).
  std::string unstableLost;
  bool any() const { return outages > 0; }
  void merge(const OutageAccount& o);
  // "outage: 1 (1 reconnect, 1 new session), 1.5 s without service, ..."
  std::string describe() const;
};

// One connection of a job's client as the run left it: what a user reads
// to see whether the load spread over a trunk's connections.
struct ConnectionUse {
  std::uint32_t job = 0;  // the job whose client it is (shared: 0, the cell's one client)
  std::string peer;       // "tcp 127.0.0.1:2049"
  std::uint64_t calls = 0;
  std::uint64_t bytesSent = 0;
  std::uint64_t bytesReceived = 0;
  std::uint32_t credits = 0;  // RDMA: as granted at the end; TCP: 0 (no limit)
  std::uint64_t reconnects = 0;
  bool up = true;
};

// Our client's counters while a cell runs, summed over its connections:
// what the cell's sampler records as the "client" source.
struct ClientLive {
  std::uint64_t calls = 0;
  std::uint64_t replies = 0;
  std::uint64_t timeouts = 0;
  std::uint64_t reconnects = 0;
  std::uint64_t connectionsLost = 0;
  std::uint64_t slotWaits = 0;  // calls that waited for a session slot
  std::uint64_t replayed = 0;   // calls sent again (on their slot, or on a new session)
  std::uint32_t credits = 0;    // RDMA credits granted, all connections (0: TCP)
  std::uint32_t slots = 0;      // session slots granted
  ClientLive& operator+=(const ClientLive& o);
};

// How a cell's nfs jobs reached the server, for its header and JSON.
struct ClientUse {
  std::string mode;  // "per-job" or "shared"; empty: not the nfs engine
  std::uint32_t sessions = 0;
  std::uint32_t connections = 0;
  std::vector<ConnectionUse> perConnection;
  // "shared (1 session, 4 connections)", "per-job (4 sessions, 1 connection each)"
  std::string describe() const;
};

// statfs(2) f_type of an NFS mount (NFS_SUPER_MAGIC, linux/magic.h).
inline constexpr long kNfsSuperMagic = 0x6969;
// True when dir is on an NFS mount; false when not, or when statfs fails.
bool pathIsOnNfs(const std::string& dir);
// The proto= option of the NFS mount holding dir (/proc/self/mounts), "tcp" when absent.
std::string nfsMountProto(const std::string& dir);

}  // namespace nfsrdma::bench
