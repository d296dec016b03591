// The clients' result lines out of their logs: what `nfsrdma-bench
// aggregate` reads from pod logs (`kubectl logs -l job-name=RUN`, with or
// without --prefix) or from saved files. A log holds other lines too (the
// client's own text report, the container runtime's): only lines that
// carry a rank result's schema are read, and those must parse.
#pragma once

#include <cstdint>
#include <istream>
#include <string>
#include <string_view>
#include <vector>

#include "bench/ranks/RankResult.h"

namespace nfsrdma::bench {

// Every cell's results, cells in the order of their first line.
struct RankLogCells {
  std::vector<std::string> cells;
  std::vector<std::vector<RankResult>> results;  // by cell
  std::uint32_t highestRank = 0;
  std::size_t lines = 0;  // result lines read
};

// Adds the result lines of in to into. source names the log in errors:
// std::invalid_argument "pods.log line 12: field ..." for a line that
// carries the schema and does not parse, or a second result of one rank
// for one cell ("... rank 2 reported cell X twice (lines 4 and 9)").
void readRankLog(std::istream& in, std::string_view source, RankLogCells& into);

}  // namespace nfsrdma::bench
