#include "bench/tune/TuneHtml.h"

#include "bench/report/Format.h"
#include "bench/report/SvgBars.h"
#include "util/HtmlEscape.h"

namespace nfsrdma::bench {
namespace {

using util::htmlEscape;

constexpr const char* kStartColour = "#9e9e9e";
constexpr const char* kBestColour = "#59a14f";

std::string knobChart(const TuneRun& t, const KnobEffect& e) {
  const Knob& k = t.space.knobs[e.knob];
  std::vector<SvgBar> bars;
  for (std::size_t l = 0; l < k.levels.size(); ++l) {
    SvgBar b;
    b.label = k.levels[l] + (l == k.start ? " (start)" : "");
    const std::size_t i = l == k.start ? std::string::npos : screeningTrial(t, e.knob, l);
    const Trial* tr = i == std::string::npos ? nullptr : &t.search.trials[i];
    const double value = l == k.start ? t.search.startMean : tr != nullptr ? tr->figure.value : 0;
    if (l != k.start && tr == nullptr) {
      b.missing = "not run (budget)";
      bars.push_back(b);
      continue;
    }
    b.value = objectiveInUnit(t.objective, value);
    b.colour = l == k.start                    ? kStartColour
               : e.matters && l == e.bestLevel ? kBestColour
                                               : barColour(0);
    b.text = objectiveText(t.objective, value) +
             (tr != nullptr ? fmt(" (%+.1f%%)", tr->effect * 100) : std::string());
    b.title = k.name + "=" + k.levels[l] + ": " + b.text;
    bars.push_back(b);
  }
  std::string verdict = e.matters ? "matters" : "did not matter";
  return "<h2>" + htmlEscape(k.name) + " <small>(" + verdict + ")</small></h2>\n" +
         svgBarChart(bars, k.name + ": " + objectiveUnit(t.objective) + " by level");
}

}  // namespace

std::string tuneHtml(const TuneRun& t) {
  std::string h =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<title>nfsrdma-bench tune</title>\n<style>\n"
      "body{font-family:system-ui,sans-serif;margin:24px;color:#222;max-width:1400px}\n"
      "pre{background:#f6f6f6;padding:8px;overflow-x:auto}\n"
      "svg.chart text{font-size:12px;font-family:system-ui,sans-serif}"
      "svg.chart text.na{fill:#888;font-style:italic}\n"
      "</style>\n</head>\n<body>\n<h1>nfsrdma-bench tune: " +
      htmlEscape(t.profile) + "</h1>\n<pre>" + htmlEscape(formatTuneHeader(t)) + "</pre>\n";
  for (const KnobEffect& e : t.search.effects) h += knobChart(t, e);
  h += "<h2>Report</h2>\n<pre>" + htmlEscape(formatTuneText(t)) + "</pre>\n</body>\n</html>\n";
  return h;
}

}  // namespace nfsrdma::bench
