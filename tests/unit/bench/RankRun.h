// One client's result of a cell as tests of many clients need it: a steady
// read of mib MiB in 1 MiB requests from startS to endS on its own clock,
// latencies of 1000 + i ns, one progress sample at its end.
#pragma once

#include <cstdint>
#include <string>

#include "bench/ranks/RankResult.h"

namespace nfsrdma::bench::testing {

inline RankResult ranFor(std::uint32_t rank, const std::string& cell, double startS, double endS,
                         std::uint64_t mib) {
  constexpr double kSec = 1e9;
  RankResult r;
  r.cell = cell;
  r.rank = rank;
  r.host = "node-" + std::to_string(rank);
  r.startNs = static_cast<std::int64_t>(startS * kSec);
  r.endNs = static_cast<std::int64_t>(endS * kSec);
  r.read.bytes = mib << 20;
  r.read.ops = mib;
  for (std::uint64_t i = 0; i < mib; ++i) r.read.latency.record(1000 + i);
  r.samples.push_back({r.endNs, r.read.bytes, r.read.ops});
  return r;
}

}  // namespace nfsrdma::bench::testing
