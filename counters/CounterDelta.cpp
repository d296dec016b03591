#include "counters/CounterDelta.h"

#include <cstdint>

namespace nfsrdma::counters {

CounterDeltas counterDeltas(const NamedValues& before, const NamedValues& after) {
  CounterDeltas out;
  for (const auto& [name, value] : after.values) {
    const auto old = before.get(name);
    if (!old) continue;
    std::int64_t delta = 0;
    // Backwards, or a difference no counter makes (signed fields such as
    // an idle time can hold any value): no delta.
    if (value < *old || __builtin_sub_overflow(value, *old, &delta)) {
      out.reset.push_back(name);
      continue;
    }
    out.deltas.values.emplace_back(name, delta);
  }
  return out;
}

}  // namespace nfsrdma::counters
