// ProtectionDomain: ibv_alloc_pd with a named error.
#include "verbs/ProtectionDomain.h"

#include <cerrno>

namespace nfsrdma::verbs {

ProtectionDomain ProtectionDomain::allocate(ibv_context* context) {
  errno = 0;
  ibv_pd* p = ibv_alloc_pd(context);
  if (p == nullptr) throwVerbError("ibv_alloc_pd", errno);
  return ProtectionDomain(p);
}

}  // namespace nfsrdma::verbs
