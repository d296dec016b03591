// A cell's sampled counters as small time series for the HTML report: one
// sparkline per counter that moved during the measured window (per second)
// and per gauge that changed, labelled source and name, with the peak.
// The JSON has every counter; the page shows the first kMaxCharts, the
// ones the verdicts read first.
#pragma once

#include <cstddef>
#include <string>

#include "counters/Series.h"

namespace nfsrdma::bench {

inline constexpr std::size_t kMaxCharts = 12;

// HTML (a div of inline SVGs); empty when nothing moved or nothing was sampled.
std::string counterCharts(const counters::CellSeries& cell);

}  // namespace nfsrdma::bench
