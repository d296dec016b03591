// IoLoop: one I/O thread serving several TCP connections (a trunk's, on a
// host with fewer cores than connections). Each connection's records still
// arrive whole and only to its own sink, on the one thread; a connection
// that leaves (closed from another thread, or from its own callback) is
// never touched again while the others go on.
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
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

// Two connections, a and b, started on one loop.
struct TwoOnOneLoop {
  std::shared_ptr<IoLoop> loop = std::make_shared<IoLoop>();
  CountingSink a;
  CountingSink b;
  std::unique_ptr<Pair> pa = pairOn(loop, "a");
  std::unique_ptr<Pair> pb = pairOn(loop, "b");
  TwoOnOneLoop() {
    pa->transport->start(a);
    pb->transport->start(b);
  }
};

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
      EXPECT_EQ(bodies[round],
                std::vector<std::uint8_t>(100 + i, static_cast<std::uint8_t>(10 * i + round)));
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
  TwoOnOneLoop two;
  auto& [loop, a, b, pa, pb] = two;
  // a closes itself from its own callback (on the loop's thread).
  a.onNextMessage([&] { pa->transport->close(); });
  ASSERT_TRUE(sendRecord(pa->peer, 1, 10));
  ASSERT_TRUE(a.wait(1));
  (void)sendRecord(pa->peer, 2,
                   10);          // to a connection that left (its socket closed): never delivered
  pb->transport->close();        // b leaves from this thread
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

// Three small calls made for b from a's reply callback (a trunk sending a
// round's calls on another of its connections): none has left while the
// callback runs, and all three arrive whole when the loop's round ends.
TEST(IoLoop, SendsForAnotherConnectionFromACallbackLeaveWhenTheRoundEnds) {
  TwoOnOneLoop two;
  auto& [loop, a, b, pa, pb] = two;
  const std::vector<std::uint8_t> call(40, 0x5a);
  std::atomic<bool> sent{true};
  std::atomic<bool> heldInCallback{false};
  a.onNextMessage([&] {
    for (int i = 0; i < 3; ++i) {
      xdr::ConstBuffer seg{call.data(), call.size()};
      OutgoingMessage out;
      out.segments = {&seg, 1};
      out.size = call.size();
      if (pb->transport->send(out)) sent = false;
    }
    pollfd p{pb->peer, POLLIN, 0};
    heldInCallback = ::poll(&p, 1, 0) == 0;
  });
  ASSERT_TRUE(sendRecord(pa->peer, 1, 10));
  ASSERT_TRUE(a.wait(1));
  EXPECT_TRUE(sent);
  EXPECT_TRUE(heldInCallback) << "a call for b left while a's callback still ran";
  const std::size_t want = 3 * (4 + call.size());
  std::vector<std::uint8_t> got;
  const auto deadline = std::chrono::steady_clock::now() + 3s;
  while (got.size() < want && std::chrono::steady_clock::now() < deadline) {
    pollfd p{pb->peer, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    std::array<std::uint8_t, 512> buf{};
    const ssize_t n = ::recv(pb->peer, buf.data(), buf.size(), MSG_DONTWAIT);
    if (n > 0) got.insert(got.end(), buf.begin(), buf.begin() + n);
  }
  ASSERT_EQ(got.size(), want);
  for (int i = 0; i < 3; ++i) {
    const std::uint8_t* rec = got.data() + static_cast<std::size_t>(i) * (4 + call.size());
    EXPECT_EQ(rec[0], 0x80);  // last fragment, 40 bytes
    EXPECT_EQ(rec[3], call.size());
    EXPECT_TRUE(std::equal(call.begin(), call.end(), rec + 4)) << "call " << i;
  }
  pa->transport->close();
  pb->transport->close();
}

}  // namespace
}  // namespace nfsrdma::transport
