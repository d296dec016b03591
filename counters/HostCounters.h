// The counter sources of this host, read into named values for a sampler:
// the RDMA ports and their netdevs, the host's CPU time, one process's
// threads, nfsd's pools and threads, svcrdma's statistics and an NFS
// mount's mountstats. Each reader takes the file system root (the tests
// stage hosts under a directory) and returns nothing when the host does
// not have the source: absent, never zero.
//
// The counter names are those counters/Series.h lists per source.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "counters/CounterFiles.h"
#include "counters/NamedValues.h"

namespace nfsrdma::counters {

// A small procfs or sysfs file, whole; nothing when it cannot be read.
std::optional<std::string> readSmallFile(const std::filesystem::path& file);

// "rxe0/1", ...: every port of every RDMA device, sorted, at most 64.
std::vector<std::string> rdmaPorts(const std::filesystem::path& root);
// The netdevs under the RDMA ports (gid_attrs/ndevs, else the device's
// "parent" file, which rxe has), sorted, each once.
std::vector<std::string> rdmaNetdevs(const std::filesystem::path& root);

// A source's counter files, opened once (CounterFiles): read() at each
// sample, nothing when none of its files read.
class OpenCounters {
 public:
  std::optional<NamedValues> read() const;

 private:
  friend OpenCounters rdmaPortCounters(const std::filesystem::path&, const std::string&);
  friend OpenCounters netdevCounters(const std::filesystem::path&, const std::string&);
  friend OpenCounters svcRdmaCounters(const std::filesystem::path&);
  std::vector<CounterFiles> parts_;
};

// A port's hw_counters/ (without its "lifespan" setting) and counters/.
OpenCounters rdmaPortCounters(const std::filesystem::path& root, const std::string& port);
// The statistics/ a verdict or a reader of the JSON uses: packets, bytes,
// errors, drops (netdevCounterWanted).
OpenCounters netdevCounters(const std::filesystem::path& root, const std::string& netdev);
bool netdevCounterWanted(std::string_view name);
// /proc/stat's "cpu" line (user ... steal) plus cpus (the cpuN lines) and hz.
std::optional<NamedValues> readHostCpu(const std::filesystem::path& root, long hz);
// /proc/fs/nfsd/pool_stats summed over the pools.
std::optional<NamedValues> readNfsdPools(const std::filesystem::path& root);
// svcrdma's rdma_stat_* counters and its max_requests grant.
OpenCounters svcRdmaCounters(const std::filesystem::path& root);
// The kernel NFS mount at mountPoint: its transports' xprt fields summed
// and each operation's OP.ops, OP.transmissions, OP.queue_ms, OP.rtt_ms,
// OP.execute_ms, OP.errors (for the operations that have run).
std::optional<NamedValues> readMountCounters(const std::filesystem::path& root,
                                             const std::string& mountPoint);

// The mount point of the NFS mount holding path (the longest mount point
// of /proc/self/mountstats that is a prefix of it), or nothing.
std::optional<std::string> nfsMountOf(const std::filesystem::path& root, const std::string& path);

// The threads of a process (/proc/PID/task/*), or of the kernel's nfsd
// (every process whose comm is "nfsd"): each one's state and CPU ticks.
// Remembers the thread ids between readings so that a reading costs one
// stat per thread, and so that the busiest thread's share of each
// interval can be summed (busiest_ticks).
class ThreadCounters {
 public:
  // pid 0: the nfsd threads, found by scanning /proc when their count
  // (/proc/fs/nfsd/threads) changes. Otherwise the threads of pid ("self").
  ThreadCounters(std::filesystem::path root, std::string pid, long hz);
  // bench-threads: busiest_ticks, longest_wait_ms (when schedstat is
  // there), ticks, threads, hz. nfsd-threads:
  // threads, busy, ticks, hz. Nothing when there are no threads to read.
  std::optional<NamedValues> read();

 private:
  // One reading's sums over the threads.
  struct Tally {
    std::uint64_t added = 0, busiest = 0, threads = 0, busy = 0, longestWait = 0;
    bool waits = false;                                  // every thread's run-queue wait was read
    std::map<std::string, std::uint64_t> ticks, waited;  // by thread, for the next reading
  };
  void findNfsdThreads();
  std::vector<std::filesystem::path> statFiles();
  std::uint64_t since(const std::map<std::string, std::uint64_t>& last, const std::string& thread,
                      std::uint64_t now) const;
  void count(const std::filesystem::path& stat, Tally& t) const;
  std::filesystem::path root_;
  std::string pid_;  // empty: nfsd
  long hz_;
  std::vector<std::filesystem::path> nfsdStats_;  // nfsd only: each thread's stat file
  std::optional<std::int64_t> nfsdCount_;         // /proc/fs/nfsd/threads when last scanned
  std::map<std::string, std::uint64_t> last_;     // ticks by thread
  bool first_ = true;
  std::uint64_t busiest_ = 0;  // the busiest thread's ticks of each interval, summed
  std::uint64_t ticks_ = 0;    // every thread's ticks since the first reading, ended ones too
  std::map<std::string, std::uint64_t> lastWait_;  // run-queue wait (ms) by thread
  std::uint64_t longestWait_ = 0;                  // the longest wait of each interval, summed
};

}  // namespace nfsrdma::counters
