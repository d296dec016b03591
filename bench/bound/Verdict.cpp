// judgeCell: the rules in the order their bounds sit on the path (the
// server's disk and cache, its threads and CPU, credits, the fabric, the
// client's CPU), latency last: it is what is left when nothing above
// saturated.
#include <algorithm>

#include "bench/bound/Bound.h"
#include "bench/bound/BoundRules.h"
#include "bench/report/Format.h"

namespace nfsrdma::bench {

std::string Verdict::tag() const {
  std::vector<std::string_view> bounds;
  for (const auto& f : findings) {
    if (f.thin || std::find(bounds.begin(), bounds.end(), f.bound) != bounds.end()) continue;
    bounds.push_back(f.bound);
  }
  if (bounds.empty()) return "none";
  std::string tag;
  for (auto b : bounds) tag += (tag.empty() ? "" : "+") + std::string(b);
  return tag;
}

Verdict judgeCell(const CellFacts& facts, const counters::CellSeries& cell) {
  Verdict v;
  Judging j(facts, cell, v);
  judgeFlags(j);
  judgeServerThreads(j);
  judgeServerCpu(j);
  judgeCredits(j);
  judgeFabricLoss(j);
  judgeFabricCongestion(j);
  judgeClientCpu(j);
  judgeLatency(j);
  return v;
}

const counters::Series* Judging::need(std::string_view source, std::string_view why) {
  const counters::Series* s = cell.find(source);
  if (!s) notMeasured(std::string(source) + ": " + std::string(why));
  return s;
}

void Judging::notMeasured(std::string what) {
  auto& list = verdict_.notMeasured;
  if (std::find(list.begin(), list.end(), what) == list.end()) list.push_back(std::move(what));
}

bool Judging::found(std::string_view bound) const {
  return std::any_of(verdict_.findings.begin(), verdict_.findings.end(),
                     [&](const Finding& f) { return !f.thin && f.bound == bound; });
}

bool Judging::anyFound() const {
  return std::any_of(verdict_.findings.begin(), verdict_.findings.end(),
                     [](const Finding& f) { return !f.thin; });
}

bool Judging::overNetwork() const {
  return facts.transport == "rdma" || facts.transport == "tcp" || facts.transport == "kernel-nfs";
}

bool Judging::serverHere() const {
  return facts.serverOnThisHost || cell.find("nfsd-pool") || cell.find("nfsd-threads") ||
         cell.find("svcrdma");
}

void markThin(Finding& f, std::string_view why) {
  if (!f.thin)
    f.evidence += "; evidence thin: ";
  else
    f.evidence += ", ";
  f.evidence += why;
  f.thin = true;
}

std::string countText(std::int64_t n) {
  // The magnitude as unsigned: -n of the smallest int64 does not exist.
  const std::uint64_t magnitude =
      n < 0 ? 0 - static_cast<std::uint64_t>(n) : static_cast<std::uint64_t>(n);
  std::string digits = std::to_string(magnitude);
  for (auto at = static_cast<std::ptrdiff_t>(digits.size()) - 3; at > 0; at -= 3) {
    digits.insert(static_cast<std::size_t>(at), 1, ',');
  }
  return n < 0 ? "-" + digits : digits;
}

std::string intervalsText(int n) {
  return fmt("%d interval%s", n, n == 1 ? "" : "s");
}

std::string ofIntervals(int n, int of) {
  return fmt("%d of ", n) + intervalsText(of);
}

std::string thinSteps(const StepSum& sum) {
  if (sum.intervals < kMinIntervals) return "only " + intervalsText(sum.intervals) + " sampled";
  if (sum.moved < kMinMovedIntervals) return "moved in " + ofIntervals(sum.moved, sum.intervals);
  return "";
}

}  // namespace nfsrdma::bench
