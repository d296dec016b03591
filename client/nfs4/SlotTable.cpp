#include "client/nfs4/SlotTable.h"

#include <stdexcept>

namespace nfsrdma::nfs4 {

SlotTable::SlotTable(std::uint32_t slots)
    : slots_(slots), targetHighest_(slots == 0 ? 0 : slots - 1) {
  if (slots == 0) throw std::invalid_argument("a session needs at least one slot");
}

std::optional<std::uint32_t> SlotTable::acquire() {
  // A target at or above the table size (0xffffffff included) means all slots.
  const std::uint32_t limit = targetHighest_ >= size() ? size() : targetHighest_ + 1;
  bool usableWithinTarget = false;
  for (std::uint32_t i = 0; i < limit; ++i) {
    Slot& s = slots_[i];
    if (s.retired) continue;
    usableWithinTarget = true;
    if (!s.busy) return take(i);
  }
  if (usableWithinTarget) return std::nullopt;  // a busy one comes back
  // Every slot the server prefers was retired. The target is a preference
  // (RFC 8881 section 18.46.3) and the whole table stays valid, so the lowest
  // usable slot above it is taken; waiting would wait forever.
  for (std::uint32_t i = limit; i < size(); ++i) {
    if (!slots_[i].retired && !slots_[i].busy) return take(i);
  }
  return std::nullopt;
}

std::uint32_t SlotTable::take(std::uint32_t slot) {
  slots_[slot].busy = true;
  ++inUse_;
  return slot;
}

void SlotTable::release(std::uint32_t slot, SlotOutcome outcome) {
  Slot& s = slots_.at(slot);
  if (!s.busy) throw std::logic_error("release of a free slot " + std::to_string(slot));
  s.busy = false;
  --inUse_;
  switch (outcome) {
    case SlotOutcome::kExecuted:
      ++s.lastSequenceId;
      break;
    case SlotOutcome::kNotExecuted:
      break;
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
