// The rules behind judgeCell (Bound.h), one concern per file: the bounds
// compare found (FlagRules), the server (ServerRules), credits and depth
// (QueueRules), the fabric (FabricRules), the client's CPU (CpuRules). Each
// adds its findings and the sources it needed but did not get to Judging.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "bench/bound/Bound.h"
#include "bench/bound/BoundSteps.h"

namespace nfsrdma::bench {

// "Most intervals": the share of a cell's intervals a condition must hold
// in. About 80%, as practitioners read nfsd's busy threads, and 0.75 rather
// than 0.8 so that a short cell's ramp-up and ramp-down intervals (its first
// and last, when the jobs start and drain) cannot by themselves clear a rule:
// a 2 s cell has 8 intervals, 6 of which are 0.75.
inline constexpr double kMostShare = 0.75;
// Fewer intervals than this (1 s at the sampler's 250 ms) and "most
// intervals" means little: a finding on them is thin.
inline constexpr int kMinIntervals = 4;
// A counter that rose in fewer intervals than this may be one event: thin.
inline constexpr int kMinMovedIntervals = 2;
// A CPU counts as saturated at 90% of its ticks: at USER_HZ 100 a 250 ms
// interval holds 25 ticks, so one tick is 4% and 90% leaves room for the
// tick counting's own error.
inline constexpr double kCpuSaturated = 0.9;
// The whole host counts as saturated at 95% busy (user, system, irq,
// softirq, steal): a host at 90% still has a CPU's worth of idle on 10+
// CPUs, and a 2-CPU testbed idles a few percent even when flat out.
inline constexpr double kHostSaturated = 0.95;

class Judging {
 public:
  Judging(const CellFacts& cellFacts, const counters::CellSeries& series, Verdict& verdict)
      : facts(cellFacts), cell(series), verdict_(verdict) {}
  const CellFacts& facts;
  const counters::CellSeries& cell;

  // The series of `source`; when absent, notes "SOURCE: WHY" (once).
  const counters::Series* need(std::string_view source, std::string_view why);
  void notMeasured(std::string what);
  void add(Finding f) { verdict_.findings.push_back(std::move(f)); }
  // Whether a finding of this bound that is not thin is there already.
  bool found(std::string_view bound) const;
  // Whether any finding that is not thin is there.
  bool anyFound() const;
  // Whether the cell crossed a network (our client, a kernel NFS mount).
  bool overNetwork() const;
  // Whether the server's counters were sampled on this host.
  bool serverHere() const;

 private:
  Verdict& verdict_;
};

// Marks the finding thin and says why in its evidence.
void markThin(Finding& f, std::string_view why);
// Why a counter's steps are thin evidence, or "" when they are not.
std::string thinSteps(const StepSum& sum);
// A count with thousands grouped, as a reader takes it in: "12,340".
std::string countText(std::int64_t n);
// "1 interval", "40 intervals"
std::string intervalsText(int n);
// "3 of 40 intervals"
std::string ofIntervals(int n, int of);

void judgeFlags(Judging& j);
void judgeServerThreads(Judging& j);
void judgeServerCpu(Judging& j);
void judgeCredits(Judging& j);
void judgeFabricLoss(Judging& j);
void judgeFabricCongestion(Judging& j);
void judgeClientCpu(Judging& j);
void judgeLatency(Judging& j);

}  // namespace nfsrdma::bench
