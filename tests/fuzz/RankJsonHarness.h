// The rank-result line fuzz harness (fuzz_rank_json), shared with the unit
// test that replays its corpus: the input is one log line as a pod or an
// MPI rank would send it (bench/ranks/RankJson.h). The parser must refuse it
// with std::invalid_argument, or return a result that passes
// rankResultProblem and writes back to a line that reads back the same.
#pragma once

#include <cstdint>
#include <span>

namespace nfsrdma::fuzz {

// False if the parser failed otherwise, accepted an inconsistent result, or
// did not round trip (the fuzz target aborts then).
bool runRankJson(std::span<const std::uint8_t> input);

}  // namespace nfsrdma::fuzz
