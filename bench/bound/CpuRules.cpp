// The client's CPU: one benchmark thread on the CPU all the time (the
// busiest thread's ticks per interval at 90% of a CPU or more), or the whole
// host busy (95%+ of every CPU's ticks). When the host is saturated and
// nfsd's threads used most of it, the server's work is what filled it:
// server-cpu. Where the server runs on this host (its counters were
// sampled here) client and server share the CPUs, and the line says so.
#include "bench/bound/BoundRules.h"
#include "bench/bound/CpuSteps.h"
#include "bench/report/Format.h"

namespace nfsrdma::bench {
namespace {

// nfsd's threads "the main consumer" of a saturated host: half its busy time.
constexpr double kNfsdMainShare = 0.5;

struct Saturation {
  std::string why;  // "" when not saturated
  int known = 0;    // intervals judged
  bool softirq = false;
  bool others = false;  // other processes used most of the busy host
};

Saturation busiestThread(Judging& j) {
  const auto* threads = j.need("bench-threads", "not sampled");
  if (!threads) return {};
  const auto hz = gaugeLast(*threads, "hz");
  if (!hz || *hz <= 0) {
    j.notMeasured("bench-threads: hz not read");
    return {};
  }
  Saturation s;
  int saturated = 0;
  double sum = 0;
  for (const auto& used : cpusUsed(*threads, "busiest_ticks", static_cast<double>(*hz))) {
    if (!used) continue;
    ++s.known;
    sum += *used;
    if (*used >= kCpuSaturated) ++saturated;
  }
  if (s.known > 0 && saturated >= kMostShare * s.known) {
    s.why = fmt("the busiest benchmark thread on the CPU in %s (%.0f%% of a CPU on average)",
                ofIntervals(saturated, s.known).c_str(), sum / s.known * 100);
  }
  return s;
}

// A source's share of the host's busy ticks over the cell (nfsd's
// threads, the benchmark's); 0 when not sampled.
double shareOf(const Judging& j, const std::vector<std::optional<HostStep>>& steps,
               std::string_view source) {
  const auto* s = j.cell.find(source);
  const std::int64_t busy = busyTicks(steps);
  if (!s || busy <= 0) return 0;
  return ratio(sumSteps(counterSteps(*s, "ticks")).total, busy);
}

Saturation busyHost(Judging& j, const counters::Series& host) {
  const auto steps = hostSteps(host);
  Saturation s;
  int saturated = 0;
  double sum = 0;
  for (const auto& h : steps) {
    if (!h) continue;
    ++s.known;
    sum += h->busyShare();
    if (h->busyShare() >= kHostSaturated) ++saturated;
  }
  if (s.known == 0 || saturated < kMostShare * s.known) return s;
  s.softirq = softirqDominates(steps);
  const long long cpus = gaugeLast(host, "cpus").value_or(0);
  s.why = fmt("host CPUs %.0f%% busy in %s (%lld CPUs%s)", sum / s.known * 100,
              ofIntervals(saturated, s.known).c_str(), cpus, s.softirq ? ", mostly softirq" : "");
  const double nfsd = shareOf(j, steps, "nfsd-threads");
  const double bench = shareOf(j, steps, "bench-threads");
  s.why += fmt(", the benchmark's threads %.0f%% of it", bench * 100);
  // Neither the benchmark nor a server on this host filled it: the host
  // was busy with other work, which a figure of this cell then reflects.
  // (Softirq is the kernel's network work, likely this cell's own traffic.)
  s.others = bench + nfsd < kNfsdMainShare && !j.serverHere() && !s.softirq;
  if (nfsd >= kNfsdMainShare && !j.found("server-cpu")) {
    Finding f{"server-cpu", s.why + fmt(", nfsd's threads %.0f%% of it", nfsd * 100),
              "more or faster CPUs for the server, or the client on other CPUs"};
    if (s.known < kMinIntervals) markThin(f, "only " + intervalsText(s.known) + " sampled");
    j.add(std::move(f));
  }
  if (nfsd >= kNfsdMainShare) s.why.clear();  // the server filled it, not the client
  return s;
}

}  // namespace

void judgeClientCpu(Judging& j) {
  const Saturation thread = busiestThread(j);
  const auto* host = j.need("host-cpu", "not sampled");
  const Saturation hostSat = host ? busyHost(j, *host) : Saturation{};
  std::string why = thread.why;
  if (!hostSat.why.empty()) why += (why.empty() ? "" : "; ") + hostSat.why;
  if (why.empty()) return;
  if (j.serverHere() && host) {
    why += fmt("; client and server share these %lld CPUs",
               static_cast<long long>(gaugeLast(*host, "cpus").value_or(0)));
  }
  Finding f{"client-cpu", why,
            hostSat.softirq ? "spread the NIC's interrupts over more CPUs (IRQ affinity, RSS), or "
                              "more CPUs for the client"
                            : "more jobs or CPUs for the client (numjobs=)"};
  if (hostSat.others && thread.why.empty()) {
    f.knob = "an idle client host: other processes used most of its CPU during the cell";
  } else if (j.serverHere() && !j.cell.find("nfsd-threads") && thread.why.empty()) {
    f.knob =
        "the server on this host shares the CPUs: run it on its own host, or give the "
        "client more CPUs";
  }
  const int known = std::max(thread.known, hostSat.known);
  if (known < kMinIntervals) markThin(f, "only " + intervalsText(known) + " sampled");
  j.add(std::move(f));
}

}  // namespace nfsrdma::bench
