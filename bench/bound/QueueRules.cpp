// Depth: how many calls were in flight against how many the jobs asked for.
//
// Little's law (in flight = rate x time in the system) gives the depth the
// client kept. Well below what was asked and close to what was granted
// (RPC-over-RDMA credits, session slots, the client's slot table) is a cap
// on concurrency: credits. The depth kept full at a small depth with nothing
// saturated is latency: each call waits for the one before, and only more
// depth raises the rate (QD 1: IOPS = 1 / latency).
#include "bench/bound/BoundRules.h"
#include "bench/report/Format.h"

namespace nfsrdma::bench {
namespace {

// In flight at most 80% of what was asked counts as "well below": our
// client's gauge averages samples and Little's law averages the cell, so a
// depth that is kept full reads 90-100% of it; 80% leaves that noise room.
constexpr double kBelowAsked = 0.8;
// ...and at least 80% of the grant counts as "at the grant".
constexpr double kAtGrant = 0.8;
// A kernel mount's calls waited for a transport slot: on average at least
// one task on the backlog at each send (mountstats' bklog_u grows by the
// backlog's length at every send).
constexpr double kBacklogPerSend = 1.0;
// ...or queued (start to transmit: session slot, credit, backlog) at least
// twice as long as the wire and the server took (rtt).
constexpr double kQueueOverRtt = 2.0;
// Latency-bound only at a small asked depth: at 8 or fewer calls a fast
// server is still waiting for the client, and a sweep's next depth would
// raise the rate; above it "more depth" is no longer the obvious knob.
constexpr std::uint32_t kSmallDepth = 8;

struct Depth {
  double inFlight = 0;
  std::string how;
};

Depth depthKept(Judging& j) {
  if (const auto* client = j.cell.find("client")) {
    if (auto mean = gaugeMean(*client, "in_flight")) return {*mean, "client's mean in flight"};
  }
  StepSum reqs, sends;
  for (const auto& s : j.cell.series) {
    if (s.source.rfind("mountstats:", 0) != 0) continue;
    const StepSum r = sumSteps(counterSteps(s, "req_u"));
    const StepSum n = sumSteps(counterSteps(s, "sends"));
    reqs.total += r.total;
    sends.total += n.total;
  }
  if (sends.total > 0) return {ratio(reqs.total, sends.total), "mountstats' in flight"};
  const double little = j.facts.iops * j.facts.meanLatencyUs / 1e6;
  return {little, "IOPS x mean latency"};
}

// The smallest grant known: credits, slots (our client's gauges), or the
// jobs' depth after the slots granted.
std::optional<std::pair<double, std::string>> granted(Judging& j) {
  std::optional<std::pair<double, std::string>> cap;
  auto consider = [&](double v, std::string what) {
    if (v > 0 && (!cap || v < cap->first)) cap = std::make_pair(v, std::move(what));
  };
  if (const auto* client = j.cell.find("client")) {
    if (auto c = gaugeMean(*client, "credits")) consider(*c, "credits");
    if (auto s = gaugeMean(*client, "slots")) consider(*s, "slots");
  }
  if (j.facts.effectiveIodepth > 0 && j.facts.effectiveIodepth < j.facts.iodepth) {
    consider(static_cast<double>(j.facts.effectiveIodepth) * j.facts.numjobs, "depth granted");
  }
  return cap;
}

// A kernel mount's waits for a slot (mountstats: the backlog at each send,
// queue time against round trip), as evidence text; "" when it did not wait.
std::string kernelWaits(const Judging& j) {
  StepSum backlog, sends, queue, rtt;
  for (const auto& s : j.cell.series) {
    if (s.source.rfind("mountstats:", 0) != 0) continue;
    backlog.total += sumSteps(counterSteps(s, "bklog_u")).total;
    sends.total += sumSteps(counterSteps(s, "sends")).total;
    queue.total += sumSteps(suffixSteps(s, ".queue_ms")).total;
    rtt.total += sumSteps(suffixSteps(s, ".rtt_ms")).total;
  }
  std::string why;
  const double perSend = sends.total > 0 ? ratio(backlog.total, sends.total) : 0;
  if (perSend >= kBacklogPerSend) why = fmt("%.1f calls on the slot backlog per send", perSend);
  if (rtt.total > 0 && ratio(queue.total, rtt.total) >= kQueueOverRtt) {
    why += fmt("%squeued %s ms against %s ms round trip", why.empty() ? "" : ", ",
               countText(queue.total).c_str(), countText(rtt.total).c_str());
  }
  return why;
}

// Our client's calls that wanted to go and could not (no credit or slot).
std::string clientWaits(const Judging& j) {
  const auto* client = j.cell.find("client");
  if (!client) return "";
  const auto wanted = gaugeMean(*client, "wanted");
  const auto inFlight = gaugeMean(*client, "in_flight");
  if (!wanted || !inFlight || *wanted - *inFlight < 1) return "";
  return fmt("the client wanted %.1f calls out and had %.1f", *wanted, *inFlight);
}

std::string join(std::string a, const std::string& b) {
  if (b.empty()) return a;
  return a.empty() ? b : a + "; " + b;
}

// svcrdma's Send Queue starvation: the server waited for room to post its
// replies. A limit of the queue (and the peer's pace), not of the credits.
void judgeSendQueue(Judging& j, bool creditsFound) {
  const auto* svc = j.need("svcrdma", "not on this host");
  if (!svc) return;
  if (!hasCounter(*svc, "rdma_stat_sq_starve"))
    return j.notMeasured("svcrdma: no rdma_stat_sq_starve");
  const StepSum starve = sumSteps(counterSteps(*svc, "rdma_stat_sq_starve"));
  if (starve.total <= 0) return;
  Finding f{
      "credits",
      fmt("svcrdma's Send Queue starved %s times in %s: the server waited for room to send "
          "its replies",
          countText(starve.total).c_str(), ofIntervals(starve.moved, starve.intervals).c_str()),
      "nconnect= (each connection its own Send Queue); more max_requests will not help"};
  if (const std::string thin = thinSteps(starve); !thin.empty()) markThin(f, thin);
  if (creditsFound && f.thin) return;  // a handful of waits adds nothing to the credits line
  j.add(std::move(f));
}

// Our client counts a call from its submission, so its in flight includes
// the calls that wait inside it for a credit or a slot: more of them than
// the grant means the wire carried only the grant. Empty when not.
std::string beyondGrant(Judging& j, std::uint32_t asked) {
  const auto* client = j.cell.find("client");
  if (!client) return "";
  const auto inFlight = gaugeMean(*client, "in_flight");
  const auto cap = granted(j);
  if (!inFlight || !cap || cap->first >= asked || *inFlight < cap->first + 1) return "";
  return fmt(
      "%.1f calls outstanding of %u asked, but the server granted %.0f %s: at most that "
      "many on the wire, the rest wait in the client",
      *inFlight, asked, cap->first, cap->second.c_str());
}

}  // namespace

void judgeCredits(Judging& j) {
  const std::uint32_t asked = j.facts.iodepth * j.facts.numjobs;
  if (!j.overNetwork() || asked == 0) return;
  const Depth d = depthKept(j);
  std::string why = beyondGrant(j, asked);
  if (why.empty() && d.inFlight <= kBelowAsked * asked) {
    const auto cap = granted(j);
    if (cap && cap->first < asked && d.inFlight >= kAtGrant * cap->first) {
      why = fmt("%.1f in flight (%s) of %u asked, at the %.0f %s", d.inFlight, d.how.c_str(), asked,
                cap->first, cap->second.c_str());
    }
    why = join(join(why, kernelWaits(j)), clientWaits(j));
    if (!why.empty() && why.find("in flight") == std::string::npos) {
      why = fmt("%.1f in flight (%s) of %u asked; ", d.inFlight, d.how.c_str(), asked) + why;
    }
  }
  if (!why.empty()) {
    j.add({"credits", why,
           "tuning max_requests (svcrdma credits) and the client's slots (max_session_slots, "
           "rdma_slot_table_entries), or nconnect="});
  }
  if (j.facts.transport == "rdma" || j.facts.transport == "kernel-nfs")
    judgeSendQueue(j, !why.empty());
}

void judgeLatency(Judging& j) {
  const std::uint32_t asked = j.facts.iodepth * j.facts.numjobs;
  if (asked == 0 || asked > kSmallDepth || j.anyFound()) return;
  if (j.facts.iops <= 0 || j.facts.meanLatencyUs <= 0) {
    return j.notMeasured("latency: the cell's IOPS or mean latency");
  }
  // In requests, as asked: our client's gauge counts RPCs, and a request
  // above its largest I/O size goes as several.
  const Depth d{j.facts.iops * j.facts.meanLatencyUs / 1e6, "IOPS x mean latency"};
  if (d.inFlight < kBelowAsked * asked) return;
  Finding f{"latency",
            fmt("latency-bound: %.1f in flight x %.0f us = %.0f IOPS (%u asked, %s); more qd= "
                "would help",
                d.inFlight, j.facts.meanLatencyUs, j.facts.iops, asked, d.how.c_str()),
            "qd= / --iodepth, or numjobs="};
  j.add(std::move(f));
}

}  // namespace nfsrdma::bench
