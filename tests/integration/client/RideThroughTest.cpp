// The client riding through faults of a real nfs-ganesha on loopback:
// ganesha killed with SIGKILL and started again on the same port and export
// in the middle of a copy each way and of a benchmark run with --verify; a
// relay that cuts the connection every few MiB (in the middle of replies
// and of calls); and a server that stays down. Everything must end complete
// and byte-exact, a state-changing call resent after a cut must run once,
// and a server that never comes back must end each call within the
// recovery timeout with one clear error.
//
// This binary starts its own ganesha (not the shared GaneshaEnvironment):
// its tests kill it.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "client/Client.h"
#include "client/nfs4/Nfs4Status.h"
#include "server/ganesha/GaneshaServer.h"
#include "tests/integration/client/FaultRelay.h"

namespace nfsrdma::testing {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

bool requireReal() {
  const char* v = std::getenv("NFSRDMA_REQUIRE_REAL");
  return v != nullptr && std::string(v) == "1";
}

std::vector<std::uint8_t> randomBytes(std::size_t n, std::uint32_t seed) {
  std::vector<std::uint8_t> v(n);
  std::mt19937 rng(seed);
  for (auto& b : v) b = static_cast<std::uint8_t>(rng());
  return v;
}

std::vector<std::uint8_t> slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string slurpText(const fs::path& p) {
  const auto b = slurp(p);
  return {b.begin(), b.end()};
}

void spit(const fs::path& p, const std::vector<std::uint8_t>& data) {
  std::ofstream out(p, std::ios::binary);
  out.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
}

// A command run in the background with its output in files; waits are bounded.
class Background {
 public:
  Background(const std::string& command, const fs::path& dir)
      : out_(dir / "out"), err_(dir / "err") {
    pid_ = ::fork();
    if (pid_ == 0) {
      const std::string sh = command + " >" + out_.string() + " 2>" + err_.string();
      ::execl("/bin/sh", "sh", "-c", sh.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
  }
  ~Background() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  // The exit status, or nullopt if it ran past the limit (then it is killed).
  std::optional<int> wait(std::chrono::seconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
      int st = 0;
      if (::waitpid(pid_, &st, WNOHANG) == pid_) {
        pid_ = 0;
        return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
      }
      std::this_thread::sleep_for(20ms);
    }
    return std::nullopt;
  }
  std::string out() const { return slurpText(out_); }
  std::string err() const { return slurpText(err_); }

 private:
  pid_t pid_ = -1;
  fs::path out_;
  fs::path err_;
};

template <class Pred>
bool waitUntil(std::chrono::milliseconds limit, Pred pred) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (pred()) return true;
    std::this_thread::sleep_for(10ms);
  }
  return pred();
}

class RideThrough : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (auto why = server::GaneshaServer::unavailableReason()) {
      unavailable_ = *why;
      return;
    }
    root_ = fs::temp_directory_path() / ("nfsrdma-ride-" + std::to_string(::getpid()));
    fs::create_directories(root_ / "rw");
    options_.exports.push_back({root_ / "rw", "/export", false, false, 1});
    options_.leaseSeconds = 10;
    options_.workDir = root_ / "ganesha";
    try {
      server_.emplace(server::GaneshaServer::start(options_));
      options_.port = server_->port();  // restarts come back on the same port
    } catch (const std::exception& e) {
      unavailable_ = std::string("nfs-ganesha did not start: ") + e.what();
    }
  }
  static void TearDownTestSuite() {
    server_.reset();
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  void SetUp() override {
    if (unavailable_.empty()) {
      if (!server_) restart();  // a test that failed half-way left it down
      return;
    }
    if (requireReal()) FAIL() << "NFSRDMA_REQUIRE_REAL=1 but " << unavailable_;
    GTEST_SKIP() << unavailable_;
  }

  static void kill() {
    ASSERT_TRUE(server_);
    ASSERT_EQ(::kill(server_->pid(), SIGKILL), 0);
    server_.reset();  // reaps it; the work directory (recovery state) stays
  }
  static void restart() { server_.emplace(server::GaneshaServer::start(options_)); }

  static fs::path exportDir() { return root_ / "rw"; }
  static std::uint16_t port() { return options_.port; }
  static std::string url(const std::string& path, const std::string& query = "") {
    return "nfs://127.0.0.1:" + std::to_string(port()) + "/export/" + path +
           (query.empty() ? "" : "?" + query);
  }
  static fs::path scratch(const std::string& name) {
    const fs::path d = root_ / "scratch" / name;
    fs::create_directories(d);
    return d;
  }
  // Kills ganesha, starts it again on the same port a second later, and
  // waits (bounded) for the command to end; returns its exit status.
  static std::optional<int> bounce(Background& command) {
    kill();
    std::this_thread::sleep_for(1s);
    restart();
    return command.wait(120s);
  }
  static std::string copyUpAcrossARestart(const std::string& name, unsigned seed,
                                          const std::string& flags);
  ClientOptions clientOptions(std::uint16_t toPort) const {
    ClientOptions o;
    o.host = "127.0.0.1";
    o.port = toPort;
    o.exportPath = "/export";
    o.timeout = 20s;
    o.recoveryTimeout = 60s;
    return o;
  }

  static inline std::string unavailable_;
  static inline fs::path root_;
  static inline server::GaneshaOptions options_;
  static inline std::optional<server::GaneshaServer> server_;
};

// `nfsrdma-client --stats FLAGS cp` of 64 MiB (seed) to the server as
// name, with ganesha killed and restarted once 8 MiB are there: the copy
// must finish with status 0 and the server's file be byte-exact. Returns
// the command's stderr (its notes and --stats).
std::string RideThrough::copyUpAcrossARestart(const std::string& name, unsigned seed,
                                              const std::string& flags) {
  const fs::path dir = scratch(name);
  const auto data = randomBytes(64U << 20, seed);
  spit(dir / "src.bin", data);
  const fs::path dst = exportDir() / (name + ".bin");
  Background cp(std::string(NFSRDMA_CLIENT_BIN) + " --stats " + flags + "cp " +
                    (dir / "src.bin").string() + " '" + url(name + ".bin") + "'",
                dir);
  EXPECT_TRUE(waitUntil(60s, [&] {
    std::error_code ec;
    return fs::file_size(dst, ec) >= (8U << 20) && !ec;
  })) << cp.err();
  const auto status = bounce(cp);
  EXPECT_TRUE(status) << "cp hung across the restart: " << cp.err();
  if (status) {
    EXPECT_EQ(*status, 0) << cp.err();
  }
  EXPECT_TRUE(slurp(dst) == data) << "the server's copy differs from the source";
  return cp.err();
}

TEST_F(RideThrough, CopyToTheServerCompletesAcrossAKilledAndRestartedGanesha) {
  const std::string err = copyUpAcrossARestart("up", 1, "");
  EXPECT_NE(err.find("nfsrdma-client: note: the server no longer knew this client's session"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("recovery: outages=1 "), std::string::npos) << err;
  std::cout << "[ account ] " << err;
}

// A restart takes every connection of a trunk at once: the first one makes
// the new session, and the other three join it again before they carry calls.
TEST_F(RideThrough, ATrunkedCopyCompletesAcrossAKilledAndRestartedGanesha) {
  const std::string err = copyUpAcrossARestart("trunk-up", 6, "--nconnect 4 ");
  EXPECT_NE(err.find("a new session replaced it"), std::string::npos) << err;
  // Every connection carried calls and is bound to the new session at the end.
  for (int i = 0; i < 4; ++i) {
    const auto at = err.find("connection " + std::to_string(i) + ": tcp ");
    ASSERT_NE(at, std::string::npos) << err;
    const std::string line = err.substr(at, err.find('\n', at) - at);
    EXPECT_EQ(line.find(" calls=0 "), std::string::npos) << line;
    EXPECT_NE(line.find(" up=yes"), std::string::npos) << line;
  }
  std::cout << "[ account ] " << err;
}

TEST_F(RideThrough, CopyFromTheServerCompletesAcrossAKilledAndRestartedGanesha) {
  const fs::path dir = scratch("down");
  const auto data = randomBytes(64U << 20, 2);
  spit(exportDir() / "down.bin", data);
  Background cp(std::string(NFSRDMA_CLIENT_BIN) + " --stats cp '" + url("down.bin") + "' " +
                    (dir / "dst.bin").string(),
                dir);
  ASSERT_TRUE(waitUntil(60s, [&] {
    std::error_code ec;
    return fs::file_size(dir / "dst.bin", ec) >= (8U << 20) && !ec;
  })) << cp.err();
  const auto status = bounce(cp);
  ASSERT_TRUE(status) << "cp hung across the restart: " << cp.err();
  EXPECT_EQ(*status, 0) << cp.err();
  EXPECT_TRUE(slurp(dir / "dst.bin") == data) << "the local copy differs from the server's file";
  std::cout << "[ account ] " << cp.err();
}

TEST_F(RideThrough, VerifiedBenchmarkRunCompletesAcrossAKilledAndRestartedGanesha) {
  const fs::path dir = scratch("bench");
  Background run(std::string(NFSRDMA_BENCH_BIN) +
                     " file --target 'nfs:" + url("", "recovery-timeout=60000") +
                     "' --profile randrw --size 16m --runtime 8 --ramp 0 --iodepth 16 --verify",
                 dir);
  std::this_thread::sleep_for(3s);
  const auto status = bounce(run);
  ASSERT_TRUE(status) << "the run hung across the restart: " << run.err();
  const std::string out = run.out() + run.err();
  EXPECT_EQ(*status, 0) << out;
  EXPECT_NE(out.find(", 0 mismatches"), std::string::npos) << out;
  EXPECT_NE(out.find("no longer knew this client's session"), std::string::npos) << out;
  EXPECT_NE(out.find("note: outage: 1 loss of connection or session"), std::string::npos) << out;
  // The writes' buffers are the job's: the new write verifier is left to
  // the read-back, which found every block (ganesha's data was in the
  // kernel's page cache, which a killed ganesha does not lose).
  EXPECT_NE(
      out.find(
          "may be lost and must be written again; the verify read-back checks every block this "
          "run wrote"),
      std::string::npos)
      << out;
  std::cout << out;
}

// The relay cuts each connection after a few MiB of replies (in the middle
// of a READ reply) or of calls (in the middle of a WRITE): the transfer
// reconnects and resends until it is whole, on one session.
TEST_F(RideThrough, ConnectionsCutEveryFewMiBStillMoveEveryByte) {
  FaultRelay relay(port());
  relay.cutAfter((3U << 20) + 4099, (5U << 20) + 333, 10);
  auto c = Client::connect(clientOptions(relay.port()));
  const auto data = randomBytes(24U << 20, 3);
  OpenFlags w;
  w.write = true;
  w.create = true;
  w.truncate = true;
  OpenFile f = c->open("cut.bin", w);
  for (std::size_t at = 0; at < data.size(); at += 4U << 20) {
    c->pwrite(f, {data.data() + at, 4U << 20}, at);
  }
  c->close(f);
  OpenFile r = c->open("cut.bin", OpenFlags{});
  std::vector<std::uint8_t> back(data.size());
  EXPECT_EQ(c->pread(r, back, 0), data.size());
  c->close(r);
  EXPECT_TRUE(back == data) << "read back differs";
  EXPECT_TRUE(slurp(exportDir() / "cut.bin") == data) << "the server's file differs";
  const auto s = c->stats();
  EXPECT_GE(relay.cuts(), 4U);
  EXPECT_EQ(s.session.reconnects, relay.cuts());
  EXPECT_EQ(s.session.recoveries, 0U) << "the session should have survived every cut";
  EXPECT_GT(s.session.replayed, 0U);
  std::cout << "[ account ] cuts=" << relay.cuts() << " reconnects=" << s.session.reconnects
            << " replayed=" << s.session.replayed << " outage_ms=" << s.session.outageMillis
            << "\n";
  c->close();
}

// A trunked session (nconnect=4) loses one connection at a time: the calls
// of a cut connection go again on their slots over the others while it is
// reconnected and bound again, and service never stops.
TEST_F(RideThrough, ATrunkedSessionRidesThroughCutsOneConnectionAtATime) {
  FaultRelay relay(port());
  relay.cutAfter((3U << 20) + 4099, (5U << 20) + 333, 2);
  ClientOptions o = clientOptions(relay.port());
  o.nconnect = 4;
  auto c = Client::connect(o);
  const auto data = randomBytes(24U << 20, 4);
  OpenFlags w;
  w.write = true;
  w.create = true;
  w.truncate = true;
  OpenFile f = c->open("trunk-cut.bin", w);
  for (std::size_t at = 0; at < data.size(); at += 4U << 20)
    c->pwrite(f, {data.data() + at, 4U << 20}, at);
  c->close(f);
  OpenFile r = c->open("trunk-cut.bin", OpenFlags{});
  std::vector<std::uint8_t> back(data.size());
  EXPECT_EQ(c->pread(r, back, 0), data.size());
  c->close(r);
  EXPECT_TRUE(back == data) << "read back differs";
  EXPECT_TRUE(slurp(exportDir() / "trunk-cut.bin") == data) << "the server's file differs";
  // The renewal thread binds the cut ones again at once (bounded wait).
  const auto until = std::chrono::steady_clock::now() + 10s;
  auto allUp = [&] {
    const auto s = c->stats();
    return std::all_of(s.connections.begin(), s.connections.end(),
                       [](const auto& k) { return k.up; });
  };
  while (!allUp() && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(50ms);
  const auto s = c->stats();
  EXPECT_EQ(relay.cuts(), 2U);
  EXPECT_EQ(s.session.connectionLosses, 2U);
  EXPECT_EQ(s.session.reconnects, 2U);
  EXPECT_GT(s.session.failovers, 0U)
      << "calls of a cut connection should have gone over the others";
  EXPECT_EQ(s.session.outages, 0U) << "the other connections should have kept serving";
  EXPECT_EQ(s.session.recoveries, 0U);
  EXPECT_TRUE(allUp());
  std::cout << "[ account ] cuts=" << relay.cuts() << " failovers=" << s.session.failovers
            << " reconnects=" << s.session.reconnects << "\n";
  c->close();
}

// Replies cut short (the server ran the call, the client never heard): the
// replay on the same slot is answered from the reply cache. A RENAME run
// twice would fail with NOENT, a CREATE of an exclusive name with EXIST,
// and each WRITE here overlaps the one before, so one applied again after
// its successor would leave old bytes in the image.
TEST_F(RideThrough, StateChangingCallsResentAfterACutRunOnce) {
  FaultRelay relay(port());
  relay.cutAfter(4000 + 77, 0, 12);
  auto c = Client::connect(clientOptions(relay.port()));
  constexpr std::size_t kBlock = 16 * 1024;
  constexpr std::size_t kWrites = 200;
  std::vector<std::uint8_t> image((kWrites + 1) * kBlock);
  OpenFlags w;
  w.write = true;
  w.create = true;
  w.truncate = true;
  OpenFile f = c->open("once.bin", w);
  for (std::size_t i = 0; i < kWrites; ++i) {
    const auto block = randomBytes(2 * kBlock, static_cast<std::uint32_t>(100 + i));
    c->pwrite(f, block, i * kBlock, StableHow::kFileSync);
    std::copy(block.begin(), block.end(), image.begin() + static_cast<std::ptrdiff_t>(i * kBlock));
  }
  c->close(f);
  c->mkdir("chain");
  std::string at = "chain/n0";
  OpenFile n = c->open(at, w);
  c->close(n);
  for (int i = 1; i <= 60; ++i) {
    const std::string next = "chain/n" + std::to_string(i);
    c->rename(at, next);
    at = next;
  }
  const auto s = c->stats();
  c->close();
  EXPECT_TRUE(slurp(exportDir() / "once.bin") == image)
      << "a WRITE was applied twice or not at all";
  EXPECT_TRUE(fs::exists(exportDir() / "chain" / "n60"));
  EXPECT_GE(relay.cuts(), 6U);
  EXPECT_GT(s.session.replayed, 0U);
  std::cout << "[ account ] cuts=" << relay.cuts() << " replayed=" << s.session.replayed
            << " uncached=" << s.session.uncachedReplays << "\n";
}

// No success for bytes the server does not have: unstable data a restart
// lost (a new write verifier at COMMIT) is written again where the client
// kept it (synchronous pwrite), and reported where the caller owns the
// buffer (asynchronous writes), never passed as durable.
TEST_F(RideThrough, UnstableDataLostInARestartIsWrittenAgainOrReported) {
  auto c = Client::connect(clientOptions(port()));
  OpenFlags w;
  w.write = true;
  w.create = true;
  w.truncate = true;
  const auto kept = randomBytes(3U << 20, 4);
  OpenFile f = c->open("kept.bin", w);
  c->pwrite(f, kept, 0);  // UNSTABLE, a copy kept until a COMMIT covers it
  const auto lost = randomBytes(1U << 20, 5);
  OpenFile g = c->open("async.bin", w);
  std::promise<IoResult> done;
  c->pwriteAsync(g, lost, 0, StableHow::kUnstable,
                 [&done](const IoResult& r) { done.set_value(r); });
  ASSERT_FALSE(done.get_future().get().error);
  kill();
  // ganesha's write verifier is the second it started in: a restart within
  // the same second would keep it, and nothing would look lost.
  std::this_thread::sleep_for(1100ms);
  restart();
  c->fsync(f);  // the COMMIT finds the new verifier: the kept bytes go again, FILE_SYNC
  EXPECT_EQ(c->stats().recovery.rewrittenBytes, kept.size());
  EXPECT_TRUE(slurp(exportDir() / "kept.bin") == kept);
  try {
    c->fsync(g);
    FAIL() << "fsync reported asynchronous unstable data durable across a restart";
  } catch (const NfsException& e) {
    EXPECT_EQ(e.code(), make_error_code(ClientErrc::kUnstableDataLost)) << e.what();
    EXPECT_NE(std::string(e.what()).find(
                  "fsync /export/async.bin: the server restarted since the data was "
                  "written (write verifier changed): unstable data written "
                  "asynchronously may be lost and must be written again"),
              std::string::npos)
        << e.what();
  }
  c->close(f);
  c->close(g);
  c->close();
}

// A silent partition (every byte held both ways, nothing closed) longer
// than the client's timeout, in the middle of a write: the call that timed
// out takes its connection for dead, the connections made during the
// partition time out too, and once it ends a new one is bound to the same
// session and the calls go again on their slots. Every byte arrives, no slot
// is retired, and the outage is in the account. Over one connection and
// over a trunk of four.
void writeAcrossASilentPartition(Client& c, FaultRelay& relay, const fs::path& onServer,
                                 std::chrono::milliseconds partition) {
  const auto data = randomBytes(24U << 20, 6);
  OpenFlags w;
  w.write = true;
  w.create = true;
  w.truncate = true;
  OpenFile f = c.open(onServer.filename().string(), w);
  relay.partitionAfter(4U << 20, partition);  // in the middle of the writes
  std::string failed;
  std::thread writer([&] {
    try {
      for (std::size_t at = 0; at < data.size(); at += 1U << 20)
        c.pwrite(f, {data.data() + at, 1U << 20}, at);
    } catch (const std::exception& e) {
      failed = e.what();
    }
  });
  writer.join();
  EXPECT_TRUE(relay.partitioned());
  ASSERT_EQ(failed, "") << "a write failed across the partition";
  c.close(f);
  EXPECT_TRUE(slurp(onServer) == data) << "the server's file differs";
}

TEST_F(RideThrough, WritesCompleteAcrossASilentPartitionLongerThanTheTimeout) {
  for (const std::uint32_t nconnect : {1U, 4U}) {
    FaultRelay relay(port());
    ClientOptions o = clientOptions(relay.port());
    o.timeout = 1500ms;
    o.nconnect = nconnect;
    auto c = Client::connect(o);
    const auto t0 = std::chrono::steady_clock::now();
    writeAcrossASilentPartition(*c, relay,
                                exportDir() / ("silent-" + std::to_string(nconnect) + ".bin"), 4s);
    const auto s = c->stats();
    EXPECT_GE(std::chrono::steady_clock::now() - t0, 4s);
    EXPECT_GE(s.rpc.timeouts, 1U) << "nconnect=" << nconnect;
    // A trunk counts a connection lost while others carried on apart from
    // an outage of the whole session.
    EXPECT_GE(s.session.outages + s.session.connectionLosses, 1U) << "nconnect=" << nconnect;
    EXPECT_GE(s.session.reconnects, 1U) << "nconnect=" << nconnect;
    EXPECT_GE(s.session.replayed, 1U) << "nconnect=" << nconnect;
    EXPECT_EQ(s.session.retiredSlots, 0U) << "nconnect=" << nconnect;
    EXPECT_EQ(s.session.recoveries, 0U) << "the session should have survived the partition";
    EXPECT_EQ(s.session.unrecovered, 0U);
    std::cout << "[ account ] nconnect=" << nconnect << " timeouts=" << s.rpc.timeouts
              << " outages=" << s.session.outages
              << " connection_losses=" << s.session.connectionLosses
              << " failovers=" << s.session.failovers << " reconnects=" << s.session.reconnects
              << " replayed=" << s.session.replayed << " outage_ms=" << s.session.outageMillis
              << "\n";
    c->close();
  }
}

// A server that stays down: the call fails within the recovery timeout,
// with one error naming the server and how long it tried.
TEST_F(RideThrough, AServerThatStaysDownFailsTheCallWithinTheRecoveryTimeout) {
  ClientOptions o = clientOptions(port());
  o.recoveryTimeout = 3s;
  auto c = Client::connect(o);
  c->mkdir("down");
  kill();
  const auto t0 = std::chrono::steady_clock::now();
  try {
    (void)c->stat("down");
    FAIL() << "stat succeeded with the server down";
  } catch (const NfsException& e) {
    const auto took = std::chrono::steady_clock::now() - t0;
    EXPECT_EQ(e.code(), make_error_code(ClientErrc::kServerUnreachable)) << e.what();
    EXPECT_LT(took, 8s) << e.what();
    EXPECT_GE(took, 2500ms) << e.what();
    const std::string what = e.what();
    EXPECT_NE(what.find("tcp 127.0.0.1:" + std::to_string(port())), std::string::npos) << what;
    EXPECT_NE(what.find("recovery-timeout 3000 ms"), std::string::npos) << what;
    std::cout << "[ error ] " << what << "\n";
  }
  restart();
}

}  // namespace
}  // namespace nfsrdma::testing
