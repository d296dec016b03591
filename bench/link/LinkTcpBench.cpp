// LinkTcpBench: sockets, the small session protocol, and the stream threads.
#include "bench/link/LinkTcpBench.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "bench/link/LinkPlacement.h"
#include "bench/link/LinkProtocol.h"
#include "bench/link/LinkStats.h"
#include "util/ErrnoText.h"
#include "util/SocketAddress.h"
#include "util/TcpConnect.h"
#include "util/UniqueFd.h"

namespace nfsrdma::bench {

namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

using Socket = UniqueFd;  // a socket is owned like any other fd

[[noreturn]] void fail(const std::string& what, int err) {
  throw std::runtime_error(util::errnoMessage(what, err));
}

void setTimeouts(int fd, std::chrono::seconds t) {
  timeval tv{static_cast<time_t>(t.count()), 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

void sendAll(int fd, const void* p, std::size_t n, const char* what) {
  const auto* b = static_cast<const char*>(p);
  while (n > 0) {
    const ssize_t w = ::send(fd, b, n, MSG_NOSIGNAL);
    if (w < 0) {
      if (errno == EINTR) continue;
      fail(what, errno);
    }
    b += w;
    n -= static_cast<std::size_t>(w);
  }
}

void recvAll(int fd, void* p, std::size_t n, const char* what) {
  auto* b = static_cast<char*>(p);
  while (n > 0) {
    const ssize_t r = ::recv(fd, b, n, 0);
    if (r == 0) throw std::runtime_error(std::string(what) + ": the peer closed the connection");
    if (r < 0) {
      if (errno == EINTR) continue;
      fail(what, errno == EAGAIN ? ETIMEDOUT : errno);
    }
    b += r;
    n -= static_cast<std::size_t>(r);
  }
}

// Fixed-size records of u64 fields in network order.
template <std::size_t N>
void sendWords(int fd, const std::array<std::uint64_t, N>& w, const char* what) {
  std::array<std::uint64_t, N> be{};
  for (std::size_t i = 0; i < N; ++i) be[i] = htobe64(w[i]);
  sendAll(fd, be.data(), sizeof be, what);
}
template <std::size_t N>
std::array<std::uint64_t, N> recvWords(int fd, const char* what) {
  std::array<std::uint64_t, N> w{};
  recvAll(fd, w.data(), sizeof w, what);
  for (auto& x : w) x = be64toh(x);
  return w;
}

Socket connectTo(const LinkOptions& o) {
  const util::SocketAddress addr = util::resolveSocketAddress(o.host, o.port, false);
  Socket s(::socket(addr.family(), SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (s.get() < 0) fail("socket", errno);
  if (!o.bindAddress.empty()) {
    const util::SocketAddress src = util::resolveSocketAddress(o.bindAddress, 0, false);
    if (::bind(s.get(), src.get(), src.length) != 0) fail("bind(" + o.bindAddress + ")", errno);
  }
  const std::string peer = addr.toString();
  if (const int err = util::connectWithin(s.get(), addr, o.timeout); err == ETIMEDOUT) {
    throw std::runtime_error("no link server at " + peer + " (TCP connect: no answer within " +
                             std::to_string(o.timeout.count()) + " ms)");
  } else if (err != 0) {
    throw std::runtime_error("no link server at " + peer +
                             " (TCP connect: " + util::errnoText(err) +
                             "); is 'nfsrdma-bench link --server' running there?");
  }
  const int one = 1;
  ::setsockopt(s.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  setTimeouts(s.get(), std::chrono::duration_cast<std::chrono::seconds>(o.idleTimeout));
  return s;
}

void fillPattern(std::vector<char>& b, std::uint32_t seed) {
  linkPattern(seed).fill(std::as_writable_bytes(std::span(b)));
}

// The report's title and banner.
LinkRunReport tcpReport(const LinkOptions& o, const std::string& placement) {
  LinkRunReport report;
  report.title = "TCP stream BW Test";
  report.key = "tcp_bw";
  report.banner = {{"Streams", std::to_string(o.streams)},
                   {"Server", o.host + ":" + std::to_string(o.port)},
                   {"Placement", placement},
                   {"Duration", durationBanner(o.durationSeconds, 0)},
                   {"Verify", o.verify ? "ON" : "OFF"}};
  return report;
}

// Opens a step's data connections, each announcing its stream index.
std::vector<Socket> openStreams(const LinkOptions& o) {
  std::vector<Socket> data;
  for (std::uint32_t i = 0; i < o.streams; ++i) {
    data.push_back(connectTo(o));
    sendWords<4>(data.back().get(), tcpStreamHelloWords(i), "send(stream hello)");
  }
  return data;
}

struct StreamsSent {
  Clock::time_point start;  // the step's clock starts as the stream threads do
  std::uint64_t bytes;
};

// Sends buf over and over on every stream, a thread each, for -n sends or
// durationUs; throws a stream's own error.
StreamsSent sendOnStreams(const LinkOptions& o, const std::vector<Socket>& data,
                          const std::vector<char>& buf, std::uint64_t durationUs) {
  std::vector<std::atomic<std::uint64_t>> sent(o.streams);
  std::vector<std::string> errors(o.streams);
  const auto start = Clock::now();
  const auto deadline = start + std::chrono::microseconds(durationUs);
  std::vector<std::thread> threads;
  for (std::uint32_t i = 0; i < o.streams; ++i) {
    threads.emplace_back([&, i] {
      try {
        const int fd = data[i].get();
        for (std::uint64_t n = 0; durationUs > 0 ? Clock::now() < deadline : n < o.iterations;
             ++n) {
          sendAll(fd, buf.data(), buf.size(), "send(data)");
          sent[i].fetch_add(buf.size(), std::memory_order_relaxed);
        }
        ::shutdown(fd, SHUT_WR);
      } catch (const std::exception& e) {
        errors[i] = e.what();
        ::shutdown(data[i].get(), SHUT_RDWR);
      }
    });
  }
  // Threads end on count, deadline or their socket timeouts.
  for (auto& t : threads) t.join();
  // A stream's own error says more than the missing step result it causes.
  for (const auto& e : errors)
    if (!e.empty()) throw std::runtime_error("TCP stream failed: " + e);
  std::uint64_t total = 0;
  for (auto& s : sent) total += s.load();
  return {start, total};
}

// One message size: the step and READY, the streams, then the server's
// count (and check) of what arrived. Returns the bytes verified.
std::uint64_t runTcpStep(const LinkOptions& o, int control, std::uint64_t size, std::uint32_t seed,
                         LinkRunReport& report) {
  std::vector<char> buf(size);
  fillPattern(buf, seed);
  const auto durationUs = static_cast<std::uint64_t>(o.durationSeconds * 1e6);
  sendWords<3>(control, TcpStep{size, o.iterations, durationUs}.words(), "send(step)");
  (void)recvWords<1>(control, "recv(ready)");
  const std::vector<Socket> data = openStreams(o);
  const StreamsSent sent = sendOnStreams(o, data, buf, durationUs);
  const auto done = recvWords<3>(control, "recv(step result)");
  const auto end = Clock::now();
  if (done[0] != sent.bytes) {
    throw std::runtime_error("the server received " + std::to_string(done[0]) + " bytes of " +
                             std::to_string(sent.bytes) + " sent");
  }
  if (o.verify && done[1] != 1) {
    throw std::runtime_error(
        "verify failed: the server received bytes that differ from the pattern");
  }
  BandwidthResult r;
  r.messageBytes = size;
  r.messages = sent.bytes / size;
  r.iterations = r.messages / o.streams;
  r.seconds = std::chrono::duration<double>(end - sent.start).count();
  r.peakBytesPerSecond = static_cast<double>(done[2]);  // measured by the receiver
  report.bandwidth.push_back(r);
  return o.verify ? sent.bytes : 0;
}

}  // namespace

LinkRunReport runTcpClient(const LinkOptions& o, bool lastSession) {
  const std::vector<std::uint64_t> sizes =
      o.sweep ? sweepSizes(kMaxMessageBytes) : std::vector<std::uint64_t>{o.size};
  const std::string placement = applyPlacement(o, -1);
  std::random_device rd;
  const std::uint32_t seed = rd();
  Socket control = connectTo(o);
  TcpHello hello;
  hello.streams = o.streams;
  hello.flags = (lastSession ? std::uint64_t{kTcpLastSession} : 0u) |
                (o.verify ? std::uint64_t{kTcpVerify} : 0u);
  sendWords<4>(control.get(), hello.words(), "send(hello)");
  sendWords<1>(control.get(), {seed}, "send(hello)");

  LinkRunReport report = tcpReport(o, placement);
  std::uint64_t verified = 0;
  for (const std::uint64_t size : sizes)
    verified += runTcpStep(o, control.get(), size, seed, report);
  sendWords<3>(control.get(), TcpStep{}.words(), "send(bye)");
  if (o.verify)
    report.verify = "passed (" + std::to_string(verified) + " bytes checked by the server)";
  return report;
}

namespace {

// Accepts one connection within timeout; empty Socket on timeout.
Socket acceptWithin(int listenFd, std::chrono::milliseconds timeout,
                    const std::atomic<bool>& finished) {
  const auto deadline = Clock::now() + timeout;
  while (!finished && Clock::now() < deadline) {
    pollfd pfd{listenFd, POLLIN, 0};
    if (::poll(&pfd, 1, 200) > 0) {
      Socket s(::accept4(listenFd, nullptr, nullptr, SOCK_CLOEXEC));
      if (s.get() >= 0) {
        // As on the client's side: without it Nagle holds a step's small
        // result until the peer's delayed ACK, about 40 ms per step.
        const int one = 1;
        ::setsockopt(s.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        return s;
      }
    }
  }
  return Socket();
}

// Reads a stream to EOF; returns bytes and whether they matched the pattern.
std::pair<std::uint64_t, bool> drainStream(int fd, const std::vector<char>& pattern, bool verify,
                                           std::atomic<std::uint64_t>& progress) {
  std::vector<char> buf(1u << 20);
  std::uint64_t total = 0;
  bool ok = true;
  for (;;) {  // ends at EOF or on the socket's receive timeout
    const ssize_t r = ::recv(fd, buf.data(), buf.size(), 0);
    if (r == 0) break;
    if (r < 0) {
      if (errno == EINTR) continue;
      fail("recv(stream)", errno == EAGAIN ? ETIMEDOUT : errno);
    }
    const auto n = static_cast<std::size_t>(r);
    if (verify && ok) {
      std::size_t off = 0;
      while (off < n) {
        const std::size_t at = static_cast<std::size_t>((total + off) % pattern.size());
        const std::size_t len = std::min(n - off, pattern.size() - at);
        if (std::memcmp(buf.data() + off, pattern.data() + at, len) != 0) ok = false;
        off += len;
      }
    }
    total += n;
    progress.store(total, std::memory_order_relaxed);
  }
  return {total, ok};
}

// Accepts a step's data connections, placed by the stream index each announces.
std::vector<Socket> acceptStreams(const LinkOptions& o, int listenFd, std::uint32_t streams,
                                  std::chrono::seconds idle, const std::atomic<bool>& finished) {
  std::vector<Socket> data(streams);
  for (std::uint32_t i = 0; i < streams; ++i) {
    Socket s = acceptWithin(listenFd, o.timeout * 4, finished);
    if (s.get() < 0) throw std::runtime_error("the client did not open its streams");
    setTimeouts(s.get(), idle);
    const std::uint32_t index =
        decodeTcpStreamHello(recvWords<4>(s.get(), "recv(stream hello)"), streams);
    if (data[index].get() >= 0)
      throw LinkProtocolError("two data connections for stream " + std::to_string(index));
    data[index] = std::move(s);
  }
  return data;
}

// Drains every stream, a thread each, while sampling the bytes received;
// returns the step result: bytes, whether they matched, peak bytes/s.
std::array<std::uint64_t, 3> drainStreams(const std::vector<Socket>& data,
                                          const std::vector<char>& pattern, bool verify) {
  const std::size_t streams = data.size();
  std::vector<std::pair<std::uint64_t, bool>> results(streams);
  std::vector<std::string> errors(streams);
  std::vector<std::atomic<std::uint64_t>> received(streams);
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < streams; ++i) {
    threads.emplace_back([&, i] {
      try {
        results[i] = drainStream(data[i].get(), pattern, verify, received[i]);
      } catch (const std::exception& e) {
        errors[i] = e.what();
      }
    });
  }
  // The peak is sampled where the bytes arrive: the sender's side would
  // count what its socket buffers swallowed in the first milliseconds.
  std::vector<ProgressSample> samples;
  std::mutex samplerMu;
  std::condition_variable samplerWake;
  bool running = true;
  const auto start = Clock::now();
  const auto sample = [&] {
    std::uint64_t sum = 0;
    for (auto& r : received) sum += r.load(std::memory_order_relaxed);
    samples.push_back({std::chrono::duration<double>(Clock::now() - start).count(), sum});
  };
  std::thread sampler([&] {
    std::unique_lock lock(samplerMu);
    while (running) {  // ends when the streams are drained; woken at once then
      sample();
      samplerWake.wait_for(lock, 10ms, [&] { return !running; });
    }
  });
  for (auto& t : threads) t.join();
  {
    std::lock_guard lock(samplerMu);
    running = false;
  }
  samplerWake.notify_one();
  sampler.join();
  sample();  // the drained total, at the moment the last stream ended
  for (const auto& e : errors)
    if (!e.empty()) throw std::runtime_error(e);
  std::uint64_t total = 0;
  bool ok = true;
  for (const auto& r : results) {
    total += r.first;
    ok = ok && r.second;
  }
  // Peak in bytes/s over windows of at least a tenth of the bytes.
  const double peak = peakMessagesPerSecond(samples, std::max<std::uint64_t>(1, total / 10));
  return {total, ok ? 1u : 0u, static_cast<std::uint64_t>(peak)};
}

void serveTcpSession(const LinkOptions& o, int listenFd, Socket control, LinkServerState& state) {
  const LinkSessionScope active(state);
  const auto idle = std::chrono::duration_cast<std::chrono::seconds>(o.idleTimeout);
  setTimeouts(control.get(), idle);
  const TcpHello hello = TcpHello::decode(recvWords<4>(control.get(), "recv(hello)"));
  const bool verify = (hello.flags & kTcpVerify) != 0;
  const auto seed = static_cast<std::uint32_t>(recvWords<1>(control.get(), "recv(hello)")[0]);
  for (;;) {  // one step per size; each bounded by socket timeouts
    const TcpStep step = TcpStep::decode(recvWords<3>(control.get(), "recv(step)"));
    if (step.isBye()) break;
    std::vector<char> pattern(step.size);
    fillPattern(pattern, seed);
    sendWords<1>(control.get(), {1}, "send(ready)");
    const std::vector<Socket> data =
        acceptStreams(o, listenFd, hello.streams, idle, state.finished);
    sendWords<3>(control.get(), drainStreams(data, pattern, verify), "send(step result)");
  }
  if ((hello.flags & kTcpLastSession) != 0 && !o.keepServing) state.finished = true;
}

}  // namespace

void runTcpServer(const LinkOptions& o, LinkServerState& state) {
  const util::SocketAddress addr = util::resolveSocketAddress(o.bindAddress, o.port, true);
  Socket listener(::socket(addr.family(), SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (listener.get() < 0) fail("socket", errno);
  const int one = 1;
  ::setsockopt(listener.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (::bind(listener.get(), addr.get(), addr.length) != 0)
    fail("bind(" + addr.toString() + ")", errno);
  if (::listen(listener.get(), 64) != 0) fail("listen", errno);
  std::fprintf(stderr, "nfsrdma-bench link: listening (tcp) on %s\n", addr.toString().c_str());
  while (!state.finished) {  // each pass waits at most 1 s; idle timeout ends it
    Socket control = acceptWithin(listener.get(), 1s, state.finished);
    if (control.get() < 0) {
      state.finishWhenIdle(o.idleTimeout);
      continue;
    }
    try {
      serveTcpSession(o, listener.get(), std::move(control), state);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "nfsrdma-bench link: TCP session failed: %s\n", e.what());
    }
  }
}

}  // namespace nfsrdma::bench
