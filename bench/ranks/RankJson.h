// One RankResult as one JSON line, and back: what a pod prints in its log and
// what an MPI rank sends to rank 0. The line names its schema
// ("nfsrdma-bench-rank/2"); the parser reads untrusted text (any log line),
// so every field must be present with the expected kind and range, no other
// field is accepted, and each error names the source, the field and what
// was expected. Integers are read from their literal text, exact to 2^64.
// One field is optional: "nfsrdma_version", the build the rank ran, which
// lines of earlier builds lack (a line that has it is still /2: what a /2
// line must carry did not change).
#pragma once

#include <string>
#include <string_view>

#include "bench/ranks/RankResult.h"

namespace nfsrdma::bench {

// /2 added "verify" (what the rank checked, its first mismatches); a /1
// line is refused by its schema, naming both.
inline constexpr std::string_view kRankJsonSchema = "nfsrdma-bench-rank/2";
// What every version's line carries: how a log's result lines are found.
inline constexpr std::string_view kRankJsonSchemaFamily = "nfsrdma-bench-rank/";

// The line, ending in '\n'; writing what rankFromJsonLine read gives the
// same bytes.
std::string rankToJsonLine(const RankResult& r);

// source names where the line came from ("pod run-2 log line 14") for the
// error: std::invalid_argument "<source>: field \"read.bytes\": expected ...".
// The result also passes rankResultProblem.
RankResult rankFromJsonLine(std::string_view line, std::string_view source);

}  // namespace nfsrdma::bench
