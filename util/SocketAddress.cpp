#include "util/SocketAddress.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>

#include <cstring>
#include <memory>
#include <stdexcept>

namespace nfsrdma::util {
namespace {

using AddrInfoList = std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)>;

SocketAddress fromAddrInfo(const addrinfo& a) {
  SocketAddress out;
  std::memcpy(&out.storage, a.ai_addr, a.ai_addrlen);
  out.length = a.ai_addrlen;
  return out;
}

template <class Sockaddr>
SocketAddress fromSockaddr(const Sockaddr& s) {
  SocketAddress out;
  std::memcpy(&out.storage, &s, sizeof s);
  out.length = sizeof s;
  return out;
}

// An IPv6 literal, with a scope (fe80::1%eth0) that inet_pton does not take.
std::optional<SocketAddress> parseIpv6(const std::string& text, std::uint16_t port) {
  addrinfo hints{};
  hints.ai_family = AF_INET6;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  if (::getaddrinfo(text.c_str(), service.c_str(), &hints, &found) != 0 || found == nullptr) {
    return std::nullopt;
  }
  const AddrInfoList guard(found, ::freeaddrinfo);
  return fromAddrInfo(*found);
}

}  // namespace

std::uint16_t SocketAddress::port() const noexcept {
  if (storage.ss_family == AF_INET) {
    sockaddr_in in{};
    std::memcpy(&in, &storage, sizeof in);
    return ntohs(in.sin_port);
  }
  sockaddr_in6 in6{};
  std::memcpy(&in6, &storage, sizeof in6);
  return ntohs(in6.sin6_port);
}

std::string SocketAddress::toString() const {
  char text[INET6_ADDRSTRLEN] = {};
  if (storage.ss_family == AF_INET) {
    sockaddr_in in{};
    std::memcpy(&in, &storage, sizeof in);
    ::inet_ntop(AF_INET, &in.sin_addr, text, sizeof text);
    return std::string(text) + ":" + std::to_string(port());
  }
  sockaddr_in6 in6{};
  std::memcpy(&in6, &storage, sizeof in6);
  ::inet_ntop(AF_INET6, &in6.sin6_addr, text, sizeof text);
  return "[" + std::string(text) + "]:" + std::to_string(port());
}

ResolvedAddresses resolveAddresses(const std::string& host, std::uint16_t port, bool passive) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV | (passive ? AI_PASSIVE : 0);
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  const int rc =
      ::getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints, &found);
  ResolvedAddresses out;
  if (rc != 0 || found == nullptr) {
    out.error = rc != 0 ? ::gai_strerror(rc) : "no address";
    return out;
  }
  const AddrInfoList guard(found, ::freeaddrinfo);
  for (const addrinfo* a = found; a != nullptr; a = a->ai_next)
    out.addresses.push_back(fromAddrInfo(*a));
  return out;
}

SocketAddress resolveSocketAddress(const std::string& host, std::uint16_t port, bool passive) {
  const ResolvedAddresses r = resolveAddresses(host, port, passive);
  if (r.addresses.empty()) {
    throw std::runtime_error("getaddrinfo(" + (host.empty() ? std::string("*") : host) +
                             "): " + r.error);
  }
  for (const SocketAddress& a : r.addresses) {
    if (a.family() == AF_INET) return a;
  }
  return r.addresses.front();
}

std::optional<SocketAddress> parseNumericAddress(const std::string& text, std::uint16_t port,
                                                 bool connectable) {
  in_addr v4{};
  if (::inet_pton(AF_INET, text.c_str(), &v4) == 1) {
    sockaddr_in sin{};
    sin.sin_family = AF_INET;
    sin.sin_port = htons(port);
    sin.sin_addr = v4;
    if (connectable && v4.s_addr == htonl(INADDR_ANY)) sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return fromSockaddr(sin);
  }
  auto v6 = parseIpv6(text, port);
  if (!v6) return std::nullopt;
  sockaddr_in6 sin6{};
  std::memcpy(&sin6, &v6->storage, sizeof sin6);
  if (connectable && std::memcmp(&sin6.sin6_addr, &in6addr_any, sizeof sin6.sin6_addr) == 0) {
    sin6.sin6_addr = in6addr_loopback;
    return fromSockaddr(sin6);
  }
  return v6;
}

}  // namespace nfsrdma::util
