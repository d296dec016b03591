// MemoryRegion and RegisteredBuffer: registration and page-aligned memory.
#include "verbs/MemoryRegion.h"

#include <sys/mman.h>

#include <cerrno>
#include <cstring>

#include "verbs/VerbsError.h"

namespace nfsrdma::verbs {

MemoryRegion MemoryRegion::registerMemory(ibv_pd* pd, void* addr, std::size_t length, int access) {
  errno = 0;
  // Parenthesised: call the function, not the header macro that converts access.
  ibv_mr* m = (ibv_reg_mr)(pd, addr, length, access);
  if (m == nullptr) throwVerbError("ibv_reg_mr(" + std::to_string(length) + " bytes)", errno);
  return MemoryRegion(m);
}

void RegisteredBuffer::Unmap::operator()(std::byte* p) const noexcept {
  if (p != nullptr && ::munmap(p, length) != 0) reportTeardownFailure("munmap", errno);
}

RegisteredBuffer RegisteredBuffer::allocate(ibv_pd* pd, std::size_t length, int access) {
  const std::size_t page = 4096;
  const std::size_t mapped = length == 0 ? page : (length + page - 1) / page * page;
  void* p = ::mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throwVerbError("mmap(" + std::to_string(mapped) + " bytes)", errno);
  std::unique_ptr<std::byte, Unmap> memory(static_cast<std::byte*>(p), Unmap{mapped});
  // First touch from the calling thread places the pages on its NUMA node.
  std::memset(memory.get(), 0, mapped);
  MemoryRegion mr = MemoryRegion::registerMemory(pd, memory.get(), mapped, access);
  return RegisteredBuffer(std::move(memory), mapped, std::move(mr));
}

}  // namespace nfsrdma::verbs
