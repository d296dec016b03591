// The fabric: packets lost (retransmissions, sequence errors) and
// congestion signalled (ECN marks and CNPs, pause frames, discards).
//
// Loss on an RC queue pair shows on both ends' RDMA port counters: soft-RoCE
// (rxe) counts a gap at the responder (out_of_seq_request), a retransmitted
// packet it already had (duplicate_request), a sequence NAK at the requester
// (rcvd_seq_err), each retry it starts (completer_retry_err) and a queue
// pair that ran out of retries (retry_exceeded_err); mlx5 counts
// out_of_sequence, packet_seq_err, implied_nak_seq_err,
// local_ack_timeout_err and duplicate_request. On a healthy lossless RoCE
// fabric they do not move at all, so any rise is loss; but a handful against
// millions of packets did not bound the figure, and is said to be thin.
#include <array>

#include "bench/bound/BoundRules.h"
#include "bench/report/Format.h"

namespace nfsrdma::bench {
namespace {

constexpr std::array<std::string_view, 9> kLossCounters{
    "out_of_seq_request",  "duplicate_request",   "rcvd_seq_err",
    "completer_retry_err", "retry_exceeded_err",  "out_of_sequence",
    "packet_seq_err",      "implied_nak_seq_err", "local_ack_timeout_err"};
// Packets through the port: rxe's hw_counters, the PMA counters/ of mlx5.
constexpr std::array<std::string_view, 4> kPacketCounters{"sent_pkts", "rcvd_pkts",
                                                          "port_xmit_packets", "port_rcv_packets"};
// Below one loss event per 10,000 packets (0.01%) the retransmissions cost
// a few round trips in a whole cell: loss seen, not a bound.
constexpr double kLossFloor = 1e-4;
constexpr std::string_view kLossKnob =
    "PFC/ECN on the RoCE priority, DSCP trust, default_roce_tos (a lossless class that is not)";
constexpr std::string_view kNetLossKnob =
    "the network path's drops: the netdevs' errors and discards, switch buffers";

struct Loss {
  std::string what;         // "rdma:rxe1/1 completer_retry_err +12, ..."
  std::vector<Step> steps;  // loss events per interval
  std::int64_t packets = 0;
};

void addPortLoss(const counters::Series& s, Judging& j, Loss& loss) {
  bool any = false;
  for (auto name : kLossCounters) {
    if (!hasCounter(s, name)) continue;
    any = true;
    const auto steps = counterSteps(s, name);
    const StepSum sum = sumSteps(steps);
    loss.steps = addSteps(loss.steps, steps);
    if (sum.total > 0) {
      loss.what += fmt("%s%s %s +%s", loss.what.empty() ? "" : ", ", s.source.c_str(),
                       std::string(name).c_str(), countText(sum.total).c_str());
    }
  }
  for (auto name : kPacketCounters) loss.packets += sumSteps(counterSteps(s, name)).total;
  if (!any) j.notMeasured(s.source + ": no retransmission or sequence counters");
}

// RPC retransmissions: our client's, and a kernel mount's (transmissions
// beyond the operations' count).
void addRpcLoss(const counters::Series& s, Loss& loss) {
  std::vector<Step> resent;
  if (s.source == "client") resent = counterSteps(s, "retransmits");
  if (s.source.rfind("mountstats:", 0) == 0) {
    const auto sent = suffixSteps(s, ".transmissions");
    const auto ops = suffixSteps(s, ".ops");
    resent = sent;
    for (std::size_t i = 0; i < resent.size() && i < ops.size(); ++i) {
      if (resent[i].delta && ops[i].delta)
        *resent[i].delta -= std::min(*resent[i].delta, *ops[i].delta);
      else
        resent[i].delta.reset();
    }
  }
  const StepSum sum = sumSteps(resent);
  if (sum.total > 0) {
    loss.what += fmt("%s%s RPC retransmissions +%s", loss.what.empty() ? "" : ", ",
                     s.source.c_str(), countText(sum.total).c_str());
  }
  loss.steps = addSteps(loss.steps, resent);
}

}  // namespace

void judgeFabricLoss(Judging& j) {
  if (!j.overNetwork()) return;
  Loss loss;
  bool ports = false;
  for (const auto& s : j.cell.series) {
    if (s.source.rfind("rdma:", 0) == 0) {
      ports = true;
      addPortLoss(s, j, loss);
    }
    addRpcLoss(s, loss);
  }
  if (!ports && j.facts.transport == "rdma") j.notMeasured("rdma ports: none sampled");
  const StepSum sum = sumSteps(loss.steps);
  if (sum.total <= 0) return;
  Finding f{"fabric-loss", loss.what + " in " + ofIntervals(sum.moved, sum.intervals),
            std::string(ports ? kLossKnob : kNetLossKnob)};
  if (loss.packets > 0) {
    const double ratio = static_cast<double>(sum.total) / static_cast<double>(loss.packets);
    f.evidence += fmt(" (%.4f%% of %s packets)", ratio * 100, countText(loss.packets).c_str());
    if (ratio < kLossFloor) markThin(f, "loss seen, a handful against many packets");
  }
  if (const std::string thin = thinSteps(sum); !thin.empty()) markThin(f, thin);
  j.add(std::move(f));
}

namespace {

// Congestion signalled and acted on: mlx5's DCQCN counters (the receiver
// saw ECN marks and sent CNPs; the sender slowed down on them).
constexpr std::array<std::string_view, 3> kEcnCounters{"np_cnp_sent", "np_ecn_marked_roce_packets",
                                                       "rp_cnp_handled"};
constexpr std::string_view kCongestionKnob =
    "PFC/ECN on the RoCE priority (DCQCN), default_roce_tos; a congested hop or incast: fewer "
    "senders per link";

// A netdev counter of pause frames (PFC, 802.3x; not their durations) or
// of discards. Discards with loss counted are that loss, not congestion.
bool congestionName(std::string_view name, bool lossSeen) {
  if (name.find("pause") != std::string_view::npos)
    return name.find("duration") == std::string_view::npos;
  return !lossSeen && name.find("discard") != std::string_view::npos;
}

void addCongestion(const counters::Series& s, std::string_view name, std::string& what,
                   std::vector<Step>& steps) {
  const auto own = counterSteps(s, name);
  const StepSum sum = sumSteps(own);
  steps = addSteps(steps, own);
  if (sum.total <= 0) return;
  what += fmt("%s%s %s +%s", what.empty() ? "" : ", ", s.source.c_str(), std::string(name).c_str(),
              countText(sum.total).c_str());
}

}  // namespace

void judgeFabricCongestion(Judging& j) {
  if (!j.overNetwork()) return;
  const bool lossSeen = j.found("fabric-loss");
  std::string what;
  std::vector<Step> steps;
  for (const auto& s : j.cell.series) {
    if (s.source.rfind("rdma:", 0) == 0) {
      for (auto name : kEcnCounters) {
        if (hasCounter(s, name)) addCongestion(s, name, what, steps);
      }
    } else if (s.source.rfind("net:", 0) == 0) {
      for (const auto& name : counterNames(s)) {
        if (congestionName(name, lossSeen)) addCongestion(s, name, what, steps);
      }
    }
  }
  const StepSum sum = sumSteps(steps);
  if (sum.total <= 0) return;
  Finding f{"fabric-congestion", what + " in " + ofIntervals(sum.moved, sum.intervals),
            std::string(kCongestionKnob)};
  if (const std::string thin = thinSteps(sum); !thin.empty()) markThin(f, thin);
  j.add(std::move(f));
}

}  // namespace nfsrdma::bench
