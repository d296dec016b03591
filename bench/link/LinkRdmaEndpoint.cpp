// LinkRdmaEndpoint: the control messages on an endpoint and the shape of its buffers.
#include "bench/link/LinkRdmaEndpoint.h"

#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <random>
#include <span>
#include <stdexcept>

namespace nfsrdma::bench::linkrdma {

namespace {

struct ControlSendTag {};
ControlSendTag gControlSendTag;

bool isControl(const ibv_wc& wc) {
  return (wc.wc_flags & IBV_WC_WITH_IMM) != 0 && ntohl(wc.imm_data) == kControlImm;
}

}  // namespace

[[noreturn]] void completionFailed(const char* what, const ibv_wc& wc) {
  throw std::runtime_error(
      std::string(what) + " completion failed: " + verbs::makeCompletionError(wc.status).message() +
      " (qp " + std::to_string(wc.qp_num) + ")");
}

void sendControl(Endpoint& ep, const ControlMessage& m) {
  std::byte* buf = ep.slot(ep.shape.slots);  // the extra slot is the send slot
  m.encode(std::span<std::byte, kControlBytes>(buf, kControlBytes));
  ibv_sge sge = ep.ring.sge(std::size_t{ep.shape.slots} * ep.shape.slotBytes, kControlBytes);
  ibv_send_wr wr{};
  wr.wr_id = verbs::toWrId(&gControlSendTag);
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_SEND_WITH_IMM;
  wr.imm_data = htonl(kControlImm);
  wr.send_flags = IBV_SEND_SIGNALED;
  if (auto ec = ep.qp.postSend(wr)) verbs::throwVerbError("ibv_post_send(control)", ec.value());
  const auto deadline = Clock::now() + 30s;
  std::array<ibv_wc, 8> wcs{};
  while (Clock::now() < deadline) {
    const verbs::PollResult r = ep.sendCq.poll(wcs);
    if (r.error) verbs::throwVerbError("ibv_poll_cq", r.error.value());
    for (std::size_t i = 0; i < r.count; ++i) {
      if (wcs[i].status != IBV_WC_SUCCESS) completionFailed("control SEND", wcs[i]);
      if (wcs[i].wr_id == verbs::toWrId(&gControlSendTag)) return;
    }
  }
  throw std::runtime_error("control SEND did not complete within 30 s");
}

ControlMessage waitControl(Endpoint& ep, std::chrono::milliseconds timeout,
                           const char* waitingFor) {
  const auto deadline = Clock::now() + timeout;
  std::array<ibv_wc, 8> wcs{};
  for (;;) {
    const verbs::PollResult r = ep.recvCq.poll(wcs);
    if (r.error) verbs::throwVerbError("ibv_poll_cq", r.error.value());
    for (std::size_t i = 0; i < r.count; ++i) {
      const ibv_wc& wc = wcs[i];
      if (wc.status != IBV_WC_SUCCESS) {
        if (wc.status == IBV_WC_WR_FLUSH_ERR) throw std::runtime_error("the link peer went away");
        completionFailed("RECV", wc);
      }
      const std::uint32_t slot = verbs::fromWrId<RecvSlot>(wc.wr_id)->index;
      if (!isControl(wc)) {  // stray data message: recycle the slot
        ep.postRecvSlot(slot);
        continue;
      }
      // Copied out before the slot goes back, so a malformed message still frees it.
      std::array<std::byte, kControlBytes> copy{};
      const std::size_t got = std::min<std::size_t>(wc.byte_len, copy.size());
      std::memcpy(copy.data(), ep.slot(slot), got);
      ep.postRecvSlot(slot);
      try {
        return ControlMessage::decode(std::span<const std::byte>(copy.data(), got));
      } catch (const LinkProtocolError& e) {
        throw LinkProtocolError(
            std::string("link protocol: bad control message while waiting for ") + waitingFor +
            ": " + e.what());
      }
    }
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      throw std::runtime_error(std::string("the link peer sent no ") + waitingFor + " within " +
                               std::to_string(timeout.count() / 1000) + " s");
    }
    const std::error_code ec =
        ep.recvCq.waitEvent(std::min<std::chrono::milliseconds>(left, 500ms));
    if (ec && ec != std::errc::timed_out && ec != std::errc::resource_unavailable_try_again) {
      verbs::throwVerbError("ibv_get_cq_event", ec.value());
    }
  }
}

ControlMessage expectControl(Endpoint& ep, ControlKind kind, std::chrono::milliseconds timeout,
                             const char* name) {
  const ControlMessage m = waitControl(ep, timeout, name);
  if (m.kind != kind) {
    throw LinkProtocolError(std::string("link protocol: expected ") + name + ", got " +
                            controlKindName(m.kind));
  }
  return m;
}

EndpointShape shapeFor(LinkTest test, std::uint64_t maxSize, std::uint32_t txDepth) {
  EndpointShape s{};
  s.maxSize = std::max<std::uint64_t>(maxSize, 64);
  if (test == LinkTest::SendLatency) {
    s.slotBytes = static_cast<std::uint32_t>(std::max<std::uint64_t>(maxSize, kControlBytes));
    s.slots = 16;
  } else {
    s.slotBytes = kControlBytes;
    s.slots = 8;
  }
  s.sendDepth = test == LinkTest::SendLatency ? 64 : txDepth;
  s.maxInline = test == LinkTest::SendLatency ? kMaxInline : 0;
  return s;
}

std::string mtuText(const verbs::CmId& id) {
  const int bytes = id.activeMtuBytes();
  return bytes > 0 ? std::to_string(bytes) + "[B]" : "?";
}

std::uint32_t newSeed() {
  std::random_device rd;
  return rd();
}

}  // namespace nfsrdma::bench::linkrdma
