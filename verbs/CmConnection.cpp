// rdma_cm client and listener flows with bounded waits and messages that name
// the peer and the failing step.
#include "verbs/CmConnection.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <optional>
#include <stdexcept>

#include "util/SocketAddress.h"
#include "verbs/VerbsError.h"

namespace nfsrdma::verbs {

namespace {

std::string peerOf(const CmClientOptions& o) {
  return o.host + ":" + std::to_string(o.port);
}

// The error of a step that got e, or nothing within wait, instead of the
// event it waited for. routeNote goes inside a route error's parentheses.
[[noreturn]] void failStep(const std::optional<CmEvent>& e, const std::string& step,
                           std::chrono::milliseconds wait, const CmClientOptions& o,
                           const std::string& routeNote = "") {
  if (!e) {
    throw std::runtime_error("no " + o.peerName + " at " + peerOf(o) + " (" + step +
                             ": no answer within " + std::to_string(wait.count()) + " ms)");
  }
  std::string why = e->describe();
  if (e->type() == RDMA_CM_EVENT_REJECTED) {
    why =
        "connection rejected (" + why + ")" + (o.rejectedHint.empty() ? "" : "; " + o.rejectedHint);
  } else if (e->type() == RDMA_CM_EVENT_UNREACHABLE) {
    why = "peer unreachable (" + why + ")";
  } else if (e->type() == RDMA_CM_EVENT_ADDR_ERROR || e->type() == RDMA_CM_EVENT_ROUTE_ERROR) {
    why = "no RDMA route (" + why + routeNote + "); is the address on an RDMA device's netdev?";
  }
  throw std::runtime_error("no " + o.peerName + " at " + peerOf(o) + " (" + step + ": " + why +
                           ")");
}

// Waits for `want` on the channel (events of other ids are not expected on a
// client channel used one connection at a time).
CmEvent expectEvent(CmEventChannel& channel, rdma_cm_event_type want, const std::string& step,
                    const CmClientOptions& o) {
  // The verbs were given o.timeout; wait a little longer so their own error
  // event (ADDR_ERROR, UNREACHABLE), which says more, arrives first.
  const auto wait = o.timeout + std::chrono::milliseconds(2000);
  std::optional<CmEvent> e = channel.wait(wait);
  if (e && e->type() == want) return std::move(*e);
  failStep(e, step, wait, o);
}

}  // namespace

void cmResolve(CmEventChannel& channel, CmId& id, const CmClientOptions& o) {
  const util::SocketAddress dst = util::resolveSocketAddress(o.host, o.port, false);
  std::optional<util::SocketAddress> src;
  if (!o.bindAddress.empty()) src = util::resolveSocketAddress(o.bindAddress, 0, false);
  const int ms = static_cast<int>(o.timeout.count());
  // While the peer's neighbour (ARP) entry is missing, rdma_resolve_addr
  // sleeps until its timeout unless a neighbour-update event wakes it, and
  // that event is missed when the ARP reply arrives before the request is
  // queued (drivers/infiniband/core/addr.c, rdma_resolve_ip): on a veth the
  // whole ARP exchange runs inside the call, so the first connection to a
  // peer took the full timeout. Short attempts bound that cost; an attempt
  // whose neighbour is still unresolved ends in ADDR_ERROR with -ETIMEDOUT
  // and the next one starts, until the caller's timeout. Other errors (no
  // route, no RDMA device on the way) end at once.
  constexpr std::chrono::milliseconds kAttempt{500};
  const auto deadline = std::chrono::steady_clock::now() + o.timeout;
  for (int attempt = 1;; ++attempt) {
    const auto left =
        std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    const auto thisAttempt = std::clamp(left, std::chrono::milliseconds(1), kAttempt);
    id.resolveAddress(src ? src->get() : nullptr, dst.get(), static_cast<int>(thisAttempt.count()));
    // Longer than the verb's own timeout, so its ADDR_ERROR, which says more, comes first.
    const auto wait = thisAttempt + std::chrono::milliseconds(2000);
    std::optional<CmEvent> e = channel.wait(wait);
    if (e && e->type() == RDMA_CM_EVENT_ADDR_RESOLVED) break;
    const bool timedOut = e && e->type() == RDMA_CM_EVENT_ADDR_ERROR && e->status() == -ETIMEDOUT;
    if (timedOut && std::chrono::steady_clock::now() < deadline) continue;
    failStep(e, "rdma_resolve_addr", wait, o,
             timedOut ? ", " + std::to_string(attempt) + (attempt == 1 ? " attempt" : " attempts") +
                            " in " + std::to_string(o.timeout.count()) + " ms"
                      : "");
  }
  id.resolveRoute(ms);
  (void)expectEvent(channel, RDMA_CM_EVENT_ROUTE_RESOLVED, "rdma_resolve_route", o);
}

namespace {

// librdmacm refuses (EINVAL) RDMA READ depths above what the device allows;
// perftest lowers its outstanding reads to the device's limit the same way.
void clampReadDepths(ibv_context* verbs, rdma_conn_param& param) {
  ibv_device_attr attr{};
  if (verbs == nullptr || ibv_query_device(verbs, &attr) != 0) return;  // librdmacm will say why
  param.initiator_depth = static_cast<std::uint8_t>(
      std::min<int>(param.initiator_depth, std::max(attr.max_qp_init_rd_atom, 0)));
  param.responder_resources = static_cast<std::uint8_t>(
      std::min<int>(param.responder_resources, std::max(attr.max_qp_rd_atom, 0)));
}

}  // namespace

std::vector<std::byte> cmConnect(CmEventChannel& channel, CmId& id,
                                 std::span<const std::byte> privateData, const CmClientOptions& o) {
  rdma_conn_param param{};
  param.private_data = privateData.data();
  param.private_data_len = static_cast<std::uint8_t>(privateData.size());
  param.initiator_depth = o.initiatorDepth;
  param.responder_resources = o.responderResources;
  clampReadDepths(id.verbs(), param);
  param.retry_count = 7;
  param.rnr_retry_count = 7;  // 7 = retry forever on receiver-not-ready
  id.connect(param);
  CmEvent e = expectEvent(channel, RDMA_CM_EVENT_ESTABLISHED, "rdma_connect", o);
  const auto data = e.privateData();
  return {data.begin(), data.end()};
}

CmListener CmListener::listen(CmEventChannel& channel, const std::string& bindAddress,
                              std::uint16_t port, int backlog) {
  CmId id = CmId::create(channel);
  const util::SocketAddress addr = util::resolveSocketAddress(bindAddress, port, true);
  id.bindAddress(addr.get());
  id.listen(backlog);
  return CmListener(channel, std::move(id));
}

std::uint16_t CmListener::port() const noexcept {
  return ntohs(rdma_get_src_port(id_.get()));
}

bool CmListener::pump(std::chrono::milliseconds timeout) {
  std::optional<CmEvent> e = channel_->wait(timeout);
  if (!e) return false;
  switch (e->type()) {
    case RDMA_CM_EVENT_CONNECT_REQUEST: {
      // A new id: whatever the sets hold under its address belonged to an
      // earlier id that was destroyed since (librdmacm reuses the memory),
      // and would fail this connection's accept().
      established_.erase(e->id());
      disconnected_.erase(e->id());
      failed_.erase(e->id());
      const auto data = e->privateData();
      requests_.push_back(Request{CmId::adopt(e->id()), {data.begin(), data.end()}});
      break;
    }
    case RDMA_CM_EVENT_ESTABLISHED:
      established_.insert(e->id());
      break;
    case RDMA_CM_EVENT_DISCONNECTED:
      disconnected_.insert(e->id());
      break;
    case RDMA_CM_EVENT_CONNECT_ERROR:
    case RDMA_CM_EVENT_UNREACHABLE:
    case RDMA_CM_EVENT_REJECTED:
      failed_.insert(e->id());
      break;
    default:  // TIMEWAIT_EXIT and others: nothing to track
      break;
  }
  return true;
}

std::optional<CmListener::Request> CmListener::waitRequest(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (requests_.empty()) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0 || !pump(left)) return std::nullopt;
  }
  Request r = std::move(requests_.front());
  requests_.pop_front();
  return r;
}

void CmListener::accept(CmId& cmId, std::span<const std::byte> privateData,
                        std::chrono::milliseconds timeout, std::uint8_t responderResources,
                        std::uint8_t initiatorDepth) {
  rdma_conn_param param{};
  param.private_data = privateData.data();
  param.private_data_len = static_cast<std::uint8_t>(privateData.size());
  param.responder_resources = responderResources;
  param.initiator_depth = initiatorDepth;
  clampReadDepths(cmId.verbs(), param);
  param.rnr_retry_count = 7;
  cmId.accept(param);
  rdma_cm_id* id = cmId.get();
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  const auto forget = [&] {
    established_.erase(id);
    disconnected_.erase(id);
    failed_.erase(id);
  };
  while (established_.count(id) == 0) {
    if (failed_.count(id) != 0 || disconnected_.count(id) != 0) {
      forget();
      throw std::runtime_error(
          "rdma_accept: the client went away before the connection was established");
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      forget();
      throw std::runtime_error("rdma_accept: no ESTABLISHED event in time");
    }
    (void)pump(left);
  }
  established_.erase(id);
}

bool CmListener::waitDisconnected(rdma_cm_id* id, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (disconnected_.count(id) == 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0 || !pump(left)) return false;
  }
  disconnected_.erase(id);
  return true;
}

}  // namespace nfsrdma::verbs
