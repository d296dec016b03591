// The kernel mount planner: ports, nosharecache, nconnect by kernel and
// transport, module checks, quoting and escaping for the shell, fstab, /proc/mounts
// and YAML, the umount check, and the error for each bad input.
#include <gtest/gtest.h>

#include <algorithm>

#include "client/mount/MountPlan.h"

namespace nfsrdma::mount {
namespace {

HostFacts modernHost() {
  HostFacts f;
  f.rdmaClientModule = true;
  f.kernelMajor = 6;
  f.kernelMinor = 12;
  f.mounts = "proc /proc proc rw 0 0\n";
  return f;
}

MountRequest request(const std::string& proto) {
  MountRequest r;
  r.server = "198.18.0.1";
  r.exportPath = "/export";
  r.mountPoint = "/mnt/x";
  r.proto = proto;
  return r;
}

// Side by side works over NFSv3 only (NFSv4 trunking shares one client, see below).
MountRequest bothV3() {
  MountRequest r = request("both");
  r.vers = "3";
  return r;
}

TEST(MountPlan, RdmaDefaultsToPort20049AndVersion42) {
  MountPlan p = planMount(request("rdma"), modernHost());
  ASSERT_EQ(p.mounts.size(), 1U);
  EXPECT_EQ(p.mounts[0].command,
            "mount -t nfs -o vers=4.2,proto=rdma,port=20049 198.18.0.1:/export /mnt/x");
  EXPECT_EQ(p.mounts[0].fstabLine,
            "198.18.0.1:/export /mnt/x nfs vers=4.2,proto=rdma,port=20049,_netdev 0 0");
  EXPECT_TRUE(p.problems.empty());
  EXPECT_NE(p.kubernetesYaml.find("    - proto=rdma\n"), std::string::npos);
  EXPECT_NE(p.kubernetesYaml.find("kind: StorageClass"), std::string::npos);
  EXPECT_NE(p.kubernetesYaml.find("kind: PersistentVolume"), std::string::npos);
}

TEST(MountPlan, TcpHasNoPortUnlessGiven) {
  MountRequest r = request("tcp");
  EXPECT_EQ(planMount(r, modernHost()).mounts[0].options, "vers=4.2,proto=tcp");
  r.port = 2050;
  EXPECT_EQ(planMount(r, modernHost()).mounts[0].options, "vers=4.2,proto=tcp,port=2050");
}

TEST(MountPlan, BothTransportsGetNoShareCacheAndTheirOwnDirectories) {
  MountPlan p = planMount(bothV3(), modernHost());
  ASSERT_EQ(p.mounts.size(), 2U);
  EXPECT_EQ(p.mounts[0].mountPoint, "/mnt/x-rdma");
  EXPECT_EQ(p.mounts[1].mountPoint, "/mnt/x-tcp");
  EXPECT_EQ(p.mounts[0].options, "vers=3,proto=rdma,port=20049,nosharecache");
  EXPECT_EQ(p.mounts[1].options, "vers=3,proto=tcp,nosharecache");
  const auto unmounts = planUnmount(request("both"));
  ASSERT_EQ(unmounts.size(), 2U);
  EXPECT_EQ(unmounts[0].command, "umount /mnt/x-rdma");
  EXPECT_EQ(unmounts[1].argv, (std::vector<std::string>{"umount", "/mnt/x-tcp"}));
}

// The VM testbed's mount-both test saw it on Linux 6.12: a proto=tcp NFSv4.2 mount next to a
// proto=rdma one of the same server came up with proto=rdma in /proc/mounts.
TEST(MountPlan, BothOverNfs4IsRefusedBecauseTheKernelSharesOneClient) {
  for (const char* vers : {"4.2", "4.1", "4"}) {
    MountRequest r = request("both");
    r.vers = vers;
    try {
      (void)planMount(r, modernHost());
      ADD_FAILURE() << vers << ": planned";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("the tcp mount would run over RDMA"), std::string::npos)
          << e.what();
      EXPECT_NE(std::string(e.what()).find("use --vers 3 for both side by side"),
                std::string::npos);
    }
  }
}

TEST(MountPlan, AnotherTransportsNfs4MountOfTheSameMinorVersionIsAProblem) {
  HostFacts f = modernHost();
  f.mounts += "198.18.0.1:/export /mnt/tcp nfs4 rw,vers=4.2,proto=tcp,addr=198.18.0.1 0 0\n";
  MountPlan p = planMount(request("rdma"), f);
  ASSERT_EQ(p.problems.size(), 1U);
  EXPECT_NE(p.problems[0].find("already mounted on /mnt/tcp with proto=tcp,vers=4.2: the kernel "
                               "would give this proto=rdma mount that mount's NFSv4 client"),
            std::string::npos)
      << p.problems[0];
  MountRequest v41 = request("rdma");
  v41.vers = "4.1";
  EXPECT_TRUE(planMount(v41, f).problems.empty());  // another minor version: its own client
  MountRequest v4 = request("rdma");
  v4.vers = "4";  // negotiates the highest: may meet 4.2
  EXPECT_EQ(planMount(v4, f).problems.size(), 1U);
  // An IPv6 server's mount says proto=rdma6: the same transport, no clash.
  HostFacts g = modernHost();
  g.mounts += "[fe80::1]:/export /mnt/r nfs4 rw,vers=4.2,proto=rdma6,port=20049 0 0\n";
  MountRequest six = request("rdma");
  six.server = "[fe80::1]";
  EXPECT_TRUE(planMount(six, g).problems.empty());
  six.proto = "tcp";
  EXPECT_EQ(planMount(six, g).problems.size(), 1U);
}

TEST(MountPlan, ExistingMountOfTheServerAddsNoShareCache) {
  HostFacts f = modernHost();
  f.mounts += "198.18.0.1:/export /mnt/tcp nfs4 rw,vers=4.2,proto=rdma 0 0\n";
  MountPlan p = planMount(request("rdma"), f);
  EXPECT_TRUE(p.problems.empty());
  EXPECT_EQ(p.mounts[0].options, "vers=4.2,proto=rdma,port=20049,nosharecache");
  ASSERT_EQ(p.notes.size(), 1U);
  EXPECT_NE(p.notes[0].find("already mounted (198.18.0.1:/export on /mnt/tcp)"), std::string::npos);
  // Another server's mount changes nothing.
  HostFacts g = modernHost();
  g.mounts += "198.18.0.9:/export /mnt/other nfs4 rw 0 0\n";
  EXPECT_EQ(planMount(request("rdma"), g).mounts[0].options, "vers=4.2,proto=rdma,port=20049");
}

TEST(MountPlan, MountPointInUseIsAProblem) {
  HostFacts f = modernHost();
  f.mounts += "198.18.0.1:/export /mnt/x nfs4 rw 0 0\n";
  MountPlan p = planMount(request("rdma"), f);
  ASSERT_EQ(p.problems.size(), 1U);
  EXPECT_EQ(p.problems[0], "/mnt/x already has 198.18.0.1:/export mounted on it");
}

TEST(MountPlan, NconnectOnlyWhereTheKernelSupportsIt) {
  MountRequest rdma = request("rdma");
  rdma.nconnect = 4;
  MountRequest tcp = request("tcp");
  tcp.nconnect = 4;
  HostFacts old = modernHost();
  old.kernelMajor = 5;
  old.kernelMinor = 4;
  MountPlan p = planMount(rdma, old);
  EXPECT_EQ(p.mounts[0].options.find("nconnect"), std::string::npos);  // rdma on 5.4: dropped
  EXPECT_NE(p.notes.back().find("nconnect dropped for proto=rdma: kernel 5.4"), std::string::npos);
  EXPECT_NE(planMount(tcp, old).mounts[0].options.find("nconnect=4"), std::string::npos);  // kept
  EXPECT_NE(planMount(rdma, modernHost()).mounts[0].options.find("nconnect=4"), std::string::npos);
}

TEST(MountPlan, MissingClientModuleIsANoteNotAProblem) {
  // The kernel loads rpcrdma on demand, and a built-in one has no /sys/module entry.
  HostFacts f = modernHost();
  f.rdmaClientModule = false;
  MountPlan p = planMount(bothV3(), f);
  EXPECT_TRUE(p.problems.empty());
  EXPECT_EQ(std::count_if(p.notes.begin(), p.notes.end(),
                          [](const std::string& n) {
                            return n.find("modprobe rpcrdma") != std::string::npos;
                          }),
            1);
  EXPECT_TRUE(planMount(request("tcp"), f).notes.empty());
}

TEST(MountPlan, BadInputIsNamed) {
  auto expectError = [](MountRequest r, const std::string& text) {
    try {
      planMount(r, modernHost());
      ADD_FAILURE() << "accepted: " << text;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
    }
  };
  MountRequest r = request("rdma");
  r.proto = "udp";
  expectError(r, "proto 'udp': expected rdma, tcp or both");
  r = request("rdma");
  r.exportPath = "export";
  expectError(r, "export 'export': expected an absolute path");
  r = request("rdma");
  r.mountPoint = "/mnt/a\nb";
  expectError(r, "mount point '/mnt/a\\012b': expected a path without control characters");
  r = request("rdma");
  r.exportPath = "/ex\tport";
  expectError(r, "export '/ex\\011port': expected a path without control characters");
  r = request("rdma");
  r.rsize = 5000;
  expectError(r, "rsize=5000: expected a power of two");
  r = request("rdma");
  r.vers = "5";
  expectError(r, "vers '5'");
  r = request("rdma");
  r.server = "";
  expectError(r, "server '': expected a host name or address");
  r = request("rdma");
  r.nconnect = 99;
  expectError(r, "nconnect=99: expected 1 to 16");
}

template <typename F>
void expectInvalid(F&& f, const std::string& text) {
  try {
    f();
    ADD_FAILURE() << "accepted: " << text;
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
  }
}

TEST(MountPlan, EachDashOIsOneOptionWithoutSeparatorsOrComments) {
  for (const std::string o : {"ro,remount", "a b", "x\ny", "a\\b", "a#b", "", "c\x7f"}) {
    MountRequest r = request("rdma");
    r.extraOptions = {o};
    expectInvalid([&] { planMount(r, modernHost()); }, "expected one mount option per -o");
  }
  MountRequest r = request("rdma");
  r.extraOptions = {"noatime", "nosharecache", "sec=krb5p"};
  EXPECT_EQ(planMount(r, modernHost()).mounts[0].options,
            "vers=4.2,proto=rdma,port=20049,noatime,nosharecache,sec=krb5p");
}

TEST(MountPlan, DashOCannotOverrideWhatThePlanSets) {
  const std::pair<std::string, std::string> cases[] = {
      {"proto=tcp", "-o proto=tcp: use --proto"},
      {"tcp", "-o tcp: use --proto"},
      {"port=2049", "-o port=2049: use --port"},
      {"vers=3", "-o vers=3: use --vers"},
      {"nfsvers=3", "-o nfsvers=3: use --vers"},
      {"v4.1", "-o v4.1: use --vers"},
      {"nconnect=4", "-o nconnect=4: use --nconnect"},
      {"rsize=65536", "-o rsize=65536: use --rsize"},
      {"wsize=65536", "-o wsize=65536: use --wsize"},
  };
  for (const auto& [option, text] : cases) {
    MountRequest r = request("rdma");
    r.extraOptions = {option};
    expectInvalid([&] { planMount(r, modernHost()); }, text);
  }
  // nosharecache is what the plan needs side by side; sharecache would undo it.
  MountRequest r = bothV3();
  r.extraOptions = {"sharecache"};
  expectInvalid([&] { planMount(r, modernHost()); }, "-o sharecache: this plan needs nosharecache");
  r.proto = "rdma";
  EXPECT_NO_THROW(planMount(r, modernHost()));
}

TEST(MountPlan, ServerCannotCarryOptionsOrControlCharacters) {
  for (const std::string s : {"host\x01", "host\tx", "a,b", "a#b", "a/b", "a b"}) {
    MountRequest r = request("rdma");
    r.server = s;
    expectInvalid([&] { planMount(r, modernHost()); }, "expected a host name or address without");
  }
  MountRequest r = request("rdma");
  r.server = "-oremount";
  expectInvalid([&] { planMount(r, modernHost()); },
                "server '-oremount': expected a host name or address, not an option");
  r.server = "host\x01";
  expectInvalid([&] { planMount(r, modernHost()); }, "server 'host\\001'");
}

TEST(MountPlan, ArgvIsExecutedAsIsAndTheCommandIsQuotedForTheShell) {
  MountRequest r = request("rdma");
  r.mountPoint = "/mnt/it's here";
  r.exportPath = "/a,b";
  const PlannedMount m = planMount(r, modernHost()).mounts[0];
  EXPECT_EQ(m.argv,
            (std::vector<std::string>{"mount", "-t", "nfs", "-o", "vers=4.2,proto=rdma,port=20049",
                                      "198.18.0.1:/a,b", "/mnt/it's here"}));
  EXPECT_EQ(m.command,
            "mount -t nfs -o vers=4.2,proto=rdma,port=20049 198.18.0.1:/a,b '/mnt/it'\\''s here'");
  EXPECT_EQ(shellQuote("plain/path-1.2_x=y:z,@%+"), "plain/path-1.2_x=y:z,@%+");
  EXPECT_EQ(shellQuote(""), "''");
  EXPECT_EQ(shellQuote("$(reboot)"), "'$(reboot)'");
  EXPECT_EQ(shellQuote("[fe80::1]:/x"), "'[fe80::1]:/x'");  // a glob otherwise
}

TEST(MountPlan, FstabEscapesSpaceTabNewlineAndBackslash) {
  MountRequest r = request("tcp");
  r.mountPoint = "/mnt/my data";
  r.exportPath = "/ex\\port";
  const MountPlan p = planMount(r, modernHost());
  EXPECT_EQ(p.mounts[0].fstabLine,
            "198.18.0.1:/ex\\134port /mnt/my\\040data nfs vers=4.2,proto=tcp,_netdev 0 0");
  EXPECT_EQ(p.mounts[0].argv.back(), "/mnt/my data");
  EXPECT_EQ(p.mounts[0].command,
            "mount -t nfs -o vers=4.2,proto=tcp '198.18.0.1:/ex\\port' '/mnt/my data'");
}

TEST(MountPlan, ProcMountsEscapesAreUndone) {
  HostFacts f = modernHost();
  f.mounts += "198.18.0.1:/export /mnt/my\\040data nfs4 rw,vers=4.2 0 0\n";
  MountRequest r = request("rdma");
  r.mountPoint = "/mnt/my data";
  MountPlan p = planMount(r, f);
  ASSERT_EQ(p.problems.size(), 1U);
  EXPECT_EQ(p.problems[0], "/mnt/my data already has 198.18.0.1:/export mounted on it");
  const auto existing = nfsMountsOf(f.mounts, "198.18.0.1");
  ASSERT_EQ(existing.size(), 1U);
  EXPECT_EQ(existing[0].mountPoint, "/mnt/my data");
  EXPECT_EQ(existing[0].type, "nfs4");
}

TEST(MountPlan, BothWithOnePortIsRefused) {
  MountRequest r = request("both");
  r.port = 20049;
  expectInvalid([&] { planMount(r, modernHost()); },
                "--port with --proto both: the RDMA and TCP mounts need different ports; mount "
                "them one at a time");
}

TEST(MountPlan, NconnectForNfs4OverRdmaFromLinux69) {
  // Before "NFS: enable nconnect for RDMA" (6.9) NFSv4 passed nconnect on for TCP only.
  MountRequest r = request("rdma");
  r.nconnect = 4;
  HostFacts f = modernHost();
  f.kernelMinor = 8;
  MountPlan p = planMount(r, f);
  EXPECT_EQ(p.mounts[0].options.find("nconnect"), std::string::npos);
  ASSERT_FALSE(p.notes.empty());
  EXPECT_NE(p.notes.back().find("nconnect dropped for proto=rdma: kernel 6.8 would ignore it"),
            std::string::npos);
  f.kernelMinor = 9;
  EXPECT_NE(planMount(r, f).mounts[0].options.find("nconnect=4"), std::string::npos);
  // NFSv3 passes it on for any transport since 5.3.
  r.vers = "3";
  f.kernelMajor = 5;
  f.kernelMinor = 4;
  EXPECT_NE(planMount(r, f).mounts[0].options.find("nconnect=4"), std::string::npos);
}

TEST(MountPlan, Ipv6NeedsBracketsAndMatchesProcMountsEitherWay) {
  MountRequest r = request("rdma");
  r.server = "fe80::1";
  expectInvalid([&] { planMount(r, modernHost()); },
                "server 'fe80::1': expected [addr] for an IPv6 address");
  r.server = "[myhost]";
  expectInvalid([&] { planMount(r, modernHost()); }, "expected [addr] for an IPv6 address");
  r.server = "[fe80::1";
  expectInvalid([&] { planMount(r, modernHost()); }, "expected [addr] for an IPv6 address");

  r.server = "[fe80::1]";
  HostFacts f = modernHost();
  f.mounts += "[fe80::1]:/export /mnt/tcp nfs4 rw,proto=tcp 0 0\n";
  MountPlan p = planMount(r, f);
  EXPECT_EQ(p.mounts[0].options, "vers=4.2,proto=rdma,port=20049,nosharecache");
  EXPECT_EQ(p.mounts[0].source, "[fe80::1]:/export");
  EXPECT_EQ(
      p.mounts[0].command,
      "mount -t nfs -o vers=4.2,proto=rdma,port=20049,nosharecache '[fe80::1]:/export' /mnt/x");
  EXPECT_EQ(nfsMountsOf(f.mounts, "fe80::1").size(), 1U);
  EXPECT_EQ(nfsMountsOf(f.mounts, "[fe80::1]").size(), 1U);
}

TEST(MountPlan, KubernetesValuesAreQuotedYaml) {
  MountRequest r = request("rdma");
  r.server = "[fe80::1]";
  r.exportPath = "/a \"b\"\\c";
  r.extraOptions = {"[x]", "noatime"};
  const std::string yaml = planMount(r, modernHost()).kubernetesYaml;
  EXPECT_NE(yaml.find("    server: \"fe80::1\"\n"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("    path: \"/a \\\"b\\\"\\\\c\"\n"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("    - \"[x]\"\n"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("    - noatime\n"), std::string::npos) << yaml;
}

TEST(MountPlan, NoShareCacheNotesDoNotPromiseANewTransport) {
  // nosharecache separates superblocks; the nfs_client and its connection may still be shared.
  HostFacts f = modernHost();
  f.mounts += "198.18.0.1:/export /mnt/tcp nfs4 rw 0 0\n";
  for (const MountPlan& p : {planMount(request("rdma"), f), planMount(bothV3(), modernHost())}) {
    ASSERT_FALSE(p.notes.empty());
    EXPECT_NE(p.notes[0].find("own superblock (own cache and mount options)"), std::string::npos)
        << p.notes[0];
    EXPECT_EQ(p.notes[0].find("new one"), std::string::npos) << p.notes[0];
    EXPECT_EQ(p.notes[0].find("one transport each"), std::string::npos) << p.notes[0];
  }
  EXPECT_NE(
      planMount(request("rdma"), f).notes[0].find("may still share one nfs_client and connection"),
      std::string::npos);
}

TEST(MountPlan, AMountOfTheSameServerTransportAndMinorVersionSharesItsClient) {
  MountRequest r;
  r.server = "10.0.0.1";
  r.exportPath = "/e";
  r.mountPoint = "/mnt/t";
  const std::string mounts =
      "10.0.0.1:/other /mnt/user nfs4 rw,vers=4.2,rsize=1048576,proto=rdma,port=20049 0 0\n";
  const auto shared = sharedClientMount(r, mounts);
  ASSERT_TRUE(shared.has_value());
  EXPECT_EQ(*shared,
            "'10.0.0.1:/other' is mounted on /mnt/user (proto=rdma,vers=4.2): the kernel gives a "
            "new proto=rdma,vers=4.2 mount of that server the same NFS client, with that mount's "
            "connections, nconnect and credits");
  r.vers = "4.1";  // another minor version: a client of its own
  EXPECT_FALSE(sharedClientMount(r, mounts).has_value());
  r.vers = "4.2";
  r.proto = "tcp";  // another transport: planMount's trunking rule, not this one
  EXPECT_FALSE(sharedClientMount(r, mounts).has_value());
  r.proto = "rdma";
  r.server = "10.0.0.2";
  EXPECT_FALSE(sharedClientMount(r, mounts).has_value());
}

TEST(Unmount, IsValidatedLikeMount) {
  MountRequest r = request("rdma");
  r.mountPoint = "mnt";
  expectInvalid([&] { planUnmount(r); }, "mount point 'mnt': expected an absolute path");
  r = request("udp");
  expectInvalid([&] { planUnmount(r); }, "proto 'udp': expected rdma, tcp or both");
  r = request("rdma");
  r.server = "a b";
  expectInvalid([&] { planUnmount(r); }, "server 'a b'");
  r = request("rdma");
  r.mountPoint = "/mnt/my data";
  const auto u = planUnmount(r);
  ASSERT_EQ(u.size(), 1U);
  EXPECT_EQ(u[0].argv, (std::vector<std::string>{"umount", "/mnt/my data"}));
  EXPECT_EQ(u[0].command, "umount '/mnt/my data'");
  EXPECT_EQ(u[0].source, "198.18.0.1:/export");
}

TEST(Unmount, OnlyWhatTheRequestMounted) {
  MountRequest r = request("rdma");
  r.server = "[fe80::1]";
  r.mountPoint = "/mnt/my data";
  const PlannedUnmount u = planUnmount(r)[0];
  const std::string proc = "proc /proc proc rw 0 0\n";
  EXPECT_EQ(unmountProblem(u, proc),
            "nothing is mounted on /mnt/my data (expected [fe80::1]:/export)");
  EXPECT_EQ(unmountProblem(u, proc + "[fe80::2]:/export /mnt/my\\040data nfs4 rw 0 0\n"),
            "/mnt/my data has [fe80::2]:/export (nfs4) mounted on it, not [fe80::1]:/export");
  EXPECT_EQ(unmountProblem(u, proc + "tmpfs /mnt/my\\040data tmpfs rw 0 0\n"),
            "/mnt/my data has tmpfs (tmpfs) mounted on it, not [fe80::1]:/export");
  EXPECT_EQ(unmountProblem(u, proc + "[fe80::1]:/other /mnt/my\\040data nfs rw 0 0\n"),
            "/mnt/my data has [fe80::1]:/other (nfs) mounted on it, not [fe80::1]:/export");
  EXPECT_EQ(unmountProblem(u, proc + "[fe80::1]:/export/ /mnt/my\\040data nfs4 rw 0 0\n"),
            std::nullopt);
  EXPECT_EQ(unmountProblem(u, proc + "[fe80::1]:/export /mnt/my\\040data/ nfs rw 0 0\n"),
            std::nullopt);
  // The last line is on top: umount would take that one off.
  EXPECT_NE(unmountProblem(u, proc + "[fe80::1]:/export /mnt/my\\040data nfs4 rw 0 0\n" +
                                  "tmpfs /mnt/my\\040data tmpfs rw 0 0\n"),
            std::nullopt);
}

}  // namespace
}  // namespace nfsrdma::mount
