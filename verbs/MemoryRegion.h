// MemoryRegion owns a registration (ibv_reg_mr); RegisteredBuffer adds the
// memory itself: page-aligned anonymous memory, first touched by the thread
// that allocates it so it lands on that thread's NUMA node, and registered in
// one call. The RPC-over-RDMA transport and the link benchmark both move data
// only through RegisteredBuffers: lkey for local SGEs, addr+rkey for peers.
#pragma once

#include <infiniband/verbs.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "verbs/Handle.h"

namespace nfsrdma::verbs {

class MemoryRegion {
 public:
  // Registers [addr, addr+length) with the given IBV_ACCESS_* flags. Throws
  // std::system_error naming ibv_reg_mr.
  static MemoryRegion registerMemory(ibv_pd* pd, void* addr, std::size_t length, int access);

  ibv_mr* get() const noexcept { return mr_.get(); }
  std::uint32_t lkey() const noexcept { return mr_->lkey; }
  std::uint32_t rkey() const noexcept { return mr_->rkey; }

 private:
  struct Traits {
    static int destroy(ibv_mr* m) noexcept { return ibv_dereg_mr(m); }
    static constexpr const char* verb = "ibv_dereg_mr";
  };
  explicit MemoryRegion(ibv_mr* m) : mr_(m) {}
  detail::Handle<ibv_mr, Traits> mr_;
};

// Access for a buffer a peer may RDMA WRITE into and READ from.
inline constexpr int kRemoteAccess =
    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;

class RegisteredBuffer {
 public:
  // Allocates length bytes (rounded up to pages, zero-filled) and registers
  // them. Throws std::system_error naming mmap or ibv_reg_mr.
  static RegisteredBuffer allocate(ibv_pd* pd, std::size_t length, int access = kRemoteAccess);

  std::byte* data() const noexcept { return memory_.get(); }
  std::size_t size() const noexcept { return length_; }
  std::span<std::byte> bytes() const noexcept { return {data(), length_}; }
  std::uint64_t address() const noexcept { return reinterpret_cast<std::uintptr_t>(data()); }
  std::uint32_t lkey() const noexcept { return mr_.lkey(); }
  std::uint32_t rkey() const noexcept { return mr_.rkey(); }
  // One scatter/gather element over [offset, offset+length) of this buffer.
  ibv_sge sge(std::size_t offset, std::uint32_t length) const noexcept {
    return ibv_sge{address() + offset, length, lkey()};
  }

 private:
  struct Unmap {
    std::size_t length;
    void operator()(std::byte* p) const noexcept;
  };
  RegisteredBuffer(std::unique_ptr<std::byte, Unmap> memory, std::size_t length, MemoryRegion mr)
      : memory_(std::move(memory)), length_(length), mr_(std::move(mr)) {}

  // Declaration order = creation order: the MR is deregistered before unmap.
  std::unique_ptr<std::byte, Unmap> memory_;
  std::size_t length_;
  MemoryRegion mr_;
};

}  // namespace nfsrdma::verbs
