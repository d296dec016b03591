#include "bench/tune/TuneSearch.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>
#include <stdexcept>

#include "bench/report/Median.h"

namespace nfsrdma::bench {
namespace {

// A start-point run after this many candidates: the baseline each
// candidate is judged against is interpolated between the start runs
// around it, so a drift of the whole system cancels.
constexpr std::size_t kStartEvery = 2;

// Student's t for a two-sided 95% interval, by degrees of freedom 1..10;
// beyond, the normal's 1.96 is close enough.
double tQuantile(std::size_t dof) {
  static const double kT[] = {12.706, 4.303, 3.182, 2.776, 2.571,
                              2.447,  2.365, 2.306, 2.262, 2.228};
  return dof >= 1 && dof <= 10 ? kT[dof - 1] : 1.96;
}

struct Spread {
  double mean = 0, sd = 0;
};

Spread spreadOf(const std::vector<double>& v) {
  Spread s;
  if (v.empty()) return s;
  s.mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  if (v.size() < 2) return s;
  double sq = 0;
  for (double x : v) sq += (x - s.mean) * (x - s.mean);
  s.sd = std::sqrt(sq / static_cast<double>(v.size() - 1));
  return s;
}

void check(const std::vector<Knob>& knobs, const SearchOptions& o) {
  for (const auto& k : knobs) {
    if (k.levels.empty()) throw std::invalid_argument("tune: knob " + k.name + " has no levels");
    if (k.start >= k.levels.size()) {
      throw std::invalid_argument("tune: knob " + k.name + ": start level " +
                                  std::to_string(k.start) + " is not one of its " +
                                  std::to_string(k.levels.size()) + " levels");
    }
  }
  const std::size_t least = static_cast<std::size_t>(o.noiseRuns + 2 * o.confirmPairs) + 1;
  if (o.noiseRuns < 2 || o.confirmPairs < 2 || o.maxTrials < least) {
    throw std::invalid_argument("tune: a budget of " + std::to_string(o.maxTrials) +
                                " trials cannot hold the start's noise runs and a confirmation (" +
                                std::to_string(least) + " at least)");
  }
}

class Searcher {
 public:
  Searcher(const std::vector<Knob>& knobs, const RunTrial& run, const SearchOptions& o)
      : knobs_(knobs), run_(run), o_(o) {
    for (const auto& k : knobs) r_.start.push_back(k.start);
    r_.best = r_.start;
    base_ = r_.start;
  }

  SearchResult search() {
    measureNoise();
    screen();
    rank();
    if (std::none_of(r_.effects.begin(), r_.effects.end(),
                     [](const auto& e) { return e.matters; })) {
      r_.stopReason = flatReason();
      return r_;
    }
    searchJointly();
    pickBest();
    confirm();
    if (r_.changed && o_.rounds >= 2) climb();
    return r_;
  }

 private:
  std::size_t left() const {
    const std::size_t byCount = o_.maxTrials - r_.trials.size();
    return o_.trialsThatFit ? std::min(byCount, o_.trialsThatFit()) : byCount;
  }
  std::size_t reserve() const { return 2 * static_cast<std::size_t>(o_.confirmPairs); }

  double measure(const Setting& s, bool isStart, bool isBase = false) {
    Trial t{s, run_(s), isStart, 0, round_, isBase || (isStart && round_ == 1)};
    r_.trials.push_back(t);
    if (!t.isBase) sinceStart_++;
    return t.figure.value;
  }

  // A run of the round's base point: the start in the first round.
  double measureBase() { return measure(base_, round_ == 1, true); }

  // Candidates are measured in runs of kStartEvery between base runs.
  void candidate(const Setting& s) {
    if (sinceStart_ >= kStartEvery) {
      measureBase();
      sinceStart_ = 0;
    }
    measure(s, false);
  }

  void measureNoise() {
    std::vector<double> v;
    for (int i = 0; i < o_.noiseRuns; ++i) v.push_back(measureBase());
    const Spread s = spreadOf(v);
    r_.startMean = s.mean;
    r_.bestMean = s.mean;  // until a setting beats it
    r_.noise = s.mean > 0 ? s.sd / s.mean : 0;
  }

  bool room() const { return left() > reserve() + 1; }

  // A start run after the last candidates, so that they too have the start
  // point measured on both sides.
  void closeWithStart() {
    if (sinceStart_ == 0 || left() <= reserve()) return;
    measureBase();
    sinceStart_ = 0;
  }

  // The knobs in screening order: options.order's first (for the
  // verdicts of the runs of at), then the rest.
  std::vector<std::size_t> screeningOrder(const Setting& at) const {
    std::vector<std::size_t> order;
    if (o_.order) {
      std::vector<std::string> verdicts;
      for (const auto& t : r_.trials) {
        if (t.setting == at) verdicts.push_back(t.figure.verdict);
      }
      for (std::size_t k : o_.order(verdicts)) {
        if (k < knobs_.size() && std::find(order.begin(), order.end(), k) == order.end())
          order.push_back(k);
      }
    }
    for (std::size_t k = 0; k < knobs_.size(); ++k) {
      if (std::find(order.begin(), order.end(), k) == order.end()) order.push_back(k);
    }
    return order;
  }

  void screen() {
    r_.screeningOrder = screeningOrder(r_.start);
    for (std::size_t k : r_.screeningOrder) {
      for (std::size_t l = 0; l < knobs_[k].levels.size(); ++l) {
        if (l == knobs_[k].start) continue;
        if (!room()) {
          r_.stopReason = "budget: screening stopped at " + knobs_[k].name;
          closeWithStart();
          return;
        }
        Setting s = r_.start;
        s[k] = l;
        candidate(s);
      }
    }
    closeWithStart();
  }

  // The base point's figure at trial i (the start's in the first round):
  // interpolated between the base runs of its round before and after it
  // (the nearest one when it has one side only).
  double baselineAt(std::size_t i) const {
    std::size_t before = i, after = i;
    bool hasBefore = false, hasAfter = false;
    const auto isBaseOf = [&](std::size_t j) {
      return r_.trials[j].isBase && r_.trials[j].round == r_.trials[i].round;
    };
    for (std::size_t j = i; j-- > 0;) {
      if (isBaseOf(j)) {
        before = j;
        hasBefore = true;
        break;
      }
    }
    for (std::size_t j = i + 1; j < r_.trials.size(); ++j) {
      if (isBaseOf(j)) {
        after = j;
        hasAfter = true;
        break;
      }
    }
    const double fallback =
        r_.trials[i].round == 1 ? r_.startMean : roundMean_.at(r_.trials[i].round);
    const double b = hasBefore ? r_.trials[before].figure.value : fallback;
    if (!hasAfter) return b;
    const double a = r_.trials[after].figure.value;
    if (!hasBefore) return a;
    const double w = static_cast<double>(i - before) / static_cast<double>(after - before);
    return b + (a - b) * w;
  }

  // Each trial against the start: against its round's base runs around
  // it, and in later rounds times the base's gain over the start.
  void computeEffects() {
    for (std::size_t i = 0; i < r_.trials.size(); ++i) {
      Trial& t = r_.trials[i];
      if (t.isStart) continue;
      const double base = baselineAt(i);
      const double overBase = base > 0 ? t.figure.value / base : 1;
      t.effect = overBase * roundGain_.at(t.round) - 1;
    }
  }

  double threshold() const { return std::max(kMinEffect, o_.noiseMultiple * r_.noise); }

  // One knob's screening: each level's effect with the others at the start.
  KnobEffect effectOf(std::size_t k) const {
    KnobEffect e;
    e.knob = k;
    e.levelEffects.assign(knobs_[k].levels.size(), 0);
    e.bestLevel = knobs_[k].start;
    for (const auto& t : r_.trials) {
      if (t.isStart || t.round != 1 || !onlyDiffersIn(t.setting, k)) continue;
      e.levelEffects[t.setting[k]] = t.effect;
      if (t.effect > e.best) {
        e.best = t.effect;
        e.bestLevel = t.setting[k];
      }
    }
    e.matters = e.best > threshold();
    return e;
  }

  bool onlyDiffersIn(const Setting& s, std::size_t k) const {
    for (std::size_t i = 0; i < s.size(); ++i) {
      if (i != k && s[i] != r_.start[i]) return false;
    }
    return s[k] != r_.start[k];
  }

  // The noise again from every start run so far: the differences of
  // consecutive ones (a drift barely moves them), when that says more than
  // the first few runs did.
  void refineNoise() {
    std::vector<double> starts;
    for (const auto& t : r_.trials) {
      if (t.isStart) starts.push_back(t.figure.value);
    }
    if (starts.size() < 3 || r_.startMean <= 0) return;
    double sq = 0;
    for (std::size_t i = 1; i < starts.size(); ++i) sq += std::pow(starts[i] - starts[i - 1], 2);
    const double fromDiffs =
        std::sqrt(sq / static_cast<double>(starts.size() - 1) / 2) / r_.startMean;
    r_.noise = std::max(r_.noise, fromDiffs);
  }

  void rank() {
    refineNoise();
    computeEffects();
    r_.effects.clear();
    for (std::size_t k = 0; k < knobs_.size(); ++k) r_.effects.push_back(effectOf(k));
    std::stable_sort(r_.effects.begin(), r_.effects.end(),
                     [](const KnobEffect& a, const KnobEffect& b) { return a.best > b.best; });
  }

  std::string flatReason() const {
    char buf[160];
    std::snprintf(buf, sizeof buf,
                  "flat: no level of any knob beat the start by more than %.1f%% (noise %.1f%%)",
                  threshold() * 100, r_.noise * 100);
    return buf;
  }

  bool measured(const Setting& s) const {
    return std::any_of(r_.trials.begin(), r_.trials.end(),
                       [&](const Trial& t) { return t.setting == s; });
  }

  // The effect the screening predicts for s: its levels' effects alone,
  // multiplied (a knob not screened at a level counts as no change).
  double predicted(const Setting& s) const {
    double p = 1;
    for (const auto& e : r_.effects) p *= std::max(0.01, 1 + e.levelEffects[s[e.knob]]);
    return p;
  }

  // Every combination of the levels of the few knobs that matter most, the
  // other knobs at the start, and every knob that matters at its best level
  // together. Best first: that greedy setting, then the combinations by
  // the effect their levels had alone, so that a budget ending early (a
  // third of the grid's runs) has tried the likeliest, not the first in
  // level order.
  std::vector<Setting> jointSettings() const {
    std::vector<std::size_t> joint;
    for (const auto& e : r_.effects) {
      if (e.matters && joint.size() < o_.jointKnobs) joint.push_back(e.knob);
    }
    std::vector<Setting> combos{r_.start};
    for (std::size_t k : joint) {
      std::vector<Setting> next;
      for (const auto& c : combos) {
        for (std::size_t l = 0; l < knobs_[k].levels.size(); ++l) {
          Setting s = c;
          s[k] = l;
          next.push_back(s);
        }
      }
      combos = std::move(next);
    }
    std::stable_sort(combos.begin(), combos.end(), [&](const Setting& a, const Setting& b) {
      return predicted(a) > predicted(b);
    });
    Setting greedy = r_.start;
    for (const auto& e : r_.effects) {
      if (e.matters) greedy[e.knob] = e.bestLevel;
    }
    combos.insert(combos.begin(), greedy);
    return combos;
  }

  void searchJointly() {
    for (const auto& s : jointSettings()) {
      if (measured(s)) continue;
      if (!room()) {
        r_.stopReason = "budget: the joint search stopped early";
        break;
      }
      candidate(s);
    }
    closeWithStart();
    computeEffects();
  }

  void pickBest() {
    double best = 0;
    for (const auto& t : r_.trials) {
      if (!t.isStart && t.effect > best) {
        best = t.effect;
        r_.best = t.setting;
      }
    }
  }

  void confirm() {
    if (r_.best == r_.start) return;
    std::vector<double> ratios, bests;
    // By the trial count only: the time kept for these pairs was reckoned
    // at the pace so far, and trials that got slower (a server change, a
    // mount) must not cost the confirmation its pairs.
    for (int i = 0; i < o_.confirmPairs && o_.maxTrials - r_.trials.size() >= 2; ++i) {
      const double b = measure(r_.best, false);
      const double s = measure(r_.start, true, round_ == 1);
      bests.push_back(b);
      if (s > 0) ratios.push_back(b / s);
    }
    const RatioInterval ri = ratioInterval(ratios);
    r_.gain = ri.mean - 1;
    r_.gainLow = ri.low - 1;
    r_.gainHigh = ri.high - 1;
    r_.gainMedian = ri.median - 1;
    r_.changed = ri.pairs > 1 && r_.gainLow > 0 && r_.gain >= kMinEffect;
    if (r_.changed) {
      r_.bestMean = spreadOf(bests).mean;
      r_.stopReason = "confirmed";
      return;
    }
    r_.stopReason = "not confirmed: the best setting's gain is within the noise";
    r_.best = r_.start;
  }

  // The knobs that did not matter in the first round, in the order the
  // confirmed point's verdicts give.
  std::vector<std::size_t> knobsToScreenAgain() const {
    std::vector<std::size_t> out;
    for (std::size_t k : screeningOrder(r_.best)) {
      const auto e = std::find_if(r_.effects.begin(), r_.effects.end(),
                                  [&](const KnobEffect& x) { return x.knob == k; });
      if (e != r_.effects.end() && !e->matters) out.push_back(k);
    }
    return out;
  }

  // A trial's figure over the current round's base (its effect is against the start).
  double overBase(const Trial& t) const { return (1 + t.effect) / roundGain_.at(round_) - 1; }

  // The trial (of any round) of the base with knob k at another level that
  // beats the base most by more than the threshold, or npos.
  std::size_t bestAround(std::size_t k) const {
    std::size_t best = std::string::npos;
    double top = threshold();
    for (std::size_t i = 0; i < r_.trials.size(); ++i) {
      const Trial& t = r_.trials[i];
      if (t.isStart || t.isBase || t.setting[k] == base_[k]) continue;
      bool alone = true;
      for (std::size_t o = 0; o < t.setting.size() && alone; ++o)
        alone = o == k || t.setting[o] == base_[o];
      if (alone && overBase(t) > top) {
        top = overBase(t);
        best = i;
      }
    }
    return best;
  }

  // One round around base_: the knobs in the order its verdicts give, each
  // knob's levels, until one beats it (its trial) or none does (npos).
  std::size_t climbOnce() {
    sinceStart_ = kStartEvery;  // a base run before the first candidate
    for (std::size_t k : screeningOrder(base_)) {
      for (std::size_t l = 0; l < knobs_[k].levels.size() && room(); ++l) {
        Setting s = base_;
        s[k] = l;
        if (l != base_[k] && !measured(s)) candidate(s);
      }
      closeWithStart();
      computeEffects();
      const std::size_t i = bestAround(k);
      if (i != std::string::npos || !room()) return i;
    }
    return std::string::npos;
  }

  // Rounds 2.. from the confirmed point, then the last point confirmed.
  void climb() {
    const SearchResult first = r_;
    double gain = 1 + r_.gain, mean = r_.bestMean;
    for (int round = 2; round <= o_.rounds && room(); ++round) {
      base_ = r_.best;
      round_ = round;
      roundGain_[round] = gain;
      roundMean_[round] = mean;
      const std::size_t i = climbOnce();
      if (i == std::string::npos) break;
      const Trial& t = r_.trials[i];
      std::size_t k = 0;
      while (t.setting[k] == base_[k]) ++k;
      r_.moves.push_back({round, base_, k, t.setting[k], overBase(t)});
      gain = 1 + t.effect;
      mean = t.figure.value;
      r_.best = t.setting;
    }
    if (r_.moves.empty()) {
      r_.best = first.best;  // r_ keeps the first round's figures otherwise
      if (round_ > 1) r_.stopReason = "confirmed; later rounds around it found nothing better";
      return;
    }
    const std::vector<SearchResult::Move> moves = r_.moves;
    confirm();
    if (!r_.changed || r_.gain <= first.gain) {
      const std::vector<Trial> trials = r_.trials;
      r_ = first;
      r_.trials = trials;
      r_.moves = moves;
      r_.stopReason = "confirmed; the later rounds' best did not confirm above it";
      return;
    }
    r_.stopReason = "confirmed after " + std::to_string(moves.size() + 1) + " rounds";
  }

  const std::vector<Knob>& knobs_;
  const RunTrial& run_;
  const SearchOptions& o_;
  SearchResult r_;
  std::size_t sinceStart_ = 0;
  Setting base_;  // the round's base point: the start, then the point climbed to
  int round_ = 1;
  // By round: its base's figure over the start's (confirmed in round 2,
  // estimated from the move after), and its mean.
  std::map<int, double> roundGain_{{1, 1.0}};
  std::map<int, double> roundMean_{{1, 0.0}};
};

}  // namespace

RatioInterval ratioInterval(const std::vector<double>& ratios) {
  const Spread sp = spreadOf(ratios);
  const double half = ratios.size() > 1 ? tQuantile(ratios.size() - 1) * sp.sd /
                                              std::sqrt(static_cast<double>(ratios.size()))
                                        : 0;
  return RatioInterval{sp.mean, sp.mean - half, sp.mean + half, median(ratios), ratios.size()};
}

SearchResult tuneSearch(const std::vector<Knob>& knobs, const RunTrial& run,
                        const SearchOptions& options) {
  check(knobs, options);
  return Searcher(knobs, run, options).search();
}

namespace {

// Every setting of the knobs, the last knob's levels turning fastest.
std::vector<Setting> allSettings(const std::vector<Knob>& knobs) {
  std::vector<Setting> all{Setting{}};
  for (const Knob& k : knobs) {
    std::vector<Setting> next;
    for (const Setting& s : all) {
      for (std::size_t l = 0; l < k.levels.size(); ++l) {
        Setting t = s;
        t.push_back(l);
        next.push_back(std::move(t));
      }
    }
    all = std::move(next);
  }
  return all;
}

}  // namespace

SearchResult gridSearch(const std::vector<Knob>& knobs, const RunTrial& run,
                        std::size_t maxTrials) {
  SearchOptions o;
  o.maxTrials = std::max(maxTrials, static_cast<std::size_t>(o.noiseRuns + 2 * o.confirmPairs) + 1);
  check(knobs, o);
  const std::vector<Setting> all = allSettings(knobs);
  if (all.size() > maxTrials) {
    throw std::invalid_argument("tune: the grid has " + std::to_string(all.size()) +
                                " settings, more than the budget's " + std::to_string(maxTrials) +
                                " trials");
  }
  SearchResult r;
  for (const auto& k : knobs) r.start.push_back(k.start);
  r.best = r.start;
  double best = -1;
  for (const Setting& s : all) {
    const bool isStart = s == r.start;
    r.trials.push_back(Trial{s, run(s), isStart, 0});
    const double v = r.trials.back().figure.value;
    if (isStart) r.startMean = v;
    if (v > best) {
      best = v;
      r.best = s;
    }
  }
  for (Trial& t : r.trials) t.effect = r.startMean > 0 ? t.figure.value / r.startMean - 1 : 0;
  r.bestMean = best;
  r.gain = r.startMean > 0 ? best / r.startMean - 1 : 0;
  r.gainLow = r.gainHigh = r.gainMedian = r.gain;
  r.changed = r.best != r.start;
  r.stopReason = "grid: every one of the " + std::to_string(all.size()) + " settings run once";
  return r;
}

}  // namespace nfsrdma::bench
