// A cell's sampled counters in its JSON: per source what the measured
// window added (deltas), the counters that went backwards (reset), the
// gauges' low, mean and high, and as time series the per-interval deltas
// of the counters that moved and the gauges' readings, so a reader sees
// when a counter moved, not only that it did.
#pragma once

#include <string>
#include <vector>

#include "bench/report/Json.h"
#include "counters/Series.h"

namespace nfsrdma::bench {

// "counters": {"interval_s", "sources": [{"source", "readings", "deltas",
// "reset", "gauges", "series": {"t", NAME: [...]}}]}; nothing when the cell
// was not sampled.
void writeCountersJson(JsonWriter& w, const counters::CellSeries& cell);

// One counter's per-interval deltas (a gauge: its readings after the
// first), aligned with the readings after the first; an interval where the
// counter is missing from either reading, or went backwards, is NaN.
std::vector<double> intervalValues(const counters::Series& s, const std::string& name);

}  // namespace nfsrdma::bench
