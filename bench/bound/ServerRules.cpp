// The server's side when it runs on this host (the VM testbed, the embedded
// server): its nfsd threads and its CPU.
//
// nfsd threads: on 6.12 no counter says "a request waited for a thread"
// (sockets-enqueued counts every enqueue since 6.6, not only those that
// found no idle thread), so the signature is the threads' states: an idle
// nfsd thread sleeps as TASK_IDLE ('I'); all threads out of 'I' in most
// samples while RPCs keep arriving (pool_stats' packets-arrived rising) is a
// server out of threads. If those threads are also on the CPU all the time
// the server's CPU is the limit as well, and more threads need more CPU:
// both are said.
#include "bench/bound/BoundRules.h"
#include "bench/bound/CpuSteps.h"
#include "bench/report/Format.h"

namespace nfsrdma::bench {
namespace {

constexpr std::string_view kThreadsKnob =
    "more nfsd threads: 'nfsd threads N' in nfsrdma-server's config, or "
    "echo N > /proc/fs/nfsd/threads";
constexpr std::string_view kServerCpuKnob =
    "more or faster CPUs for the server, or its work spread over more of them (NIC IRQ "
    "affinity, nfsd on the NIC's NUMA node)";

struct AllBusy {
  int samples = 0;  // readings while the jobs ran with both levels
  int allBusy = 0;  // of which every thread was busy
  std::int64_t threads = 0;
};

AllBusy countAllBusy(const counters::Series& s) {
  const auto busy = gaugeLevels(s, "busy");
  const auto threads = gaugeLevels(s, "threads");
  AllBusy out;
  const auto [first, last] = whileRunning(s);
  for (std::size_t i = first; i < last; ++i) {
    if (!busy[i] || !threads[i] || *threads[i] <= 0) continue;
    ++out.samples;
    out.threads = *threads[i];
    if (*busy[i] >= *threads[i]) ++out.allBusy;
  }
  return out;
}

}  // namespace

void judgeServerThreads(Judging& j) {
  if (!j.overNetwork()) return;
  const auto* threads = j.need("nfsd-threads", "not on this host");
  const auto* pool = j.need("nfsd-pool", "not on this host");
  if (!threads || !pool) return;
  const AllBusy busy = countAllBusy(*threads);
  const StepSum arrived = sumSteps(counterSteps(*pool, "packets-arrived"));
  if (busy.samples == 0) return j.notMeasured("nfsd-threads: no thread counts read");
  if (arrived.known == 0) return j.notMeasured("nfsd-pool: packets-arrived not read");
  const double share = static_cast<double>(busy.allBusy) / busy.samples;
  if (share < kMostShare || arrived.total <= 0) return;
  Finding f{"server-threads",
            fmt("nfsd threads busy in %.0f%% of %d samples (%lld thread%s), %s RPCs arrived",
                share * 100, busy.samples, static_cast<long long>(busy.threads),
                busy.threads == 1 ? "" : "s", countText(arrived.total).c_str()),
            std::string(kThreadsKnob)};
  if (busy.samples < kMinIntervals) {
    markThin(f, fmt("only %d sample%s", busy.samples, busy.samples == 1 ? "" : "s"));
  }
  if (arrived.moved < kMostShare * arrived.known) {
    markThin(f, "RPCs arrived in only " + ofIntervals(arrived.moved, arrived.known));
  }
  j.add(std::move(f));
}

namespace {

// Intervals in which nfsd's threads used at least 90% of min(threads,
// CPUs): every thread on the CPU all the time, or every CPU busy with nfsd.
int saturatedIntervals(const std::vector<std::optional<double>>& used, double limit, int& known) {
  int saturated = 0;
  known = 0;
  for (const auto& u : used) {
    if (!u) continue;
    ++known;
    if (*u >= kCpuSaturated * limit) ++saturated;
  }
  return saturated;
}

}  // namespace

void judgeServerCpu(Judging& j) {
  const auto* threads = j.cell.find("nfsd-threads");
  if (!threads) return;  // judgeServerThreads said it is not measured
  const auto* host = j.need("host-cpu", "not sampled");
  if (!host) return;
  const auto hz = gaugeLast(*host, "hz");
  const auto cpus = gaugeLast(*host, "cpus");
  const auto count = gaugeLast(*threads, "threads");
  if (!hz || !cpus || !count || *hz <= 0 || *cpus <= 0 || *count <= 0) {
    return j.notMeasured("server CPU: hz, cpus or the nfsd thread count not read");
  }
  const double limit = static_cast<double>(std::min(*count, *cpus));
  int known = 0;
  const auto used = cpusUsed(*threads, "ticks", static_cast<double>(*hz));
  const int saturated = saturatedIntervals(used, limit, known);
  if (known == 0) return j.notMeasured("nfsd-threads: ticks not read");
  if (saturated < kMostShare * known) return;
  double sum = 0;
  for (const auto& u : used) sum += u.value_or(0);
  Finding f{"server-cpu",
            fmt("nfsd threads on the CPU in %s (%.2f CPUs used of %lld thread%s, %lld CPUs)",
                ofIntervals(saturated, known).c_str(), sum / known, static_cast<long long>(*count),
                *count == 1 ? "" : "s", static_cast<long long>(*cpus)),
            std::string(kServerCpuKnob)};
  if (known < kMinIntervals) markThin(f, "only " + intervalsText(known) + " sampled");
  j.add(std::move(f));
}

}  // namespace nfsrdma::bench
