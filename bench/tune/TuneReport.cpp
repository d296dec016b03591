#include "bench/tune/TuneReport.h"

#include <algorithm>
#include <cmath>

#include "bench/bound/Bound.h"
#include "bench/file/FileReport.h"
#include "bench/report/Format.h"

namespace nfsrdma::bench {
namespace {

const std::vector<Knob>& knobsOf(const TuneRun& t) {
  return t.space.knobs;
}

// "nconnect=4&iothreads=2", or "start".
std::string settingText(const TuneRun& t, const Setting& s) {
  const std::string keys = changedKeys(knobsOf(t), s, t.search.start);
  return keys.empty() ? "start" : keys;
}

std::string percent(double effect) {
  return fmt("%+.1f%%", effect * 100);
}

// The verdict a trial's counters gave, or what ended it.
std::string trialBound(const TuneRun& t, std::size_t i) {
  if (!t.trials[i].error.empty()) return "error";
  const std::string& v = t.search.trials[i].figure.verdict;
  return v.empty() ? "-" : v;
}

// The first finding of a trial's verdict, as one line ("credits: 16.0
// calls outstanding ..."), or empty.
std::string firstFinding(const RunResult& r) {
  const std::vector<std::string> lines = boundLines(r.bound);
  if (lines.size() < 2 || lines[1].rfind("  not measured", 0) == 0) return {};
  return lines[1].substr(lines[1].find_first_not_of(' '));
}

// The screening trial of knob k at level l (the others at the start), or npos.
std::size_t screeningTrial(const TuneRun& t, std::size_t k, std::size_t l) {
  for (std::size_t i = 0; i < t.search.trials.size(); ++i) {
    const Trial& tr = t.search.trials[i];
    if (tr.isStart || tr.setting[k] != l) continue;
    bool alone = true;
    for (std::size_t o = 0; o < tr.setting.size(); ++o) {
      if (o != k && tr.setting[o] != t.search.start[o]) alone = false;
    }
    if (alone) return i;
  }
  return std::string::npos;
}

double threshold(const TuneRun& t) {
  // As the search judged "matters" (TuneSearch's default noise multiple).
  return std::max(kMinEffect, SearchOptions{}.noiseMultiple * t.search.noise);
}

std::string knobTable(const TuneRun& t, const KnobEffect& e) {
  const Knob& k = knobsOf(t)[e.knob];
  std::string out = k.name + ": ";
  out += e.matters ? "matters, best " + k.levels[e.bestLevel] + " (" + percent(e.best) + ")"
                   : "did not matter (best " + percent(e.best) + ", within the noise)";
  out +=
      fmt("\n  %-12s %14s %10s   %s\n", "level", objectiveUnit(t.objective), "vs start", "bound");
  for (std::size_t l = 0; l < k.levels.size(); ++l) {
    if (l == k.start) {
      const std::string bound = t.search.trials.empty() ? "-" : trialBound(t, 0);
      out += fmt("  %-12s %14s %10s   %s\n", (k.levels[l] + " (start)").c_str(),
                 objectiveCell(t.objective, t.search.startMean).c_str(), ".", bound.c_str());
      continue;
    }
    const std::size_t i = screeningTrial(t, e.knob, l);
    if (i == std::string::npos) {
      out += fmt("  %-12s %14s %10s   %s\n", k.levels[l].c_str(), "-", "-", "not run (budget)");
      continue;
    }
    out += fmt("  %-12s %14s %10s   %s\n", k.levels[l].c_str(),
               objectiveCell(t.objective, t.search.trials[i].figure.value).c_str(),
               percent(t.search.trials[i].effect).c_str(), trialBound(t, i).c_str());
  }
  return out;
}

// The trials that changed more than one knob (the joint search).
std::string jointTable(const TuneRun& t) {
  std::string rows;
  for (std::size_t i = 0; i < t.search.trials.size(); ++i) {
    const Trial& tr = t.search.trials[i];
    std::size_t changed = 0;
    for (std::size_t k = 0; k < tr.setting.size(); ++k)
      changed += tr.setting[k] != t.search.start[k];
    if (tr.isStart || changed < 2) continue;
    rows += fmt("  %-34s %14s %10s   %s\n", settingText(t, tr.setting).c_str(),
                objectiveCell(t.objective, tr.figure.value).c_str(), percent(tr.effect).c_str(),
                trialBound(t, i).c_str());
  }
  if (rows.empty()) return {};
  return fmt("searched together:\n  %-34s %14s %10s   %s\n", "setting", objectiveUnit(t.objective),
             "vs start", "bound") +
         rows;
}

// Why each changed knob: its effect alone, the start's bound, the bound at its level.
std::string evidence(const TuneRun& t) {
  std::string out;
  const std::string startBound = t.trials.empty() ? "" : firstFinding(t.trials.front().result);
  for (const KnobEffect& e : t.search.effects) {
    const std::size_t k = e.knob;
    if (t.search.best[k] == t.search.start[k]) continue;
    const Knob& knob = knobsOf(t)[k];
    const std::size_t level = t.search.best[k];
    out += "  " + knob.name + " " + knob.levels[knob.start] + " -> " + knob.levels[level] + ": " +
           percent(e.levelEffects[level]) + " alone in the screening";
    const std::size_t i = screeningTrial(t, k, level);
    if (i != std::string::npos) out += ", bound there: " + trialBound(t, i);
    out += "\n";
  }
  if (!startBound.empty()) out += "  the start was bound by " + startBound + "\n";
  return out;
}

std::string recommendation(const TuneRun& t) {
  const SearchResult& s = t.search;
  std::string out = "\n";
  if (s.changed) {
    out += "recommendation: " + settingText(t, s.best) + " (" + percent(s.gain) +
           ", 95% interval " + percent(s.gainLow) + ".." + percent(s.gainHigh) +
           ", measured against the start in alternated runs)\n";
    out += evidence(t);
  } else {
    out += "recommendation: keep the start (" + s.stopReason + ")\n";
  }
  std::string flat;
  for (const KnobEffect& e : s.effects) {
    if (!e.matters) flat += (flat.empty() ? "" : ", ") + knobsOf(t)[e.knob].name;
  }
  if (!flat.empty()) {
    out += "did not matter: " + flat +
           fmt(" (no level beat the start by more than %.1f%%)\n", threshold(t) * 100);
  }
  out += fmt("noise: the start's runs spread %.1f%%; %zu trials in %.0f s; stopped: %s\n",
             s.noise * 100, s.trials.size(), t.seconds, s.stopReason.c_str());
  return out;
}

std::string handOver(const TuneRun& t) {
  const std::string keys = changedKeys(knobsOf(t), t.search.best, t.search.start);
  if (keys.empty()) return {};
  const std::string url = urlWithSetting(t.startUrl, knobsOf(t), t.search.best, t.search.start);
  std::string out = "\nhand-over (our client's URL keys):\n  keys: " + keys + "\n";
  if (t.embedded) {
    out += "  (the URL is this run's embedded server; add the keys to your nfs:// URL)\n";
  } else {
    out += "  URL:  " + url + "\n";
  }
  out += "  check it: nfsrdma-bench file --target 'nfs:" + url + "' --profile " + t.profile + "\n";
  return out;
}

void writeSetting(JsonWriter& w, const TuneRun& t, const Setting& s, std::string_view key) {
  w.beginObject(key);
  for (std::size_t k = 0; k < s.size(); ++k)
    w.field(knobsOf(t)[k].name, knobsOf(t)[k].levels[s[k]]);
  w.endObject();
}

void writeTrials(JsonWriter& w, const TuneRun& t) {
  w.beginArray("trials");
  for (std::size_t i = 0; i < t.search.trials.size(); ++i) {
    const Trial& tr = t.search.trials[i];
    w.beginObject();
    w.field("start", tr.isStart);
    writeSetting(w, t, tr.setting, "setting");
    w.field("url", t.trials[i].url);
    w.field("value", objectiveInUnit(t.objective, tr.figure.value));
    w.field("effect", tr.effect);
    w.field("bound", tr.figure.verdict);
    w.field("seconds", t.trials[i].seconds);
    w.field("cpu_s", t.trials[i].cpuSeconds);
    if (!t.trials[i].error.empty()) {
      w.field("error", t.trials[i].error);
    } else {
      writeRunJson(w, t.trials[i].result, "result");
    }
    w.endObject();
  }
  w.endArray();
}

void writeEffects(JsonWriter& w, const TuneRun& t) {
  w.beginArray("effects");
  for (const KnobEffect& e : t.search.effects) {
    const Knob& k = knobsOf(t)[e.knob];
    w.beginObject();
    w.field("knob", k.name);
    w.field("matters", e.matters);
    w.field("best_level", k.levels[e.bestLevel]);
    w.field("best_effect", e.best);
    w.beginObject("level_effects");
    for (std::size_t l = 0; l < k.levels.size(); ++l) w.field(k.levels[l], e.levelEffects[l]);
    w.endObject();
    w.endObject();
  }
  w.endArray();
}

void writeSpace(JsonWriter& w, const TuneRun& t) {
  w.beginArray("knobs");
  for (const Knob& k : knobsOf(t)) {
    w.beginObject();
    w.field("name", k.name);
    w.beginArray("levels");
    for (const auto& l : k.levels) w.field("", l);
    w.endArray();
    w.field("start", k.levels[k.start]);
    w.endObject();
  }
  w.endArray();
  w.beginArray("left_alone");
  for (const LeftAlone& l : t.space.leftAlone) {
    w.beginObject();
    w.field("knob", l.knob);
    w.field("why", l.why);
    w.endObject();
  }
  w.endArray();
}

void writeRecommendation(JsonWriter& w, const TuneRun& t) {
  const SearchResult& s = t.search;
  w.beginObject("recommendation");
  w.field("changed", s.changed);
  writeSetting(w, t, s.best, "setting");
  w.field("keys", changedKeys(knobsOf(t), s.best, s.start));
  w.field("url", urlWithSetting(t.startUrl, knobsOf(t), s.best, s.start));
  w.field("gain", s.gain);
  w.field("gain_low", s.gainLow);
  w.field("gain_high", s.gainHigh);
  w.field("stop_reason", s.stopReason);
  w.endObject();
}

}  // namespace

std::string formatTuneHeader(const TuneRun& t) {
  std::string out = "nfsrdma-bench tune: " + t.profile + " on " + t.target + "\n";
  if (!t.serverNote.empty()) out += " server: " + t.serverNote + "\n";
  out += " objective: " + std::string(objectiveName(t.objective)) + " (" +
         objectiveUnit(t.objective) + "); budget: " + t.budget + "\n";
  std::string inPlay;
  for (const Knob& k : knobsOf(t)) {
    std::string levels;
    for (std::size_t l = 0; l < k.levels.size(); ++l) {
      levels += (l == 0 ? "" : "|") + k.levels[l] + (l == k.start ? "*" : "");
    }
    inPlay += (inPlay.empty() ? "" : "; ") + k.name + " " + levels;
  }
  out += " knobs in play (* the start): " + inPlay + "\n";
  for (const LeftAlone& l : t.space.leftAlone)
    out += " left alone: " + l.knob + ": " + l.why + "\n";
  return out;
}

std::string formatTrialLine(const TuneRun& t, std::size_t number, const Setting& setting,
                            const TrialFigure& figure, const TrialRun& run) {
  const std::string shown =
      run.error.empty() ? objectiveText(t.objective, figure.value) : "error: " + run.error;
  const std::string bound = !run.error.empty()       ? "error"
                            : figure.verdict.empty() ? "-"
                                                     : figure.verdict;
  return fmt("trial %2zu  %-34s %s  bound: %s\n", number, settingText(t, setting).c_str(),
             shown.c_str(), bound.c_str());
}

std::string formatTuneText(const TuneRun& t) {
  std::string out = "\n";
  for (const KnobEffect& e : t.search.effects) out += knobTable(t, e) + "\n";
  out += jointTable(t);
  out += recommendation(t);
  out += handOver(t);
  return out;
}

std::string tuneJson(const TuneRun& t) {
  JsonWriter w;
  w.beginObject();
  w.field("schema", "nfsrdma-bench-tune/1");
  writeVersionField(w);
  w.field("target", t.target);
  if (!t.serverNote.empty()) w.field("server", t.serverNote);
  w.field("profile", t.profile);
  w.field("objective", objectiveName(t.objective));
  w.field("unit", objectiveUnit(t.objective));
  w.field("budget", t.budget);
  w.field("start_url", t.startUrl);
  writeSpace(w, t);
  w.field("noise", t.search.noise);
  w.field("start_value", objectiveInUnit(t.objective, t.search.startMean));
  w.field("seconds", t.seconds);
  writeTrials(w, t);
  writeEffects(w, t);
  writeRecommendation(w, t);
  w.endObject();
  return w.str();
}

}  // namespace nfsrdma::bench
