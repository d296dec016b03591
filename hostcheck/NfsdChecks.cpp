// NfsdChecks: knfsd's thread count and svcrdma's credit grant, and
// serverHostChecks, which runs every server host check.
#include <set>

#include "hostcheck/HostChecks.h"

namespace nfsrdma::hostcheck {
namespace fs = std::filesystem;

namespace {
const fs::path kNfsd = "/proc/fs/nfsd";
const fs::path kSunrpc = "/proc/sys/sunrpc";
}  // namespace

void checkNfsdThreads(const HostRoot& root, CheckList& out) {
  const auto threads = root.readNumber(kNfsd / "threads");
  if (!threads || *threads <= 0) return;  // "nfsd running" says so
  const auto minThreads = root.readNumber(kNfsd / "min_threads");
  if (minThreads && *minThreads > 0) {
    // Linux 7.0's dynamic pool: threads is the ceiling, min_threads the floor.
    out.pass("nfsd threads", "dynamic pool: min " + std::to_string(*minThreads) + ", max " +
                                 std::to_string(*threads));
    return;
  }
  const unsigned cpus = onlineCpus(root);
  const std::string found = std::to_string(*threads) + " threads";
  if (cpus == 0) {
    out.pass("nfsd threads", found + " (CPUs online unknown)");
  } else if (*threads < static_cast<long long>(cpus)) {
    out.warn("nfsd threads",
             found + " for " + std::to_string(cpus) +
                 " CPUs: calls queue for a thread while CPUs idle (pool_stats' threads-timedout "
                 "and sockets-enqueued show it)",
             "echo " + std::to_string(cpus) +
                 " > /proc/fs/nfsd/threads  # persist: [nfsd] threads=" + std::to_string(cpus) +
                 " in /etc/nfs.conf");
  } else {
    out.pass("nfsd threads", found + " for " + std::to_string(cpus) + " CPUs");
  }
}

void checkCredits(const HostRoot& root, CheckList& out) {
  const auto grant = root.readNumber(kSunrpc / "svc_rdma" / "max_requests");
  if (!grant) return;  // svcrdma not loaded: the module check says so
  const auto slots = root.readNumber(kSunrpc / "rdma_slot_table_entries");
  const std::string found = "svcrdma grants up to " + std::to_string(*grant) + " credits";
  if (!slots) {
    out.pass("RDMA credits", found +
                                 " per connection (compare the clients' "
                                 "/proc/sys/sunrpc/rdma_slot_table_entries)");
  } else if (*grant < *slots) {
    out.warn("RDMA credits",
             found + ", fewer than this host's client slot table (rdma_slot_table_entries " +
                 std::to_string(*slots) + "): calls wait for credits, not the server",
             "echo " + std::to_string(*slots) +
                 " > /proc/sys/sunrpc/svc_rdma/max_requests  "
                 "# applies to new connections");
  } else {
    out.pass("RDMA credits", found + ", the client slot table " + std::to_string(*slots));
  }
}

void serverHostChecks(const HostRoot& root, const std::vector<std::string>& netdevs,
                      CheckList& out) {
  std::set<std::string> done;
  for (const auto& nd : netdevs) {
    if (nd.empty() || !done.insert(nd).second) continue;
    checkNicNuma(root, nd, out);
    checkIrqAffinity(root, nd, out);
  }
  checkGovernor(root, out);
  checkNfsdThreads(root, out);
  checkCredits(root, out);
}

}  // namespace nfsrdma::hostcheck
