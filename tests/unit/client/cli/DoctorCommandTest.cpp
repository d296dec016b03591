// nfsrdma-client doctor, the tool itself on a staged --root tree: the
// client host's lines and the fabric's, the route to a server through the
// port whose GID holds the local address, FAIL's exit status, usage errors.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>

namespace nfsrdma {
namespace {
namespace fs = std::filesystem;

std::pair<int, std::string> runClient(const std::string& words) {
  FILE* p = ::popen((std::string(NFSRDMA_CLIENT_BIN) + " " + words + " 2>&1").c_str(), "r");
  std::string out;
  char buf[512];
  while (p != nullptr && std::fgets(buf, sizeof buf, p) != nullptr) out += buf;
  const int status = p != nullptr ? ::pclose(p) : -1;
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

// A client host: rpcrdma loaded, one RDMA mount with the default
// read-ahead, rxe1 on lo holding 127.0.0.1 in a RoCE v2 GID (the route to
// 127.0.0.1 leaves from it on any host).
class StagedClientHost : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "nfsrdma-client-doctor-XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    root_ = tmpl;
    write("sys/module/rpcrdma/refcnt", "1\n");
    write("proc/self/mountinfo",
          "40 22 0:53 / /mnt/data rw - nfs4 127.0.0.1:/export "
          "rw,vers=4.2,rsize=1048576,wsize=1048576,proto=rdma,port=20049\n");
    write("sys/class/bdi/0:53/read_ahead_kb", "128\n");
    const std::string port = "sys/class/infiniband/rxe1/ports/1/";
    write(port + "state", "4: ACTIVE\n");
    write(port + "link_layer", "Ethernet\n");
    write(port + "gids/1", "0000:0000:0000:0000:0000:ffff:7f00:0001\n");
    write(port + "gid_attrs/types/1", "RoCE v2\n");
    write(port + "gid_attrs/ndevs/1", "lo\n");
    write("sys/class/net/lo/mtu", "65536\n");
  }
  void TearDown() override { fs::remove_all(root_); }
  void write(const std::string& rel, const std::string& text) {
    fs::create_directories((root_ / rel).parent_path());
    std::ofstream(root_ / rel) << text;
  }
  std::string doctor(const std::string& args) { return "doctor --root " + root_.string() + args; }
  fs::path root_;
};

TEST_F(StagedClientHost, ReportsTheHostTheFabricAndTheRoute) {
  const auto [status, out] = runClient(doctor(" 127.0.0.1"));
  EXPECT_EQ(status, 0) << out;
  for (const char* line :
       {"PASS  module rpcrdma: loaded\n",
        "PASS  mount /mnt/data: 127.0.0.1:/export nfs4 proto=rdma nconnect=1 rsize=1048576 "
        "wsize=1048576\n",
        "WARN  mount /mnt/data read_ahead_kb: 128 KiB",
        "      fix: echo 1024 > /sys/class/bdi/0:53/read_ahead_kb",
        "PASS  rxe1 port 1 RoCE v2 GID: 127.0.0.1 (index 1, lo)\n",
        "PASS  rxe1 port 1 MTU: lo mtu 65536, RoCE path MTU 4096\n",
        "WARN  rxe1 port 1 default_roce_tos: not set",
        "PASS  lo PFC: not checked: no host command runs under --root\n",
        "PASS  route to 127.0.0.1: leaves from 127.0.0.1 on lo, held by rxe1 port 1 GID index 1 "
        "(RoCE v2)\n"}) {
    EXPECT_NE(out.find(line), std::string::npos) << line << "\nin:\n" << out;
  }
}

TEST_F(StagedClientHost, NoPortHoldingTheSourceFailsWithExitOne) {
  write("sys/class/infiniband/rxe1/ports/1/gids/1", "0000:0000:0000:0000:0000:ffff:0a00:0001\n");
  const auto [status, out] = runClient(doctor(" 127.0.0.1"));
  EXPECT_EQ(status, 1) << out;
  EXPECT_NE(out.find("FAIL  route to 127.0.0.1: leaves from 127.0.0.1, which no RDMA port's RoCE "
                     "v2 GID holds"),
            std::string::npos)
      << out;
  // Without SERVER there is no route to check: the same host passes.
  EXPECT_EQ(runClient(doctor("")).first, 0);
}

TEST(ClientDoctorCommandLine, UsageErrorsExitTwo) {
  auto [status, out] = runClient("doctor a b");
  EXPECT_EQ(status, 2) << out;
  std::tie(status, out) = runClient("doctor --root relative/dir");
  EXPECT_EQ(status, 2) << out;
  EXPECT_NE(out.find("--root relative/dir: expected an absolute path"), std::string::npos) << out;
  std::tie(status, out) = runClient("doctor --help");
  EXPECT_EQ(status, 0) << out;
  EXPECT_NE(out.find("usage: nfsrdma-client doctor [SERVER] [--root DIR]"), std::string::npos);
}

}  // namespace
}  // namespace nfsrdma
