// A Client's life: the transport its options ask for, the session and the
// export's root at connect time, and the teardown at close. Kept apart from
// the calls in between, which all assume a mounted export.
#include <unistd.h>

#include <algorithm>
#include <random>
#include <thread>

#include "client/ClientInternal.h"
#include "client/transport/TcpTransport.h"
#include "client/transport/rdma/DeviceNuma.h"
#include "client/transport/rdma/RdmaTransport.h"

namespace nfsrdma {
namespace {

using namespace client_detail;  // ClientInternal.h

std::string hostName() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "localhost";
  return buf;
}

// One receive buffer per credit stays registered for the connection's life.
constexpr std::uint32_t kMaxRdmaCredits = 1024;

std::unique_ptr<transport::Transport> makeRdmaTransport(
    const ClientOptions& o, const std::shared_ptr<transport::IoLoop>& loop) {
  transport::rdma::RdmaTransportOptions r;
  r.host = o.host;
  r.port = o.port;
  r.bindAddress = o.bindAddress;
  r.timeout = o.timeout;
  // Every session slot may hold a send buffer while it waits for credits.
  r.sendBuffers = std::max<std::uint32_t>(r.sendBuffers, o.queueDepth + 8);
  // As many credits as slots are asked for (the server may grant fewer):
  // a queue deeper than 64 would otherwise wait for credits in the client.
  r.credits = std::clamp<std::uint32_t>(o.queueDepth, r.credits, kMaxRdmaCredits);
  r.registration = o.perIoRegistration ? transport::rdma::MemoryRegistration::kPerIo
                                       : transport::rdma::MemoryRegistration::kPooled;
  r.numaAuto = o.numaAuto;
  return transport::rdma::RdmaTransport::connect(r, loop);
}

// numa=auto over TCP: the connection's I/O thread goes to the NUMA node of
// the interface holding its local address.
void placeOnInterfaceNode(transport::TcpTransport& tcp) {
  const std::string ip = tcp.localAddress();
  if (ip.empty()) {
    tcp.placeOn(std::nullopt, "this connection's local address (getsockname failed)");
    return;
  }
  tcp.placeOn(transport::rdma::localAddressNumaNode(ip), "the interface of " + ip);
}

// The one place a transport is chosen. A kind this switch does not know
// (a value cast from outside the enum) is an error, never a default.
std::unique_ptr<transport::Transport> makeTransport(
    const ClientOptions& o, const std::shared_ptr<transport::IoLoop>& loop) {
  switch (o.proto) {
    case TransportKind::kTcp: {
      auto tcp = transport::TcpTransport::connect(o.host, o.port, o.timeout, o.bindAddress, loop);
      if (o.numaAuto) placeOnInterfaceNode(*tcp);
      return tcp;
    }
    case TransportKind::kRdma:
      return makeRdmaTransport(o, loop);
  }
  throw NfsException(makeError(
      ClientErrc::kInvalidArgument,
      "transport kind " + std::to_string(static_cast<int>(o.proto)) + " (expected tcp or rdma)"));
}

// Connection i of a trunk: server address and local address i mod their
// counts (multi-rail), everything else as the URL said.
ClientOptions connectionOptions(const ClientOptions& o, std::size_t i) {
  ClientOptions c = o;
  const std::size_t servers = 1 + o.moreServers.size();
  if (const std::size_t s = i % servers; s > 0) {
    c.host = o.moreServers[s - 1].host;
    if (o.moreServers[s - 1].port != 0) c.port = o.moreServers[s - 1].port;
  }
  const std::size_t binds = 1 + o.moreBindAddresses.size();
  if (const std::size_t b = i % binds; b > 0) c.bindAddress = o.moreBindAddresses[b - 1];
  return c;
}

// The I/O threads a trunk's connections share: a thread per connection
// costs a wakeup per reply or two once the connections outnumber the cores,
// where one thread serving several takes their replies (TCP) or completions
// (RDMA) in batches. None (each connection its own) for one connection.
std::vector<std::shared_ptr<transport::IoLoop>> ioLoops(const ClientOptions& o) {
  if (o.nconnect <= 1) return {};
  const std::uint32_t cores = std::max(1U, std::thread::hardware_concurrency());
  const std::uint32_t wanted = o.ioThreads != 0 ? o.ioThreads : std::max(1U, cores / 2);
  std::vector<std::shared_ptr<transport::IoLoop>> loops;
  for (std::uint32_t i = 0; i < std::min(wanted, o.nconnect); ++i)
    loops.push_back(std::make_shared<transport::IoLoop>());
  return loops;
}

}  // namespace

std::unique_ptr<Client> Client::connect(std::string_view url) {
  return connect(ClientOptions::fromUrl(url));
}

std::unique_ptr<Client> Client::connect(const ClientOptions& options) {
  return std::make_unique<ClientImpl>(options);
}

ClientImpl::ClientImpl(const ClientOptions& options) : options_(options) {
  rpc::AuthSysParams auth;
  auth.machineName = options_.machineName.empty() ? hostName() : options_.machineName;
  auth.uid = options_.uid;
  auth.gid = options_.gid;
  auth.gids = options_.gids;
  auth.stamp = static_cast<std::uint32_t>(::getpid());
  // nconnect connections, each its own transport and I/O thread; a lost
  // one is replaced by a new one to the same address (the session then
  // resends what was in flight).
  std::vector<nfs4::SessionConnection> trunk;
  const auto loops = ioLoops(options_);
  for (std::uint32_t i = 0; i < std::max<std::uint32_t>(options_.nconnect, 1); ++i) {
    const ClientOptions o = connectionOptions(options_, i);
    const std::shared_ptr<transport::IoLoop> loop =
        loops.empty() ? nullptr : loops[i % loops.size()];
    rpcs_.push_back(std::make_unique<rpc::RpcClient>(makeTransport(o, loop), nfs4::kNfsProgram,
                                                     nfs4::kNfsVersion, rpc::Credential::sys(auth),
                                                     options_.timeout));
    rpcs_.back()->setReconnect([o, loop] { return makeTransport(o, loop); });
    trunk.push_back({rpcs_.back().get(), o.host != options_.host || o.port != options_.port});
  }

  std::random_device rd;
  const std::string unique = std::to_string(rd()) + "-" + std::to_string(rd());
  nfs4::SessionOptions so;
  so.slots = options_.queueDepth;
  so.maxRequestSize = static_cast<std::uint32_t>(options_.maxIoSize + kIoOverhead + 4096);
  so.maxResponseSize = so.maxRequestSize;
  // Room for a vectored READ (SEQUENCE, PUTFH and the READs) and the
  // longest path walk; the server may grant fewer.
  so.maxOperations = static_cast<std::uint32_t>(kMaxReadsPerCompound + 2);
  so.onReplaced = options_.onSessionReplaced;
  so.onRecovered = options_.onRecovered;
  so.recoveryTimeout = options_.recoveryTimeout;
  so.reclaim = [this](nfs4::ReclaimPhase phase, const nfs4::NewSessionCall& call) {
    return reclaimOpens(phase, call);
  };
  so.ownerId = "nfsrdma:" + auth.machineName + ":" + std::to_string(::getpid()) + ":" + unique;
  openOwner_ = "open:" + unique;
  session_ = std::make_unique<nfs4::Session>(trunk, so);
  const std::uint32_t granted = session_->fore().maxRequests;
  if (granted < so.slots && options_.onFewerSlots) {
    options_.onFewerSlots(options_.url() + ": the server granted " + std::to_string(granted) +
                          " of the " + std::to_string(so.slots) +
                          " session slots asked for (qd=" + std::to_string(so.slots) +
                          "): at most " + std::to_string(granted) + " calls are in flight at once");
  }
  mountExport();
}

void ClientImpl::mountExport() {
  const std::vector<std::string_view> comps = pathComponents(options_.exportPath);
  refuseLongNames("mount", options_.exportPath, comps);
  const std::string what = "mount " + options_.exportPath;
  nfs4::Attributes rootAttrs;
  Error e = run(
      what,
      [&](CompoundEncoder& c) {
        c.putRootFh();
        for (auto comp : comps) c.lookup(comp);
        c.getFh();
        c.getAttr(nfs4::Bitmap{nfs4::attr::kType, nfs4::attr::kMaxRead, nfs4::attr::kMaxWrite});
      },
      [&](CompoundDecoder& d) -> Error {
        if (Error x = expectOk(d, Op::kPutRootFh, what)) return x;
        for (std::size_t i = 0; i < comps.size(); ++i) {
          if (Error x = expectOk(d, Op::kLookup, what)) return x;
        }
        if (Error x = expectOk(d, Op::kGetFh, what)) return x;
        root_ = d.getFh();
        if (Error x = expectOk(d, Op::kGetAttr, what)) return x;
        rootAttrs = d.getAttr();
        if (!d.ok()) return malformedReply(d, what);
        return {};
      });
  if (!e && rootAttrs.type != FileType::kDirectory) {
    e = makeError(nfs4::statusError(nfs4::kErrNotDir), what);
  }
  if (e) {
    (void)session_->close();
    throw NfsException(e);
  }
  // The I/O size both the session and the server's file system allow.
  const auto& fore = session_->fore();
  std::size_t limit = options_.maxIoSize;
  limit = std::min<std::size_t>(
      limit, fore.maxResponseSize > kIoOverhead ? fore.maxResponseSize - kIoOverhead : 4096);
  limit = std::min<std::size_t>(
      limit, fore.maxRequestSize > kIoOverhead ? fore.maxRequestSize - kIoOverhead : 4096);
  if (rootAttrs.maxRead > 0) limit = std::min<std::size_t>(limit, rootAttrs.maxRead);
  if (rootAttrs.maxWrite > 0) limit = std::min<std::size_t>(limit, rootAttrs.maxWrite);
  maxIo_ = std::max<std::size_t>(limit & ~std::size_t{4095}, 4096);
}

ClientImpl::~ClientImpl() {
  try {
    closeSession(false);
  } catch (...) {  // a destructor reports nothing; close() explicitly to see errors
  }
}

void ClientImpl::close() {
  closeSession(true);
}

void ClientImpl::closeSession(bool tell) {
  if (closed_.load()) return;
  // close() waits for replies that only the I/O thread can deliver.
  if (onIoThread()) {
    check(makeError(ClientErrc::kInvalidArgument, "close() from an I/O callback"));
  }
  // Once, also when several threads of a shared client close it at once.
  if (closed_.exchange(true)) return;
  Error e = session_->close();
  for (auto& rpc : rpcs_) rpc->shutdown();
  if (!e) return;
  teardownError_ = e.message();
  // Only an explicit close() tells: a destructor runs as a failed command
  // unwinds, whose own error already says why the server is out of reach.
  if (tell && options_.onTeardownError) options_.onTeardownError(teardownError_);
}

std::string ClientImpl::fullPath(std::string_view path) const {
  return joinPath(options_.exportPath, path);
}

ClientStats ClientImpl::stats() const {
  ClientStats s;
  s.session = session_->stats();
  for (std::size_t i = 0; i < rpcs_.size(); ++i) {
    ConnectionStats c;
    c.peer = rpcs_[i]->describe();
    c.rpc = rpcs_[i]->stats();
    const std::uint32_t limit = rpcs_[i]->transportCallLimit();
    c.credits = limit == UINT32_MAX ? 0 : limit;
    c.up = session_->connectionUp(i);
    s.rpc += c.rpc;
    s.connections.push_back(std::move(c));
  }
  std::lock_guard lock(recoveryMu_);
  s.recovery = recovery_;
  return s;
}

bool ClientImpl::onIoThread() const {
  return std::any_of(rpcs_.begin(), rpcs_.end(), [](const auto& rpc) { return rpc->onIoThread(); });
}

std::uint32_t ClientImpl::maxInFlight() const {
  // Over RDMA each connection has its own credits: together they bound the trunk.
  std::uint64_t transports = 0;
  for (const auto& rpc : rpcs_) transports += rpc->transportCallLimit();
  return static_cast<std::uint32_t>(
      std::min<std::uint64_t>(session_->fore().maxRequests, transports));
}

std::string ClientImpl::transportStats() const {
  std::string lines;
  for (const auto& rpc : rpcs_) lines += (lines.empty() ? "" : "\n") + rpc->transportStats();
  return lines;
}

}  // namespace nfsrdma
