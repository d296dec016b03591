// plan / apply / apply / rollback against a --root tree shaped like a real
// host: the Done-when of the knfsd backend. Checks the exact bytes of every
// file we own or edit, the kernel values in nfs-utils' order, idempotence,
// and that rollback restores the files byte for byte.
#include <gtest/gtest.h>

#include <sstream>

#include "server/HostState.h"
#include "server/ServerConfig.h"
#include "server/ServerPlan.h"
#include "tests/unit/server/StagedHost.h"
#include "tests/unit/server/ToolRunner.h"

using nfsrdma::server::desiredVersions;
using nfsrdma::server::testing::pos;
using nfsrdma::server::testing::runTool;
using nfsrdma::server::testing::StagedHost;

namespace {

const char* kConfig =
    "profile: throughput\n"
    "exports:\n"
    "  - path: /srv/nfsrdma/data\n"
    "    clients:\n"
    "      - host: 192.168.100.0/24\n"
    "        insecure: true\n"
    "        fsid: 0\n"
    "        crossmnt: true\n"
    "      - host: 10.1.0.7\n"
    "        access: ro\n"
    "nfsd:\n"
    "  versions: [\"4.1\", \"4.2\"]\n"
    "  lease_time: 60\n"
    "rdma:\n"
    "  device: rxe0\n"
    "  netdev: eth0\n";

class ServerPlanFlow : public ::testing::Test {
 protected:
  void SetUp() override {
    host.write("cfg/server.yaml", kConfig);
    cfg = (host.root / "cfg/server.yaml").string();
    root = host.root.string();
  }
  StagedHost host;
  std::string cfg, root;
};

}  // namespace

TEST_F(ServerPlanFlow, PlanApplyApplyRollback) {
  const auto pristine = host.snapshot();

  // plan: the diff, in nfs-utils' order, and nothing written.
  auto plan = runTool({"--root", root, "plan", cfg});
  ASSERT_EQ(plan.status, 0) << plan.err;
  const std::string& p = plan.out;
  EXPECT_LT(pos(p, "run: modprobe nfsd"), pos(p, "run: modprobe rpcrdma"));
  EXPECT_LT(pos(p, "run: modprobe rpcrdma"),
            pos(p, "[files] write /etc/exports.d/nfsrdma.exports (new file)"));
  pos(p,
      "+/srv/nfsrdma/data "
      "192.168.100.0/24(rw,sync,root_squash,insecure,no_subtree_check,crossmnt,fsid=0,sec=sys) "
      "10.1.0.7(ro,sync,root_squash,no_subtree_check,sec=sys)");
  pos(p, "+threads=64");
  pos(p, "+rdma-port=20049");
  pos(p, "-lease-time = 90");
  pos(p, "+lease-time = 60");
  EXPECT_LT(pos(p, "[exports] run: /usr/sbin/exportfs -ra"),
            pos(p, "[tuning] /proc/sys/sunrpc/svc_rdma/max_requests: 32 -> 128"));
  EXPECT_LT(
      pos(p, "[tuning]"),
      pos(p, "[versions] /proc/fs/nfsd/versions: -2 +3 +4 +4.1 +4.2 -> -2 -3 +4 +4.1 +4.2 -4.0"));
  EXPECT_LT(pos(p, "[versions]"), pos(p, "[lease/grace] /proc/fs/nfsd/nfsv4leasetime: 90 -> 60"));
  EXPECT_LT(pos(p, "[lease/grace]"), pos(p, "[ports] /proc/fs/nfsd/portlist: add 'rdma 20049'"));
  EXPECT_LT(pos(p, "[ports]"), pos(p, "[threads] /proc/fs/nfsd/threads: 0 -> 64"));
  pos(p,
      "[threads] /proc/fs/nfsd/threads: 0 -> 64   # start nfsd; its NFSv4 grace period follows "
      "(90 s: OPEN, REMOVE and RENAME get NFS4ERR_GRACE until earlier clients have reclaimed "
      "their state)");
  EXPECT_EQ(host.snapshot(), pristine) << "plan must not write";

  auto dry = runTool({"--root", root, "--dry-run", "apply", cfg});
  ASSERT_EQ(dry.status, 0) << dry.err;
  pos(dry.out, "Dry run: nothing was changed.");
  EXPECT_EQ(host.snapshot(), pristine) << "apply --dry-run must not write";

  // apply.
  auto first = runTool({"--root", root, "apply", cfg});
  ASSERT_EQ(first.status, 0) << first.err << first.out;
  pos(first.out, "Applied ");
  EXPECT_EQ(
      host.read("etc/exports.d/nfsrdma.exports"),
      "# Managed by nfsrdma-server apply; edit the YAML config, not this file.\n"
      "# /etc/exports is never touched; `nfsrdma-server rollback` restores the previous version.\n"
      "/srv/nfsrdma/data "
      "192.168.100.0/24(rw,sync,root_squash,insecure,no_subtree_check,crossmnt,fsid=0,sec=sys) "
      "10.1.0.7(ro,sync,root_squash,no_subtree_check,sec=sys)\n");
  // nfs.conf: our keys set in [nfsd]; every other byte as before.
  EXPECT_EQ(host.read("etc/nfs.conf"),
            "#\n"
            "# Site NFS settings (test fixture)\n"
            "#\n"
            "[general]\n"
            "pipefs-directory=/run/rpc_pipefs\n"
            "\n"
            "[exportfs]\n"
            "  debug = 0\n"
            "\n"
            "[nfsd]\n"
            "# debug=0\n"
            "# threads=8\n"
            "; host=\n"
            "lease-time = 60\n"
            "# rdma=n\n"
            "# rdma-port=20049\n"
            "threads=64\n"
            "vers3=n\n"
            "vers4=y\n"
            "vers4.0=n\n"
            "vers4.1=y\n"
            "vers4.2=y\n"
            "tcp=y\n"
            "port=2049\n"
            "rdma=y\n"
            "rdma-port=20049\n"
            "\n"
            "[mountd]\n"
            "# manage-gids=n\n"
            "\tdescriptors = 0\n");
  EXPECT_EQ(host.read("etc/exports"), pristine.at("etc/exports"));
  // Once our RDMA listener exists nfsd opens no default TCP one, so apply asks for it too.
  EXPECT_EQ(host.read("proc/fs/nfsd/portlist"), "tcp 2049\nrdma 20049\n");
  EXPECT_EQ(host.read("proc/fs/nfsd/threads"), "64\n");
  EXPECT_EQ(host.read("proc/fs/nfsd/versions"), "-2 -3 +4 +4.1 +4.2 -4.0\n");
  EXPECT_EQ(host.read("proc/fs/nfsd/nfsv4leasetime"), "60\n");
  EXPECT_EQ(host.read("proc/fs/nfsd/nfsv4gracetime"), "90\n");
  EXPECT_EQ(host.read("proc/sys/sunrpc/svc_rdma/max_requests"), "128\n");
  EXPECT_EQ(host.read("proc/sys/sunrpc/svc_rdma/max_req_size"), "4096\n");
  EXPECT_EQ(host.read("proc/sys/sunrpc/svc_rdma/max_outbound_read_requests"), "32\n");
  EXPECT_TRUE(host.exists("sys/module/nfsd"));
  EXPECT_TRUE(host.exists("sys/module/rpcrdma"));
  EXPECT_TRUE(host.exists("var/lib/nfsrdma/last-apply.yaml"));
  bool backedUp = false;
  for (const auto& [path, content] : host.snapshot()) {
    if (path.rfind("var/lib/nfsrdma/backups/nfs.conf.", 0) == 0)
      backedUp = content == pristine.at("etc/nfs.conf");
  }
  EXPECT_TRUE(backedUp) << "a timestamped backup of nfs.conf must hold the old bytes";

  // apply again: nothing to do, nothing written.
  const auto afterFirst = host.snapshot();
  auto second = runTool({"--root", root, "apply", cfg});
  ASSERT_EQ(second.status, 0) << second.err;
  pos(second.out, "No change: the host already matches");
  EXPECT_EQ(host.snapshot(), afterFirst);
  auto replan = runTool({"--root", root, "plan", cfg});
  pos(replan.out, "No changes: the host already matches the config.");

  // rollback: files byte-identical, kernel values back, listener explained.
  auto rb = runTool({"--root", root, "rollback"});
  ASSERT_EQ(rb.status, 0) << rb.err << rb.out;
  EXPECT_EQ(host.read("etc/nfs.conf"), pristine.at("etc/nfs.conf"));
  EXPECT_FALSE(host.exists("etc/exports.d/nfsrdma.exports"));
  EXPECT_EQ(host.read("etc/exports"), pristine.at("etc/exports"));
  for (const char* f : {"proc/fs/nfsd/threads", "proc/fs/nfsd/versions",
                        "proc/fs/nfsd/nfsv4leasetime", "proc/sys/sunrpc/svc_rdma/max_requests",
                        "proc/sys/sunrpc/svc_rdma/max_outbound_read_requests"}) {
    EXPECT_EQ(host.readAsReported(f), pristine.at(f)) << f;
  }
  pos(rb.out, "kept: the 'rdma 20049' listener stays open until nfsd restarts");
  pos(rb.out, "kept: module rpcrdma stays loaded");
  pos(rb.out, "ran: /usr/sbin/exportfs -ra");
  EXPECT_FALSE(host.exists("var/lib/nfsrdma/last-apply.yaml"));

  auto rb2 = runTool({"--root", root, "rollback"});
  EXPECT_EQ(rb2.status, 0);
  pos(rb2.out, "Nothing to roll back");
}

TEST_F(ServerPlanFlow, RunningNfsdKeepsVersionsAndLeaseAndOnlyResizesThreads) {
  host.write("proc/fs/nfsd/threads", "8\n");
  host.write("proc/fs/nfsd/portlist", "rdma 20049\ntcp 2049\n");
  host.mkdir("sys/module/nfsd");
  host.mkdir("sys/module/rpcrdma");
  auto plan = runTool({"--root", root, "plan", cfg});
  ASSERT_EQ(plan.status, 0) << plan.err;
  EXPECT_EQ(plan.out.find("modprobe"), std::string::npos) << plan.out;
  EXPECT_EQ(plan.out.find("[versions]"), std::string::npos) << plan.out;
  EXPECT_EQ(plan.out.find("[ports]"), std::string::npos)
      << "listener present: never written twice\n"
      << plan.out;
  pos(plan.out, "nfsd is running, so its versions (-2 +3 +4 +4.1 +4.2) cannot change now");
  pos(plan.out, "nfsd is running, so the lease time stays 90 s");
  pos(plan.out, "[threads] /proc/fs/nfsd/threads: 8 -> 64   # resize the nfsd thread pool");
}

TEST_F(ServerPlanFlow, NfsdctlIsUsedWhenInstalled) {
  host.write("usr/sbin/nfsdctl", "#!/bin/sh\nexit 0\n");
  ::chmod((host.root / "usr/sbin/nfsdctl").c_str(), 0755);
  auto plan = runTool({"--root", root, "plan", cfg});
  ASSERT_EQ(plan.status, 0) << plan.err;
  EXPECT_LT(pos(plan.out, "[ports] run: /usr/sbin/nfsdctl listener +rdma::20049"),
            pos(plan.out, "[threads] run: /usr/sbin/nfsdctl threads 64"));
  EXPECT_EQ(plan.out.find("portlist: add"), std::string::npos);
}

TEST_F(ServerPlanFlow, NoControlFilesIsANoteNotAnError) {
  std::filesystem::remove_all(host.root / "proc/fs/nfsd");
  std::filesystem::remove_all(host.root / "proc/sys/sunrpc");
  auto plan = runTool({"--root", root, "plan", cfg});
  ASSERT_EQ(plan.status, 0) << plan.err;
  pos(plan.out, "the nfsd control files");
  pos(plan.out, "sunrpc.svc_rdma.max_requests is not in this kernel");
  EXPECT_EQ(plan.out.find("[threads]"), std::string::npos);
}

// A changed line reads as diff -u prints it: the old line, then the new one.
// The kernel never reports +4.0: "+4" implies it unless -4.0 is present.
TEST(DesiredVersions, FourZeroIsTurnedOffExplicitlyAndNeverAddedWhenWanted) {
  nfsrdma::server::NfsdSpec only41And42;
  only41And42.v3 = only41And42.v40 = false;
  only41And42.v41 = only41And42.v42 = true;
  EXPECT_EQ(desiredVersions("+3 +4 +4.1 +4.2\n", only41And42), "-3 +4 +4.1 +4.2 -4.0\n");
  // What the kernel reports afterwards is already right: nothing to change.
  EXPECT_EQ(desiredVersions("-2 -3 +4 -4.0 +4.1 +4.2\n", only41And42), "-2 -3 +4 -4.0 +4.1 +4.2\n");
  nfsrdma::server::NfsdSpec with40 = only41And42;
  with40.v40 = true;
  with40.v42 = false;
  EXPECT_EQ(desiredVersions("+3 +4 +4.1 +4.2\n", with40), "-3 +4 +4.1 -4.2\n");
  EXPECT_EQ(desiredVersions("-2 +3 +4 -4.0 +4.1 +4.2\n", with40), "-2 -3 +4 +4.0 +4.1 -4.2\n");
}

// Written back, the versions as read must restore 4.0 too: "+4" alone does
// not turn it on while another minor version is on.
TEST(ExplicitVersions, TheImpliedFourZeroIsWrittenOut) {
  EXPECT_EQ(nfsrdma::server::explicitVersions("-2 +3 +4 +4.1 +4.2\n"), "-2 +3 +4 +4.0 +4.1 +4.2\n");
  EXPECT_EQ(nfsrdma::server::explicitVersions("-2 +3 +4 -4.0 +4.1 +4.2\n"),
            "-2 +3 +4 -4.0 +4.1 +4.2\n");
  EXPECT_EQ(nfsrdma::server::explicitVersions("+3 -4 -4.0 -4.1 -4.2\n"), "+3 -4 -4.0 -4.1 -4.2\n");
  EXPECT_EQ(nfsrdma::server::explicitVersions(""), "");
}

TEST(DiffText, ChangedLineShowsTheOldLineFirst) {
  EXPECT_EQ(
      nfsrdma::server::diffText("[nfsd]\nthreads=8\nvers3=n\n", "[nfsd]\nthreads=64\nvers3=n\n"),
      " [nfsd]\n-threads=8\n+threads=64\n vers3=n\n");
  EXPECT_EQ(nfsrdma::server::diffText("a\n", "a\nb\n"), " a\n+b\n");
  EXPECT_EQ(nfsrdma::server::diffText("a\nb\n", "a\n"), " a\n-b\n");
}

TEST_F(ServerPlanFlow, DoctorOnTheStagedHostPassesWhenServing) {
  auto before = runTool({"--root", root, "doctor", cfg});
  EXPECT_EQ(before.status, 1);
  pos(before.out, "FAIL  module nfsd: not loaded\n      fix: modprobe nfsd");
  pos(before.out, "PASS  rxe0 port 1 state: 4: ACTIVE");
  pos(before.out, "PASS  rxe0 port 1 RoCE v2 GID: index 1 carries 192.168.100.1 (eth0)");
  pos(before.out, "WARN  export /srv/nfsrdma/data 10.1.0.7: no 'insecure'");
  pos(before.out, "FAIL  RDMA listener: rdma 20049 is not in the port list");
  ASSERT_EQ(runTool({"--root", root, "apply", cfg}).status, 0);
  auto after = runTool({"--root", root, "doctor", cfg});
  EXPECT_EQ(after.status, 0) << after.out;
  pos(after.out, "PASS  nfsd running: 64 threads");
  pos(after.out, "PASS  RDMA listener: rdma 20049 is in the port list");
}

// all_squash and anonuid=/anongid= given as options squash knfsd's clients
// (exportfs reads them), so serve's ganesha must squash them too.
TEST_F(ServerPlanFlow, ServeSquashesAsTheOptionsSay) {
  host.write(
      "cfg/squash.yaml",
      "exports:\n  - path: /srv/nfsrdma/data\n    clients:\n"
      "      - host: 10.0.0.0/24\n        options: [all_squash, anonuid=1000, anongid=1001]\n"
      "      - host: 10.0.1.0/24\n        squash: no_root_squash\n");
  const auto r =
      runTool({"--root", root, "serve", "--dry-run", (host.root / "cfg/squash.yaml").string()});
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  pos(r.out,
      "    Clients = 10.0.0.0/24;\n    Access_Type = RW;\n    Squash = All_Squash;\n"
      "    Anonymous_Uid = 1000;\n    Anonymous_Gid = 1001;\n  }\n");
  pos(r.out,
      "    Clients = 10.0.1.0/24;\n    Access_Type = RW;\n    Squash = No_Root_Squash;\n  }\n");
}

// A TCP-only config must be able to pass: the RDMA checks (package, module,
// devices, listener, insecure) are not run, and one line says why.
TEST_F(ServerPlanFlow, DoctorOfATcpOnlyConfigSkipsTheRdmaChecks) {
  host.write("cfg/tcp.yaml", std::string(kConfig) + "transports:\n  rdma:\n    enabled: false\n");
  const std::string tcp = (host.root / "cfg/tcp.yaml").string();
  ASSERT_EQ(runTool({"--root", root, "apply", tcp}).status, 0);
  auto d = runTool({"--root", root, "doctor", tcp});
  EXPECT_EQ(d.status, 0) << d.out;
  pos(d.out, "PASS  RDMA: not checked: transports.rdma.enabled is false in " + tcp);
  EXPECT_EQ(d.out.find("RDMA listener"), std::string::npos) << d.out;
  EXPECT_EQ(d.out.find("insecure"), std::string::npos) << d.out;
}

TEST_F(ServerPlanFlow, DoctorFailsForADownPortAndAMissingGid) {
  host.write("sys/class/infiniband/rxe0/ports/1/state", "1: DOWN\n");
  std::filesystem::remove(host.root / "sys/class/infiniband/rxe0/ports/1/gids/1");
  auto d = runTool({"--root", root, "doctor"});
  EXPECT_EQ(d.status, 1);
  pos(d.out, "FAIL  rxe0 port 1 state: '1: DOWN', not ACTIVE\n      fix: ip link set eth0 up");
  pos(d.out, "FAIL  rxe0 port 1 RoCE v2 GID: no RoCE v2 GID carries an IP address");
}

TEST_F(ServerPlanFlow, StatusShowsLiveState) {
  host.write("proc/fs/nfsd/threads", "16\n");
  host.write("proc/fs/nfsd/portlist", "rdma 20049\ntcp 2049\n");
  host.write("proc/fs/nfs/exports",
             "# Version 1.1\n# Path Client(Flags) # "
             "IPs\n/srv/nfsrdma/data\t*(rw,insecure,root_squash,sync)\n");
  auto s = runTool({"--root", root, "status"});
  ASSERT_EQ(s.status, 0) << s.err;
  pos(s.out, "nfsd: running, 16 threads");
  pos(s.out, "port list: rdma 20049, tcp 2049");
  pos(s.out, "  /srv/nfsrdma/data\t*(rw,insecure,root_squash,sync)");
  pos(s.out, "svc_rdma: max_outbound_read_requests=16 max_req_size=4096 max_requests=32");
  pos(s.out, "rxe0 port 1: 4: ACTIVE, Ethernet");
}

// A port list that cannot be written (a directory where procfs has a file)
// is found before the first change; RootConfinementTest covers the apply
// that fails half way and undoes itself.
TEST_F(ServerPlanFlow, AnUnwritablePortListStopsApplyBeforeTheFirstChange) {
  std::filesystem::remove(host.root / "proc/fs/nfsd/portlist");
  host.mkdir("proc/fs/nfsd/portlist");
  const auto pristine = host.snapshot();
  auto r = runTool({"--root", root, "apply", cfg});
  EXPECT_EQ(r.status, 1);
  pos(r.err,
      "/proc/fs/nfsd/portlist (under --root " + root + ") is a directory; expected a regular file");
  EXPECT_EQ(host.snapshot(), pristine) << "nothing may change before the check";
  auto rb = runTool({"--root", root, "rollback"});
  EXPECT_EQ(rb.status, 0) << rb.out;
  pos(rb.out, "Nothing to roll back");
}

TEST(ServerDoctor, BareHostLikeThisMachineFailsWithAFixPerLine) {
  // No /lib/modules, no sysfs RDMA, no nfsd control files, no dpkg status.
  StagedHost scratch;
  const std::string bare = (scratch.root / "bare").string();
  std::filesystem::create_directories(bare);
  auto d = runTool({"--root", bare, "doctor"});
  EXPECT_EQ(d.status, 1) << d.out << d.err;
  pos(d.out,
      "FAIL  package nfs-kernel-server: not installed\n      fix: apt-get install "
      "nfs-kernel-server");
  pos(d.out, "FAIL  module nfsd: not loaded");
  pos(d.out, "FAIL  RDMA devices: none in " + bare + "/sys/class/infiniband\n      fix: ");
  pos(d.out, "FAIL  nfsd running: no " + bare + "/proc/fs/nfsd/threads");
  pos(d.out, "FAIL  RDMA listener: no port list");
  // Every FAIL and WARN line is followed by its fix.
  std::istringstream lines(d.out);
  std::string line, prev;
  while (std::getline(lines, line)) {
    if (prev.rfind("FAIL", 0) == 0 || prev.rfind("WARN", 0) == 0) {
      EXPECT_EQ(line.rfind("      fix: ", 0), 0u) << prev;
    }
    prev = line;
  }
}

TEST(ServerDoctor, LiveHostNeverCrashes) {
  auto d = runTool({"doctor"});
  EXPECT_TRUE(d.status == 0 || d.status == 1) << d.err;
  pos(d.out, " checks: ");
}

TEST_F(ServerPlanFlow, ServeDryRunShowsTheGaneshaConfig) {
  auto r = runTool({"--root", root, "--dry-run", "serve", "--port", "20490", cfg});
  ASSERT_EQ(r.status, 0) << r.err;
  pos(r.out, "Dry run: would start nfs-ganesha with this ganesha.conf (port 20490)");
  pos(r.out, "  Path = \"" + root + "/srv/nfsrdma/data\";\n  Pseudo = \"/srv/nfsrdma/data\";");
  pos(r.out, "  Lease_Lifetime = 60;");
}
