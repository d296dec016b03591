#include "counters/Series.h"

#include <algorithm>
#include <cstddef>
#include <utility>

namespace nfsrdma::counters {

std::vector<std::string> counterNames(const Series& s) {
  std::vector<std::string> names;
  for (const auto& r : s.readings) {
    for (const auto& [n, v] : r.values.values) {
      if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
    }
  }
  return names;
}

void trimToWindow(Series& s, double from, double to) {
  std::size_t first = 0;
  std::size_t last = s.readings.size();
  for (std::size_t i = 0; i < s.readings.size(); ++i) {
    if (s.readings[i].seconds <= from) first = i;
    if (s.readings[i].seconds >= to && last == s.readings.size()) last = i + 1;
  }
  if (first >= last) return;
  std::vector<Reading> kept(
      std::make_move_iterator(s.readings.begin() + static_cast<std::ptrdiff_t>(first)),
      std::make_move_iterator(s.readings.begin() + static_cast<std::ptrdiff_t>(last)));
  s.readings = std::move(kept);
}

}  // namespace nfsrdma::counters
