// ClientOptions::fromUrl: libnfs's URL shape plus our keys. Each bad input
// must throw a message naming the URL part and what was expected.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <utility>

#include "client/ClientOptions.h"
#include "client/Error.h"
#include "util/Version.h"

namespace nfsrdma {
namespace {

std::string errorOf(const std::string& url) {
  try {
    (void)ClientOptions::fromUrl(url);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(ClientOptions, TrunkKeysAndServerLists) {
  const ClientOptions one = ClientOptions::fromUrl("nfs://srv/e");
  EXPECT_EQ(one.nconnect, 1U);
  EXPECT_FALSE(one.givenNconnect);
  EXPECT_TRUE(one.moreServers.empty());
  const ClientOptions o = ClientOptions::fromUrl(
      "nfs://10.0.0.1,10.0.1.1:3049,[fd00::2]/e?nconnect=8&bind=10.0.0.9,10.0.1.9&proto=rdma");
  EXPECT_EQ(o.nconnect, 8U);
  EXPECT_EQ(o.givenNconnect, 8U);
  EXPECT_EQ(o.host, "10.0.0.1");
  EXPECT_EQ(o.port, 20049) << "the first address takes proto=rdma's port";
  ASSERT_EQ(o.moreServers.size(), 2U);
  EXPECT_EQ(o.moreServers[0].host, "10.0.1.1");
  EXPECT_EQ(o.moreServers[0].port, 3049);
  EXPECT_EQ(o.moreServers[1].host, "fd00::2");
  EXPECT_EQ(o.moreServers[1].port, 0) << "no port of its own: the first address's";
  EXPECT_EQ(o.bindAddress, "10.0.0.9");
  ASSERT_EQ(o.moreBindAddresses.size(), 1U);
  EXPECT_EQ(o.moreBindAddresses[0], "10.0.1.9");
  EXPECT_NE(errorOf("nfs://srv/e?nconnect=0").find("nconnect=0 is not a whole number from 1 to 16"),
            std::string::npos);
  EXPECT_NE(errorOf("nfs://srv/e?nconnect=17").find("from 1 to 16"), std::string::npos);
  EXPECT_NE(errorOf("nfs://srv/e?bind=a,,b").find("bind= needs a local address"),
            std::string::npos);
  EXPECT_FALSE(one.numaAuto);
  EXPECT_TRUE(ClientOptions::fromUrl("nfs://srv/e?numa=auto").numaAuto);
  EXPECT_FALSE(ClientOptions::fromUrl("nfs://srv/e?numa=off").numaAuto);
  EXPECT_NE(errorOf("nfs://srv/e?numa=1").find("numa=1 (expected auto or off)"), std::string::npos);
  EXPECT_NE(errorOf("nfs://srv,/e").find("no server host"), std::string::npos);
  EXPECT_NE(errorOf("nfs://srv,other:0/e").find("port '0' after the host"), std::string::npos);
}

TEST(ClientOptions, DefaultsAndEveryKey) {
  const ClientOptions d = ClientOptions::fromUrl("nfs://srv/export/");
  EXPECT_EQ(d.host, "srv");
  EXPECT_EQ(d.port, 2049);
  EXPECT_EQ(d.exportPath, "/export");
  EXPECT_EQ(d.proto, TransportKind::kTcp);
  EXPECT_EQ(d.readsPerCompound, 1U);
  EXPECT_EQ(d.queueDepth, 32U);
  EXPECT_EQ(d.busyTimeout.count(), 120000) << "longer than the 90 s default grace period";

  const ClientOptions o = ClientOptions::fromUrl(
      "nfs://10.0.0.5:2050/a/"
      "b?version=4.1&uid=1000&gid=100&gids=4,24&timeout=1500&qd=64&iosize=65536"
      "&machine=node7&bind=10.0.0.9&reads-per-compound=8&busy-timeout=0");
  EXPECT_EQ(o.port, 2050);
  EXPECT_EQ(o.exportPath, "/a/b");
  EXPECT_EQ(o.uid, 1000U);
  EXPECT_EQ(o.gid, 100U);
  EXPECT_EQ(o.gids, (std::vector<std::uint32_t>{4, 24}));
  EXPECT_EQ(o.timeout.count(), 1500);
  EXPECT_EQ(o.busyTimeout.count(), 0);
  EXPECT_EQ(o.queueDepth, 64U);
  EXPECT_EQ(o.maxIoSize, 65536U);
  EXPECT_EQ(o.machineName, "node7");
  EXPECT_EQ(o.bindAddress, "10.0.0.9");
  EXPECT_EQ(o.readsPerCompound, 8U);
  EXPECT_EQ(o.url(), "nfs://10.0.0.5:2050/a/b");

  const ClientOptions r = ClientOptions::fromUrl("nfs://srv/export?proto=rdma&memreg=per-io");
  EXPECT_EQ(r.port, 20049) << "proto=rdma without a port uses 20049";
  EXPECT_TRUE(r.perIoRegistration);
  EXPECT_TRUE(r.givenPerIoRegistration.has_value());
  // Per-I/O registration unless asked otherwise: a pool keyed by address is
  // only safe for callers that keep their buffers mapped (see ClientOptions.h).
  const ClientOptions byDefault = ClientOptions::fromUrl("nfs://srv/export?proto=rdma");
  EXPECT_TRUE(byDefault.perIoRegistration);
  EXPECT_FALSE(byDefault.givenPerIoRegistration.has_value());
  const ClientOptions p = ClientOptions::fromUrl("nfs://srv/export?proto=rdma&memreg=pooled");
  EXPECT_FALSE(p.perIoRegistration);
  EXPECT_TRUE(p.givenPerIoRegistration.has_value());
  // Which keys the URL gave, for callers whose own default differs (the
  // CLI's --proto, the file benchmark's iodepth-sized session).
  EXPECT_TRUE(p.givenProto.has_value());
  EXPECT_FALSE(p.givenQueueDepth.has_value());
  const ClientOptions plain = ClientOptions::fromUrl("nfs://srv/proto=x?qd=64");
  EXPECT_FALSE(plain.givenProto.has_value()) << "proto= in the path is not the key";
  EXPECT_TRUE(plain.givenQueueDepth.has_value());
  EXPECT_EQ(plain.queueDepth, 64U);
}

TEST(ClientOptions, BadInputNamesThePartAndWhatWasExpected) {
  EXPECT_NE(errorOf("nfs://srv/e?version=4.0").find("nfsrdma speaks NFSv4.1"), std::string::npos);
  EXPECT_NE(errorOf("nfs://srv/e?proto=udp").find("proto=udp (expected tcp or rdma)"),
            std::string::npos);
  EXPECT_NE(errorOf("nfs://srv/e?memreg=x").find("expected pooled or per-io"), std::string::npos);
  EXPECT_NE(errorOf("nfs://srv/e?colour=red").find("unknown option 'colour'"), std::string::npos);
  EXPECT_NE(errorOf("nfs://srv/e?uid").find("has no value"), std::string::npos);
  EXPECT_NE(errorOf("nfs://srv/e?reads-per-compound=17").find("reads-per-compound"),
            std::string::npos);
  EXPECT_NE(errorOf("nfs://srv/e?reads-per-compound=0").find("reads-per-compound"),
            std::string::npos);
  EXPECT_NE(errorOf("nfs://srv/e?proto=rdma&reads-per-compound=2").find("needs proto=tcp"),
            std::string::npos);
  EXPECT_NE(errorOf("nfs://srv/e?gids=1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17").find("16 groups"),
            std::string::npos);
  EXPECT_NE(errorOf("nfs://srv/e?bind=").find("bind= needs a local address"), std::string::npos);
  EXPECT_NE(errorOf("nfs://srv/e?qd=0").find("qd"), std::string::npos);
  EXPECT_NE(errorOf("nfs://srv/e?busy-timeout=-1").find("busy-timeout"), std::string::npos);
  EXPECT_NE(errorOf("nfs://srv/e?busy-timeout=3600001").find("busy-timeout"), std::string::npos);
  // A repeated key or two different ports: which one was meant is unknown.
  EXPECT_NE(errorOf("nfs://srv/e?uid=1&uid=2").find("option 'uid' is given twice"),
            std::string::npos);
  EXPECT_NE(errorOf("nfs://srv:2049/e?port=23049")
                .find("port=23049 contradicts the port 2049 after the host"),
            std::string::npos);
  EXPECT_EQ(ClientOptions::fromUrl("nfs://srv:2049/e?port=2049").port, 2049);
  // The port after the host is named as written; "srv:" is not the default port.
  EXPECT_NE(errorOf("nfs://srv:/e").find("port '' after the host: expected 1 to 65535"),
            std::string::npos);
  EXPECT_NE(errorOf("nfs://srv:70000/e").find("port '70000' after the host"), std::string::npos);
  EXPECT_NE(errorOf("nfs://[::1]:/e").find("port '' after the host"), std::string::npos);
  EXPECT_NE(errorOf("nfs://fe80::1/e").find("must be written in brackets"), std::string::npos);
  EXPECT_EQ(ClientOptions::fromUrl("nfs://[fe80::1]:2050/e").port, 2050);
}

// nfsrdma-client --version (or the word version): the build's one line on
// stdout, exit 0, no connection made; --help lists the option.
TEST(ClientCommandLine, VersionPrintsTheBuildsLine) {
  const auto tool = [](const std::string& words) {
    FILE* p = ::popen((std::string(NFSRDMA_CLIENT_BIN) + " " + words + " 2>&1").c_str(), "r");
    std::string out;
    char buf[256];
    while (p != nullptr && std::fgets(buf, sizeof buf, p) != nullptr) out += buf;
    return std::pair<int, std::string>(p != nullptr ? ::pclose(p) : -1, out);
  };
  for (const char* words : {"--version", "version", "--proto tcp --version"}) {
    const auto [status, out] = tool(words);
    EXPECT_EQ(status, 0) << words;
    EXPECT_EQ(out, "nfsrdma-client " + std::string(util::versionText()) + "\n") << words;
  }
  EXPECT_NE(tool("--help").second.find("--version"), std::string::npos);
}

}  // namespace
}  // namespace nfsrdma
