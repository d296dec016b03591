// The median of a set of figures: the middle one, or the mean of the two
// middle ones; 0 for none. One helper for the reports' summaries (the
// ranks' median rate, tune's median pair ratio).
#pragma once

#include <vector>

namespace nfsrdma::bench {

double median(std::vector<double> v);

}  // namespace nfsrdma::bench
