// QueuePair owns a QP made either directly (ibv_create_qp) or on an rdma_cm
// id (rdma_create_qp, destroyed with rdma_destroy_qp). Posting is hot-path and
// returns std::error_code. wr_id carries a pointer to a typed per-request
// context (toWrId / fromWrId) rather than an index, like the kernel's ib_cqe:
// the completion handler finds its request without a lookup. Teardown follows
// the kernel's drain: QP to error, flush receives, then sends, so no buffer is
// released while the device may still write into it.
#pragma once

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <system_error>

#include "verbs/CompletionQueue.h"

namespace nfsrdma::verbs {

// wr_id <-> typed context pointer.
template <class T>
std::uint64_t toWrId(T* context) noexcept {
  return static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(context));
}
template <class T>
T* fromWrId(std::uint64_t wrId) noexcept {
  return reinterpret_cast<T*>(static_cast<std::uintptr_t>(wrId));
}

class QueuePair {
 public:
  // Throws std::system_error naming ibv_create_qp / rdma_create_qp. For the
  // rdma_cm form the id must outlive the QP (rdma_destroy_qp needs it).
  static QueuePair create(ibv_pd* pd, ibv_qp_init_attr& attr);
  static QueuePair createOnCmId(rdma_cm_id* id, ibv_pd* pd, ibv_qp_init_attr& attr);

  ibv_qp* get() const noexcept { return qp_.get(); }
  std::uint32_t number() const noexcept { return qp_->qp_num; }

  // Posts a chain of send WRs. On error, *bad (if given) is the first WR not
  // posted; the ones before it were posted and will complete.
  std::error_code postSend(ibv_send_wr& first, ibv_send_wr** bad = nullptr) noexcept {
    ibv_send_wr* badWr = nullptr;
    const int rc = ibv_post_send(qp_.get(), &first, &badWr);
    if (bad != nullptr) *bad = badWr;
    return rc == 0 ? std::error_code{}
                   : std::error_code(rc > 0 ? rc : EIO, std::generic_category());
  }
  std::error_code postRecv(ibv_recv_wr& first, ibv_recv_wr** bad = nullptr) noexcept {
    ibv_recv_wr* badWr = nullptr;
    const int rc = ibv_post_recv(qp_.get(), &first, &badWr);
    if (bad != nullptr) *bad = badWr;
    return rc == 0 ? std::error_code{}
                   : std::error_code(rc > 0 ? rc : EIO, std::generic_category());
  }

  // Moves the QP to the error state: outstanding WRs complete as flushed.
  std::error_code moveToError() noexcept;

  // Drains: error state, then a marker receive and a marker send are posted
  // and their CQs polled until each marker's flush completion is seen
  // (receives first). Every other completion seen meanwhile goes to onOther
  // (may be empty). Bounded by timeout; never throws.
  std::error_code drain(CompletionQueue& recvCq, CompletionQueue& sendCq,
                        std::chrono::milliseconds timeout,
                        const std::function<void(const ibv_wc&)>& onOther = {}) noexcept;

 private:
  struct Deleter {
    rdma_cm_id* cmId = nullptr;  // set when made by rdma_create_qp
    void operator()(ibv_qp* qp) const noexcept;
  };
  explicit QueuePair(ibv_qp* qp, rdma_cm_id* id) : qp_(qp, Deleter{id}) {}
  std::unique_ptr<ibv_qp, Deleter> qp_;
};

}  // namespace nfsrdma::verbs
