// ProtectionDomain owns an ibv_pd. Every MR and QP is made inside one; it must
// outlive them (owners declare it first so it is destroyed last).
#pragma once

#include <infiniband/verbs.h>

#include "verbs/Handle.h"

namespace nfsrdma::verbs {

class ProtectionDomain {
 public:
  // Throws std::system_error naming ibv_alloc_pd.
  static ProtectionDomain allocate(ibv_context* context);
  ibv_pd* get() const noexcept { return pd_.get(); }

 private:
  struct Traits {
    static int destroy(ibv_pd* p) noexcept { return ibv_dealloc_pd(p); }
    static constexpr const char* verb = "ibv_dealloc_pd";
  };
  explicit ProtectionDomain(ibv_pd* p) : pd_(p) {}
  detail::Handle<ibv_pd, Traits> pd_;
};

}  // namespace nfsrdma::verbs
