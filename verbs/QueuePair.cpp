// QueuePair: creation on both paths, error-state transition and drain.
#include "verbs/QueuePair.h"

#include <array>
#include <cerrno>

#include "verbs/VerbsError.h"

namespace nfsrdma::verbs {

namespace {
// Distinct addresses used as wr_id of the drain markers.
constexpr char kRecvMarker = 'r';
constexpr char kSendMarker = 's';
std::uint64_t markerId(const char& m) {
  return static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(&m));
}
}  // namespace

void QueuePair::Deleter::operator()(ibv_qp* qp) const noexcept {
  if (qp == nullptr) return;
  if (cmId != nullptr) {
    rdma_destroy_qp(cmId);  // returns void; librdmacm destroys qp and clears id->qp
    return;
  }
  if (const int rc = ibv_destroy_qp(qp); rc != 0) reportTeardownFailure("ibv_destroy_qp", rc);
}

QueuePair QueuePair::create(ibv_pd* pd, ibv_qp_init_attr& attr) {
  errno = 0;
  ibv_qp* qp = ibv_create_qp(pd, &attr);
  if (qp == nullptr) throwVerbError("ibv_create_qp", errno);
  return QueuePair(qp, nullptr);
}

QueuePair QueuePair::createOnCmId(rdma_cm_id* id, ibv_pd* pd, ibv_qp_init_attr& attr) {
  errno = 0;
  if (rdma_create_qp(id, pd, &attr) != 0) throwVerbError("rdma_create_qp", errno);
  return QueuePair(id->qp, id);
}

std::error_code QueuePair::moveToError() noexcept {
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_ERR;
  const int rc = ibv_modify_qp(qp_.get(), &attr, IBV_QP_STATE);
  return rc == 0 ? std::error_code{} : std::error_code(rc > 0 ? rc : EIO, std::generic_category());
}

namespace {
std::error_code waitForMarker(CompletionQueue& cq, std::uint64_t marker, std::uint32_t qpNum,
                              std::chrono::steady_clock::time_point deadline,
                              const std::function<void(const ibv_wc&)>& onOther) noexcept {
  std::array<ibv_wc, 16> wcs{};
  while (std::chrono::steady_clock::now() < deadline) {
    const PollResult r = cq.poll(wcs);
    if (r.error) return r.error;
    for (std::size_t i = 0; i < r.count; ++i) {
      if (wcs[i].wr_id == marker && wcs[i].qp_num == qpNum) return {};
      if (onOther) onOther(wcs[i]);
    }
  }
  return std::make_error_code(std::errc::timed_out);
}
}  // namespace

std::error_code QueuePair::drain(CompletionQueue& recvCq, CompletionQueue& sendCq,
                                 std::chrono::milliseconds timeout,
                                 const std::function<void(const ibv_wc&)>& onOther) noexcept {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  if (auto ec = moveToError()) return ec;
  ibv_recv_wr rwr{};
  rwr.wr_id = markerId(kRecvMarker);
  if (auto ec = postRecv(rwr)) return ec;
  if (auto ec = waitForMarker(recvCq, rwr.wr_id, number(), deadline, onOther)) return ec;
  ibv_send_wr swr{};
  swr.wr_id = markerId(kSendMarker);
  swr.opcode = IBV_WR_SEND;
  swr.send_flags = IBV_SEND_SIGNALED;
  if (auto ec = postSend(swr)) return ec;
  return waitForMarker(sendCq, swr.wr_id, number(), deadline, onOther);
}

}  // namespace nfsrdma::verbs
