// --versus: a setting the user names (a rule of thumb, a grid's best),
// measured against tune's recommendation after the search, in alternated
// runs so that drift cancels, and given as their ratio with its interval.
// A tuner that loses to a rule of thumb is not worth running: this is how
// a user finds out on their own system. Pure: the runs go through the
// function given.
#pragma once

#include <functional>
#include <string>

#include "bench/tune/TuneReport.h"
#include "bench/tune/TuneSearch.h"
#include "bench/tune/TuneSpace.h"

namespace nfsrdma::bench {

struct VersusSetting {
  std::string label;  // "rules" of "rules:nconnect=8", else the keys
  std::string keys;
  Setting setting;  // over the space it was parsed in
};

// "[LABEL:]KNOB=LEVEL&KNOB=LEVEL" over space (every knob that could be in
// play, not only --knobs'; a number a knob lacks is added to its levels).
// Throws std::invalid_argument starting "--versus".
VersusSetting parseVersus(KnobSpace& space, const std::string& text);

// A setting of the search's knobs as a setting of space (knobs space has
// and the search had not stay at their start).
Setting settingInSpace(KnobSpace& space, const std::vector<Knob>& knobs, const Setting& setting,
                       const Setting& start);

// pairs x (the recommendation, then v): the ratio of each pair's figures.
// run returns a run's figure (higher is better) or throws; an error ends
// the comparison with the error said.
VersusRun measureVersus(const VersusSetting& v, const Setting& recommendation, int pairs,
                        const std::function<double(const Setting&)>& run);

}  // namespace nfsrdma::bench
