// ClientChecks: what the NFS client host needs for NFS over RDMA: the
// kernel's rpcrdma module, its NFS mounts' options and read-ahead, the nfs
// module's session slots, the RDMA slot table, and which RDMA port holds
// the local address the route to the server leaves from.
#pragma once

#include <string>
#include <vector>

#include "hostcheck/DoctorCheck.h"
#include "hostcheck/HostRoot.h"
#include "hostcheck/RdmaPorts.h"

namespace nfsrdma::hostcheck {

// One NFS mount from mountinfo: "36 25 0:53 / /mnt rw,relatime shared:1 - nfs4 srv:/x rw,..."
struct NfsMount {
  std::string mountPoint;  // unescaped (\040 is a space)
  std::string source;      // "server:/export"
  std::string fstype;      // nfs, nfs4
  std::string device;      // major:minor, the BDI's name ("0:53")
  std::string options;     // the super options: vers=, proto=, rsize=, ...
};

// The nfs and nfs4 mounts of mountinfo's text; lines of another shape are
// skipped (mountinfo is the kernel's, a malformed line is not ours to judge).
std::vector<NfsMount> parseNfsMounts(const std::string& mountinfo);

// The value of key in a comma-separated option list ("proto" in
// "rw,proto=rdma,port=20049" is "rdma"); "" when absent.
std::string mountOption(const std::string& options, const std::string& key);

void checkRpcRdma(const HostRoot& root, CheckList& out);
void checkMounts(const HostRoot& root, CheckList& out);
void checkSessionSlots(const HostRoot& root, CheckList& out);
void checkRdmaSlotTable(const HostRoot& root, CheckList& out);
// Which RDMA port has a RoCE v2 (or IB) GID holding localIp, the address
// the route to server leaves from; localIp "" when the route could not be
// looked up (routeError says why).
void checkRouteToServer(const std::vector<RdmaPortInfo>& ports, const std::string& server,
                        const std::string& localIp, const std::string& routeError, CheckList& out);

void clientHostChecks(const HostRoot& root, CheckList& out);

}  // namespace nfsrdma::hostcheck
