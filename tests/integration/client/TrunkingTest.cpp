// Session trunking (nconnect) against a real nfs-ganesha on loopback: one
// session over 1, 4 and 8 TCP connections moves bytes exactly, concurrent
// random writes from many threads read back, every connection carries
// calls (also reads issued from callbacks), another address of the same server joins the session,
// and another server behind a second address is refused with a clear error.
#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <mutex>
#include <numeric>
#include <random>
#include <thread>

#include "client/Client.h"
#include "server/ganesha/GaneshaServer.h"
#include "tests/integration/client/GaneshaFixture.h"

namespace nfsrdma::testing {
namespace {

std::vector<std::uint8_t> pattern(std::size_t n, std::uint32_t seed) {
  std::vector<std::uint8_t> v(n);
  std::minstd_rand rng(seed);
  std::generate(v.begin(), v.end(), [&] { return static_cast<std::uint8_t>(rng() >> 7); });
  return v;
}

OpenFlags createFlags() {
  OpenFlags f;
  f.write = true;
  f.create = true;
  f.truncate = true;
  return f;
}

ClientOptions trunked(std::uint32_t nconnect) {
  ClientOptions o = GaneshaEnvironment::get().options();
  o.nconnect = nconnect;
  return o;
}

// Every connection of the client is up and carried calls of its own.
void expectLoadSpread(const Client& client, std::size_t connections) {
  const ClientStats s = client.stats();
  ASSERT_EQ(s.connections.size(), connections);
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < s.connections.size(); ++i) {
    EXPECT_TRUE(s.connections[i].up) << "connection " << i;
    EXPECT_GT(s.connections[i].rpc.calls, 0U) << "connection " << i << " " << s.connections[i].peer;
    sum += s.connections[i].rpc.calls;
  }
  EXPECT_EQ(sum, s.rpc.calls);  // the client's total is theirs together
}

// Writes size bytes of pattern(seed) to name and reads them back through
// the same client, byte-exact.
void expectRoundTrip(Client& client, const std::string& name, std::size_t size,
                     std::uint32_t seed) {
  const auto data = pattern(size, seed);
  OpenFile f = client.open(name, createFlags());
  client.pwrite(f, data, 0);
  std::vector<std::uint8_t> back(data.size());
  ASSERT_EQ(client.pread(f, back, 0), data.size());
  client.close(f);
  EXPECT_TRUE(back == data) << name;
}

class Trunking : public ::testing::TestWithParam<std::uint32_t> {
 protected:
  void SetUp() override { NFSRDMA_NEED_GANESHA(); }
};

TEST_P(Trunking, RoundTripsAreByteExactAndEveryConnectionCarriesCalls) {
  const std::uint32_t n = GetParam();
  auto client = Client::connect(trunked(n));
  const auto data = pattern((9U << 20) + 7, n);
  const std::string name = "trunk-" + std::to_string(n) + ".bin";
  OpenFile f = client->open(name, createFlags());
  client->pwrite(f, data, 0);
  client->fsync(f);
  std::vector<std::uint8_t> back(data.size());
  ASSERT_EQ(client->pread(f, back, 0), data.size());
  client->close(f);
  EXPECT_TRUE(back == data);
  expectLoadSpread(*client, n);
  EXPECT_EQ(client->stats().session.recoveries, 0U);
  client->unlink(name);
  client->close();
}

INSTANTIATE_TEST_SUITE_P(Nconnect, Trunking, ::testing::Values(1U, 4U, 8U));

TEST(TrunkingGanesha, ConcurrentRandomWritesOverFourConnectionsReadBack) {
  NFSRDMA_NEED_GANESHA();
  constexpr std::size_t kBlock = 64 * 1024;
  constexpr std::size_t kBlocks = 128;
  constexpr unsigned kThreads = 8;
  auto client = Client::connect(trunked(4));
  const auto data = pattern(kBlock * kBlocks, 99);
  OpenFile f = client->open("trunk-random.bin", createFlags());
  std::vector<std::size_t> order(kBlocks);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), std::mt19937(7));
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (std::size_t k = t; k < kBlocks; k += kThreads) {
        const std::size_t b = order[k];
        client->pwrite(f, std::span(data).subspan(b * kBlock, kBlock), b * kBlock);
      }
    });
  }
  for (auto& th : threads) th.join();
  client->fsync(f);
  client->close(f);
  expectLoadSpread(*client, 4);
  client->close();
  // Read back through another client, one connection, its own session.
  auto reader = Client::connect(trunked(1));
  OpenFlags ro;
  OpenFile r = reader->open("trunk-random.bin", ro);
  std::vector<std::uint8_t> back(data.size());
  ASSERT_EQ(reader->pread(r, back, 0), data.size());
  reader->close(r);
  EXPECT_TRUE(back == data);
  reader->unlink("trunk-random.bin");
  reader->close();
}

// 4 KiB reads at queue depth 32, each next one issued from the callback of
// the one before (as the benchmark and an application's event loop do):
// every read is byte-exact, and the rounds' batches take turns on the
// connections, so each carries a fair part of the load, not one all of it.
TEST(TrunkingGanesha, ReadsIssuedFromCallbacksSpreadOverEveryConnection) {
  NFSRDMA_NEED_GANESHA();
  constexpr std::size_t kBlock = 4096;
  constexpr std::size_t kBlocks = 1024;
  constexpr std::size_t kDepth = 32;
  constexpr std::size_t kReads = 8000;
  constexpr std::uint32_t kConnections = 4;
  auto client = Client::connect(trunked(kConnections));
  const auto data = pattern(kBlock * kBlocks, 5);
  OpenFile f = client->open("trunk-qd.bin", createFlags());
  client->pwrite(f, data, 0);
  client->fsync(f);
  const std::uint64_t before = client->stats().rpc.calls;

  std::mutex mu;
  std::condition_variable cv;
  std::size_t issued = 0;
  std::size_t done = 0;
  std::size_t wrong = 0;
  std::string firstError;
  std::vector<std::vector<std::uint8_t>> bufs(kDepth, std::vector<std::uint8_t>(kBlock));
  std::function<void(std::size_t)> next = [&](std::size_t lane) {
    std::size_t k = 0;
    {
      std::lock_guard lock(mu);
      if (issued == kReads) return;
      k = issued++;
    }
    const std::size_t block = (k * 7919) % kBlocks;
    client->preadAsync(f, bufs[lane], block * kBlock, [&, lane, block](const IoResult& r) {
      const bool same = !r.error && r.bytes == kBlock &&
                        std::equal(bufs[lane].begin(), bufs[lane].end(),
                                   data.begin() + static_cast<std::ptrdiff_t>(block * kBlock));
      {
        std::lock_guard lock(mu);
        if (!same) ++wrong;
        if (r.error && firstError.empty()) firstError = r.error.message();
        ++done;
      }
      cv.notify_all();
      next(lane);
    });
  };
  for (std::size_t lane = 0; lane < kDepth; ++lane) next(lane);
  {
    std::unique_lock lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(60), [&] { return done == kReads; }))
        << done << " of " << kReads << " reads done";
  }
  EXPECT_EQ(wrong, 0U) << firstError;
  const ClientStats s = client->stats();
  ASSERT_EQ(s.connections.size(), kConnections);
  const std::uint64_t reads = s.rpc.calls - before;
  for (std::size_t i = 0; i < kConnections; ++i) {
    // A fair share is a quarter; one in ten is far from "all on one".
    EXPECT_GT(s.connections[i].rpc.calls * 10, reads)
        << "connection " << i << " of " << reads << " calls";
  }
  client->close(f);
  client->unlink("trunk-qd.bin");
  client->close();
}

TEST(TrunkingGanesha, AnotherAddressOfTheSameServerJoinsTheSession) {
  NFSRDMA_NEED_GANESHA();
  // 127.1 is 127.0.0.1 written another way (inet_aton): another address to
  // the client, which asks the server who it is before trunking to it.
  const std::uint16_t port = GaneshaEnvironment::get().port();
  auto client =
      Client::connect("nfs://127.0.0.1:" + std::to_string(port) + ",127.1/export?nconnect=4");
  expectRoundTrip(*client, "trunk-addr.bin", 3U << 20, 5);
  const ClientStats s = client->stats();
  ASSERT_EQ(s.connections.size(), 4U);
  EXPECT_NE(s.connections[1].peer.find("127.1"), std::string::npos) << s.connections[1].peer;
  expectLoadSpread(*client, 4);
  client->unlink("trunk-addr.bin");
  client->close();
}

// numa=auto on loopback: lo has no NUMA node, so each connection's loop
// stays where it is and its stats line says why; the I/O works as ever.
TEST(TrunkingGanesha, NumaAutoSaysWhereEachLoopRuns) {
  NFSRDMA_NEED_GANESHA();
  ClientOptions o = trunked(2);
  o.numaAuto = true;
  auto client = Client::connect(o);
  expectRoundTrip(*client, "trunk-numa.bin", 1U << 20, 9);
  const std::string stats = client->transportStats();
  std::size_t lines = 0;
  for (std::size_t at = stats.find(" numa=none (the interface of 127.0.0.1 has no NUMA node)");
       at != std::string::npos; at = stats.find(" numa=none (the interface of 127.0.0.1", at + 1)) {
    ++lines;
  }
  EXPECT_EQ(lines, 2U) << stats;
  client->unlink("trunk-numa.bin");
  client->close();
}

TEST(TrunkingGanesha, AnotherServerBehindASecondAddressIsRefused) {
  NFSRDMA_NEED_GANESHA();
  namespace fs = std::filesystem;
  const fs::path root = fs::temp_directory_path() / ("nfsrdma-trunk-" + std::to_string(::getpid()));
  fs::create_directories(root / "rw");
  server::GaneshaOptions o;
  o.exports.push_back({root / "rw", "/export", false, false, 1});
  o.workDir = root / "ganesha";
  auto other = server::GaneshaServer::start(o);
  const std::string url = "nfs://127.0.0.1:" + std::to_string(GaneshaEnvironment::get().port()) +
                          ",127.0.0.1:" + std::to_string(other.port()) + "/export?nconnect=2";
  try {
    auto client = Client::connect(url);
    ADD_FAILURE() << "a session was trunked to another server";
  } catch (const NfsException& e) {
    EXPECT_EQ(e.code(), make_error_code(ClientErrc::kNotSameServer)) << e.what();
    const std::string what = e.what();
    EXPECT_NE(what.find("connection 2 of 2"), std::string::npos) << what;
    EXPECT_NE(what.find(std::to_string(other.port())), std::string::npos) << what;
    std::printf("refused as it should be: %s\n", what.c_str());
  }
  other.stop();
  std::error_code ec;
  fs::remove_all(root, ec);
}

}  // namespace
}  // namespace nfsrdma::testing
