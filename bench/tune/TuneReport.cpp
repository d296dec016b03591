#include "bench/tune/TuneReport.h"

#include <algorithm>
#include <cmath>

#include "bench/bound/Bound.h"
#include "bench/file/FileReport.h"
#include "bench/report/Format.h"
#include "bench/tune/ServerKnobs.h"

namespace nfsrdma::bench {
namespace {

const std::vector<Knob>& knobsOf(const TuneRun& t) {
  return t.space.knobs;
}

// "nconnect=4&iothreads=2", or "start".
std::string settingText(const TuneRun& t, const Setting& s) {
  const std::string keys = changedKeys(knobsOf(t), s, t.search.start, t.kernel ? ',' : '&');
  return keys.empty() ? "start" : keys;
}

std::string percent(double effect) {
  return fmt("%+.1f%%", effect * 100);
}

// Every line of text with prefix before it.
std::string indent(const std::string& text, const std::string& prefix) {
  std::string out;
  std::size_t at = 0;
  while (at < text.size()) {
    const auto nl = text.find('\n', at);
    const std::size_t end = nl == std::string::npos ? text.size() : nl;
    out += prefix + text.substr(at, end - at) + "\n";
    at = end + 1;
  }
  return out;
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

double threshold(const TuneRun& t) {
  // As the search judged "matters" (TuneSearch's default noise multiple).
  return std::max(kMinEffect, SearchOptions{}.noiseMultiple * t.search.noise);
}

std::string knobTable(const TuneRun& t, const KnobEffect& e) {
  const Knob& k = knobsOf(t)[e.knob];
  std::string out = k.name + ": ";
  const bool laterFound = !e.matters && t.search.best[e.knob] != t.search.start[e.knob];
  out += e.matters ? "matters, best " + k.levels[e.bestLevel] + " (" + percent(e.best) + ")"
         : laterFound
             ? "did not matter at the start (best " + percent(e.best) + "); a later round found it"
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

// The trials that changed more than one knob (the joint search, the
// later rounds).
std::string jointTable(const TuneRun& t) {
  std::vector<std::size_t> shown;
  int width = 34;
  for (std::size_t i = 0; i < t.search.trials.size(); ++i) {
    const Trial& tr = t.search.trials[i];
    std::size_t changed = 0;
    for (std::size_t k = 0; k < tr.setting.size(); ++k)
      changed += tr.setting[k] != t.search.start[k];
    // Each setting once: the confirmation runs the best again.
    const bool listed = std::any_of(t.search.trials.begin(),
                                    t.search.trials.begin() + static_cast<std::ptrdiff_t>(i),
                                    [&](const Trial& o) { return o.setting == tr.setting; });
    if (tr.isStart || changed < 2 || listed) continue;
    shown.push_back(i);
    width = std::max(width, static_cast<int>(settingText(t, tr.setting).size()));
  }
  if (shown.empty()) return {};
  std::string out = fmt("searched together:\n  %-*s %14s %10s   %s\n", width, "setting",
                        objectiveUnit(t.objective), "vs start", "bound");
  for (std::size_t i : shown) {
    const Trial& tr = t.search.trials[i];
    out += fmt("  %-*s %14s %10s   %s\n", width, settingText(t, tr.setting).c_str(),
               objectiveCell(t.objective, tr.figure.value).c_str(), percent(tr.effect).c_str(),
               trialBound(t, i).c_str());
  }
  return out;
}

// The later rounds' moves of knob k, in order; none when the climb was not
// kept (its last point did not confirm above the first round's).
std::vector<SearchResult::Move> movesOf(const TuneRun& t, std::size_t k) {
  const SearchResult& s = t.search;
  if (s.moves.empty()) return {};
  Setting end = s.moves.back().base;
  end[s.moves.back().knob] = s.moves.back().level;
  if (end != s.best) return {};
  std::vector<SearchResult::Move> out;
  for (const auto& m : s.moves) {
    if (m.knob == k) out.push_back(m);
  }
  return out;
}

// One changed knob's path from the start, each step with its evidence:
// "nfsd.threads 1 -> 8 -> 64: +373% alone in the screening, bound there:
// credits; then +7.5% in round 3, around ...".
std::string knobEvidence(const TuneRun& t, const KnobEffect& e) {
  const std::size_t k = e.knob;
  const Knob& knob = knobsOf(t)[k];
  const std::vector<SearchResult::Move> moves = movesOf(t, k);
  const std::size_t first = moves.empty() ? t.search.best[k] : moves.front().base[k];
  std::string path = knob.name + " " + knob.levels[knob.start];
  std::vector<std::string> steps;
  if (first != knob.start) {
    path += " -> " + knob.levels[first];
    const std::size_t i = screeningTrial(t, k, first);
    steps.push_back(i == std::string::npos
                        ? "found together with the others (not run alone: budget)"
                        : percent(e.levelEffects[first]) +
                              " alone in the screening, bound there: " + trialBound(t, i));
  }
  for (const SearchResult::Move& m : moves) {
    path += " -> " + knob.levels[m.level];
    std::string step = percent(m.overBase) + " in round " + std::to_string(m.round) + ", around " +
                       settingText(t, m.base);
    if (steps.empty() && screeningTrial(t, k, m.level) != std::string::npos)
      step += " (alone at the start: " + percent(e.levelEffects[m.level]) + ")";
    steps.push_back(steps.empty() ? step : "then " + step);
  }
  std::string out = "  " + path + ": ";
  for (std::size_t i = 0; i < steps.size(); ++i) out += (i ? "; " : "") + steps[i];
  return out + "\n";
}

// Why each changed knob (its path and each step's effect), then the
// start's bound.
std::string evidence(const TuneRun& t) {
  std::string out;
  const std::string startBound = t.trials.empty() ? "" : firstFinding(t.trials.front().result);
  for (const KnobEffect& e : t.search.effects) {
    if (t.search.best[e.knob] != t.search.start[e.knob]) out += knobEvidence(t, e);
  }
  if (!startBound.empty()) out += "  the start was bound by " + startBound + "\n";
  return out;
}

// A grid's best ten settings, and its best against the start's one run.
std::string gridText(const TuneRun& t) {
  const SearchResult& s = t.search;
  std::vector<std::size_t> order(s.trials.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return s.trials[a].figure.value > s.trials[b].figure.value;
  });
  int width = 34;
  for (std::size_t n = 0; n < order.size() && n < 10; ++n)
    width = std::max(width, static_cast<int>(settingText(t, s.trials[order[n]].setting).size()));
  std::string out = fmt("grid (the best 10 of %zu):\n  %-*s %14s %10s   %s\n", order.size(), width,
                        "setting", objectiveUnit(t.objective), "vs start", "bound");
  for (std::size_t n = 0; n < order.size() && n < 10; ++n) {
    const std::size_t i = order[n];
    out += fmt("  %-*s %14s %10s   %s\n", width, settingText(t, s.trials[i].setting).c_str(),
               objectiveCell(t.objective, s.trials[i].figure.value).c_str(),
               percent(s.trials[i].effect).c_str(), trialBound(t, i).c_str());
  }
  out += "\nbest of the grid: " + settingText(t, s.best) + " (" + percent(s.gain) +
         " over the start's one run, unconfirmed); " + std::to_string(s.trials.size()) +
         fmt(" trials in %.0f s\n", t.seconds);
  return out;
}

std::string recommendation(const TuneRun& t) {
  const SearchResult& s = t.search;
  std::string out = "\n";
  if (s.stopReason.rfind("grid:", 0) == 0) return gridText(t);
  if (s.changed) {
    out += "recommendation: " + settingText(t, s.best) + " (" + percent(s.gain) +
           ", 95% interval " + percent(s.gainLow) + ".." + percent(s.gainHigh) + ", median " +
           percent(s.gainMedian) + ", measured against the start in alternated pairs)\n";
    out += evidence(t);
  } else {
    out += "recommendation: keep the start (" + s.stopReason + ")\n";
  }
  std::string flat;
  for (const KnobEffect& e : s.effects) {
    // One a later round found is not named here: the evidence says where.
    if (!e.matters && s.best[e.knob] == s.start[e.knob])
      flat += (flat.empty() ? "" : ", ") + knobsOf(t)[e.knob].name;
  }
  if (!flat.empty()) {
    out += "did not matter: " + flat +
           fmt(" (no level beat the start by more than %.1f%%)\n", threshold(t) * 100);
  }
  out += fmt("noise: the start's runs spread %.1f%%; %zu trials in %.0f s; stopped: %s\n",
             s.noise * 100, s.trials.size(), t.seconds, s.stopReason.c_str());
  return out;
}

// The recommendation against each --versus setting.
std::string versusText(const TuneRun& t) {
  if (t.versus.empty()) return {};
  std::string out =
      "\nagainst other settings (alternated with the recommendation, after the search):\n";
  for (const VersusRun& v : t.versus) {
    out += "  " + v.label + (v.label == v.keys ? "" : " (" + v.keys + ")") + ": ";
    if (!v.error.empty()) {
      out += "not measured: " + v.error + "\n";
      continue;
    }
    out +=
        fmt("recommendation %.2fx (95%% interval %.2f..%.2fx, median %.2fx, %zu pairs): %s "
            "against %s\n",
            v.ratio.mean, v.ratio.low, v.ratio.high, v.ratio.median, v.ratio.pairs,
            objectiveText(t.objective, v.recommendationMean).c_str(),
            objectiveText(t.objective, v.versusMean).c_str());
  }
  return out;
}

// The client's changed keys (the server's apart).
std::string clientKeys(const TuneRun& t, const Setting& s) {
  Setting clientOnly = s;
  for (std::size_t k = 0; k < s.size(); ++k) {
    if (isServerKnob(knobsOf(t)[k].name)) clientOnly[k] = t.search.start[k];
  }
  return changedKeys(knobsOf(t), clientOnly, t.search.start, t.kernel ? ',' : '&');
}

std::string kernelHandOverText(const KernelHandOver& h) {
  std::string out = "\nhand-over (the kernel client):\n  mount:  " + h.mountCommand +
                    "\n  fstab:  " + h.fstabLine + "\n";
  if (!h.readAheadNfsConf.empty()) {
    out += "  read-ahead, where nfs-utils' nfsrahead is installed, in /etc/nfs.conf:\n" +
           indent(h.readAheadNfsConf, "    ") +
           "  else as a udev rule (/etc/udev/rules.d/99-nfs-readahead.rules):\n" +
           indent(h.readAheadUdevRule, "    ");
  }
  out += "  Kubernetes (a PersistentVolume and a StorageClass with these mountOptions):\n" +
         indent(h.kubernetesYaml, "    ");
  return out;
}

// The server's part: a fragment for nfsrdma-server's config, and how the
// server was left.
std::string serverHandOver(const TuneRun& t) {
  const std::string fragment = serverFragment(knobsOf(t), t.search.best, t.search.start);
  std::string out;
  if (!fragment.empty()) {
    out +=
        "\nhand-over (the server, for nfsrdma-server's config; `nfsrdma-server plan` shows "
        "the change, `apply` makes it, `rollback` undoes it):\n" +
        indent(fragment, "  ");
  }
  if (!t.serverEnd.empty()) out += "server: " + t.serverEnd + "\n";
  return out;
}

std::string handOver(const TuneRun& t) {
  const std::string keys = clientKeys(t, t.search.best);
  if (keys.empty()) return serverHandOver(t);
  if (t.kernelHandOver) return kernelHandOverText(*t.kernelHandOver) + serverHandOver(t);
  const std::string url = urlWithSetting(t.startUrl, knobsOf(t), t.search.best, t.search.start);
  std::string out = "\nhand-over (our client's URL keys):\n  keys: " + keys + "\n";
  if (t.embedded) {
    out += "  (the URL is this run's embedded server; add the keys to your nfs:// URL)\n";
  } else {
    out += "  URL:  " + url + "\n";
  }
  out += "  check it: nfsrdma-bench file --target 'nfs:" + url + "' --profile " + t.profile + "\n";
  return out + serverHandOver(t);
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
    w.field("round", static_cast<std::uint64_t>(tr.round));
    w.field("base", tr.isBase);  // a run of its round's base point
    writeSetting(w, t, tr.setting, "setting");
    w.field("ran_with", t.trials[i].ranWith);
    if (!t.trials[i].note.empty()) w.field("note", t.trials[i].note);
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
  w.field("keys", changedKeys(knobsOf(t), s.best, s.start, t.kernel ? ',' : '&'));
  if (t.kernelHandOver) {
    const KernelHandOver& h = *t.kernelHandOver;
    w.beginObject("hand_over");
    w.field("mount_command", h.mountCommand);
    w.field("fstab", h.fstabLine);
    w.field("kubernetes", h.kubernetesYaml);
    if (!h.readAheadNfsConf.empty()) {
      w.field("read_ahead_nfs_conf", h.readAheadNfsConf);
      w.field("read_ahead_udev_rule", h.readAheadUdevRule);
    }
    w.endObject();
  } else {
    w.field("url", urlWithSetting(t.startUrl, knobsOf(t), s.best, s.start));
  }
  w.field("server_fragment", serverFragment(knobsOf(t), s.best, s.start));
  if (!t.serverEnd.empty()) w.field("server_end", t.serverEnd);
  w.field("value", objectiveInUnit(t.objective, s.bestMean));
  w.field("gain", s.gain);
  w.field("gain_low", s.gainLow);
  w.field("gain_high", s.gainHigh);
  w.field("gain_median", s.gainMedian);
  w.field("stop_reason", s.stopReason);
  w.endObject();
}

void writeVersus(JsonWriter& w, const TuneRun& t) {
  w.beginArray("versus");
  for (const VersusRun& v : t.versus) {
    w.beginObject();
    w.field("label", v.label);
    w.field("keys", v.keys);
    if (!v.error.empty()) {
      w.field("error", v.error);
    } else {
      w.field("recommendation_value", objectiveInUnit(t.objective, v.recommendationMean));
      w.field("versus_value", objectiveInUnit(t.objective, v.versusMean));
      w.field("ratio", v.ratio.mean);
      w.field("ratio_low", v.ratio.low);
      w.field("ratio_high", v.ratio.high);
      w.field("ratio_median", v.ratio.median);
      w.field("pairs", static_cast<std::uint64_t>(v.ratio.pairs));
    }
    w.endObject();
  }
  w.endArray();
}

}  // namespace

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

std::string formatTuneHeader(const TuneRun& t) {
  std::string out = "nfsrdma-bench tune: " + t.profile + " on " + t.target + "\n";
  if (!t.serverNote.empty()) out += " server: " + t.serverNote + "\n";
  if (!t.clients.empty()) {
    out += " clients: " + t.clients +
           ", each with its own jobs and files and the setting's client knobs; a trial's "
           "figure is their aggregate\n";
  }
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
  const std::string note = run.note.empty() ? "" : "  (" + run.note + ")";
  return fmt("trial %2zu  %-34s %s  bound: %s%s\n", number, settingText(t, setting).c_str(),
             shown.c_str(), bound.c_str(), note.c_str());
}

std::string formatTuneText(const TuneRun& t) {
  std::string out = "\n";
  for (const KnobEffect& e : t.search.effects) out += knobTable(t, e) + "\n";
  out += jointTable(t);
  out += recommendation(t);
  out += versusText(t);
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
  if (!t.clients.empty()) w.field("clients", t.clients);
  w.field("start_url", t.startUrl);
  writeSpace(w, t);
  w.field("noise", t.search.noise);
  w.field("start_value", objectiveInUnit(t.objective, t.search.startMean));
  w.field("seconds", t.seconds);
  writeTrials(w, t);
  writeEffects(w, t);
  writeRecommendation(w, t);
  writeVersus(w, t);
  w.endObject();
  return w.str();
}

}  // namespace nfsrdma::bench
