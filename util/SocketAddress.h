// Socket addresses for TCP: a host name or numeric address and a port
// resolved (getaddrinfo) or parsed (numeric only), held by value whatever
// the family, and printed as a message names a peer ("198.18.0.1:2049",
// "[fe80::1]:2049"). The client's TCP transport, the link benchmark, the
// rdma_cm flows and the embedded server's port checks share them.
#pragma once

#include <sys/socket.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace nfsrdma::util {

// A resolved socket address (IPv4 or IPv6).
struct SocketAddress {
  sockaddr_storage storage{};
  socklen_t length = 0;
  const sockaddr* get() const noexcept { return reinterpret_cast<const sockaddr*>(&storage); }
  int family() const noexcept { return storage.ss_family; }
  std::uint16_t port() const noexcept;
  // "198.18.0.1:2049", "[fe80::1]:2049".
  std::string toString() const;
};

// What getaddrinfo gave for a host and port (stream sockets, in its order),
// or, with no address, its error text (gai_strerror) in `error`.
struct ResolvedAddresses {
  std::vector<SocketAddress> addresses;
  std::string error;
};

// Resolves host (a name or numeric; empty is the wildcard when passive,
// loopback otherwise) and port.
ResolvedAddresses resolveAddresses(const std::string& host, std::uint16_t port, bool passive);

// The one address to use for host and port: IPv4 when both families are
// offered (RoCE setups name hosts by IPv4). Throws std::runtime_error
// "getaddrinfo(<host>): <error text>" when there is none.
SocketAddress resolveSocketAddress(const std::string& host, std::uint16_t port, bool passive);

// A numeric IPv4 or IPv6 address (inet_pton's forms; an IPv6 scope such as
// %eth0 is taken) and port, without any name look-up; nothing when text is
// not one. `connectable` turns the wildcard (0.0.0.0, ::) into loopback:
// a listener on the wildcard is reached through loopback.
std::optional<SocketAddress> parseNumericAddress(const std::string& text, std::uint16_t port,
                                                 bool connectable);

}  // namespace nfsrdma::util
