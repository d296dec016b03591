// The conditions `nfsrdma-bench compare` measures each target under, decided
// once for the whole matrix so that the targets of a row differ only in the
// target: the server's page cache before every read cell (all dropped, or
// all warm), which targets a link bounds (every target that crosses one to an
// NFS server, a kernel NFS mount given as a path included), whose RAM the
// working set is checked against, and warnings about bounds that are not what
// they seem (--direct 0). Also the cells of one run and the matrix loop, with
// the run injectable so unit tests drive it without a server.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "bench/compare/CompareMatrix.h"
#include "bench/file/FileRun.h"

namespace nfsrdma::bench {

struct ServerCachePlan {
  CachePrep prep = CachePrep::Warm;  // before every read cell of every target
  std::string description;           // the report header's "server cache" line
};

// Drop when asked to (--drop-server-cache), every target's server is this
// host and dropBlocked is empty (else it says why this host cannot drop its
// cache, e.g. not root); otherwise warm, unless the file set is larger than
// the server's known RAM (no target can start warm: left unmanaged).
ServerCachePlan planServerCache(const std::vector<TargetSpec>& targets, bool dropRequested,
                                const std::string& dropBlocked, double workingSetBytes,
                                std::optional<double> serverMemoryBytes);

// Why this host cannot drop its page cache (/proc/sys/vm/drop_caches not writable), or empty.
std::string dropCachesBlocked();

struct ServerMemory {
  std::optional<double> bytes;
  std::string source;  // where the figure came from, or why it is unknown
};
// --server-mem when given; else this host's RAM when every target's server
// is this host; else unknown, naming the first target whose server is not.
ServerMemory serverMemoryOf(const std::vector<TargetSpec>& targets, std::optional<double> given,
                            std::optional<double> thisHostBytes);

// The link that bounds a target's figures: every target over NFS (nfs,
// libnfs, a path on an NFS mount) gets its transport's figure from
// `nfsrdma-bench link --json`, or for RDMA the device's reported speed.
struct LinkBounds {
  LinkFigures figures;
  std::string source;      // "nfsrdma-bench link, link.json"
  std::string rdmaDevice;  // "mlx5_0 port 1", empty: none
  double rdmaDeviceGbps = 0;
};
void attachLinkBound(CompareTarget& t, const TargetSpec& s, const LinkBounds& link);

// Warnings for the report's notes about the conditions themselves, e.g.
// --direct 0 turning the local disk bound into the page cache's.
std::vector<std::string> conditionWarnings(const std::vector<TargetSpec>& targets,
                                           const FileOptions& options,
                                           const std::string& diskTarget);

// The report cells of one run (a read and/or a write cell); write cells
// count the COMMIT/fsync in their rates.
std::vector<CompareCell> cellsOf(const RunResult& r, const FileProfile& p);

using CellRunner = std::function<RunResult(const TargetSpec&, const FileProfile&,
                                           const FileOptions&, const RunSettings&)>;

// Runs profiles x usable targets, profile by profile, every cell prepared as
// the plan says; appends the cells (and notes on cells whose cache did not
// reach the planned state) to the report. True when a cell failed.
// An interrupt (Interrupted) ends the matrix; created collects the files
// the cells laid out, for the command to remove then.
bool runCompareMatrix(CompareReport& report, const std::vector<TargetSpec>& targets,
                      const std::vector<bool>& usable, const std::vector<FileProfile>& profiles,
                      const FileOptions& options, const ServerCachePlan& plan, bool progress,
                      const CellRunner& run = runFileBenchmark, CreatedFiles* created = nullptr);

}  // namespace nfsrdma::bench
