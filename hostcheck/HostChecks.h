// HostChecks: what the server host's CPUs, IRQs and knfsd settings do to
// NFS over RDMA: the NIC's NUMA node and where its queues' interrupts go,
// the CPU frequency governor, nfsd's threads against the cores (or the
// dynamic pool's min/max on Linux 7.0 and later), and svcrdma's credit
// grant against the client's slot table when both are on this host.
#pragma once

#include <string>
#include <vector>

#include "hostcheck/DoctorCheck.h"
#include "hostcheck/HostRoot.h"

namespace nfsrdma::hostcheck {

// The CPUs online (/sys/devices/system/cpu/online); 0 when unknown.
unsigned onlineCpus(const HostRoot& root);

// Per netdev of the RDMA ports (virtual netdevs have no device/ and say so).
void checkNicNuma(const HostRoot& root, const std::string& netdev, CheckList& out);
void checkIrqAffinity(const HostRoot& root, const std::string& netdev, CheckList& out);

void checkGovernor(const HostRoot& root, CheckList& out);
void checkNfsdThreads(const HostRoot& root, CheckList& out);
void checkCredits(const HostRoot& root, CheckList& out);

// All of the above, the NIC checks once per netdev.
void serverHostChecks(const HostRoot& root, const std::vector<std::string>& netdevs,
                      CheckList& out);

}  // namespace nfsrdma::hostcheck
