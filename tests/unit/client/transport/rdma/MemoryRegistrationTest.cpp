// The two registration strategies of the RDMA transport, on a counting
// stand-in for the device's registration call.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "client/transport/rdma/MemoryRegistration.h"

namespace nfsrdma::transport::rdma {
namespace {

// Records every device registration and which are still alive.
struct FakeDevice {
  struct Call {
    std::uintptr_t start;
    std::size_t length;
    unsigned access;
  };
  std::vector<Call> calls;
  std::shared_ptr<int> alive = std::make_shared<int>(0);

  RegisterRange registrar() {
    return [this](std::uintptr_t start, std::size_t length, unsigned access) {
      calls.push_back({start, length, access});
      ++*alive;
      auto token = alive;
      std::shared_ptr<void> handle(nullptr, [token](void*) { --*token; });
      return Registration{start, start + length, access, static_cast<std::uint32_t>(calls.size()),
                          handle};
    };
  }
  int live() const { return *alive; }
};

alignas(4096) std::uint8_t g_pages[4 * 4096];

TEST(MemoryRegistration, PerIoRegistersExactlyTheBytesForEachCall) {
  FakeDevice dev;
  auto s = makeRegistrationStrategy(MemoryRegistration::kPerIo, dev.registrar());
  EXPECT_EQ(s->kind(), MemoryRegistration::kPerIo);
  {
    auto a = s->acquire(g_pages + 100, 50, kRemoteRead, false);
    auto b = s->acquire(g_pages + 100, 50, kRemoteRead, false);
    EXPECT_NE(a, b);
    ASSERT_EQ(dev.calls.size(), 2U);
    EXPECT_EQ(dev.calls[0].start, reinterpret_cast<std::uintptr_t>(g_pages + 100));
    EXPECT_EQ(dev.calls[0].length, 50U);
    EXPECT_EQ(dev.calls[0].access, unsigned{kRemoteRead});
    EXPECT_EQ(dev.live(), 2);
  }
  EXPECT_EQ(dev.live(), 0);  // the server's access ends with the call
}

TEST(MemoryRegistration, PooledRegistersWholePagesOnceAndReusesThem) {
  FakeDevice dev;
  auto s = makeRegistrationStrategy(MemoryRegistration::kPooled, dev.registrar());
  auto a = s->acquire(g_pages + 100, 5000, kRemoteWrite, false);
  ASSERT_EQ(dev.calls.size(), 1U);
  EXPECT_EQ(dev.calls[0].start, reinterpret_cast<std::uintptr_t>(g_pages));
  EXPECT_EQ(dev.calls[0].length, 2U * 4096);
  auto b = s->acquire(g_pages + 4096, 10, kRemoteWrite, false);  // inside the same pages
  EXPECT_EQ(a, b);
  EXPECT_EQ(dev.calls.size(), 1U);
  a.reset();
  b.reset();
  EXPECT_EQ(dev.live(), 1);  // the pool keeps it for the next call
}

TEST(MemoryRegistration, PooledWidensAccessToTheUnionAskedSoFar) {
  FakeDevice dev;
  auto s = makeRegistrationStrategy(MemoryRegistration::kPooled, dev.registrar());
  auto a = s->acquire(g_pages, 4096, kRemoteRead, false);
  auto b = s->acquire(g_pages, 4096, kRemoteWrite, false);
  ASSERT_EQ(dev.calls.size(), 2U);
  EXPECT_EQ(dev.calls[1].access, unsigned{kRemoteRead | kRemoteWrite});
  auto c = s->acquire(g_pages, 100, kRemoteRead, false);
  EXPECT_EQ(c, b);
}

TEST(MemoryRegistration, OwnMemoryIsNeverPooled) {
  FakeDevice dev;
  auto s = makeRegistrationStrategy(MemoryRegistration::kPooled, dev.registrar());
  {
    auto a = s->acquire(g_pages + 8, 16, kRemoteWrite, true);
    EXPECT_EQ(dev.calls[0].start, reinterpret_cast<std::uintptr_t>(g_pages + 8));
    EXPECT_EQ(dev.calls[0].length, 16U);
  }
  EXPECT_EQ(dev.live(), 0);
}

TEST(MemoryRegistration, ForgetTakesAnAbandonedCallsPagesOutOfThePool) {
  FakeDevice dev;
  auto s = makeRegistrationStrategy(MemoryRegistration::kPooled, dev.registrar());
  auto mine = s->acquire(g_pages + 2 * 4096, 64, kRemoteWrite, false);
  auto other = s->acquire(g_pages, 64, kRemoteWrite, false);
  std::vector<std::shared_ptr<const Registration>> call{std::move(mine)};
  s->forget(call);
  call.clear();              // the call ends
  EXPECT_EQ(dev.live(), 1);  // only the other call's pages remain
  auto again = s->acquire(g_pages + 2 * 4096, 64, kRemoteWrite, false);
  EXPECT_EQ(dev.calls.size(), 3U);  // registered anew, not the forgotten one
}

TEST(MemoryRegistration, NamesAsTheUrlOptionSpellsThem) {
  EXPECT_STREQ(memoryRegistrationName(MemoryRegistration::kPooled), "pooled");
  EXPECT_STREQ(memoryRegistrationName(MemoryRegistration::kPerIo), "per-io");
}

}  // namespace
}  // namespace nfsrdma::transport::rdma
