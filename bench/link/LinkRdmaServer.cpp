// LinkRdmaBench's server: listens, checks each session's connect requests
// against the client's bounds, serves its steps and loops.
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <stdexcept>

#include "bench/link/LinkProtocol.h"
#include "bench/link/LinkRdmaBench.h"
#include "bench/link/LinkRdmaEndpoint.h"
#include "bench/link/LinkRdmaLoops.h"
#include "verbs/CmConnection.h"
#include "verbs/DeviceDiscovery.h"

namespace nfsrdma::bench {

using namespace linkrdma;

namespace {

// The session's first connect request, or nullopt after rejecting it.
std::optional<ConnectRequest> firstRequest(verbs::CmListener::Request& first) {
  try {
    ConnectRequest cfg = ConnectRequest::decode(first.privateData);
    if (cfg.qpIndex != 0)
      throw LinkProtocolError("the first QP of a session has index " + std::to_string(cfg.qpIndex));
    return cfg;
  } catch (const LinkProtocolError& e) {
    first.id.reject({});
    std::fprintf(stderr, "nfsrdma-bench link: rejected a connection from %s: %s\n",
                 first.id.peerAddress().c_str(), e.what());
    return std::nullopt;
  }
}

// QP q's connect request, checked to continue the session of cfg; a request
// that does not is rejected.
ConnectRequest nextRequest(verbs::CmListener::Request& next, std::uint32_t q,
                           const ConnectRequest& cfg) {
  try {
    ConnectRequest r = ConnectRequest::decode(next.privateData);
    if (r.qpIndex != q || r.qpCount != cfg.qpCount || r.seed != cfg.seed) {
      throw LinkProtocolError("QP " + std::to_string(r.qpIndex) + " of " +
                              std::to_string(r.qpCount) +
                              " does not continue this session (expected QP " + std::to_string(q) +
                              " of " + std::to_string(cfg.qpCount) + ")");
    }
    return r;
  } catch (const LinkProtocolError& e) {
    next.id.reject({});
    throw LinkProtocolError(
        std::string("unexpected connection while the client was opening its QPs: ") + e.what());
  }
}

// Accepts the session's QPs, `first` and the client's further requests,
// each with the server's buffer in the reply.
Endpoints acceptQps(const LinkOptions& o, verbs::CmListener& listener,
                    verbs::CmListener::Request first, const ConnectRequest& cfg,
                    const EndpointShape& shape) {
  Endpoints eps;
  std::optional<verbs::CmListener::Request> next = std::move(first);
  for (std::uint32_t q = 0; q < cfg.qpCount; ++q) {
    if (!next) next = listener.waitRequest(o.timeout * 4);
    if (!next)
      throw std::runtime_error("the client opened " + std::to_string(q) + " of " +
                               std::to_string(cfg.qpCount) + " QPs, then stopped");
    const ConnectRequest r = nextRequest(*next, q, cfg);
    auto ep = std::make_unique<Endpoint>(std::move(next->id), shape);
    next.reset();
    ep->remoteAddress = r.address;
    ep->remoteRkey = r.rkey;
    linkPattern(cfg.seed).fill({ep->source(), shape.maxSize});
    ConnectReply reply;
    reply.address = ep->data.address();
    reply.rkey = ep->data.rkey();
    const std::vector<std::byte> bytes = reply.encode();
    ep->id.setAckTimeout(static_cast<std::uint8_t>(o.qpTimeout));
    listener.accept(ep->id, bytes, o.timeout * 4);
    eps.push_back(std::move(ep));
  }
  return eps;
}

// The server's own -b loop for the step of GO `m`, reported in fin; returns
// its sleeps on events.
std::uint64_t runServerWrites(const Endpoints& eps, const ConnectRequest& cfg,
                              const ControlMessage& m, ControlMessage& fin) {
  // Only -b runs a loop here; the client sends its choice for it.
  const bool loopSleeps = (cfg.flags & kUseEvents) != 0;
  LoopParams p{
      IBV_WR_RDMA_WRITE, m.size, m.iterations, std::chrono::microseconds(m.durationUs), cfg.txDepth,
      cfg.cqModeration,  1,      false,        std::chrono::nanoseconds(m.nanos),       loopSleeps};
  const LoopResult r = runBandwidthLoop(eps, p);
  fin.messages = r.messages;
  fin.nanos = static_cast<std::uint64_t>(r.seconds * 1e9);
  fin.peakMilli = static_cast<std::uint64_t>(r.peakMessagesPerSecond * 1000);
  return r.eventWaits;
}

// --verify of a WRITE step: every QP's target against the client's pattern.
void checkReceived(const Endpoints& eps, std::uint64_t size, std::uint32_t seed,
                   ControlMessage& fin) {
  fin.verify = VerifyState::Passed;
  for (auto& ep : eps) {
    if (auto bad = linkPattern(seed).firstMismatch({ep->target(), size})) {
      fin.verify = VerifyState::Failed;
      fin.mismatch = *bad;
      break;
    }
  }
}

// Serves the step of GO `m`: READY, the server's part of the test, then
// FIN after the client's END. Returns the server loop's sleeps on events.
std::uint64_t serveStep(const Endpoints& eps, const ConnectRequest& cfg, const ControlMessage& m,
                        std::chrono::milliseconds idle) {
  const auto test = static_cast<LinkTest>(cfg.test);
  const bool verify = (cfg.flags & kVerify) != 0;
  const bool bidir = (cfg.flags & kBidirectional) != 0;
  Endpoint& ctl = *eps.front();
  if (verify && test == LinkTest::Write) {
    for (auto& ep : eps) std::memset(ep->target(), 0, m.size);
  }
  ControlMessage ready;
  ready.kind = ControlKind::Ready;
  sendControl(ctl, ready);
  ControlMessage fin;
  fin.kind = ControlKind::Fin;
  std::uint64_t eventWaits = 0;
  if (test == LinkTest::SendLatency) {
    runPongLoop(ctl, static_cast<std::uint32_t>(m.size), m.iterations);
  } else if (bidir && test == LinkTest::Write) {
    eventWaits = runServerWrites(eps, cfg, m, fin);
  }
  // The client's step may run long (-n at emulated speeds, -D); a client
  // that dies is noticed through the flushed receive, so this bound is loose.
  (void)expectControl(ctl, ControlKind::End, std::max<std::chrono::milliseconds>(idle, 4h), "END");
  if (verify && test == LinkTest::Write) checkReceived(eps, m.size, cfg.seed, fin);
  sendControl(ctl, fin);
  return eventWaits;
}

// Serves one session whose first request is `first`.
void serveSession(const LinkOptions& o, verbs::CmListener& listener,
                  verbs::CmListener::Request first, LinkServerState& state) {
  const LinkSessionScope active(state);
  const std::optional<ConnectRequest> cfg = firstRequest(first);
  if (!cfg) return;
  const auto test = static_cast<LinkTest>(cfg->test);
  const EndpointShape shape = shapeFor(test, cfg->maxSize, cfg->txDepth);
  const auto idle = std::chrono::duration_cast<std::chrono::milliseconds>(o.idleTimeout);
  const Endpoints eps = acceptQps(o, listener, std::move(first), *cfg, shape);
  std::fprintf(stderr, "nfsrdma-bench link: session from %s: %s, %u QP(s)\n",
               eps.front()->id.peerAddress().c_str(), linkTestTitle(test),
               static_cast<unsigned>(cfg->qpCount));
  std::uint64_t eventWaits = 0;
  for (;;) {  // one step per message size; bounded by the idle timeout per message
    const ControlMessage m = waitControl(*eps.front(), idle, "GO");
    if (m.kind == ControlKind::Bye) break;
    if (m.kind != ControlKind::Go) {
      throw LinkProtocolError(std::string("link protocol: expected GO, got ") +
                              controlKindName(m.kind));
    }
    checkGo(m, shape.maxSize);
    eventWaits += serveStep(eps, *cfg, m, idle);
  }
  if ((cfg->flags & kUseEvents) != 0) {
    std::fprintf(stderr, "nfsrdma-bench link: session done (slept %llu time%s on CQ events)\n",
                 static_cast<unsigned long long>(eventWaits), eventWaits == 1 ? "" : "s");
  } else {
    std::fprintf(stderr, "nfsrdma-bench link: session done\n");
  }
  if ((cfg->flags & kLastSession) != 0 && !o.keepServing) state.finished = true;
}

}  // namespace

std::optional<verbs::DeviceInfo> sysfsDeviceInfo(const std::string& device) {
  try {
    verbs::DiscoveryOptions d;
    d.queryVerbs = false;
    for (verbs::DeviceInfo& info : verbs::discoverDevices(d)) {
      if (info.name == device) return std::move(info);
    }
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

void runRdmaServer(const LinkOptions& o, LinkServerState& state) {
  verbs::CmEventChannel channel = verbs::CmEventChannel::create();
  std::string bind = o.bindAddress;
  if (bind.empty() && !o.device.empty()) {
    // Listen on the device's first IPv4 address so -d means what it says.
    for (const auto& d : verbs::discoverDevices()) {
      if (d.name != o.device) continue;
      for (const auto& p : d.ports)
        for (const auto& g : p.gids)
          if (bind.empty() && g.ip.find('.') != std::string::npos) bind = g.ip;
    }
    if (bind.empty())
      throw std::runtime_error("device " + o.device + " has no IPv4 address to listen on");
  }
  verbs::CmListener listener = verbs::CmListener::listen(channel, bind, o.port);
  std::fprintf(stderr, "nfsrdma-bench link: listening (rdma_cm) on %s:%u\n",
               bind.empty() ? "0.0.0.0" : bind.c_str(), static_cast<unsigned>(o.port));
  while (!state.finished) {  // each pass waits at most 200 ms; idle timeout ends it
    std::optional<verbs::CmListener::Request> r = listener.waitRequest(200ms);
    if (!r) {
      state.finishWhenIdle(o.idleTimeout);
      continue;
    }
    try {
      serveSession(o, listener, std::move(*r), state);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "nfsrdma-bench link: session failed: %s\n", e.what());
    }
  }
}

}  // namespace nfsrdma::bench
