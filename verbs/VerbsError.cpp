// Error text helpers of the verbs layer: kept out of line so headers stay
// light and every message has one spelling.
#include "verbs/VerbsError.h"

#include <infiniband/verbs.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace nfsrdma::verbs {

void throwVerbError(std::string_view verb, int err) {
  if (err <= 0) err = EIO;
  throw std::system_error(err, std::generic_category(), std::string(verb));
}

std::string noDeviceMessage(std::string_view detail) {
  std::string m = "no RDMA device found (";
  m += detail;
  m += "); see nfsrdma-server doctor";
  return m;
}

NoDeviceError::NoDeviceError(std::string_view detail)
    : std::runtime_error(noDeviceMessage(detail)) {}

namespace {

class CompletionCategory final : public std::error_category {
 public:
  const char* name() const noexcept override { return "ibv_wc_status"; }
  std::string message(int status) const override {
    return ibv_wc_status_str(static_cast<ibv_wc_status>(status));
  }
};

}  // namespace

const std::error_category& completionCategory() noexcept {
  static const CompletionCategory category;
  return category;
}

std::error_code makeCompletionError(int wcStatus) noexcept {
  return {wcStatus, completionCategory()};
}

void reportTeardownFailure(std::string_view verb, int err) noexcept {
  // fprintf cannot throw; a message is all a destructor can do.
  std::fprintf(stderr, "nfsrdma: %.*s failed during teardown: %s\n", static_cast<int>(verb.size()),
               verb.data(), std::strerror(err));
}

}  // namespace nfsrdma::verbs
