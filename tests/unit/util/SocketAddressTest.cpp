// Socket addresses (util/SocketAddress.h): resolving, the numeric-only
// parse and how an address is printed in messages.
#include <gtest/gtest.h>
#include <netinet/in.h>

#include <stdexcept>

#include "util/SocketAddress.h"

namespace nfsrdma::util {
namespace {

TEST(SocketAddress, ResolvesNumericHosts) {
  const SocketAddress a = resolveSocketAddress("198.18.0.1", 18515, false);
  EXPECT_EQ(a.toString(), "198.18.0.1:18515");
  EXPECT_THROW((void)resolveSocketAddress("no-such-host.invalid", 1, false), std::runtime_error);
}

TEST(SocketAddress, ResolveFailureNamesTheHost) {
  try {
    (void)resolveSocketAddress("no-such-host.invalid", 1, false);
    FAIL() << "resolved a .invalid name";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("getaddrinfo(no-such-host.invalid): ", 0), 0U)
        << e.what();
  }
  const ResolvedAddresses r = resolveAddresses("no-such-host.invalid", 1, false);
  EXPECT_TRUE(r.addresses.empty());
  EXPECT_FALSE(r.error.empty());
}

TEST(SocketAddress, PrintsIpv6InBrackets) {
  const auto a = parseNumericAddress("fe80::1", 2049, false);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->family(), AF_INET6);
  EXPECT_EQ(a->toString(), "[fe80::1]:2049");
  EXPECT_EQ(a->port(), 2049);
}

TEST(SocketAddress, ParsesNumericAddressesOnly) {
  for (const char* s : {"localhost", "999.0.0.1", "127.1", "", "1.2.3.4.5", "[::1]"}) {
    EXPECT_FALSE(parseNumericAddress(s, 1, false)) << s;
  }
  const auto v4 = parseNumericAddress("198.18.0.1", 20049, false);
  ASSERT_TRUE(v4);
  EXPECT_EQ(v4->family(), AF_INET);
  EXPECT_EQ(v4->length, sizeof(sockaddr_in));
  EXPECT_EQ(v4->toString(), "198.18.0.1:20049");
  EXPECT_TRUE(parseNumericAddress("fe80::1%lo", 1, false));  // a scope, as for link-local
}

TEST(SocketAddress, ConnectableTurnsTheWildcardIntoLoopback) {
  EXPECT_EQ(parseNumericAddress("0.0.0.0", 5, true)->toString(), "127.0.0.1:5");
  EXPECT_EQ(parseNumericAddress("0.0.0.0", 5, false)->toString(), "0.0.0.0:5");
  EXPECT_EQ(parseNumericAddress("::", 5, true)->toString(), "[::1]:5");
  EXPECT_EQ(parseNumericAddress("::", 5, false)->toString(), "[::]:5");
}

TEST(SocketAddress, PrefersIpv4AndTakesTheWildcardWhenPassive) {
  EXPECT_EQ(resolveSocketAddress("", 7, true).toString(), "0.0.0.0:7");
  EXPECT_EQ(resolveSocketAddress("127.0.0.1", 7, false).family(), AF_INET);
}

}  // namespace
}  // namespace nfsrdma::util
