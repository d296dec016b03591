// One cell of a many-rank run on every rank: run here with the hooks,
// turned into this rank's RankResult, and either gathered at rank 0 and
// added up (MPI) or printed as this rank's one JSON line (a pod, whose
// lines `nfsrdma-bench aggregate` adds up later).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "bench/cluster/Cluster.h"
#include "bench/job/FileJob.h"
#include "bench/job/RankHooks.h"
#include "bench/ranks/RankAggregate.h"
#include "bench/ranks/RankResult.h"

namespace nfsrdma::bench {

// What this rank's run of the cell gave.
struct RankOutcome {
  std::string failure;  // non-empty: the cell could not run here (and why)
  RankTimeline timeline;
  DirectionResult dir[2];    // by IoDirection
  std::uint64_t errors = 0;  // I/O errors and verify mismatches
  std::string firstError;
  VerifyStats verify;  // --verify: what was checked, verify.mismatches of errors
};

struct RankIdentity {
  std::uint32_t rank = 0;
  std::string host;
};

RankResult rankResultOf(const RankOutcome& o, const RankIdentity& who, const std::string& cell);

struct ClusterCellOptions {
  std::int64_t rampNs = 0;
  std::int64_t stonewallNs = 0;  // --stonewall; 0: none
  double stragglerFraction = 0.5;
};

// The cell as rank 0 sees it once every rank reported.
struct CellRanks {
  RankAggregate aggregate;           // no totals when a rank was lost
  std::vector<RankResult> results;   // by rank, offsets applied
  std::vector<ClockOffset> offsets;  // by rank
};

// On every rank, in the same order: runs the cell here (run receives the
// hooks to pass to runFileBenchmark) and gathers. Rank 0 gets the cell;
// the others nullopt. allRan is the same on every rank: false when some
// rank could not run it (the run must end: its totals would be short).
std::optional<CellRanks> runClusterCell(Cluster& cluster, std::uint32_t cell,
                                        const std::string& label, const ClusterCellOptions& options,
                                        const std::function<RankOutcome(RankHooks&)>& run,
                                        bool& allRan);

// A pod's cell: runs it at startAtNs (rank clock) and returns its line.
std::string runScheduledCell(const RankIdentity& who, std::int64_t startAtNs,
                             const std::string& label,
                             const std::function<RankOutcome(RankHooks&)>& run);

}  // namespace nfsrdma::bench
