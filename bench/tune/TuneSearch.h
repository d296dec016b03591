// The search behind `nfsrdma-bench tune` (issue 40's first part): which
// knobs matter for a workload and which of their levels make it fast,
// learned from real runs whose figures are noisy and drift while the
// search runs. Pure: it calls the given run function for every trial and
// keeps what it returned, so tests drive it on synthetic surfaces.
//
// The steps, as the storage-tuning literature found them to work (rank
// the knobs first, tune only the few that matter, confirm against the
// start point):
//  1. noise: the start point measured a few times (its relative spread);
//  2. screening: every level of every knob alone, in the order given (the
//     verdicts put the knob that moves the bound first), each judged
//     against the start point measured around it, so that drift cancels;
//  3. a knob matters when one of its levels beats the start by more than
//     the noise; the few that matter most are searched together, every
//     combination of their levels (interactions such as nconnect x qd are
//     where one knob at a time goes wrong);
//  4. confirmation: the best setting and the start point alternated, the
//     gain with a 95% interval; a gain whose interval reaches 0 is no gain,
//     and the start point stays;
//  5. later rounds: the bound moves once a knob is fixed (more nfsd
//     threads, and then the credits bind; more credits, and the threads
//     bind again), so from the confirmed point the search climbs: each
//     round screens the knobs around its base in the order the base's
//     verdicts give, judged against the base measured around them, and
//     moves to the first level that beats it; a round that finds none
//     ends the climb. The last point is confirmed against the start and
//     replaces the first round's only with the larger confirmed gain.
// It stops early when no knob matters, and never spends more trials than
// the budget (keeping those the confirmation needs).
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace nfsrdma::bench {

struct Knob {
  std::string name;                 // "nconnect"
  std::vector<std::string> levels;  // "1", "2", "4", "8"
  std::size_t start = 0;            // the level in effect now
};

// A level (index into Knob::levels) per knob, in the knobs' order.
using Setting = std::vector<std::size_t>;

// What one run of a setting gave: the objective (higher is better; a
// latency or a cost is passed negated or inverted by the caller) and the
// verdict of that run ("credits", "none").
struct TrialFigure {
  double value = 0;
  std::string verdict;
};
using RunTrial = std::function<TrialFigure(const Setting&)>;

struct SearchOptions {
  std::size_t maxTrials = 60;  // every run counts, the start point's too
  int noiseRuns = 3;           // the start point, before anything else
  int confirmPairs = 3;        // best and start, alternated
  std::size_t jointKnobs = 2;  // how many of the knobs that matter are searched together
  // Rounds in all: after a confirmed change, rounds 2.. climb from it (its
  // bound may have moved: threads fixed, now credits); 1: none.
  int rounds = 4;
  // A level matters when it beats the start by this many noise spreads
  // (and by at least kMinEffect).
  double noiseMultiple = 2.0;
  // The order in which the knobs are screened (indices into the knobs),
  // given the verdicts of the start's noise runs: the knob that moves the
  // bound first, so that a budget that ends early has tried it. Empty: the
  // knobs' order. Knobs it leaves out are screened after, in order.
  std::function<std::vector<std::size_t>(const std::vector<std::string>& startVerdicts)> order;
  // How many more trials fit in the time left (a --budget of minutes);
  // empty: no time limit, only maxTrials. The confirmation's trials are
  // kept out of it like the trial budget's, and run whatever it says when
  // their turn comes (trials that got slower overrun the time by at most
  // those few).
  std::function<std::size_t()> trialsThatFit;
};

// Below this a difference is not worth a setting, whatever the noise.
inline constexpr double kMinEffect = 0.02;

struct Trial {
  Setting setting;
  TrialFigure figure;
  bool isStart = false;
  double effect = 0;    // against the start point around it (start runs: 0)
  int round = 1;        // 2 and up: a later round, around its own base point
  bool isBase = false;  // a run of its round's base point (round 1: the start)
};

struct KnobEffect {
  std::size_t knob = 0;
  std::vector<double> levelEffects;  // by level; the start level 0
  std::size_t bestLevel = 0;
  double best = 0;  // the best level's effect
  bool matters = false;
};

struct SearchResult {
  double startMean = 0;
  // The best setting's figure: its confirmation runs' mean (the start's
  // mean when nothing beat it); a grid's: its one run.
  double bestMean = 0;
  double noise = 0;  // the start point's relative spread (sample stdev / mean)
  std::vector<Trial> trials;
  std::vector<KnobEffect> effects;          // one per knob, ranked: the largest effect first
  std::vector<std::size_t> screeningOrder;  // the knobs as they were screened
  Setting start;
  Setting best;                      // the recommendation: the start when nothing beat it
  double gain = 0;                   // best over start, confirmed (0 when best is the start)
  double gainLow = 0, gainHigh = 0;  // its 95% interval
  double gainMedian = 0;             // the pairs' median ratio - 1
  bool changed = false;
  std::string stopReason;  // "flat: ...", "budget: ...", "confirmed", "not confirmed: ..."
  // The later rounds' moves: from base, knob to level, which beat the base
  // by overBase (against it measured around that trial).
  struct Move {
    int round = 2;
    Setting base;
    std::size_t knob = 0, level = 0;
    double overBase = 0;
  };
  std::vector<Move> moves;
};

// Ratios of alternated pairs (one setting's figure over another's, run
// side by side so that drift cancels): their mean and its 95% interval
// (Student's t). One ratio: no interval (low = high = mean); none: zeros.
struct RatioInterval {
  double mean = 0, low = 0, high = 0;
  double median = 0;  // of the pairs' ratios: one disturbed pair moves it least
  std::size_t pairs = 0;
};
RatioInterval ratioInterval(const std::vector<double>& ratios);

// Throws std::invalid_argument for knobs without levels, a start outside
// them, or a budget too small for the noise runs and one confirmation.
SearchResult tuneSearch(const std::vector<Knob>& knobs, const RunTrial& run,
                        const SearchOptions& options = {});

// The exhaustive baseline tune is measured against (NFSometer's sweep):
// every combination of every knob's levels, each run once, in order; the
// best figure is the recommendation, without noise runs or confirmation.
// Throws std::invalid_argument like tuneSearch, and when the grid has more
// combinations than maxTrials (naming both).
SearchResult gridSearch(const std::vector<Knob>& knobs, const RunTrial& run, std::size_t maxTrials);

}  // namespace nfsrdma::bench
