// Handle<T, Traits>: the single owning-pointer shape behind every verbs owner.
// A unique_ptr with a deleter that calls the destroy verb exactly once, never
// throws, and reports (not hides) a failing destroy. Owners built on it are
// move-only by construction, so no verbs object can be freed twice.
#pragma once

#include <cerrno>
#include <memory>

#include "verbs/VerbsError.h"

namespace nfsrdma::verbs::detail {

// Traits provide: static int destroy(T*) noexcept (0, a positive errno, or -1
// with errno set) and static constexpr const char* verb.
template <class T, class Traits>
struct HandleDeleter {
  void operator()(T* p) const noexcept {
    if (p == nullptr) return;
    errno = 0;
    const int rc = Traits::destroy(p);
    if (rc != 0) reportTeardownFailure(Traits::verb, rc > 0 ? rc : errno);
  }
};

template <class T, class Traits>
using Handle = std::unique_ptr<T, HandleDeleter<T, Traits>>;

}  // namespace nfsrdma::verbs::detail
