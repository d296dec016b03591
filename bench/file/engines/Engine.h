// Engines of the file benchmark: what moves a job's bytes. Each engine runs
// one job on the calling thread, keeping the driver's iodepth slots busy
// until the driver stops issuing, then waits (bounded) for the stragglers.
//   nfs    our NFSv4.1 client (nfsrdma::Client): per job its own client
//          (numjobs = threads, each with its own connection and session),
//          or with --client shared one client for all of a cell's jobs (one
//          session, a connection per job, as an application's threads share
//          one mount); queue depth through the session slots; requests above
//          the client's max I/O size go out as several READ/WRITEs at once.
//   libnfs libnfs's asynchronous API (NFSv4.0, TCP), one context per job
//          driven by our poll loop: the anchor.
//   path   a directory on any mounted file system (local disk, kernel NFS
//          mount over TCP or RDMA, iSCSI LUN) through io_uring, O_DIRECT
//          unless --direct=0, one ring per job.
//   dev    a block device (dev:/dev/nvme1n1, an NVMe-oF namespace, an iSCSI
//          LUN, /dev/ram0) through the path engine's io_uring: the jobs
//          share the device as one file, each on its own range; read-only
//          unless the device was named by --allow-destructive-write.
// The interface first (Engine, EngineShare), then the factories and what
// the engines share; the values they take and report (TargetSpec,
// OutageAccount, ConnectionUse, ClientUse) are in EngineTypes.h.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench/file/engines/EngineTypes.h"
#include "bench/job/FileJob.h"

namespace nfsrdma {
class Client;
}

namespace nfsrdma::bench {

class Engine {
 public:
  virtual ~Engine() = default;
  // Opens the job's files, creating missing ones when create; returns each
  // file's current size. Throws std::runtime_error naming file and cause.
  virtual std::vector<std::uint64_t> open(const std::vector<std::string>& files, bool create) = 0;
  // Runs the job to its end on this thread.
  virtual void run(JobDriver& driver) = 0;
  // Makes written data durable (COMMIT, fsync) without closing: the end of
  // a write phase, timed like fio's end_fsync.
  virtual void commit() = 0;
  // Makes written data durable (COMMIT, fsync) and closes the files.
  virtual void finish() = 0;
  // Closes what finish() closes without making written data durable (no
  // COMMIT, no fsync): after an interrupt, for files about to be removed.
  virtual void abandon() { finish(); }
  // The requests of blockSize bytes this engine keeps on the wire at once
  // when a job asks for iodepth with readPercent % reads: fewer when the
  // server granted the session fewer slots than they need (the rest wait in
  // the client's queue, and their latency includes that wait).
  virtual std::uint32_t effectiveIodepth(std::uint32_t iodepth, std::uint32_t /*blockSize*/,
                                         unsigned /*readPercent*/) const {
    return iodepth;
  }
  // Removes the files (names relative to the target; missing ones are fine).
  // Throws std::runtime_error naming the file and cause.
  virtual void remove(const std::vector<std::string>& files);
  // What outages the job rode through, once it is finished.
  virtual OutageAccount outages() const { return {}; }
  // Its own client's connections (nfs, per job), before finish(); none for
  // other engines and for a job on a shared client (EngineShare has them).
  virtual std::vector<ConnectionUse> connections() const { return {}; }
  // Its own client's counters now (nfs, per job), while it is open; safe
  // to call from another thread than the job's.
  virtual std::optional<ClientLive> live() const { return std::nullopt; }
};

// One client for all the jobs of a cell (--client shared, nfs only): the
// jobs' engines issue on it from their threads and leave it open; the cell
// closes it once every job has finished, and counts its outages once.
class EngineShare {
 public:
  virtual ~EngineShare() = default;
  virtual OutageAccount outages() const = 0;
  virtual std::vector<ConnectionUse> connections() const = 0;
  virtual ClientLive live() const = 0;  // as Engine::live, until close()
  // Destroys the session; what fails there is a warning (the jobs' data
  // was committed by their finish()).
  virtual void close() = 0;
};

// The target a shared client of jobs jobs connects to: a connection per job
// (nconnect, at most 16) unless the URL gave nconnect=, and the session
// slots all jobs need (qd= times jobs, at most 1024) unless it gave qd=.
TargetSpec withSharedClientFor(TargetSpec target, std::uint32_t jobs);
// Connects the shared client (target: withSharedClientFor's). Throws
// std::invalid_argument for an engine other than nfs, and what connecting
// throws.
std::shared_ptr<EngineShare> makeEngineShare(const TargetSpec& target, std::uint32_t jobs);

// The nfs engine's effectiveIodepth, given what its client reports:
// maxIoSize, maxInFlight (session slots, and over RDMA the credits granted),
// readsPerCompound (the URL's) and maxReadsPerCompound(blockSize). A request
// takes a slot per maxIoSize piece; with reads-per-compound the queue forms
// groups (as NfsEngine::run: at most a quarter of the iodepth) whose READs
// that fit one READ share one COMPOUND and slot, while writes and larger
// reads still take their own: with readPercent % reads, a request takes on
// average readPercent/per + (100 - readPercent) hundredths of a slot.
std::uint32_t nfsEffectiveIodepth(std::uint32_t iodepth, std::uint32_t blockSize,
                                  unsigned readPercent, std::size_t maxIoSize,
                                  std::uint32_t maxInFlight, std::uint32_t readsPerCompound,
                                  std::size_t maxReadsPerCompound);

// What our client's synchronous calls (connect, OPEN, COMMIT, REMOVE) are
// sent again for while the server answers NFS4ERR_GRACE or NFS4ERR_DELAY,
// before the job looks at Ctrl-C again: the nfs engine gives its client this
// busy-timeout and repeats a call (callWhileBusy) up to the URL's.
inline constexpr std::chrono::milliseconds kBusySlice{2000};
// Runs call; while it throws an NfsException of NFS4ERR_GRACE or
// NFS4ERR_DELAY, runs it again until budget has passed since the first
// attempt (then throws that error, saying so). Once interruptSignal() is
// set it starts no further attempt and throws Interrupted (the first one
// always runs: an interrupted command's cleanup uses it). onAgain, when
// given, is called before each repeated attempt.
void callWhileBusy(const std::function<void()>& call, std::chrono::milliseconds budget,
                   const std::function<void()>& onAgain = {});

// A fresh engine (and connection) for one job. Throws when the target cannot
// be reached, e.g. NfsException "this build has no RDMA transport yet".
std::unique_ptr<Engine> makeEngine(const TargetSpec& target);
// A job's engine on the cell's shared client (makeEngineShare's).
std::unique_ptr<Engine> makeEngine(const TargetSpec& target,
                                   const std::shared_ptr<EngineShare>& share);

// An nfs engine on a client the caller connected and keeps (the anchor's,
// whose session it reports): the engine neither closes it nor counts its
// outages. Throws std::invalid_argument for an engine other than nfs.
std::unique_ptr<Engine> makeEngine(const TargetSpec& target, Client& client);

}  // namespace nfsrdma::bench
