#include "util/ErrnoText.h"

#include <system_error>

namespace nfsrdma::util {

std::string errnoText(int err) {
  return std::generic_category().message(err);
}

std::string errnoMessage(std::string_view what, int err) {
  // Read before building the string: an allocation may touch errno.
  std::string text = errnoText(err);
  std::string out(what);
  out += ": ";
  out += text;
  return out;
}

}  // namespace nfsrdma::util
