// The credit window of RPC-over-RDMA v1 (RFC 8166 section 3.3): how many
// calls may be in flight, which calls wait for a credit, and which replies
// free one. Pure state with no verbs and no lock: the transport keeps it
// under its own mutex and posts what the window lets go, so every rule here
// is unit-tested without a device (tests/unit/client/transport/rdma/CreditWindowTest.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <unordered_set>
#include <vector>

namespace nfsrdma::transport::rdma {

// A call encoded into a send buffer, ready to post.
struct PendingSend {
  std::size_t slot = 0;  // its send buffer
  std::uint32_t length = 0;
  std::uint32_t xid = 0;  // a call abandoned while it waits is never sent
};

class CreditWindow {
 public:
  // asked: the credits we ask the server for, the most a grant may give.
  explicit CreditWindow(std::uint32_t asked) : asked_(asked) {}

  // A new call. True: it may go now and holds a credit. False: it waits in
  // the backlog, also when a credit is free but earlier calls still wait
  // (first come, first served: a call completed on the I/O thread may start
  // another before the freed credit has gone to the backlog).
  bool admit(const PendingSend& send);

  // A reply for xid carrying the server's grant (clamped to 1..asked).
  // It frees a credit only if it answers a call that was sent: one still
  // tracked (`tracked`), or one abandoned after it was sent. A reply for a
  // call never sent, or a second reply, frees nothing: counting it would
  // exceed the server's grant.
  void onReply(std::uint32_t xid, std::uint32_t grant, bool tracked);

  // The oldest waiting call a free credit lets go (now holding that credit),
  // or none. Waiting calls `live(xid)` denies were given up on: their send
  // buffers go to freedSlots and they never leave. At most `limit` calls are
  // looked at.
  template <class Live>
  std::optional<PendingSend> nextToPost(Live live, std::vector<std::size_t>& freedSlots,
                                        std::size_t limit = 1024);

  // A call given up on (timed out). Still waiting: it leaves the backlog and
  // its send buffer goes to freedSlots (true). Already sent: its credit stays
  // held until a reply for it arrives (false).
  bool abandon(std::uint32_t xid, std::vector<std::size_t>& freedSlots);

  std::uint32_t granted() const { return credits_; }
  std::uint32_t outstanding() const { return outstanding_; }
  std::size_t waiting() const { return backlog_.size(); }

 private:
  std::uint32_t asked_;
  std::uint32_t credits_ = 1;  // RFC 8166 section 3.3.1: one until the server grants more
  std::uint32_t outstanding_ = 0;
  std::deque<PendingSend> backlog_;
  std::unordered_set<std::uint32_t> abandonedSent_;
};

template <class Live>
std::optional<PendingSend> CreditWindow::nextToPost(Live live, std::vector<std::size_t>& freedSlots,
                                                    std::size_t limit) {
  for (std::size_t i = 0; i < limit && !backlog_.empty() && outstanding_ < credits_; ++i) {
    const PendingSend next = backlog_.front();
    backlog_.pop_front();
    if (!live(next.xid)) {
      freedSlots.push_back(next.slot);
      continue;
    }
    ++outstanding_;
    return next;
  }
  return std::nullopt;
}

}  // namespace nfsrdma::transport::rdma
