#include "client/nfs4/SlotTable.h"

#include <stdexcept>

namespace nfsrdma::nfs4 {

SlotTable::SlotTable(std::uint32_t slots) : slots_(slots), targetHighest_(slots == 0 ? 0 : slots - 1) {
  if (slots == 0) throw std::invalid_argument("a session needs at least one slot");
}

std::optional<std::uint32_t> SlotTable::acquire() {
  // A target at or above the table size (0xffffffff included) means all slots.
  const std::uint32_t limit = targetHighest_ >= size() ? size() : targetHighest_ + 1;
  for (std::uint32_t i = 0; i < limit; ++i) {
    Slot& s = slots_[i];
    if (!s.busy && !s.retired) {
      s.busy = true;
      ++inUse_;
      return i;
    }
  }
  return std::nullopt;
}

void SlotTable::release(std::uint32_t slot, SlotOutcome outcome) {
  Slot& s = slots_.at(slot);
  if (!s.busy) throw std::logic_error("release of a free slot " + std::to_string(slot));
  s.busy = false;
  --inUse_;
  switch (outcome) {
    case SlotOutcome::kExecuted: ++s.lastSequenceId; break;
    case SlotOutcome::kNotExecuted: break;
    case SlotOutcome::kUnknown:
      s.retired = true;
      ++retired_;
      break;
  }
}

std::uint32_t SlotTable::highestSlotInUse() const {
  for (std::uint32_t i = size(); i > 0; --i) {
    if (slots_[i - 1].busy) return i - 1;
  }
  return 0;
}

}  // namespace nfsrdma::nfs4
