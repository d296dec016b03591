#include "client/transport/rdma/MemoryRegistration.h"

#include <iterator>
#include <utility>

namespace nfsrdma::transport::rdma {
namespace {

constexpr std::uintptr_t kPage = 4096;
constexpr std::size_t kMaxPooledRegistrations = 4096;

std::shared_ptr<const Registration> registerExactly(const RegisterRange& registerRange,
                                                    const std::uint8_t* data, std::size_t length,
                                                    unsigned access) {
  return std::make_shared<const Registration>(
      registerRange(reinterpret_cast<std::uintptr_t>(data), length, access));
}

class PerIoRegistration final : public RegistrationStrategy {
 public:
  explicit PerIoRegistration(RegisterRange r) : register_(std::move(r)) {}
  std::shared_ptr<const Registration> acquire(const std::uint8_t* data, std::size_t length,
                                              unsigned access, bool) override {
    return registerExactly(register_, data, length, access);
  }
  // Each registration already ends with the last reference to it.
  void forget(std::span<const std::shared_ptr<const Registration>>) override {}
  MemoryRegistration kind() const override { return MemoryRegistration::kPerIo; }

 private:
  RegisterRange register_;
};

// Pooled entries serve any later use of the same pages: whole pages, with
// the union of the accesses asked of them so far, keyed by start address.
class PooledRegistration final : public RegistrationStrategy {
 public:
  explicit PooledRegistration(RegisterRange r) : register_(std::move(r)) {}
  std::shared_ptr<const Registration> acquire(const std::uint8_t* data, std::size_t length,
                                              unsigned access, bool ownMemory) override;
  void forget(std::span<const std::shared_ptr<const Registration>> registrations) override;
  MemoryRegistration kind() const override { return MemoryRegistration::kPooled; }

 private:
  void evictUnused();  // callers hold mu_

  RegisterRange register_;
  std::mutex mu_;
  std::map<std::uintptr_t, std::shared_ptr<const Registration>> pool_;
};

std::shared_ptr<const Registration> PooledRegistration::acquire(const std::uint8_t* data,
                                                                std::size_t length, unsigned need,
                                                                bool ownMemory) {
  if (ownMemory) return registerExactly(register_, data, length, need);
  const auto addr = reinterpret_cast<std::uintptr_t>(data);
  const std::uintptr_t start = addr & ~(kPage - 1);
  const std::uintptr_t end = (addr + length + kPage - 1) & ~(kPage - 1);
  std::lock_guard lock(mu_);
  unsigned access = need;
  auto it = pool_.upper_bound(start);
  if (it != pool_.begin()) {
    --it;
    if (it->second->start <= start && it->second->end >= end) {
      if ((it->second->access & need) == need) return it->second;
      access |= it->second->access;
    }
  }
  if (pool_.size() >= kMaxPooledRegistrations) evictUnused();
  auto r = std::make_shared<const Registration>(register_(start, end - start, access));
  pool_[start] = r;
  return r;
}

// Entries only the pool still holds: no call in flight uses them.
void PooledRegistration::evictUnused() {
  for (auto e = pool_.begin(); e != pool_.end();) {
    e = e->second.use_count() == 1 ? pool_.erase(e) : std::next(e);
  }
}

// Out of the pool, so the call's own references are the last: dropping them
// deregisters as in per-io mode. (Pages another call in flight uses stay
// registered until that call ends.)
void PooledRegistration::forget(
    std::span<const std::shared_ptr<const Registration>> registrations) {
  std::lock_guard lock(mu_);
  for (const auto& reg : registrations) {
    auto it = pool_.find(reg->start);
    if (it != pool_.end() && it->second == reg) pool_.erase(it);
  }
}

}  // namespace

std::unique_ptr<RegistrationStrategy> makeRegistrationStrategy(MemoryRegistration kind,
                                                               RegisterRange registerRange) {
  if (kind == MemoryRegistration::kPerIo)
    return std::make_unique<PerIoRegistration>(std::move(registerRange));
  return std::make_unique<PooledRegistration>(std::move(registerRange));
}

const char* memoryRegistrationName(MemoryRegistration kind) {
  return kind == MemoryRegistration::kPooled ? "pooled" : "per-io";
}

}  // namespace nfsrdma::transport::rdma
