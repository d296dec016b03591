// The client's CPU: one benchmark thread on the CPU all the time (the
// busiest thread's ticks per interval at 90% of a CPU or more), or the whole
// host busy (95%+ of every CPU's ticks). When the host is saturated and
// nfsd's threads used most of it, the server's work is what filled it:
// server-cpu. Where the server runs on this host (its counters were
// sampled here) client and server share the CPUs, and the line says so.
#include <algorithm>

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
  bool others = false;    // other processes used most of the busy host
  double benchShare = 0;  // the benchmark's threads' share of the busy host
};

// A benchmark thread ready to run but kept off the CPU: the longest
// run-queue wait of each interval (schedstat) at this share of it or more.
// A busy CPU the benchmark shares fairly shows up to about half (the
// testbed's soft-RoCE workers and the jobs on 2 CPUs: 35-56%); a CPU held
// by other work, 90% and more.
constexpr double kStarvedShare = 0.7;

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

Saturation starvedThread(Judging& j) {
  const auto* threads = j.cell.find("bench-threads");
  if (!threads || !hasCounter(*threads, "longest_wait_ms")) return {};
  Saturation s;
  int starved = 0;
  double sum = 0;
  for (const auto& waited : cpusUsed(*threads, "longest_wait_ms", 1000.0)) {
    if (!waited) continue;
    ++s.known;
    // A wait that spans a reading's boundary can read a little over the
    // interval: a thread waits at most all of it.
    sum += std::min(*waited, 1.0);
    if (*waited >= kStarvedShare) ++starved;
  }
  if (s.known > 0 && starved >= kMostShare * s.known) {
    s.why = fmt("a benchmark thread waited for a CPU %.0f%% of the time in %s (run queue)",
                sum / s.known * 100, ofIntervals(starved, s.known).c_str());
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
  s.benchShare = bench;
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
  const Saturation starved = starvedThread(j);
  const auto* host = j.need("host-cpu", "not sampled");
  const Saturation hostSat = host ? busyHost(j, *host) : Saturation{};
  const long long cpus = host ? gaugeLast(*host, "cpus").value_or(0) : 0;
  const bool clientsOwn = !thread.why.empty() || !starved.why.empty();
  // A saturated host the benchmark used little of, with the server on it:
  // client, server and the kernel's network work share the CPUs, and no
  // one of them is the client's bound.
  if (!clientsOwn && !hostSat.why.empty() && !hostSat.others &&
      hostSat.benchShare < kNfsdMainShare && j.serverHere()) {
    Finding f{"host-cpu",
              hostSat.why + fmt("; client, server and the kernel's network work share these %lld "
                                "CPUs",
                                cpus),
              "the client and the server on hosts of their own, or more CPUs"};
    if (hostSat.known < kMinIntervals)
      markThin(f, "only " + intervalsText(hostSat.known) + " sampled");
    return j.add(std::move(f));
  }
  std::string why = thread.why;
  if (!starved.why.empty()) why += (why.empty() ? "" : "; ") + starved.why;
  if (!hostSat.why.empty()) why += (why.empty() ? "" : "; ") + hostSat.why;
  if (why.empty()) return;
  if (j.serverHere() && host) why += fmt("; client and server share these %lld CPUs", cpus);
  Finding f{"client-cpu", why,
            hostSat.softirq ? "spread the NIC's interrupts over more CPUs (IRQ affinity, RSS), or "
                              "more CPUs for the client"
                            : "more jobs or CPUs for the client (numjobs=)"};
  if (!starved.why.empty() && thread.why.empty()) {
    f.knob =
        "CPUs of its own for the benchmark: other work held the CPUs it runs on (taskset, "
        "nice, an idle host)";
  } else if (hostSat.others && !clientsOwn) {
    f.knob = "an idle client host: other processes used most of its CPU during the cell";
  }
  const int known = std::max({thread.known, starved.known, hostSat.known});
  if (known < kMinIntervals) markThin(f, "only " + intervalsText(known) + " sampled");
  j.add(std::move(f));
}

}  // namespace nfsrdma::bench
