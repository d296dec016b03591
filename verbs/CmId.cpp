// CmId: thin throwing wrappers over the rdma_cm id calls.
#include "verbs/CmId.h"

#include <arpa/inet.h>

#include <cerrno>

#include "verbs/DeviceDiscovery.h"
#include "verbs/VerbsError.h"

namespace nfsrdma::verbs {

namespace {
void check(int rc, const char* verb) {
  if (rc != 0) throwVerbError(verb, errno);
}
}  // namespace

CmId CmId::create(CmEventChannel& channel, rdma_port_space space) {
  rdma_cm_id* id = nullptr;
  errno = 0;
  check(rdma_create_id(channel.get(), &id, nullptr, space), "rdma_create_id");
  return CmId(id);
}

std::string CmId::deviceName() const {
  return verbs() != nullptr ? ibv_get_device_name(verbs()->device) : "";
}

CmId::QueueLimits CmId::queueLimits() const noexcept {
  ibv_device_attr attr{};
  if (verbs() == nullptr || ibv_query_device(verbs(), &attr) != 0) return {};
  return {attr.max_qp_wr, attr.max_cqe};
}

std::uint32_t CmId::vendorId() const noexcept {
  ibv_device_attr attr{};
  if (verbs() == nullptr || ibv_query_device(verbs(), &attr) != 0) return 0;
  return attr.vendor_id;
}

int CmId::activeMtuBytes() const noexcept {
  if (verbs() == nullptr) return 0;
  ibv_port_attr attr{};
  if (ibv_query_port(verbs(), get()->port_num, &attr) != 0) return 0;
  return mtuBytes(attr.active_mtu);
}

std::string CmId::peerAddress() const {
  const sockaddr* sa = rdma_get_peer_addr(get());
  char text[INET6_ADDRSTRLEN] = {};
  if (sa == nullptr) return {};
  if (sa->sa_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(sa);
    inet_ntop(AF_INET, &in->sin_addr, text, sizeof text);
    return std::string(text) + ":" + std::to_string(ntohs(in->sin_port));
  }
  if (sa->sa_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(sa);
    inet_ntop(AF_INET6, &in6->sin6_addr, text, sizeof text);
    return "[" + std::string(text) + "]:" + std::to_string(ntohs(in6->sin6_port));
  }
  return {};
}

void CmId::bindAddress(const sockaddr* address) {
  check(rdma_bind_addr(get(), const_cast<sockaddr*>(address)), "rdma_bind_addr");
}

void CmId::listen(int backlog) {
  check(rdma_listen(get(), backlog), "rdma_listen");
}

void CmId::resolveAddress(const sockaddr* source, const sockaddr* destination, int timeoutMs) {
  check(rdma_resolve_addr(get(), const_cast<sockaddr*>(source), const_cast<sockaddr*>(destination),
                          timeoutMs),
        "rdma_resolve_addr");
}

void CmId::resolveRoute(int timeoutMs) {
  check(rdma_resolve_route(get(), timeoutMs), "rdma_resolve_route");
}

void CmId::setAckTimeout(std::uint8_t exponent) {
  check(rdma_set_option(get(), RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &exponent,
                        sizeof exponent),
        "rdma_set_option(RDMA_OPTION_ID_ACK_TIMEOUT)");
}

void CmId::connect(rdma_conn_param& param) {
  check(rdma_connect(get(), &param), "rdma_connect");
}

void CmId::accept(rdma_conn_param& param) {
  check(rdma_accept(get(), &param), "rdma_accept");
}

void CmId::reject(std::span<const std::byte> privateData) {
  check(rdma_reject(get(), privateData.data(), static_cast<std::uint8_t>(privateData.size())),
        "rdma_reject");
}

std::error_code CmId::disconnect() noexcept {
  if (rdma_disconnect(get()) != 0) return {errno, std::generic_category()};
  return {};
}

}  // namespace nfsrdma::verbs
