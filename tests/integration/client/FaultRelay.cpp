#include "tests/integration/client/FaultRelay.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace nfsrdma::testing {
namespace {

sockaddr_in loopback(std::uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return a;
}

void setNonBlocking(int fd) {
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
}

// Closes with RST rather than FIN, as a link that goes away does.
void reset(UniqueFd& fd) {
  if (!fd) return;
  linger l{1, 0};
  ::setsockopt(fd.get(), SOL_SOCKET, SO_LINGER, &l, sizeof l);
  fd.reset();
}

}  // namespace

// One relayed connection: bytes read from one side wait in `pending` until
// the other side takes them.
struct FaultRelay::Link {
  struct Way {
    std::vector<std::uint8_t> pending;
    std::size_t moved = 0;  // bytes read from the source so far
    std::size_t cutAt = 0;  // 0: never
  };
  UniqueFd client;
  UniqueFd server;
  Way toServer;
  Way toClient;
  bool cut = false;  // reached a cut: pass what is pending, then reset
  bool done = false;
};

FaultRelay::FaultRelay(std::uint16_t serverPort) : serverPort_(serverPort) {
  listen_.reset(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in a = loopback(0);
  int one = 1;
  ::setsockopt(listen_.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (::bind(listen_.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      ::listen(listen_.get(), 16) != 0) {
    throw std::runtime_error("fault relay: cannot listen on 127.0.0.1");
  }
  socklen_t len = sizeof a;
  ::getsockname(listen_.get(), reinterpret_cast<sockaddr*>(&a), &len);
  port_ = ntohs(a.sin_port);
  setNonBlocking(listen_.get());
  thread_ = std::thread([this] { run(); });
}

FaultRelay::~FaultRelay() {
  stop_ = true;
  thread_.join();
}

void FaultRelay::cutAfter(std::size_t toClient, std::size_t toServer, unsigned maxCuts) {
  std::lock_guard lock(mu_);
  toClient_ = toClient;
  toServer_ = toServer;
  maxCuts_ = maxCuts;
  armed_ = 0;
}

void FaultRelay::partitionAfter(std::size_t toServer, std::chrono::milliseconds duration) {
  std::lock_guard lock(mu_);
  partitionAt_ = toServer;
  partitionFor_ = duration;
}

namespace {

// Moves what `from` has (up to the cut) into way.pending; false at end of stream.
template <class Way>
bool readSide(int from, Way& way, bool& cut) {
  std::uint8_t buf[65536];
  std::size_t room = sizeof buf;
  if (way.cutAt != 0) room = std::min(room, way.cutAt - way.moved);
  if (room == 0) return true;
  const ssize_t n = ::recv(from, buf, room, 0);
  if (n == 0) return false;
  if (n < 0) return errno == EAGAIN || errno == EINTR;
  way.pending.insert(way.pending.end(), buf, buf + n);
  way.moved += static_cast<std::size_t>(n);
  if (way.cutAt != 0 && way.moved >= way.cutAt) cut = true;
  return true;
}

template <class Way>
bool writeSide(int to, Way& way) {
  if (way.pending.empty()) return true;
  const ssize_t n = ::send(to, way.pending.data(), way.pending.size(), MSG_NOSIGNAL);
  if (n < 0) return errno == EAGAIN || errno == EINTR;
  way.pending.erase(way.pending.begin(), way.pending.begin() + n);
  return true;
}

}  // namespace

void FaultRelay::startPartitionAfter(std::size_t moved) {
  movedToServer_ += moved;
  std::lock_guard lock(mu_);
  if (partitionAt_ == 0 || movedToServer_ < partitionAt_ || partitionStarted_) return;
  partitionStarted_ = true;
  silentUntil_ = std::chrono::steady_clock::now() + partitionFor_;
}

void FaultRelay::run() {
  std::vector<std::unique_ptr<Link>> links;
  while (!stop_) {
    if (std::chrono::steady_clock::now() < silentUntil_) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));  // partitioned: nothing moves
      continue;
    }
    std::vector<pollfd> fds{{listen_.get(), POLLIN, 0}};
    for (auto& l : links) {
      const short toServerEvents = static_cast<short>(l->cut ? 0 : POLLIN);
      fds.push_back(
          {l->client.get(),
           static_cast<short>(toServerEvents | (l->toClient.pending.empty() ? 0 : POLLOUT)), 0});
      fds.push_back(
          {l->server.get(),
           static_cast<short>(toServerEvents | (l->toServer.pending.empty() ? 0 : POLLOUT)), 0});
    }
    if (::poll(fds.data(), fds.size(), 50) < 0 && errno != EINTR) break;
    if ((fds[0].revents & POLLIN) != 0) {
      UniqueFd c(::accept4(listen_.get(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK));
      UniqueFd s(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
      sockaddr_in a = loopback(serverPort_);
      if (c && s && ::connect(s.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) {
        setNonBlocking(s.get());
        int one = 1;
        ::setsockopt(s.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        ::setsockopt(c.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        auto l = std::make_unique<Link>();
        l->client = std::move(c);
        l->server = std::move(s);
        {
          std::lock_guard lock(mu_);
          // Armed connections, not cuts so far, are counted: a trunk opens
          // several at once, and only maxCuts of them may be cut.
          if (armed_ < maxCuts_) {
            l->toClient.cutAt = toClient_;
            l->toServer.cutAt = toServer_;
            ++armed_;
          }
        }
        ++connections_;
        links.push_back(std::move(l));
      } else {
        reset(c);  // no server behind us: the client sees a reset connection
      }
    }
    for (std::size_t i = 0; i < links.size(); ++i) {
      Link& l = *links[i];
      const short ce = fds[1 + 2 * i].revents;
      const short se = fds[2 + 2 * i].revents;
      bool ok = true;
      const std::size_t before = l.toServer.moved;
      if ((ce & (POLLIN | POLLHUP | POLLERR)) != 0)
        ok = readSide(l.client.get(), l.toServer, l.cut) && ok;
      startPartitionAfter(l.toServer.moved - before);
      if ((se & (POLLIN | POLLHUP | POLLERR)) != 0)
        ok = readSide(l.server.get(), l.toClient, l.cut) && ok;
      ok = writeSide(l.server.get(), l.toServer) && ok;
      ok = writeSide(l.client.get(), l.toClient) && ok;
      const bool drained = l.toServer.pending.empty() && l.toClient.pending.empty();
      if (!ok || (l.cut && drained)) {
        if (l.cut) ++cuts_;
        reset(l.client);
        reset(l.server);
        l.done = true;
      }
    }
    links.erase(std::remove_if(links.begin(), links.end(), [](const auto& l) { return l->done; }),
                links.end());
  }
}

}  // namespace nfsrdma::testing
