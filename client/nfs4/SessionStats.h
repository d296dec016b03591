// A session's counters (Session::stats): slots, renewals and what riding
// through outages did. A plain struct of its own so that the public API
// (Client.h's ClientStats) reports them without including Session.h.
#pragma once

#include <cstdint>

namespace nfsrdma::nfs4 {

struct SessionStats {
  std::uint64_t compounds = 0;
  std::uint64_t recoveries = 0;  // sessions replaced after the server lost ours
  std::uint64_t renewals = 0;
  std::uint64_t waitedForSlot = 0;
  std::uint32_t slots = 0;       // fore-channel slots the server granted
  std::uint32_t slotsAsked = 0;  // ...and CREATE_SESSION asked for (SessionOptions::slots)
  std::uint32_t retiredSlots = 0;
  std::uint64_t teardownRetries = 0;  // DESTROY_* sent again after DELAY or CLIENTID_BUSY
  std::uint64_t outages = 0;          // connection or session losses ridden through (or not)
  std::uint64_t reconnects = 0;       // new connections bound to a session
  std::uint64_t replayed = 0;         // calls resent on their own slot and sequence id
  std::uint64_t resent = 0;           // requests sent again on a new session
  std::uint64_t uncachedReplays = 0;  // replays the server had no cached reply for
  std::uint64_t unrecovered = 0;      // outages that ended in kServerUnreachable
  std::uint64_t outageMillis = 0;     // time without service, all outages
  std::uint64_t lastOutageMillis = 0;
  std::uint64_t failovers = 0;  // calls of a failed connection resent over another of the trunk
  std::uint64_t connectionLosses = 0;  // trunk connections lost while others carried on
};

}  // namespace nfsrdma::nfs4
