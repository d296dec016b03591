// Errors of the verbs layer. Setup (factories) throws std::system_error whose
// text names the failing verb and the errno text, because "Cannot allocate
// memory" alone does not tell an operator which of a dozen calls failed. The hot
// path (post, poll) instead returns std::error_code so a data-path loop never
// unwinds. A host without RDMA hardware is an ordinary case with its own error
// type, so commands can print one clear line and exit non-zero.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>

namespace nfsrdma::verbs {

// Throws std::system_error(err, generic_category, verb): what() reads
// "<verb>: <errno text>". err <= 0 is replaced by EIO so no error is lost.
[[noreturn]] void throwVerbError(std::string_view verb, int err);

// The one message for "this host has no usable RDMA device". detail says who
// noticed and why, e.g. "libibverbs: Function not implemented".
std::string noDeviceMessage(std::string_view detail);

// Thrown by every entry point that needs a device when there is none.
class NoDeviceError : public std::runtime_error {
 public:
  explicit NoDeviceError(std::string_view detail);
};

// Error category for work completion status (enum ibv_wc_status); value 0 is
// success. Messages come from ibv_wc_status_str().
const std::error_category& completionCategory() noexcept;
std::error_code makeCompletionError(int wcStatus) noexcept;

// Destructors call this when a destroy verb fails: they must neither throw nor
// skip the call, but a leaked kernel object should not pass silently either.
void reportTeardownFailure(std::string_view verb, int err) noexcept;

}  // namespace nfsrdma::verbs
