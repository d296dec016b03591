// How the RDMA transport exposes a caller's memory to the server, as two
// implementations of one interface (the kernel's xprtrdma puts its
// registration modes behind an ops table the same way):
//   kPooled (RdmaTransportOptions' default; the client's URLs default to
//     memreg=per-io) registers a buffer's pages once and keeps them
//     registered for reuse: fast, but the server holds an rkey to that
//     memory for as long as the transport lives.
//   kPerIo registers exactly the bytes of one call, and the registration
//     ends with the call: the server's access ends with it too. Safer, and
//     slower (a registration per I/O).
// The device call itself is a function the transport passes in, so both
// strategies are unit-tested without verbs (tests/unit/client/transport/rdma/).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <span>

namespace nfsrdma::transport::rdma {

enum class MemoryRegistration { kPooled, kPerIo };

// What a chunk lets the server do with the memory: read it (a Read chunk's
// source) or write it (a Write or Reply chunk's target). Only what is
// needed: a WRITE's source may be read-only memory (a PROT_READ mapping),
// which cannot be registered for remote write.
enum RemoteAccess : unsigned { kRemoteRead = 1U, kRemoteWrite = 2U };

// One registered range. `device` holds the device's registration; it is
// released when the last call using the range lets go of it.
struct Registration {
  std::uintptr_t start = 0;
  std::uintptr_t end = 0;
  unsigned access = 0;  // RemoteAccess bits
  std::uint32_t rkey = 0;
  std::shared_ptr<void> device;
};

// Registers [start, start + length) with `access` on the device; throws
// std::system_error when it cannot.
using RegisterRange =
    std::function<Registration(std::uintptr_t start, std::size_t length, unsigned access)>;

class RegistrationStrategy {
 public:
  virtual ~RegistrationStrategy() = default;
  // A registration covering [data, data + length) with at least `access`.
  // ownMemory: the transport's own short-lived buffer for one call, always
  // registered exactly: the server can reach neither the rest of its page
  // nor pages a pooled entry pinned for a caller buffer freed since.
  virtual std::shared_ptr<const Registration> acquire(const std::uint8_t* data, std::size_t length,
                                                      unsigned access, bool ownMemory) = 0;
  // A call given up on (timed out): its caller may reuse its buffers once
  // told, and a late reply must not write into them, so none of these may
  // outlive the call's own references.
  virtual void forget(std::span<const std::shared_ptr<const Registration>> registrations) = 0;
  virtual MemoryRegistration kind() const = 0;
};

std::unique_ptr<RegistrationStrategy> makeRegistrationStrategy(MemoryRegistration kind,
                                                               RegisterRange registerRange);

// "pooled" or "per-io", as the memreg= URL option spells them.
const char* memoryRegistrationName(MemoryRegistration kind);

}  // namespace nfsrdma::transport::rdma
