// The anchor's runs through the file benchmark's engines against a real
// nfs-ganesha whose exports allow READs of at most 256 KiB: a 1 MiB block is
// read as four READs by both clients and counts only when whole. libnfs
// 4.0.0 does not learn the maximum over NFSv4 and answers a larger pread
// short; its engine splits at the server's maximum like our client, and a
// short answer (here: a block that runs past the end of a file) fails the
// run instead of counting as a full block.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "bench/anchor/AnchorRuns.h"
#include "bench/anchor/SocketFloor.h"
#include "client/Client.h"
#include "server/ganesha/GaneshaServer.h"

namespace nfsrdma::bench {
namespace {

constexpr std::uint32_t kServerMaxIo = 256 * 1024;
constexpr std::uint64_t kFileBytes = 8ULL << 20;
// Three of a 1 MiB block's four 256 KiB READs: the fourth comes back empty.
constexpr std::uint64_t kShortFileBytes = 768 * 1024;

class AnchorGanesha : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (auto why = server::GaneshaServer::unavailableReason()) {
      unavailable_ = *why;
      return;
    }
    dir_ = std::filesystem::temp_directory_path() /
           ("nfsrdma-anchor-itest-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    std::vector<char> bytes(kFileBytes);
    for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 131 + 7);
    std::ofstream(dir_ / "anchor.dat", std::ios::binary)
        .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    std::ofstream(dir_ / "short.dat", std::ios::binary)
        .write(bytes.data(), static_cast<std::streamsize>(kShortFileBytes));
    server::GaneshaOptions o;
    o.exports.push_back({dir_, "/export"});
    o.maxIoBytes = kServerMaxIo;
    server_.emplace(server::GaneshaServer::start(o));
  }
  static void TearDownTestSuite() {
    if (server_) server_->stop();
    server_.reset();
    std::error_code ec;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
  }
  void SetUp() override {
    if (unavailable_.empty()) return;
    const char* real = std::getenv("NFSRDMA_REQUIRE_REAL");
    if (real != nullptr && std::string(real) == "1")
      FAIL() << "NFSRDMA_REQUIRE_REAL=1 but " << unavailable_;
    GTEST_SKIP() << unavailable_;
  }
  static ReadWorkload oneMiBReads() {
    ReadWorkload w;
    w.name = "1m-seqread";
    w.blockSize = 1U << 20;
    w.queueDepth = 4;
    w.random = false;
    w.fileSize = kFileBytes;
    w.runtime = std::chrono::milliseconds(400);
    return w;
  }
  static ClientOptions serverOptions() {
    ClientOptions o;
    o.host = server_->address();
    o.port = server_->port();
    o.exportPath = "/export";
    return o;
  }

  static inline std::string unavailable_;
  static inline std::filesystem::path dir_;
  static inline std::optional<server::GaneshaServer> server_;
};

TEST_F(AnchorGanesha, OurClientLearnsTheServersMaximumAndReadsWholeBlocks) {
  auto client = Client::connect(serverOptions());
  EXPECT_EQ(client->maxIoSize(), kServerMaxIo);
  const ReadMeasurement m = runNfsrdmaReads(*client, "anchor.dat", oneMiBReads());
  EXPECT_TRUE(m.error.empty()) << m.error;
  EXPECT_GT(m.ops, 0U);
  EXPECT_EQ(m.bytes, m.ops * (1U << 20));
  client->close();
}

TEST_F(AnchorGanesha, LibnfsSplitAtTheServersMaximumReadsWholeBlocks) {
  const ReadMeasurement m = runLibnfsReads(serverOptions(), "anchor.dat", oneMiBReads());
  EXPECT_TRUE(m.error.empty()) << m.error;
  EXPECT_GT(m.ops, 0U);
  EXPECT_EQ(m.bytes, m.ops * (1U << 20));
}

TEST_F(AnchorGanesha, LibnfsShortReadFailsTheRunInsteadOfCountingABlock) {
  // One 1 MiB block of a file said to hold one: the server has 768 KiB.
  ReadWorkload w = oneMiBReads();
  w.queueDepth = 1;
  w.fileSize = 1U << 20;
  const ReadMeasurement m = runLibnfsReads(serverOptions(), "short.dat", w);
  EXPECT_EQ(m.ops, 0U);
  EXPECT_NE(m.error.find(" at 786432: 0 of 262144 bytes (short)"), std::string::npos) << m.error;
}

TEST_F(AnchorGanesha, SocketFloorSplitsLikeTheClients) {
  ReadWorkload w = oneMiBReads();
  const ReadMeasurement m = runSocketFloor(w, 200, kServerMaxIo);
  EXPECT_TRUE(m.error.empty()) << m.error;
  EXPECT_EQ(m.bytes, m.ops * (1U << 20));
}

}  // namespace
}  // namespace nfsrdma::bench
