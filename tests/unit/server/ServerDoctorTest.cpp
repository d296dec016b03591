// doctor's reading of the live export table (/proc/fs/nfs/exports): an
// export RDMA clients cannot mount is named, and an option that merely
// contains the word (insecure_locks) does not count as 'insecure'. And the
// fabric and host lines hostcheck adds after the server's own.
#include <gtest/gtest.h>

#include "tests/unit/server/StagedHost.h"
#include "tests/unit/server/ToolRunner.h"

using nfsrdma::server::testing::runTool;
using nfsrdma::server::testing::StagedHost;

namespace {

TEST(ServerDoctorLiveExports, InsecureLocksIsNotInsecure) {
  StagedHost host;
  host.write("proc/fs/nfs/exports",
             "# Version 1.1\n"
             "# Path Client(Flags) # IPs\n"
             "/srv/nfsrdma/data\t10.0.0.0/24(rw,insecure,no_root_squash,sync,wdelay)\n"
             "/home\t10.0.0.0/24(rw,insecure_locks,root_squash,sync,wdelay)\n");
  const auto d = runTool({"--root", host.root.string(), "doctor"});
  EXPECT_NE(d.out.find("WARN  live export /home: exported without insecure"), std::string::npos)
      << d.out;
  EXPECT_EQ(d.out.find("WARN  live export /srv/nfsrdma/data"), std::string::npos) << d.out;
}

// The staged host's rxe0 on eth0 gets the fabric checks (its GIDs once,
// from the server's own check), and the host the nfsd and credit checks.
TEST(ServerDoctorFabricAndHost, FollowTheServersOwnChecks) {
  StagedHost host;
  host.write("sys/class/net/eth0/mtu", "9000\n");
  host.write("sys/devices/system/cpu/online", "0-15\n");
  host.write("proc/fs/nfsd/threads", "8\n");
  host.write("proc/sys/sunrpc/rdma_slot_table_entries", "128\n");
  host.write("sys/kernel/config/rdma_cm/rxe0/ports/1/default_roce_tos", "0\n");
  const auto d = runTool({"--root", host.root.string(), "doctor"});
  for (const char* line :
       {"PASS  rxe0 port 1 MTU: eth0 mtu 9000, RoCE path MTU 4096\n",
        "WARN  rxe0 port 1 default_roce_tos: 0: ",
        "PASS  eth0 PFC: not checked: no host command runs under --root\n",
        "WARN  nfsd threads: 8 threads for 16 CPUs",
        "      fix: echo 16 > /proc/fs/nfsd/threads  # persist: [nfsd] threads=16 in "
        "/etc/nfs.conf\n",
        "WARN  RDMA credits: svcrdma grants up to 32 credits, fewer than this host's client slot "
        "table (rdma_slot_table_entries 128)"}) {
    EXPECT_NE(d.out.find(line), std::string::npos) << line << "\nin:\n" << d.out;
  }
  EXPECT_EQ(d.out.find("RoCE v2 GID: 192.168.100.1"), std::string::npos) << d.out;  // once, above
  EXPECT_NE(d.out.find("RoCE v2 GID: index 1 carries 192.168.100.1 (eth0)"), std::string::npos);
  EXPECT_LT(d.out.find("RDMA listener"), d.out.find("rxe0 port 1 MTU"));
}

}  // namespace
