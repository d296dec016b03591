// The message of what a call throws, for tests of error texts.
#pragma once

#include <exception>
#include <functional>
#include <string>

namespace nfsrdma::bench::testing {

// What f threw (any std::exception), or "" when it returned.
inline std::string errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

}  // namespace nfsrdma::bench::testing
