// What a cell adds to cumulative counters: the difference between two
// readings of the same counters. A counter missing from either reading has
// no delta (absent, never zero), and one that went backwards was reset or
// wrapped between them (svcrdma's counters reset when written; a module
// reload starts over): it has no delta either, and is named so the
// verdict can say why it is missing.
#pragma once

#include <string>
#include <vector>

#include "counters/NamedValues.h"

namespace nfsrdma::counters {

struct CounterDeltas {
  NamedValues deltas;              // in the order of `after`
  std::vector<std::string> reset;  // went backwards between the readings
};

CounterDeltas counterDeltas(const NamedValues& before, const NamedValues& after);

}  // namespace nfsrdma::counters
