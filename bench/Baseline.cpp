// Baseline comparison: a saved compare JSON against this run, cell by cell
// (profile, direction, target). What users judge later complaints against
// is the figure measured at install time, so the change is shown for every
// cell and drops beyond the threshold are flagged as regressions.
#include <cmath>

#include "bench/CompareMatrix.h"

namespace nfsrdma::bench {

void applyBaseline(CompareReport& report, const CompareReport& before, const std::string& path,
                   double thresholdPercent) {
  report.baselinePath = path;
  report.regressionThresholdPercent = thresholdPercent;
  for (auto& c : report.cells) {
    c.baselineMibPerSecond.reset();
    c.baselineIops.reset();
    c.regression = false;
    c.changePercent = 0;
    if (!c.ran) continue;
    const CompareCell* old = before.cell(c.profile, c.direction, c.target);
    if (old == nullptr || !old->ran || old->mibPerSecond <= 0) continue;
    c.baselineMibPerSecond = old->mibPerSecond;
    c.baselineIops = old->iops;
    c.changePercent = (c.mibPerSecond - old->mibPerSecond) / old->mibPerSecond * 100.0;
    c.regression = c.changePercent < -thresholdPercent;
  }
}

}  // namespace nfsrdma::bench
