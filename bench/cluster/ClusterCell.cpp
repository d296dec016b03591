#include "bench/cluster/ClusterCell.h"

#include <algorithm>
#include <stdexcept>

#include "bench/cluster/RankStartHooks.h"
#include "bench/ranks/RankJson.h"
#include "util/Version.h"

namespace nfsrdma::bench {

RankResult rankResultOf(const RankOutcome& o, const RankIdentity& who, const std::string& cell) {
  RankResult r;
  r.cell = cell;
  r.version = util::versionText();
  r.rank = who.rank;
  r.host = who.host;
  if (!o.failure.empty()) {
    r.failed = true;
    r.firstError = o.failure;
    return r;
  }
  r.startNs = o.timeline.startNs;
  r.endNs = o.timeline.endNs;
  const auto& rd = o.dir[static_cast<int>(IoDirection::Read)];
  const auto& wr = o.dir[static_cast<int>(IoDirection::Write)];
  r.read = {rd.bytes, rd.ops, rd.lat};
  r.write = {wr.bytes, wr.ops, wr.lat};
  r.errors = o.errors;
  r.firstError = o.firstError;
  r.verify = o.verify;
  for (const auto& p : o.timeline.points) r.samples.push_back({p.atNs, p.bytes, p.ops});
  return r;
}

namespace {

// Rank 0: every rank's line back into results, each shifted by its offset.
CellRanks addUp(const std::vector<std::string>& lines, std::vector<ClockOffset> offsets,
                std::uint32_t ranks, const ClusterCellOptions& options) {
  CellRanks c;
  for (std::size_t k = 0; k < lines.size(); ++k) {
    RankResult r = rankFromJsonLine(lines[k], "rank " + std::to_string(k) + "'s result");
    if (k < offsets.size()) r.clockOffsetNs = offsets[k].offsetNs;
    c.results.push_back(std::move(r));
  }
  c.offsets = std::move(offsets);
  c.aggregate = aggregateRanks(c.results, ranks, {options.stragglerFraction, options.rampNs});
  // The ranks that were ready say only that another was not: with that
  // one's own error in the list, theirs would read as more lost ranks.
  auto& errors = c.aggregate.errors;
  const auto abandoned = [](const std::string& e) {
    return e.find(kAbandonedByAnother) != std::string::npos;
  };
  if (!std::all_of(errors.begin(), errors.end(), abandoned)) {
    errors.erase(std::remove_if(errors.begin(), errors.end(), abandoned), errors.end());
  }
  return c;
}

}  // namespace

std::optional<CellRanks> runClusterCell(Cluster& cluster, std::uint32_t cell,
                                        const std::string& label, const ClusterCellOptions& options,
                                        const std::function<RankOutcome(RankHooks&)>& run,
                                        bool& allRan) {
  MpiRankHooks hooks(cluster, cell, options.rampNs, options.stonewallNs);
  RankOutcome mine = run(hooks);
  // A cell that failed before its jobs were set up never reached the
  // barrier: it must still take part, or the others would wait there.
  if (!hooks.joined()) {
    hooks.startTogether(mine.failure.empty() ? "the cell ended before it started" : mine.failure);
  }
  const RankResult result = rankResultOf(mine, {cluster.rank(), cluster.host()}, label);
  const auto lines = cluster.gather(rankToJsonLine(result));
  allRan = cluster.allOk(!result.failed);
  if (cluster.rank() != 0) return std::nullopt;
  return addUp(lines, hooks.offsets(), cluster.size(), options);
}

std::string runScheduledCell(const RankIdentity& who, std::int64_t startAtNs,
                             const std::string& label,
                             const std::function<RankOutcome(RankHooks&)>& run) {
  ScheduledRankHooks hooks(startAtNs);
  return rankToJsonLine(rankResultOf(run(hooks), who, label));
}

}  // namespace nfsrdma::bench
