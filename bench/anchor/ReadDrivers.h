// Read workloads driven at a fixed queue depth through two clients: ours
// (nfsrdma::Client's asynchronous API) and libnfs's asynchronous API with its
// own poll loop, the anchor. Both copy each block into the caller's buffer,
// run in this process one after the other, and are charged the process's
// CPU time (getrusage), so the per-operation CPU figures compare like for like.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bench/anchor/HostCpu.h"
#include "bench/file/engines/LibnfsLimits.h"
#include "client/Client.h"

namespace nfsrdma::bench {

struct ReadWorkload {
  std::string name;               // e.g. "4k-randread"
  std::uint32_t blockSize = 4096;
  std::uint32_t queueDepth = 32;
  bool random = true;             // false: sequential, wrapping at the end of the file
  std::uint64_t fileSize = 0;
  std::chrono::milliseconds runtime{5000};
  std::uint64_t seed = 1;
  // nfsrdma only: up to this many of the queue's reads share one COMPOUND
  // (Client::preadvAsync); 1 = one READ per COMPOUND, like every other client.
  std::uint32_t readsPerCompound = 1;
};

struct ReadMeasurement {
  std::string client;
  std::uint64_t ops = 0;
  std::uint64_t bytes = 0;
  double seconds = 0;
  double cpuSeconds = 0;  // user + system of this process
  std::string error;      // first error, empty when all succeeded
  std::optional<HostCpuShare> host;  // the rest of the host's CPU during the run, when sampled

  double iops() const { return seconds > 0 ? static_cast<double>(ops) / seconds : 0; }
  double mibPerSecond() const { return seconds > 0 ? static_cast<double>(bytes) / seconds / 1048576.0 : 0; }
  double cpuMicrosPerOp() const { return ops > 0 ? cpuSeconds * 1e6 / static_cast<double>(ops) : 0; }
};

// This process's user + system CPU seconds, every thread of it (io_uring's
// io-wq workers too): what each run is charged.
double processCpuSeconds();

// The first failed run, else the run of the median CPU per operation: what
// a run typically costs, not the one a neighbour's burst of work disturbed.
// runs must not be empty.
ReadMeasurement failedOrMedianByCpu(std::vector<ReadMeasurement> runs);

// Our client: 'file' (a path below the client's export) must hold fileSize bytes.
ReadMeasurement runNfsrdmaReads(Client& client, const std::string& file, const ReadWorkload& w);

// libnfs at nfs://host/exportPath/file over NFSv4 (nfsport=port), the anchor.
// A block larger than maxRead (the server's maximum READ as our client
// learned it; libnfs 4.0.0 does not learn it over NFSv4 and answers a larger
// pread short) or than kLibnfsLargestIo is read as several preads in flight
// together. A short or failed pread fails the run.
ReadMeasurement runLibnfsReads(const std::string& host, std::uint16_t port, const std::string& exportPath,
                               const std::string& file, const ReadWorkload& w, std::size_t maxRead);

}  // namespace nfsrdma::bench
