// doctor's reading of the live export table (/proc/fs/nfs/exports): an
// export RDMA clients cannot mount is named, and an option that merely
// contains the word (insecure_locks) does not count as 'insecure'.
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

}  // namespace
