// The ranks' result lines out of their logs: what `nfsrdma-bench
// aggregate` reads from pod logs (`kubectl logs -l job-name=RUN`, with or
// without --prefix) or from saved files. A log holds other lines too (the
// rank's own text report, the container runtime's): only lines that
// carry a rank result's schema are read, and those must parse.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "bench/ranks/RankResult.h"
#include "bench/report/InputFile.h"

namespace nfsrdma::bench {

// Every cell's results, cells in the order of their first line.
struct RankLogCells {
  std::vector<std::string> cells;
  std::vector<std::vector<RankResult>> results;  // by cell
  std::uint32_t highestRank = 0;
  std::size_t lines = 0;  // result lines read
};

// A log as aggregate reads it: a result line holds a histogram per
// direction and a progress sample every 100 ms, some 40 bytes each, so a
// day's run (--runtime's limit) makes a line of some 35 MiB; a log of 4096
// ranks' lines for a matrix of cells stays well inside the total.
inline constexpr InputKind kRankLogInput{"a log of result lines", std::uint64_t{4} << 30};
inline constexpr std::size_t kMaxRankLogLineBytes = std::size_t{64} << 20;

// The lines of a log ("-": standard input) within kRankLogInput's bounds.
InputLines rankLogLines(const std::string& path);

// Adds the result lines of in to into; the errors name in's source and the
// line: std::invalid_argument "pods.log line 12: field ..." for a line that
// carries the schema and does not parse, or a second result of one rank
// for one cell ("... rank 2 reported cell X a second time"); what in
// throws for a line or a log beyond its bounds.
void readRankLog(InputLines& in, RankLogCells& into);

}  // namespace nfsrdma::bench
