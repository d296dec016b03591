// A recorded series read interval by interval: what a cumulative counter
// added between two consecutive readings, and a gauge's levels. The rules
// judge "in most intervals", which the cell's first and last readings alone
// cannot show. A counter missing from either reading of an interval, or one
// that went backwards (svcrdma's counters reset when written, a module
// reload starts over), has no delta for that interval: unknown, not zero.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "counters/Series.h"

namespace nfsrdma::bench {

struct Step {
  double seconds = 0;                 // the interval's length
  std::optional<std::int64_t> delta;  // what the counter added in it
};

// One step per pair of consecutive readings whose clock moved forward.
std::vector<Step> counterSteps(const counters::Series& s, std::string_view name);

// A counter's steps summed over every counter whose name ends in `suffix`
// (mountstats' per-operation "READ.queue_ms", "WRITE.queue_ms", ...); an
// interval is known when at least one such counter has a delta in it.
std::vector<Step> suffixSteps(const counters::Series& s, std::string_view suffix);

struct StepSum {
  std::int64_t total = 0;  // over the known steps
  int intervals = 0;       // steps in the series
  int known = 0;           // steps with a delta
  int moved = 0;           // steps whose delta is above zero
};
StepSum sumSteps(const std::vector<Step>& steps);

// Interval-wise sum of several counters' steps, step i with step i. Within
// one series the steps are the same intervals; across series (the sampler
// reads every source at each tick) they are the same up to a source that
// missed a reading, which shifts the rest by one: good enough for counting
// the intervals an event fell in, not for lining rates up.
std::vector<Step> addSteps(const std::vector<Step>& a, const std::vector<Step>& b);

// A gauge's value at each reading (nullopt where it was not read).
std::vector<std::optional<std::int64_t>> gaugeLevels(const counters::Series& s,
                                                     std::string_view name);
// The readings taken while the jobs ran, as [first, last): the cell's first
// reading (taken before the jobs start) and its last (after they drained)
// left out when there are readings between them.
std::pair<std::size_t, std::size_t> whileRunning(const counters::Series& s);
// The gauge's mean over the readings while the jobs ran that have it.
std::optional<double> gaugeMean(const counters::Series& s, std::string_view name);
// The last reading's value that is there.
std::optional<std::int64_t> gaugeLast(const counters::Series& s, std::string_view name);

// a / b of two counts (b above zero).
inline double ratio(std::int64_t a, std::int64_t b) {
  return static_cast<double>(a) / static_cast<double>(b);
}

// Whether any reading of the series holds the counter.
bool hasCounter(const counters::Series& s, std::string_view name);

}  // namespace nfsrdma::bench
