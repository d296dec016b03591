// Counters by name, in the order their source gives them (a line's fields,
// a directory's files). A name that is not there is a counter this host
// does not have: get() says so, it never reads as zero.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nfsrdma::counters {

struct NamedValues {
  std::vector<std::pair<std::string, std::int64_t>> values;
  std::optional<std::int64_t> get(std::string_view name) const {
    for (const auto& [n, v] : values) {
      if (n == name) return v;
    }
    return std::nullopt;
  }
};

}  // namespace nfsrdma::counters
