// The anchor's read workloads, run through the file benchmark's engines
// (bench/file/engines): our client's nfs engine and the libnfs engine, the
// anchor, with the job driver `nfsrdma-bench file` uses. One engine per
// backend, as fio's: the anchor's columns and the file benchmark's cannot
// drift apart. Each run is charged this process's CPU time (getrusage)
// over the engine's run alone (not its connect or open), so the
// per-operation CPU figures compare like for like.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bench/anchor/HostCpu.h"
#include "client/Client.h"

namespace nfsrdma::bench {

struct ReadWorkload {
  std::string name;  // e.g. "4k-randread"
  std::uint32_t blockSize = 4096;
  std::uint32_t queueDepth = 32;
  bool random = true;  // false: sequential, wrapping at the end of the file
  std::uint64_t fileSize = 0;
  std::chrono::milliseconds runtime{5000};
  std::uint64_t seed = 1;
  // nfsrdma only: up to this many of the queue's reads share one COMPOUND
  // (the nfs engine's reads-per-compound, at most a quarter of the queue);
  // 1 = one READ per COMPOUND, like every other client.
  std::uint32_t readsPerCompound = 1;
};

struct ReadMeasurement {
  std::string client;
  std::uint64_t ops = 0;
  std::uint64_t bytes = 0;
  double seconds = 0;
  double cpuSeconds = 0;             // user + system of this process
  std::string error;                 // first error, empty when all succeeded
  std::optional<HostCpuShare> host;  // the rest of the host's CPU during the run, when sampled

  double iops() const { return seconds > 0 ? static_cast<double>(ops) / seconds : 0; }
  double mibPerSecond() const {
    return seconds > 0 ? static_cast<double>(bytes) / seconds / 1048576.0 : 0;
  }
  double cpuMicrosPerOp() const {
    return ops > 0 ? cpuSeconds * 1e6 / static_cast<double>(ops) : 0;
  }
};

// This process's user + system CPU seconds, every thread of it (io_uring's
// io-wq workers too): what each run is charged.
double processCpuSeconds();

// The first failed run, else the run of the median CPU per operation: what
// a run typically costs, not the one a neighbour's burst of work disturbed.
// runs must not be empty.
ReadMeasurement failedOrMedianByCpu(std::vector<ReadMeasurement> runs);

// Our client through the nfs engine on client itself (its session, its
// options): 'file' (a path below the client's export) must hold
// w.fileSize bytes. The host's CPU is sampled around the run, with the
// process watched (a server on this host) when watched > 0.
ReadMeasurement runNfsrdmaReads(Client& client, const std::string& file, const ReadWorkload& w,
                                pid_t watched = 0);

// libnfs through its engine at server's host, port and export over NFSv4.
// The engine splits a block larger than the server's maximum READ (as our
// client learns it) into preads in flight together; a short or failed
// pread fails the run.
ReadMeasurement runLibnfsReads(const ClientOptions& server, const std::string& file,
                               const ReadWorkload& w, pid_t watched = 0);

}  // namespace nfsrdma::bench
