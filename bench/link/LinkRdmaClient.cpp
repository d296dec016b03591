// LinkRdmaBench's client: connects the session's QPs, runs each size's
// step (start, the loop, the end and its verify) and builds the report.
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <stdexcept>

#include "bench/link/LinkPlacement.h"
#include "bench/link/LinkProtocol.h"
#include "bench/link/LinkRdmaBench.h"
#include "bench/link/LinkRdmaEndpoint.h"
#include "bench/link/LinkRdmaLoops.h"
#include "verbs/CmConnection.h"
#include "verbs/DeviceDiscovery.h"

namespace nfsrdma::bench {

using namespace linkrdma;

bool sleepOnEvents(const LinkOptions& o, bool softwareDevice) {
  if (o.test == LinkTest::SendLatency) return false;
  return o.cqWait == CqWait::Events || (o.cqWait == CqWait::Auto && softwareDevice);
}

std::string cqWaitBanner(const LinkOptions& o, bool softwareDevice) {
  if (o.test == LinkTest::SendLatency) return "OFF (latency)";
  switch (o.cqWait) {
    case CqWait::Events:
      return "ON (-e)";
    case CqWait::Poll:
      return "OFF (--poll)";
    case CqWait::Auto:
      break;
  }
  return softwareDevice ? "ON (software device)" : "OFF";
}

namespace {

// What every QP of a client session shares.
struct ClientPlan {
  std::uint64_t maxSize;  // the largest step's size, as the server is told it
  EndpointShape shape;
  std::uint32_t seed;
  bool lastSession;
};

// What the first QP's route says of the device the session runs on.
struct ClientDevice {
  std::string name;
  std::string placement;
  bool software = false;
  std::string mtu;
};

verbs::CmClientOptions cmClientOptions(const LinkOptions& o) {
  verbs::CmClientOptions cm;
  cm.host = o.host;
  cm.port = o.port;
  cm.bindAddress = o.bindAddress;
  cm.timeout = o.timeout;
  cm.peerName = "link server";
  cm.rejectedHint = "is 'nfsrdma-bench link --server' running there?";
  return cm;
}

// As perftest, before anything is created: otherwise librdmacm
// reports the failed QP as "rdma_create_qp: Cannot allocate memory".
void checkQueueLimits(const verbs::CmId& id, const EndpointShape& shape,
                      const std::string& device) {
  const verbs::CmId::QueueLimits limits = id.queueLimits();
  // The send queue and CQ hold a few entries more than the depth (a
  // control message, the drain marker; see Endpoint).
  const int depth = static_cast<int>(shape.sendDepth);
  if (limits.maxQpWr > 0 && depth + 2 > limits.maxQpWr) {
    throw std::invalid_argument("--tx-depth " + std::to_string(depth) + " needs " +
                                std::to_string(depth + 2) + " send queue entries; " + device +
                                " allows " + std::to_string(limits.maxQpWr) + " (max_qp_wr)");
  }
  if (limits.maxCqe > 0 && depth + 8 > limits.maxCqe) {
    throw std::invalid_argument("--tx-depth " + std::to_string(depth) + " needs " +
                                std::to_string(depth + 8) + " completion queue entries; " + device +
                                " allows " + std::to_string(limits.maxCqe) + " (max_cqe)");
  }
}

// The first QP's device: checked against -d and its queue limits; the
// thread is placed (--cpu, --numa) by it.
ClientDevice inspectDevice(const LinkOptions& o, const verbs::CmId& id,
                           const EndpointShape& shape) {
  ClientDevice d;
  d.name = id.deviceName();
  if (!o.device.empty() && d.name != o.device) {
    throw std::runtime_error("the route to " + o.host + " uses " + d.name + ", not " + o.device +
                             " (-d); use --bind with an address of " + o.device);
  }
  checkQueueLimits(id, shape, d.name);
  const std::optional<verbs::DeviceInfo> info = sysfsDeviceInfo(d.name);
  d.placement = applyPlacement(o, info ? info->numaNode : -1);
  d.software = (info && info->software) || verbs::isSoftwareVendor(id.vendorId());
  d.mtu = mtuText(id);
  return d;
}

// QP q's connect private data: the session's parameters and ep's buffer.
ConnectRequest connectRequest(const LinkOptions& o, const ClientPlan& plan, std::uint32_t q,
                              bool softwareDevice, const Endpoint& ep) {
  ConnectRequest req;
  req.test = static_cast<std::uint8_t>(o.test);
  req.flags = static_cast<std::uint8_t>(
      (o.bidirectional ? kBidirectional : 0) | (o.verify ? kVerify : 0) |
      (plan.lastSession ? kLastSession : 0) |
      (o.bidirectional && sleepOnEvents(o, softwareDevice) ? kUseEvents : 0));
  req.qpIndex = static_cast<std::uint8_t>(q);
  req.qpCount = static_cast<std::uint8_t>(o.qps);
  req.txDepth = static_cast<std::uint16_t>(std::min<std::uint32_t>(o.txDepth, 65535));
  req.cqModeration = static_cast<std::uint16_t>(std::min<std::uint32_t>(o.cqModeration, 65535));
  req.maxSize = static_cast<std::uint32_t>(plan.maxSize);
  req.slotBytes = plan.shape.slotBytes;
  req.seed = plan.seed;
  req.address = ep.data.address();
  req.rkey = ep.data.rkey();
  return req;
}

// Resolves, creates and connects the session's QPs, one rdma_cm connection
// each; device is filled from the first one's route.
Endpoints connectQps(const LinkOptions& o, verbs::CmEventChannel& channel, const ClientPlan& plan,
                     ClientDevice& device) {
  const verbs::CmClientOptions cm = cmClientOptions(o);
  Endpoints eps;
  for (std::uint32_t q = 0; q < o.qps; ++q) {
    verbs::CmId id = verbs::CmId::create(channel);
    verbs::cmResolve(channel, id, cm);
    // Without this rdma_cm takes RoCE's ~0.5 s from the packet life time, and
    // one dropped packet (soft-RoCE drops under load) stalls the QP that long.
    id.setAckTimeout(static_cast<std::uint8_t>(o.qpTimeout));
    if (q == 0) device = inspectDevice(o, id, plan.shape);
    auto ep = std::make_unique<Endpoint>(std::move(id), plan.shape);
    linkPattern(plan.seed).fill({ep->source(), plan.shape.maxSize});
    const std::vector<std::byte> mine = connectRequest(o, plan, q, device.software, *ep).encode();
    const std::vector<std::byte> theirs = verbs::cmConnect(channel, ep->id, mine, cm);
    const ConnectReply reply = ConnectReply::decode(theirs);
    ep->remoteAddress = reply.address;
    ep->remoteRkey = reply.rkey;
    eps.push_back(std::move(ep));
  }
  return eps;
}

// The report's title and perftest's banner.
LinkRunReport clientReport(const LinkOptions& o, const ClientDevice& device) {
  const bool lat = o.test == LinkTest::SendLatency;
  LinkRunReport report;
  report.title = linkTestTitle(o.test);
  report.key = linkTestKey(o.test);
  report.banner = {
      {"Device", device.name},
      {"Number of qps", std::to_string(o.qps)},
      {"Connection type", "RC"},
      {"Data ex. method", "rdma_cm"},
      {"TX depth", lat ? "1" : std::to_string(o.txDepth)},
      {"CQ Moderation", lat ? "1" : std::to_string(o.cqModeration)},
      {"Post list", lat ? "1" : std::to_string(o.postList)},
      {"CQ events", cqWaitBanner(o, device.software)},
      {"Mtu", device.mtu},
      {"QP timeout", std::to_string(o.qpTimeout)},
      {"Max inline data", (lat ? std::to_string(kMaxInline) : std::string("0")) + "[B]"},
      {"Bidirectional", o.bidirectional ? "ON" : "OFF"},
      {"Server", o.host + ":" + std::to_string(o.port)},
      {"Placement", device.placement},
      {"Duration", durationBanner(o.durationSeconds, o.marginSeconds)},
      {"Verify", o.verify ? "ON" : "OFF"}};
  return report;
}

// Whether the client's buffers receive data (READ, or the server's -b writes).
bool clientReceives(const LinkOptions& o) {
  return o.test == LinkTest::Read || o.bidirectional;
}

// GO for one message size, and the server's READY.
void startStep(const LinkOptions& o, const Endpoints& eps, std::uint64_t size) {
  ControlMessage go;
  go.kind = ControlKind::Go;
  go.size = size;
  go.iterations = o.iterations;
  go.durationUs = o.durationMicros();
  go.nanos = o.marginNanos();
  if (o.verify && clientReceives(o)) {
    // Zero what the step will fill, so stale data from a step before cannot pass.
    for (auto& ep : eps) std::memset(ep->target(), 0, size);
  }
  Endpoint& ctl = *eps.front();
  sendControl(ctl, go);
  (void)expectControl(ctl, ControlKind::Ready, o.timeout * 4, "READY");
}

// The client's own bandwidth loop for one size; its sleeps on events are
// added to the report's.
BandwidthResult measureBandwidth(const LinkOptions& o, const Endpoints& eps, std::uint64_t size,
                                 bool softwareDevice, LinkRunReport& report) {
  LoopParams p{o.test == LinkTest::Write ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ,
               size,
               o.iterations,
               std::chrono::microseconds(o.durationMicros()),
               o.txDepth,
               o.cqModeration,
               o.postList,
               o.warmUp,
               std::chrono::nanoseconds(o.marginNanos()),
               sleepOnEvents(o, softwareDevice)};
  const LoopResult r = runBandwidthLoop(eps, p);
  BandwidthResult bw;
  bw.messageBytes = size;
  bw.messages = r.messages;
  bw.seconds = r.seconds;
  bw.peakBytesPerSecond = r.peakMessagesPerSecond * static_cast<double>(size);
  if (p.useEvents) report.eventWaits = report.eventWaits.value_or(0) + r.eventWaits;
  return bw;
}

// END of one size, and the server's FIN with its side of the step.
ControlMessage endStep(const LinkOptions& o, Endpoint& ctl, std::uint64_t size) {
  ControlMessage end;
  end.kind = ControlKind::End;
  end.size = size;
  sendControl(ctl, end);
  const auto stepTimeout = std::chrono::duration_cast<std::chrono::milliseconds>(o.idleTimeout);
  return expectControl(ctl, ControlKind::Fin, stepTimeout, "FIN");
}

// The step's row: with -b the server's loop (in FIN) adds its direction.
BandwidthResult bandwidthRow(const LinkOptions& o, BandwidthResult bw, const ControlMessage& fin,
                             std::uint64_t size) {
  if (o.bidirectional) {
    bw = combineBidirectional(
        bw, fin.messages, static_cast<double>(fin.nanos) / 1e9,
        static_cast<double>(fin.peakMilli) / 1000.0 * static_cast<double>(size));
  }
  bw.iterations = bw.messages / (o.qps * (o.bidirectional ? 2u : 1u));
  return bw;
}

// --verify after a bandwidth step: the server's check (in FIN), then the
// client's own of what it received.
void checkStepData(const LinkOptions& o, const Endpoints& eps, const ControlMessage& fin,
                   std::uint64_t size, std::uint32_t seed) {
  if (fin.verify == VerifyState::Failed) {
    throw std::runtime_error("verify failed: the server found a wrong byte at offset " +
                             std::to_string(fin.mismatch) + " after " + std::to_string(size) +
                             "-byte transfers");
  }
  if (!clientReceives(o)) return;
  for (auto& ep : eps) {
    if (auto bad = linkPattern(seed).firstMismatch({ep->target(), size})) {
      throw std::runtime_error("verify failed: wrong byte at offset " + std::to_string(*bad) +
                               " of the data received in " + std::to_string(size) +
                               "-byte transfers");
    }
  }
}

// One message size: GO/READY, the measured loop, END/FIN, the report's row
// and the checks. Returns the bytes it verified.
std::uint64_t runClientStep(const LinkOptions& o, const Endpoints& eps, const ClientPlan& plan,
                            bool softwareDevice, std::uint64_t size, LinkRunReport& report) {
  const bool lat = o.test == LinkTest::SendLatency;
  Endpoint& ctl = *eps.front();
  startStep(o, eps, size);
  BandwidthResult bw;
  std::vector<double> latSamples;
  if (lat) {
    latSamples = runPingLoop(ctl, static_cast<std::uint32_t>(size), o.iterations);
  } else {
    bw = measureBandwidth(o, eps, size, softwareDevice, report);
  }
  const ControlMessage fin = endStep(o, ctl, size);
  if (lat) {
    report.latency.push_back(summarizeLatency(size, latSamples));
    return 0;
  }
  report.bandwidth.push_back(bandwidthRow(o, bw, fin, size));
  if (!o.verify) return 0;
  checkStepData(o, eps, fin, size, plan.seed);
  return size * eps.size();
}

}  // namespace

LinkRunReport runRdmaClient(const LinkOptions& o, bool lastSession) {
  const std::vector<std::uint64_t> sizes =
      o.sweep ? sweepSizes(kMaxMessageBytes) : std::vector<std::uint64_t>{o.size};
  const std::uint64_t maxSize = sizes.back();
  const ClientPlan plan{maxSize, shapeFor(o.test, maxSize, o.txDepth), newSeed(), lastSession};

  verbs::CmEventChannel channel = verbs::CmEventChannel::create();
  ClientDevice device;
  const Endpoints eps = connectQps(o, channel, plan, device);
  LinkRunReport report = clientReport(o, device);
  std::uint64_t verifiedBytes = 0;
  for (const std::uint64_t size : sizes) {
    verifiedBytes += runClientStep(o, eps, plan, device.software, size, report);
  }
  if (o.verify) {
    report.verify =
        o.test == LinkTest::SendLatency
            ? "not applicable to the latency test"
            : "passed (after each size the receiver checked every byte of its region against "
              "the sender's pattern; " +
                  std::to_string(verifiedBytes) + " bytes in all)";
  }
  ControlMessage bye;
  bye.kind = ControlKind::Bye;
  sendControl(*eps.front(), bye);
  return report;  // endpoints disconnect and drain as they go out of scope
}

}  // namespace nfsrdma::bench
