// What `tune` prints and writes: a table per knob (each level's figure
// against the start measured around it, and that trial's verdict), the
// recommendation with its confirmed gain and the evidence for each knob it
// changes, the knobs that did not matter named so, and the hand-over (the
// settings as the tools' own inputs). JSON keeps every trial's full result.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "bench/file/FileRun.h"
#include "bench/report/Json.h"
#include "bench/tune/KernelTarget.h"
#include "bench/tune/TuneObjective.h"
#include "bench/tune/TuneSearch.h"
#include "bench/tune/TuneSpace.h"

namespace nfsrdma::bench {

// One trial as it ran: what it ran on (our client's URL, or the kernel
// mount's options in effect) and its whole result, or the error that
// ended it (then its figure is 0).
struct TrialRun {
  std::string ranWith;
  std::string note;  // what differed from what was asked (a size the kernel lowered)
  RunResult result;
  double seconds = 0;     // wall time, the trial's set-up included
  double cpuSeconds = 0;  // this process's CPU over the run
  std::string error;
};

// The recommendation against a setting the user names (--versus: a rule of
// thumb, a grid's best), run alternated after the search.
struct VersusRun {
  std::string label;                              // "rules", or the keys when none was given
  std::string keys;                               // as given
  double recommendationMean = 0, versusMean = 0;  // objective values, higher is better
  RatioInterval ratio;                            // recommendation over versus, by pair
  std::string error;                              // a run that failed (then no ratio)
};

struct TuneRun {
  std::string target;      // as the header names it
  std::string serverNote;  // the embedded server's description, or empty
  bool embedded = false;   // the URL is the embedded server's (its port is this run's)
  bool kernel = false;     // a knfs: target: the knobs are mount options
  std::optional<KernelHandOver> kernelHandOver;  // the winning setting's (knfs:)
  std::string serverEnd;  // how the server was left (rolled back, or --apply)
  std::string profile;
  Objective objective = Objective::Iops;
  std::string budget;    // "2m and 60 trials"
  std::string clients;   // under mpirun: "3 MPI ranks"; empty alone
  std::string startUrl;  // the start's target URL
  KnobSpace space;
  SearchResult search;
  std::vector<TrialRun> trials;  // as search.trials
  std::vector<VersusRun> versus;
  double seconds = 0;
};

// The screening trial of knob k at level l (the others at the start),
// as an index into t.search.trials, or std::string::npos.
std::size_t screeningTrial(const TuneRun& t, std::size_t k, std::size_t l);

// The header: target, profile, objective, budget, the knobs in play with
// their levels, and those left alone with why.
std::string formatTuneHeader(const TuneRun& t);
// One line per trial as it ends (t's space, objective and search.start
// set): "trial  4  nconnect=2   41,230 IOPS  bound: none".
std::string formatTrialLine(const TuneRun& t, std::size_t number, const Setting& setting,
                            const TrialFigure& figure, const TrialRun& run);
// The tables, the recommendation, the evidence and the hand-over.
std::string formatTuneText(const TuneRun& t);
// The whole document: schema nfsrdma-bench-tune/1.
std::string tuneJson(const TuneRun& t);

}  // namespace nfsrdma::bench
