// bench/tune/TuneSearch on synthetic response surfaces with noise and
// drift: a knob that matters found and one that does not named so; an
// interaction only the joint search finds; a flat surface stopping after
// the screening; drift and small effects never recommended; the budget
// kept; the later rounds climbing where the bound moved; bad knobs and
// budgets refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/tune/TuneReport.h"
#include "bench/tune/TuneSearch.h"

namespace nfsrdma::bench {
namespace {

// A surface: the figure of a setting is base x (1 + effect(setting)),
// times Gaussian noise, plus a drift that grows with every run.
struct Surface {
  std::function<double(const Setting&)> effect;
  double noise = 0.02;
  double driftPerRun = 0;
  unsigned seed = 1;
  int runs = 0;
  std::mt19937 rng{seed};
  RunTrial runner() {
    rng.seed(seed);
    return [this](const Setting& s) {
      std::normal_distribution<double> n(1.0, noise);
      const double v = 1000 * (1 + effect(s)) * n(rng) * (1 + driftPerRun * runs++);
      return TrialFigure{v, "none"};
    };
  }
};

// The text report of a search over knobs (trials without results).
std::string reportOf(const std::vector<Knob>& knobs, const SearchResult& r) {
  TuneRun run;
  run.space.knobs = knobs;
  run.search = r;
  run.trials.resize(r.trials.size());
  return formatTuneText(run);
}

std::vector<Knob> twoKnobs() {
  return {{"nconnect", {"1", "2", "4", "8"}, 0}, {"rsize", {"64k", "256k", "1m"}, 1}};
}

TEST(TuneSearch, AKnobThatMattersIsFoundAndOneThatDoesNotIsNamedSo) {
  Surface s;
  s.effect = [](const Setting& x) {
    static const double kGain[] = {0, 0.2, 0.4, 0.45};
    return kGain[x[0]];
  };
  const SearchResult r = tuneSearch(twoKnobs(), s.runner());
  ASSERT_EQ(r.effects.size(), 2U);
  EXPECT_EQ(r.effects[0].knob, 0U);
  EXPECT_TRUE(r.effects[0].matters);
  EXPECT_FALSE(r.effects[1].matters);
  EXPECT_TRUE(r.changed) << r.stopReason;
  EXPECT_GE(r.best[0], 2U);
  EXPECT_EQ(r.best[1], 1U);  // rsize left as it was
  EXPECT_GT(r.gainLow, 0.25);
  EXPECT_LT(r.gain, 0.6);
  EXPECT_LE(r.trials.size(), 60U);
}

TEST(TuneSearch, AnInteractionOneKnobAtATimeMissesIsFoundTogether) {
  // Each knob alone helps a little; together much more (more connections
  // pay only with the depth to fill them).
  Surface s;
  s.effect = [](const Setting& x) {
    const bool a = x[0] == 3, b = x[1] == 2;
    return a && b ? 0.8 : (a || b ? 0.1 : 0.0);
  };
  const SearchResult r = tuneSearch(twoKnobs(), s.runner());
  EXPECT_EQ(r.best, (Setting{3, 2})) << r.stopReason;
  EXPECT_GT(r.gain, 0.6);
}

TEST(TuneSearch, ASecondRoundFindsTheKnobThatBindsOnceTheFirstIsFixed) {
  // Requests in flight: the fewest of nfsd threads, credits and the
  // workload's 32. From 1 thread and 8 credits, credits alone change
  // nothing; once threads are up, the credits bind.
  const std::vector<Knob> knobs = {{"nfsd.threads", {"1", "4", "16", "64"}, 0},
                                   {"svcrdma.max_requests", {"8", "32", "128"}, 0},
                                   {"nconnect", {"1", "2", "4"}, 0}};
  Surface s;
  s.effect = [](const Setting& x) {
    static const double kThreads[] = {1, 4, 16, 64}, kCredits[] = {8, 32, 128};
    return std::min({kThreads[x[0]], kCredits[x[1]], 32.0}) - 1;
  };
  SearchOptions one;
  one.rounds = 1;
  const SearchResult first = tuneSearch(knobs, s.runner(), one);
  EXPECT_EQ(first.best[1], 0U) << first.stopReason;  // one round: credits never mattered
  EXPECT_LT(first.gain, 8);
  const SearchResult r = tuneSearch(knobs, s.runner());
  EXPECT_EQ(r.stopReason.rfind("confirmed after ", 0), 0U) << r.stopReason;
  ASSERT_FALSE(r.moves.empty());
  EXPECT_EQ(r.moves.front().knob, 1U);  // the credits, around the first round's threads
  EXPECT_GE(r.best[0], 2U);
  EXPECT_GE(r.best[1], 1U);
  EXPECT_EQ(r.best[2], 0U);
  EXPECT_GT(r.gainLow, 14);  // 16x and more, against the first round's 8x
  EXPECT_LE(r.trials.size(), 60U);
  bool screenedAgain = false;
  for (const Trial& t : r.trials) screenedAgain = screenedAgain || (t.round == 2 && !t.isBase);
  EXPECT_TRUE(screenedAgain);
  // The evidence says where the credits were found.
  const std::string text = reportOf(knobs, r);
  EXPECT_NE(text.find("svcrdma.max_requests 8 -> "), std::string::npos) << text;
  EXPECT_NE(text.find(" in round 2, around nfsd.threads="), std::string::npos) << text;
  EXPECT_NE(text.find("did not matter: nconnect ("), std::string::npos) << text;
}

TEST(TuneSearch, TheLaterRoundsClimbWhileAMoveBeatsThePoint) {
  // At the start only threads matter, best at 4; around it the credits
  // pay; around that, more threads pay again (the bound went back).
  const std::vector<Knob> knobs = {{"nfsd.threads", {"1", "4", "64"}, 0},
                                   {"svcrdma.max_requests", {"8", "128"}, 0}};
  Surface s;
  s.effect = [](const Setting& x) {
    static const double kFigure[3][2] = {{1, 1}, {2, 3}, {1.5, 5}};
    return kFigure[x[0]][x[1]] - 1;
  };
  const SearchResult r = tuneSearch(knobs, s.runner());
  EXPECT_EQ(r.best, (Setting{2, 1})) << r.stopReason;
  EXPECT_EQ(r.stopReason, "confirmed after 3 rounds");
  ASSERT_EQ(r.moves.size(), 2U);
  EXPECT_EQ(r.moves[0].base, (Setting{1, 0}));
  EXPECT_EQ(r.moves[0].knob, 1U);
  EXPECT_EQ(r.moves[1].base, (Setting{1, 1}));
  EXPECT_EQ(r.moves[1].knob, 0U);
  EXPECT_NEAR(r.moves[1].overBase, 5.0 / 3 - 1, 0.1);
  EXPECT_GT(r.gainLow, 3.5);
  // The threads' whole path: found in the screening, moved again in round 3.
  const std::string text = reportOf(knobs, r);
  EXPECT_NE(text.find("  nfsd.threads 1 -> 4 -> 64: +"), std::string::npos) << text;
  EXPECT_NE(text.find("% alone in the screening, bound there: none; then +6"), std::string::npos)
      << text;
  EXPECT_NE(text.find("% in round 3, around nfsd.threads=4&svcrdma.max_requests=128\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  svcrdma.max_requests 8 -> 128: +"), std::string::npos) << text;
  EXPECT_NE(text.find("% in round 2, around nfsd.threads=4 (alone at the start: "),
            std::string::npos)
      << text;
}

TEST(TuneSearch, ATightBudgetTriesTheLikeliestJointSettingsFirst) {
  // Three knobs that each help and help more together (1m-read in the VM:
  // rsize, nfsd threads, read-ahead), and a third of their 96-setting
  // grid: the greedy setting and the best-predicted combinations must be
  // among the few joint trials, not the first ones in level order.
  const std::vector<Knob> knobs = {{"rsize", {"4k", "64k", "256k", "1m"}, 0},
                                   {"nfsd.threads", {"1", "4", "8", "16", "32", "64"}, 0},
                                   {"read_ahead_kb", {"128", "1024", "4096", "15360"}, 0}};
  Surface s;
  s.noise = 0.01;
  s.effect = [](const Setting& x) {
    static const double kRsize[] = {1, 3, 2.6, 2.5}, kThreads[] = {1, 1, 1.1, 1.1, 1.2, 1.25},
                        kAhead[] = {1, 1, 1.15, 1.15};
    return kRsize[x[0]] * kThreads[x[1]] * kAhead[x[2]] - 1;
  };
  SearchOptions o;
  o.maxTrials = 32;
  const SearchResult r = tuneSearch(knobs, s.runner(), o);
  EXPECT_EQ(r.best[0], 1U) << r.stopReason;
  EXPECT_EQ(r.best[1], 5U);
  EXPECT_GE(r.best[2], 2U);  // 4096 and 15360 are alike
  EXPECT_GT(r.gainLow, 3);   // 3 x 1.25 x 1.15 = 4.3x; rsize alone is 3x
  EXPECT_LE(r.trials.size(), 32U);
}

TEST(TuneSearch, AFlatSurfaceStopsAfterTheScreeningAndKeepsTheStart) {
  Surface s;
  s.effect = [](const Setting&) { return 0.0; };
  const SearchResult r = tuneSearch(twoKnobs(), s.runner());
  EXPECT_FALSE(r.changed);
  EXPECT_EQ(r.best, r.start);
  EXPECT_EQ(r.stopReason.rfind("flat: ", 0), 0U) << r.stopReason << ", noise " << r.noise;
  // 3 noise runs, 5 levels screened with a start run after every 2, and one closing.
  EXPECT_EQ(r.trials.size(), 11U);
}

TEST(TuneSearch, DriftDuringTheRunDoesNotMakeAKnobMatter) {
  for (unsigned seed = 1; seed <= 10; ++seed) {
    Surface s;
    s.seed = seed;
    s.noise = 0.01;
    s.driftPerRun = 0.015;  // the system speeds up 1.5% a run: late candidates look better
    s.effect = [](const Setting&) { return 0.0; };
    const SearchResult r = tuneSearch(twoKnobs(), s.runner());
    EXPECT_FALSE(r.changed) << "seed " << seed << ": " << r.stopReason;
  }
}

TEST(TuneSearch, NeverRecommendsAChangeInsideTheNoise) {
  for (unsigned seed = 1; seed <= 20; ++seed) {
    Surface s;
    s.seed = seed;
    s.noise = 0.03;
    s.effect = [](const Setting& x) { return x[0] == 3 ? 0.01 : 0.0; };
    const SearchResult r = tuneSearch(twoKnobs(), s.runner());
    EXPECT_FALSE(r.changed) << "seed " << seed << ": gain " << r.gain << ", " << r.stopReason;
  }
}

TEST(TuneSearch, TheBudgetIsNeverExceeded) {
  std::vector<Knob> many;
  for (int k = 0; k < 6; ++k) many.push_back({"k" + std::to_string(k), {"a", "b", "c", "d"}, 0});
  Surface s;
  s.effect = [](const Setting& x) { return 0.1 * static_cast<double>(x[0] + x[5]); };
  SearchOptions o;
  o.maxTrials = 20;
  const SearchResult r = tuneSearch(many, s.runner(), o);
  EXPECT_LE(r.trials.size(), 20U);
  EXPECT_EQ(r.stopReason.rfind("budget: ", 0) == 0 || r.stopReason.rfind("confirmed", 0) == 0, true)
      << r.stopReason;
}

TEST(TuneSearch, TheStartsVerdictPutsItsKnobFirstAndATimeBudgetStopsTheScreeningThere) {
  std::vector<Knob> three = {
      {"iothreads", {"1", "2"}, 0}, {"memreg", {"pooled", "per-io"}, 0}, {"qd", {"8", "64"}, 0}};
  Surface s;
  s.effect = [](const Setting& x) { return x[2] == 1 ? 0.5 : 0.0; };
  RunTrial plain = s.runner();
  // The start says "credits": qd is screened first.
  const RunTrial credits = [&](const Setting& x) {
    TrialFigure f = plain(x);
    f.verdict = "credits";
    return f;
  };
  std::vector<std::string> seen;
  SearchOptions o;
  o.order = [&](const std::vector<std::string>& verdicts) {
    seen = verdicts;
    return verdicts.front() == "credits" ? std::vector<std::size_t>{2} : std::vector<std::size_t>{};
  };
  // Time for the noise runs, one candidate, a start run and the confirmation.
  std::size_t runs = 0;
  const RunTrial counted = [&](const Setting& x) {
    ++runs;
    return credits(x);
  };
  o.trialsThatFit = [&] { return runs >= 3 + 2 + 6 ? 0 : 3 + 2 + 6 - runs; };
  const SearchResult r = tuneSearch(three, counted, o);
  EXPECT_EQ(seen, (std::vector<std::string>{"credits", "credits", "credits"}));
  EXPECT_EQ(r.screeningOrder, (std::vector<std::size_t>{2, 0, 1}));
  ASSERT_GE(r.trials.size(), 4U);
  EXPECT_EQ(r.trials[3].setting, (Setting{0, 0, 1}));  // qd 64, right after the noise runs
  EXPECT_EQ(r.stopReason, "confirmed");
  EXPECT_EQ(r.best, (Setting{0, 0, 1}));
  EXPECT_LE(r.trials.size(), 3U + 2 + 6);
}

TEST(GridSearch, RunsEverySettingOnceAndKeepsTheBest) {
  std::vector<Setting> ran;
  const RunTrial run = [&](const Setting& x) {
    ran.push_back(x);
    return TrialFigure{100.0 + static_cast<double>(x[0] * 10 + x[1]), "none"};
  };
  const SearchResult r = gridSearch(twoKnobs(), run, 12);
  EXPECT_EQ(ran.size(), 12U);  // 4 x 3
  EXPECT_EQ(ran.front(), (Setting{0, 0}));
  EXPECT_EQ(ran[1], (Setting{0, 1}));
  EXPECT_EQ(r.best, (Setting{3, 2}));
  EXPECT_DOUBLE_EQ(r.startMean, 101);  // nconnect 1, rsize 256k
  EXPECT_NEAR(r.gain, 132.0 / 101 - 1, 1e-12);
  EXPECT_TRUE(r.changed);
  EXPECT_EQ(
      std::count_if(r.trials.begin(), r.trials.end(), [](const Trial& t) { return t.isStart; }), 1);
  try {
    gridSearch(twoKnobs(), run, 11);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "tune: the grid has 12 settings, more than the budget's 11 trials");
  }
}

TEST(TuneSearch, RefusesAKnobWithoutLevelsAStartOutsideThemAndATinyBudget) {
  Surface s;
  s.effect = [](const Setting&) { return 0.0; };
  EXPECT_THROW(tuneSearch({{"qd", {}, 0}}, s.runner()), std::invalid_argument);
  try {
    tuneSearch({{"qd", {"1", "2"}, 2}}, s.runner());
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "tune: knob qd: start level 2 is not one of its 2 levels");
  }
  SearchOptions o;
  o.maxTrials = 5;
  EXPECT_THROW(tuneSearch(twoKnobs(), s.runner(), o), std::invalid_argument);
}

}  // namespace
}  // namespace nfsrdma::bench
