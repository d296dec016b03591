// Engines of the file benchmark: what moves a job's bytes. Each engine runs
// one job on the calling thread, keeping the driver's iodepth slots busy
// until the driver stops issuing, then waits (bounded) for the stragglers.
//   nfs    our NFSv4.1 client (nfsrdma::Client); one connection per job
//          (numjobs = threads, each with its own connection and session);
//          queue depth through the session slots; requests above the
//          client's max I/O size go out as several READ/WRITEs at once.
//   libnfs libnfs's asynchronous API (NFSv4.0, TCP), one context per job
//          driven by our poll loop: the anchor.
//   path   a directory on any mounted file system (local disk, kernel NFS
//          mount over TCP or RDMA, iSCSI LUN) through io_uring, O_DIRECT
//          unless --direct=0, one ring per job.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench/FileJob.h"
#include "client/ClientOptions.h"

namespace nfsrdma::bench {

enum class EngineKind { Nfs, Libnfs, Path };
const char* engineName(EngineKind k);

// Where a run goes: an engine and its location.
struct TargetSpec {
  std::string name;      // column name in reports: "local", "nfs-tcp", ...
  EngineKind engine = EngineKind::Path;
  std::string location;  // nfs/libnfs: nfs://host[:port]/export[?...]; path: a directory
  ClientOptions nfs;     // parsed location of nfs and libnfs targets
  bool direct = true;    // path: O_DIRECT

  // "nfs" / "libnfs" / "path" followed by ':' and the location, e.g.
  // "nfs:nfs://10.0.0.1/export?proto=rdma", "path:/mnt/disk". The name
  // defaults to the engine's ("nfs-tcp", "nfs-rdma", "libnfs", "path").
  static TargetSpec parse(const std::string& name, const std::string& spec);
  // True when the server is on this host (loopback address), so its caches can be dropped.
  bool serverIsLocal() const;
  std::string describe() const;
};

class Engine {
 public:
  virtual ~Engine() = default;
  // Opens the job's files, creating missing ones when create; returns each
  // file's current size. Throws std::runtime_error naming file and cause.
  virtual std::vector<std::uint64_t> open(const std::vector<std::string>& files, bool create) = 0;
  // Runs the job to its end on this thread.
  virtual void run(JobDriver& driver) = 0;
  // Makes written data durable (COMMIT, fsync) and closes the files.
  virtual void finish() = 0;
};

// A fresh engine (and connection) for one job. Throws when the target cannot
// be reached, e.g. NfsException "this build has no RDMA transport yet".
std::unique_ptr<Engine> makeEngine(const TargetSpec& target);

}  // namespace nfsrdma::bench
