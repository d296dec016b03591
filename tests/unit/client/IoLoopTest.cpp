// IoLoop: one I/O thread serving several TCP connections (a trunk's, on a
// host with fewer cores than connections). Each connection's records still
// arrive whole and only to its own sink, on the one thread; a connection
// that leaves (closed from another thread, or from its own callback) is
// never touched again while the others go on.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "client/transport/IoLoop.h"
#include "client/transport/TcpTransport.h"

namespace nfsrdma::transport {
namespace {

using namespace std::chrono_literals;

class CountingSink final : public TransportSink {
 public:
  using TransportSink::onMessage;
  void onMessage(std::span<const std::uint8_t> message) override {
    std::function<void()> then;
    {
      std::lock_guard lock(mu_);
      bodies_.emplace_back(message.begin(), message.end());
      threads_.push_back(std::this_thread::get_id());
      then = std::move(onNext_);
      onNext_ = nullptr;
    }
    if (then) then();
    cv_.notify_all();
  }
  void onTransportError(const Error&) override {}
  void onTick() override {}
  std::size_t callsInFlight() const override { return 0; }
  bool wait(std::size_t n) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, 3s, [&] { return bodies_.size() >= n; });
  }
  std::vector<std::vector<std::uint8_t>> bodies() const {
    std::lock_guard lock(mu_);
    return bodies_;
  }
  std::vector<std::thread::id> threads() const {
    std::lock_guard lock(mu_);
    return threads_;
  }
  void onNextMessage(std::function<void()> f) {
    std::lock_guard lock(mu_);
    onNext_ = std::move(f);
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::vector<std::uint8_t>> bodies_;
  std::vector<std::thread::id> threads_;
  std::function<void()> onNext_;
};

// A connected pair: the transport's end, and the peer's fd the test writes records to.
struct Pair {
  std::unique_ptr<TcpTransport> transport;
  int peer = -1;
  ~Pair() {
    if (peer >= 0) ::close(peer);
  }
};

std::unique_ptr<Pair> pairOn(const std::shared_ptr<IoLoop>& loop, const std::string& name) {
  std::array<int, 2> fds{};
  EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds.data()), 0);
  auto p = std::make_unique<Pair>();
  p->transport = TcpTransport::adopt(fds[0], name, loop);
  p->peer = fds[1];
  return p;
}

// One record of record marking: the last-fragment marker, then the body.
bool sendRecord(int fd, std::uint8_t fill, std::size_t size) {
  std::vector<std::uint8_t> rec(4 + size, fill);
  const std::uint32_t marker = 0x80000000U | static_cast<std::uint32_t>(size);
  rec[0] = static_cast<std::uint8_t>(marker >> 24);
  rec[1] = static_cast<std::uint8_t>(marker >> 16);
  rec[2] = static_cast<std::uint8_t>(marker >> 8);
  rec[3] = static_cast<std::uint8_t>(marker);
  return ::send(fd, rec.data(), rec.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(rec.size());
}

TEST(IoLoop, OneThreadServesEveryConnectionAndEachSinkGetsOnlyItsOwn) {
  auto loop = std::make_shared<IoLoop>();
  CountingSink sinks[3];
  std::vector<std::unique_ptr<Pair>> pairs;
  for (std::size_t i = 0; i < 3; ++i) {
    pairs.push_back(pairOn(loop, "pair " + std::to_string(i)));
    pairs.back()->transport->start(sinks[i]);
  }
  for (std::size_t round = 0; round < 5; ++round) {
    for (std::size_t i = 0; i < 3; ++i) {
      ASSERT_TRUE(sendRecord(pairs[i]->peer, static_cast<std::uint8_t>(10 * i + round), 100 + i));
    }
  }
  std::thread::id served;
  for (std::size_t i = 0; i < 3; ++i) {
    ASSERT_TRUE(sinks[i].wait(5)) << "connection " << i;
    const auto bodies = sinks[i].bodies();
    for (std::size_t round = 0; round < 5; ++round) {
      EXPECT_EQ(bodies[round], std::vector<std::uint8_t>(100 + i, static_cast<std::uint8_t>(10 * i + round)));
    }
    for (auto id : sinks[i].threads()) {
      if (served == std::thread::id{}) served = id;
      EXPECT_EQ(id, served) << "every connection of the loop is served by its one thread";
    }
    EXPECT_FALSE(pairs[i]->transport->onIoThread());
  }
  for (auto& p : pairs) p->transport->close();
}

TEST(IoLoop, AConnectionThatLeavesIsNotTouchedAndTheOthersGoOn) {
  auto loop = std::make_shared<IoLoop>();
  CountingSink a;
  CountingSink b;
  auto pa = pairOn(loop, "a");
  auto pb = pairOn(loop, "b");
  pa->transport->start(a);
  pb->transport->start(b);
  // a closes itself from its own callback (on the loop's thread).
  a.onNextMessage([&] { pa->transport->close(); });
  ASSERT_TRUE(sendRecord(pa->peer, 1, 10));
  ASSERT_TRUE(a.wait(1));
  (void)sendRecord(pa->peer, 2, 10);  // to a connection that left (its socket closed): never delivered
  pb->transport->close();       // b leaves from this thread
  pb = pairOn(loop, "b again");  // and a new connection joins the same loop
  CountingSink c;
  pb->transport->start(c);
  ASSERT_TRUE(sendRecord(pb->peer, 3, 20));
  ASSERT_TRUE(c.wait(1));
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(a.bodies().size(), 1U);
  EXPECT_TRUE(b.bodies().empty());
  EXPECT_EQ(c.bodies().front(), std::vector<std::uint8_t>(20, 3));
  pb->transport->close();
}

}  // namespace
}  // namespace nfsrdma::transport
