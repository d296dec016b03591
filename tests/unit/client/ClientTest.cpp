// nfsrdma::Client through its public API against the in-process fake
// NFSv4.1 server on loopback TCP: pread/pwrite split at the server's I/O
// size and continued when short, byte for byte; a busy server (DELAY)
// ridden out by the one loop both use, and given up on within
// busy-timeout; errors that name the operation, the path and the status;
// and the transport factory, which neither accepts an unknown kind nor
// turns RDMA into TCP.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "client/Client.h"
#include "client/nfs4/Nfs4Status.h"
#include "tests/unit/client/FakeServer.h"
#include "tests/unit/client/ScriptedPeer.h"

namespace nfsrdma::testpeer {
namespace {

using namespace std::chrono_literals;
using nfs4::Op;

constexpr std::uint32_t kServerIo = 8192;  // the fake server's maxread and maxwrite

std::size_t countOps(const FakeNfs41Server::Stats& s, Op op) {
  std::size_t n = 0;
  for (const auto& ops : s.opLists) {
    n += static_cast<std::size_t>(
        std::count(ops.begin(), ops.end(), static_cast<std::uint32_t>(op)));
  }
  return n;
}

std::string errorOf(const std::function<void()>& call) {
  try {
    call();
  } catch (const NfsException& e) {
    return e.what();
  }
  return "(no error)";
}

class ClientTest : public ::testing::Test {
 protected:
  static FakeServerConfig serverConfig() {
    FakeServerConfig c;
    c.maxRead = kServerIo;
    c.maxWrite = kServerIo;
    return c;
  }
  ClientOptions options() {
    ClientOptions o;
    o.host = "127.0.0.1";
    o.port = listener_.port();
    o.timeout = 5s;
    o.machineName = "client-test";
    o.queueDepth = 4;
    o.onBusy = [this](const std::string& what) { busyNotices_.push_back(what); };
    return o;
  }
  // A fake server with this configuration and a Client connected to it.
  void connect(FakeServerConfig config = serverConfig()) { connect(config, options()); }
  void connect(FakeServerConfig config, const ClientOptions& o) {
    // Client::connect blocks until the session is up, so the server starts
    // on a thread of its own as the connection arrives.
    std::thread acceptor([&] {
      peer_ = listener_.accept();
      if (peer_) server_ = std::make_unique<FakeNfs41Server>(*peer_, config);
    });
    try {
      client_ = Client::connect(o);
    } catch (...) {
      acceptor.join();
      throw;
    }
    acceptor.join();
  }
  OpenFile openForWrite(const std::string& name) {
    OpenFlags f;
    f.write = true;
    f.create = true;
    return client_->open(name, f);
  }
  void expectNoViolations() {
    for (const auto& v : server_->stats().violations)
      ADD_FAILURE() << "client broke the protocol: " << v;
  }
  // The client's later connections (reconnects after a restart) are served
  // by the same server, until the fixture ends.
  void acceptReconnects() {
    acceptor_.thread = std::thread([this] {
      while (!acceptor_.stop.load()) {
        auto p = listener_.accept(50ms);
        if (!p) continue;
        server_->attach(*p);
        std::lock_guard lock(acceptor_.mu);
        extraPeers_.push_back(std::move(p));
      }
    });
  }
  struct Acceptor {
    std::atomic<bool> stop{false};
    std::mutex mu;
    std::thread thread;
    ~Acceptor() {
      stop = true;
      if (thread.joinable()) thread.join();
    }
  };

  // Destroyed bottom-up: the client (its session closed while the server
  // answers), then the server and its peer.
  LoopbackListener listener_;
  std::vector<std::string> busyNotices_;
  std::unique_ptr<ScriptedPeer> peer_;
  std::vector<std::unique_ptr<ScriptedPeer>> extraPeers_;  // reconnections, outliving the server
  std::unique_ptr<FakeNfs41Server> server_;
  Acceptor acceptor_;  // stops before the server goes
  std::unique_ptr<Client> client_;
};

TEST_F(ClientTest, PwriteAndPreadSplitAtTheServersIoSizeByteForByte) {
  connect();
  ASSERT_EQ(client_->maxIoSize(), kServerIo) << "the server's maxread/maxwrite bound the I/O size";
  const Bytes data = pattern(3 * kServerIo + 100, 7);
  OpenFile f = openForWrite("f");
  client_->pwrite(f, data, 4096);

  Bytes expected(4096 + data.size(), 0);  // the hole before the offset reads as zeros
  std::copy(data.begin(), data.end(), expected.begin() + 4096);
  EXPECT_EQ(server_->file("f"), expected);
  std::vector<std::size_t> writes = server_->stats().writeSizes;
  std::sort(writes.begin(), writes.end());
  EXPECT_EQ(writes, (std::vector<std::size_t>{100, kServerIo, kServerIo, kServerIo}))
      << "one WRITE per chunk of the I/O size, from the offset on";

  Bytes back(expected.size() + 5000, 0xee);  // more than the file holds
  const std::size_t got = client_->pread(f, back, 0);
  EXPECT_EQ(got, expected.size()) << "fewer bytes only at end of file";
  EXPECT_TRUE(std::equal(expected.begin(), expected.end(), back.begin()));
  for (std::uint32_t count : server_->stats().readCounts) EXPECT_LE(count, kServerIo);
  EXPECT_EQ(server_->stats().readCounts.size(), (back.size() + kServerIo - 1) / kServerIo);
  client_->close(f);
  expectNoViolations();
}

TEST_F(ClientTest, ShortWritesAndShortReadsAreContinued) {
  FakeServerConfig config = serverConfig();
  config.shortWrite = 3000;
  config.shortRead = 1000;
  connect(config);
  const Bytes data = pattern(2 * kServerIo + 10, 3);
  OpenFile f = openForWrite("f");
  client_->pwrite(f, data, 0);
  EXPECT_EQ(server_->file("f"), data);
  // 3 chunks: 8192 takes 3 WRITEs of up to 3000, and 10 bytes one.
  EXPECT_EQ(server_->stats().writeSizes.size(), 7U);

  Bytes back(data.size(), 0);
  EXPECT_EQ(client_->pread(f, back, 0), data.size());
  EXPECT_EQ(back, data);
  EXPECT_GE(server_->stats().readCounts.size(), data.size() / 1000);
  client_->close(f);
  expectNoViolations();
}

// pread and pwrite share one loop; each is tested on its own, so that
// breaking the resend for one of them fails a test.
TEST_F(ClientTest, BusyWriteIsSentAgainUntilTheServerTakesIt) {
  connect();
  OpenFile f = openForWrite("f");
  server_->failNextOp(Op::kWrite, nfs4::kErrDelay);
  server_->failNextOp(Op::kWrite, nfs4::kErrDelay);
  const Bytes data = pattern(2 * kServerIo, 11);
  client_->pwrite(f, data, 0);
  EXPECT_EQ(server_->file("f"), data);
  EXPECT_EQ(countOps(server_->stats(), Op::kWrite), 4U) << "two chunks, two of them sent again";
  ASSERT_EQ(busyNotices_.size(), 1U) << "one notice per call, however often it is sent again";
  EXPECT_NE(busyNotices_[0].find("write /f: NFS4ERR_DELAY"), std::string::npos) << busyNotices_[0];
  client_->close(f);
}

TEST_F(ClientTest, BusyReadIsSentAgainUntilTheServerAnswers) {
  connect();
  const Bytes data = pattern(kServerIo + 5, 13);
  server_->addFile("f", data);
  OpenFile f = client_->open("f", OpenFlags{});
  server_->failNextOp(Op::kRead, nfs4::kErrDelay);
  Bytes back(data.size(), 0);
  EXPECT_EQ(client_->pread(f, back, 0), data.size());
  EXPECT_EQ(back, data);
  EXPECT_EQ(countOps(server_->stats(), Op::kRead), 3U) << "two chunks, one of them sent again";
  ASSERT_EQ(busyNotices_.size(), 1U);
  EXPECT_NE(busyNotices_[0].find("read /f: NFS4ERR_DELAY"), std::string::npos) << busyNotices_[0];
  client_->close(f);
}

TEST_F(ClientTest, AServerBusyBeyondBusyTimeoutIsTheErrorAndSaysHowOftenItWasSent) {
  ClientOptions o = options();
  o.busyTimeout = 250ms;
  connect(serverConfig(), o);
  server_->addFile("f", pattern(100, 1));
  OpenFile f = client_->open("f", OpenFlags{});
  for (int i = 0; i < 50; ++i) server_->failNextOp(Op::kRead, nfs4::kErrDelay);
  Bytes back(100, 0);
  const std::string error = errorOf([&] { (void)client_->pread(f, back, 0); });
  // "read /f, sent 3 times within busy-timeout=250 ms: NFS4ERR_DELAY (...)"
  EXPECT_EQ(error.rfind("read /f, sent ", 0), 0U) << error;
  EXPECT_NE(error.find(" times within busy-timeout=250 ms: NFS4ERR_DELAY"), std::string::npos)
      << error;
  const std::size_t reads = countOps(server_->stats(), Op::kRead);
  EXPECT_GE(reads, 2U);
  EXPECT_LE(reads, 4U) << "pauses of 100 ms and more within 250 ms";
}

TEST_F(ClientTest, ErrorsNameTheOperationThePathAndTheStatus) {
  connect();
  try {
    (void)client_->open("missing", OpenFlags{});
    FAIL() << "opened a file that does not exist";
  } catch (const NfsException& e) {
    EXPECT_EQ(e.code(), nfs4::statusError(nfs4::kErrNoEnt));
    EXPECT_NE(std::string(e.what()).find("open /missing: NFS4ERR_NOENT"), std::string::npos)
        << e.what();
  }
  server_->addFile("f", pattern(100, 1));
  OpenFile f = client_->open("f", OpenFlags{});
  server_->failNextOp(Op::kRead, nfs4::kErrIo);
  Bytes back(100, 0);
  const std::string error = errorOf([&] { (void)client_->pread(f, back, 0); });
  EXPECT_NE(error.find("read /f: NFS4ERR_IO"), std::string::npos) << error;
  EXPECT_TRUE(busyNotices_.empty()) << "NFS4ERR_IO is not sent again";
}

// A path beyond PATH_MAX, or a name beyond NAME_MAX, is refused before
// anything is sent, naming the path's start and its length (it used to end
// in "request larger than the negotiated maximum").
TEST_F(ClientTest, AnOverlongPathOrNameIsRefusedNamingItsLength) {
  connect();
  const std::size_t sent = server_->stats().compounds;
  const std::string longPath = std::string(100 * 1024, 'd') + "/f";
  std::string error = errorOf([&] { (void)client_->open(longPath, OpenFlags{.create = true}); });
  EXPECT_EQ(error,
            "open /" + std::string(63, 'd') +
                "...: a path of 102403 bytes, longer than 4096 (PATH_MAX): File name too long");
  error = errorOf([&] { (void)client_->stat("dir/" + std::string(256, 'n')); });
  EXPECT_NE(error.find(": a name of 256 bytes, longer than 255 (NAME_MAX): File name too long"),
            std::string::npos)
      << error;
  EXPECT_EQ(server_->stats().compounds, sent) << "a request went out";
  error = errorOf(
      [&] { (void)client_->stat(std::string(255, 'n')); });  // a name of 255 goes to the server
  EXPECT_EQ(error.find("NAME_MAX"), std::string::npos) << error;
  EXPECT_GT(server_->stats().compounds, sent);
}

// A server restart while close() COMMITs: the open is reclaimed (close()
// has begun, but CLOSE was not sent), the data the COMMIT finds lost (a new
// write verifier) is written again with the reclaimed stateid, and CLOSE
// goes with it too. close() used to take the file out of the reclaim at
// once, and the rewrite failed with NFS4ERR_BAD_STATEID: the trunked copy
// of issue 37, whose faster writes put its restart into close().
TEST_F(ClientTest, AServerRestartDuringCloseReclaimsTheOpenAndWritesTheKeptDataAgain) {
  ClientOptions o = options();
  o.recoveryTimeout = 10s;
  connect(serverConfig(), o);
  acceptReconnects();
  const Bytes data = pattern(3 * kServerIo + 10, 7);
  OpenFile f = openForWrite("restart-in-close");
  client_->pwrite(f, data, 0);  // UNSTABLE, a copy kept until a COMMIT covers it
  server_->restartOnNext(Op::kCommit);
  const std::string error = errorOf([&] { client_->close(f); });
  EXPECT_EQ(error, "(no error)");
  EXPECT_EQ(server_->restarts(), 1U);
  EXPECT_EQ(server_->file("restart-in-close"), data);
  const auto r = client_->stats().recovery;
  EXPECT_EQ(r.reclaimedOpens, 1U);
  EXPECT_EQ(r.lostOpens, 0U);
  EXPECT_EQ(r.rewrittenBytes, data.size());
  expectNoViolations();
}

// A reclaim the restarted server answers NFS4ERR_DELAY goes again, as the
// Linux client resends it; given up, the file kept the stateid of before
// the restart and its next WRITE failed with NFS4ERR_BAD_STATEID.
TEST_F(ClientTest, AReclaimTheServerAnswersDelayIsSentAgain) {
  ClientOptions o = options();
  o.recoveryTimeout = 10s;
  connect(serverConfig(), o);
  acceptReconnects();
  const Bytes data = pattern(2 * kServerIo, 8);
  OpenFile f = openForWrite("delayed-reclaim");
  client_->pwrite(f, {data.data(), kServerIo}, 0);
  server_->restartOnNext(Op::kWrite);
  server_->failNextOp(Op::kOpen, nfs4::kErrDelay);
  server_->failNextOp(Op::kOpen, nfs4::kErrDelay);
  const std::string error = errorOf([&] {
    client_->pwrite(f, {data.data() + kServerIo, kServerIo}, kServerIo);
  });
  EXPECT_EQ(error, "(no error)");
  EXPECT_NO_THROW(client_->close(f));
  EXPECT_EQ(server_->restarts(), 1U);
  EXPECT_EQ(server_->file("delayed-reclaim"), data);
  EXPECT_EQ(client_->stats().recovery.reclaimedOpens, 1U);
  expectNoViolations();
}

TEST_F(ClientTest, TheTransportFactoryRefusesAKindItDoesNotKnow) {
  ClientOptions o = options();
  o.proto = static_cast<TransportKind>(7);
  try {
    (void)Client::connect(o);
    FAIL() << "connected with transport kind 7";
  } catch (const NfsException& e) {
    EXPECT_EQ(e.code(), make_error_code(ClientErrc::kInvalidArgument));
    EXPECT_NE(std::string(e.what()).find("transport kind 7 (expected tcp or rdma)"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(listener_.accept(100ms), nullptr) << "nothing was connected";
}

TEST_F(ClientTest, RdmaIsNeverTcpInDisguise) {
  // An RDMA connection to a TCP listener fails (there is no RDMA device
  // here, or no RDMA listener); it must not fall back to a TCP connection.
  ClientOptions o = options();
  o.proto = TransportKind::kRdma;
  o.timeout = 2s;
  EXPECT_THROW((void)Client::connect(o), NfsException);
  EXPECT_EQ(listener_.accept(100ms), nullptr) << "a TCP connection was made for proto=rdma";
}

TEST(TransportKind, NamesRoundTrip) {
  for (const TransportKind kind : {TransportKind::kTcp, TransportKind::kRdma}) {
    EXPECT_EQ(parseTransportKind(transportName(kind)), kind);
  }
  EXPECT_EQ(transportName(TransportKind::kTcp), "tcp");
  EXPECT_EQ(transportName(TransportKind::kRdma), "rdma");
  EXPECT_EQ(parseTransportKind("udp"), std::nullopt);
  EXPECT_EQ(parseTransportKind("RDMA"), std::nullopt) << "as fromUrl: exact names only";
}

}  // namespace
}  // namespace nfsrdma::testpeer
