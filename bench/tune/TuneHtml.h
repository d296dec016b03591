// tune's report as one self-contained HTML page (no script, no external
// file, as compare's): a bar chart per knob (each level's figure, the
// start's bar grey, the level that matters most in green), the joint
// search's settings as one more chart, then the text report whole
// (tables, recommendation, evidence, hand-over).
#pragma once

#include <string>

#include "bench/tune/TuneReport.h"

namespace nfsrdma::bench {

std::string tuneHtml(const TuneRun& t);

}  // namespace nfsrdma::bench
