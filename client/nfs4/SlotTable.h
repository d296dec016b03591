// The client's view of a session's fore-channel slots (RFC 8881 section 2.10.6).
//
// Each slot carries one request at a time and a sequence id that advances
// when the server has executed a request on it. The lowest free slot is
// handed out first, so the highest slot id in use stays low and the server
// can shrink the table (target_highest_slotid) without stalling us. A slot
// whose outcome is unknown (timeout, lost connection) is retired: reusing it
// would risk a false retry or a misordered sequence id. Not thread-safe;
// Session serializes access.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace nfsrdma::nfs4 {

enum class SlotOutcome {
  kExecuted,     // the server processed SEQUENCE: the sequence id advances
  kNotExecuted,  // the server rejected SEQUENCE (or nothing was sent): same id next time
  kUnknown,      // no reply: retire the slot
};

class SlotTable {
 public:
  explicit SlotTable(std::uint32_t slots);

  // The lowest free slot at or below the server's target, if any; if every
  // slot there is retired, the lowest free one above it.
  std::optional<std::uint32_t> acquire();
  // The sequence id the next request on this acquired slot must carry.
  std::uint32_t nextSequenceId(std::uint32_t slot) const { return slots_[slot].lastSequenceId + 1; }
  void release(std::uint32_t slot, SlotOutcome outcome);
  // sa_highest_slotid: the highest slot id with a request in flight (0 when idle).
  std::uint32_t highestSlotInUse() const;
  // From sr_target_highest_slotid: slots above it are not handed out.
  void setTargetHighest(std::uint32_t target) { targetHighest_ = target; }

  std::uint32_t size() const { return static_cast<std::uint32_t>(slots_.size()); }
  std::uint32_t inUse() const { return inUse_; }
  std::uint32_t retired() const { return retired_; }

 private:
  struct Slot {
    std::uint32_t lastSequenceId = 0;
    bool busy = false;
    bool retired = false;
  };
  std::uint32_t take(std::uint32_t slot);

  std::vector<Slot> slots_;
  std::uint32_t targetHighest_;
  std::uint32_t inUse_ = 0;
  std::uint32_t retired_ = 0;
};

}  // namespace nfsrdma::nfs4
