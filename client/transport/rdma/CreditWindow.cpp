#include "client/transport/rdma/CreditWindow.h"

#include <algorithm>

namespace nfsrdma::transport::rdma {

bool CreditWindow::admit(const PendingSend& send) {
  if (outstanding_ >= credits_ || !backlog_.empty()) {
    backlog_.push_back(send);
    return false;
  }
  ++outstanding_;
  return true;
}

void CreditWindow::onReply(std::uint32_t xid, std::uint32_t grant, bool tracked) {
  credits_ = std::clamp<std::uint32_t>(grant, 1, asked_);
  if ((tracked || abandonedSent_.erase(xid) > 0) && outstanding_ > 0) --outstanding_;
}

bool CreditWindow::abandon(std::uint32_t xid, std::vector<std::size_t>& freedSlots) {
  bool queued = false;
  for (auto b = backlog_.begin(); b != backlog_.end();) {
    if (b->xid == xid) {
      freedSlots.push_back(b->slot);
      b = backlog_.erase(b);
      queued = true;
    } else {
      ++b;
    }
  }
  if (!queued) abandonedSent_.insert(xid);
  return queued;
}

}  // namespace nfsrdma::transport::rdma
