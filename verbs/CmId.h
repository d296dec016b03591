// CmId owns an rdma_cm id: the connection endpoint of rdma_cm. Ids made by
// the listener's CONNECT_REQUEST are adopted (CmId::adopt) so every id has one
// owner. Each call throws a std::system_error naming the rdma_* verb; the
// asynchronous outcome arrives as a CmEvent on the channel (see CmConnection).
#pragma once

#include <rdma/rdma_cma.h>
#include <sys/socket.h>

#include <cstddef>
#include <span>
#include <string>
#include <system_error>

#include "verbs/CmEventChannel.h"
#include "verbs/Handle.h"

namespace nfsrdma::verbs {

class CmId {
 public:
  // Throws NoDeviceError / std::system_error naming rdma_create_id.
  static CmId create(CmEventChannel& channel, rdma_port_space space = RDMA_PS_TCP);
  // Takes ownership of an id delivered by a CONNECT_REQUEST event.
  static CmId adopt(rdma_cm_id* id) noexcept { return CmId(id); }

  rdma_cm_id* get() const noexcept { return id_.get(); }
  // The device context librdmacm bound this id to (after address resolution
  // or for a connect request); owned by librdmacm.
  ibv_context* verbs() const noexcept { return id_->verbs; }
  std::string deviceName() const;
  // "198.18.0.2:41234" of the connected peer; "" before a connection.
  std::string peerAddress() const;
  // The active MTU in bytes of the port the id is bound to (after address
  // resolution); 0 when it cannot be queried. No throw.
  int activeMtuBytes() const noexcept;
  // The bound device's queue limits (ibv_query_device); zeros when they
  // cannot be queried. No throw.
  struct QueueLimits {
    int maxQpWr = 0;  // work requests per send or receive queue
    int maxCqe = 0;   // entries per completion queue
  };
  QueueLimits queueLimits() const noexcept;
  // The device's vendor id (ibv_query_device); 0 when unknown.
  std::uint32_t vendorId() const noexcept;

  void bindAddress(const sockaddr* address);
  void listen(int backlog);
  void resolveAddress(const sockaddr* source, const sockaddr* destination, int timeoutMs);
  void resolveRoute(int timeoutMs);
  // The QP's local ACK timeout exponent (4.096 us * 2^exp before a
  // retransmit). rdma_cm otherwise derives it from the path's packet life
  // time, which for RoCE is about half a second; perftest uses 14 (67 ms).
  // Before connect() on the active side, before accept() on the passive one.
  void setAckTimeout(std::uint8_t exponent);
  void connect(rdma_conn_param& param);
  void accept(rdma_conn_param& param);
  void reject(std::span<const std::byte> privateData);
  // Starts a disconnect; the peer sees RDMA_CM_EVENT_DISCONNECTED. No throw.
  std::error_code disconnect() noexcept;

 private:
  struct Traits {
    static int destroy(rdma_cm_id* id) noexcept { return rdma_destroy_id(id); }
    static constexpr const char* verb = "rdma_destroy_id";
  };
  explicit CmId(rdma_cm_id* id) : id_(id) {}
  detail::Handle<rdma_cm_id, Traits> id_;
};

}  // namespace nfsrdma::verbs
