#include "bench/compare/HtmlReport.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>

#include "bench/file/FileReport.h"

namespace nfsrdma::bench {
namespace {

__attribute__((format(printf, 1, 2))) std::string fmt(const char* f, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, f);
  std::vsnprintf(buf, sizeof buf, f, ap);
  va_end(ap);
  return buf;
}

const char* const kColours[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1"};

const char* colourOf(std::size_t i) { return kColours[i % (sizeof kColours / sizeof kColours[0])]; }

// One horizontal bar chart: a bar per available target.
std::string barChart(const CompareReport& r, const std::string& profile, IoDirection d) {
  constexpr int kLabel = 110, kBarMax = 420, kRow = 26, kTop = 8;
  double top = 0;
  for (const auto& t : r.targets) {
    if (const CompareCell* c = r.cell(profile, d, t.name); c != nullptr && c->ran) top = std::max(top, c->mibPerSecond);
  }
  const int height = kTop * 2 + kRow * static_cast<int>(r.targets.size());
  std::string svg = fmt(
      "<svg class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" role=\"img\" "
      "aria-label=\"%s %s MiB/s by target\">\n",
      kLabel + kBarMax + 150, height, htmlEscape(profile).c_str(), directionName(d));
  for (std::size_t i = 0; i < r.targets.size(); ++i) {
    const auto& t = r.targets[i];
    const int y = kTop + kRow * static_cast<int>(i);
    svg += fmt("<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text>", kLabel - 6, y + 17, htmlEscape(t.name).c_str());
    const CompareCell* c = r.cell(profile, d, t.name);
    if (!t.available || c == nullptr || !c->ran) {
      const std::string why = !t.available                              ? t.unavailable
                              : c != nullptr && !c->unsupported.empty() ? "n/a for this engine"
                              : c != nullptr && !c->firstError.empty()  ? "error: " + c->firstError
                                                                        : "did not run";
      svg += fmt("<text x=\"%d\" y=\"%d\" class=\"na\">%s</text>\n", kLabel, y + 17, htmlEscape(why).c_str());
      continue;
    }
    const double frac = top > 0 ? c->mibPerSecond / top : 0;
    const int w = std::max(1, static_cast<int>(frac * kBarMax));
    const bool flagged = std::any_of(c->flags.begin(), c->flags.end(),
                                     [](const Flag& f) { return f.severity == FlagSeverity::Warning; });
    svg += fmt("<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\"%s><title>%s: %.1f MiB/s, %.0f IOPS</title></rect>",
               kLabel, y + 4, w, kRow - 8, colourOf(i), flagged ? " stroke=\"#c00\" stroke-width=\"2\" stroke-dasharray=\"4 2\"" : "",
               htmlEscape(t.name).c_str(), c->mibPerSecond, c->iops);
    svg += fmt("<text x=\"%d\" y=\"%d\">%.1f MiB/s%s%s</text>\n", kLabel + w + 6, y + 17, c->mibPerSecond,
               flagged ? " (flagged)" : "", c->verifyMismatches ? " BAD-DATA" : "");
  }
  return svg + "</svg>\n";
}

}  // namespace

std::string htmlEscape(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

namespace {

std::string htmlHead(const CompareReport& r) {
  std::string h = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  h += "<title>nfsrdma-bench compare</title>\n<style>\n"
       "body{font-family:system-ui,sans-serif;margin:24px;color:#222;max-width:1400px}\n"
       "table{border-collapse:collapse;margin:12px 0}th,td{border:1px solid #bbb;padding:3px 8px}\n"
       "td.num{text-align:right;font-variant-numeric:tabular-nums}th{background:#eef}\n"
       "td.na{color:#777;font-style:italic}.flag{color:#c00;font-weight:bold}.reg{background:#fdd}\n"
       "td.err{color:#c00;font-weight:bold;font-style:normal}td.bad{background:#fdd}\n"
       "svg.chart text{font-size:12px;font-family:system-ui,sans-serif}svg.chart text.na{fill:#777;font-style:italic}\n"
       "section.row{display:inline-block;vertical-align:top;margin:0 24px 16px 0}\n"
       "</style>\n</head>\n<body>\n<h1>nfsrdma-bench compare</h1>\n";
  h += "<table id=\"config\">\n";
  for (const auto& [k, v] : r.config) h += "<tr><th>" + htmlEscape(k) + "</th><td>" + htmlEscape(v) + "</td></tr>\n";
  h += "</table>\n";
  return h;
}

std::string throughputHeader(const CompareReport& r, bool withBaseline) {
  std::string h = "<h2>Throughput</h2>\n<table id=\"compare-table\">\n<thead><tr><th>test</th><th>dir</th>";
  for (const auto& t : r.targets) {
    if (!t.available) {
      h += "<th>" + htmlEscape(t.name) + "</th>";
      continue;
    }
    h += "<th>" + htmlEscape(t.name) + " MiB/s</th><th>" + htmlEscape(t.name) + " IOPS</th>";
    if (withBaseline) h += "<th>" + htmlEscape(t.name) + " change</th>";
  }
  for (const auto& q : r.ratios) h += "<th>" + htmlEscape(q.name()) + "</th>";
  return h + "</tr></thead>\n<tbody>\n";
}

// A cell that did not run: n/a (and why), error (linked to the list), or what it says.
std::string notRunCells(const CompareCell* c, bool withBaseline) {
  std::string h;
  if (c != nullptr && !c->unsupported.empty()) {
    h = "<td class=\"na\" colspan=\"2\" title=\"" + htmlEscape(c->unsupported) + "\">n/a</td>";
  } else if (const std::string shown = notRunText(c); shown == "error") {
    h = "<td class=\"na err\" title=\"" + htmlEscape(c->firstError) + "\"><a class=\"flag\" href=\"#errors\">" +
        shown + "</a></td><td class=\"na\">-</td>";
  } else {
    h = "<td class=\"na\">" + htmlEscape(shown) + "</td><td class=\"na\">-</td>";
  }
  if (withBaseline) h += "<td></td>";
  return h;
}

// A cell that ran: MiB/s with its flags' footnote marks (added to
// footnotes) and BAD-DATA mark, IOPS, and the baseline change.
std::string ranCells(const CompareCell& c, const std::string& target, bool withBaseline,
                     std::vector<std::string>& footnotes) {
  std::string marks;
  for (const auto& f : c.flags) {
    if (f.severity != FlagSeverity::Warning) continue;
    footnotes.push_back(target + " " + f.message);
    marks += fmt(" <a class=\"flag\" href=\"#flag-%zu\">[%zu]</a>", footnotes.size(), footnotes.size());
  }
  if (c.verifyMismatches) {
    marks += fmt(" <a class=\"flag\" href=\"#errors\" title=\"%llu verify mismatches\">%s</a>",
                 static_cast<unsigned long long>(c.verifyMismatches), kBadDataMark);
  }
  std::string h = fmt("<td class=\"num%s\">%.1f", c.verifyMismatches ? " bad" : "", c.mibPerSecond) + marks +
                  fmt("</td><td class=\"num\">%.0f</td>", c.iops);
  if (withBaseline) {
    const std::string change = htmlEscape(baselineChangeText(c));
    h += c.baselineMibPerSecond ? fmt("<td class=\"num%s\">", c.regression ? " reg" : "") + change + "</td>"
                                : "<td>" + change + "</td>";
  }
  return h;
}

std::string throughputRow(const CompareReport& r, const std::string& profile, IoDirection dir,
                          bool withBaseline, std::vector<std::string>& footnotes) {
  std::string h = "<tr><td>" + htmlEscape(rowName(r, profile)) + "</td><td>" + directionName(dir) + "</td>";
  for (const auto& t : r.targets) {
    if (!t.available) {
      h += "<td class=\"na\">" + htmlEscape(t.name + ": " + t.unavailable) + "</td>";
      continue;
    }
    const CompareCell* c = r.cell(profile, dir, t.name);
    h += c == nullptr || !c->ran ? notRunCells(c, withBaseline) : ranCells(*c, t.name, withBaseline, footnotes);
  }
  for (const auto& q : r.ratios) {
    const auto v = r.ratio(q, profile, dir);
    h += v ? fmt("<td class=\"num\">%.2fx</td>", *v) : std::string("<td class=\"na\">-</td>");
  }
  return h + "</tr>\n";
}

// "<h2>heading</h2>" and a list of escaped lines (nothing when there are none).
std::string listSection(const std::string& heading, const std::string& listAttrs, const std::vector<std::string>& lines,
                        const char* itemAttrs = "", const std::string& intro = {}) {
  if (lines.empty()) return {};
  std::string h = "<h2>" + heading + "</h2>\n" + intro + "<ul" + listAttrs + ">\n";
  for (const auto& line : lines) h += std::string("<li") + itemAttrs + ">" + htmlEscape(line) + "</li>\n";
  return h + "</ul>\n";
}

std::string footnoteSection(const std::vector<std::string>& footnotes) {
  if (footnotes.empty()) return {};
  std::string h = "<h2>Flags</h2>\n<ol id=\"flags\">\n";
  for (std::size_t i = 0; i < footnotes.size(); ++i) {
    h += fmt("<li id=\"flag-%zu\">", i + 1) + htmlEscape(footnotes[i]) + "</li>\n";
  }
  return h + "</ol>\n";
}

std::string baselineSection(const CompareReport& r) {
  std::string h = "<h2>Baseline</h2>\n<p>" + htmlEscape(r.baselinePath) +
                  fmt(": regression = a drop of more than %.0f%% in MiB/s. %zu regression(s).</p>\n",
                      r.regressionThresholdPercent, r.regressions());
  std::string changed;
  for (const auto& c : r.cells) {
    if (c.baselineConfigChange.empty()) continue;
    changed += "<li>" +
               htmlEscape(rowName(r, c.profile) + " " + directionName(c.direction) + " " + c.target + ": " +
                          c.baselineConfigChange) +
               "</li>\n";
  }
  if (!changed.empty()) h += "<p>Not compared, config changed:</p>\n<ul id=\"config-changed\">\n" + changed + "</ul>\n";
  return h;
}

std::string chartsSection(const CompareReport& r) {
  std::string h = "<h2>Charts (MiB/s)</h2>\n";
  for (const auto& [profile, dir] : r.rows) {
    h += "<section class=\"row\"><h3>" + htmlEscape(rowName(r, profile)) + " " + directionName(dir) + "</h3>\n" +
         barChart(r, profile, dir) + "</section>\n";
  }
  return h;
}

// Submission to completion, fio's lat (its slat + clat): not clat alone.
std::string latencyTable(const CompareReport& r) {
  std::string h =
      "<h2>Latency (lat), usec</h2>\n<table "
      "id=\"latency\">\n<thead><tr><th>test</th><th>dir</th><th>target</th>"
      "<th>mean</th>";
  for (double p : kPercentiles) h += "<th>" + percentileName(p) + "</th>";
  h += "<th>max</th></tr></thead>\n<tbody>\n";
  for (const auto& [profile, dir] : r.rows) {
    for (const auto& t : r.targets) {
      const CompareCell* c = r.cell(profile, dir, t.name);
      if (c == nullptr || !c->ran) continue;
      h += "<tr><td>" + htmlEscape(rowName(r, profile)) + "</td><td>" + directionName(dir) + "</td><td>" +
           htmlEscape(t.name) + "</td>";
      h += fmt("<td class=\"num\">%.1f</td>", c->lat("mean"));
      for (double p : kPercentiles) h += fmt("<td class=\"num\">%.1f</td>", c->lat(percentileKey(p)));
      h += fmt("<td class=\"num\">%.1f</td></tr>\n", c->lat("max"));
    }
  }
  return h + "</tbody>\n</table>\n";
}

std::string targetsSection(const CompareReport& r) {
  std::string h = "<h2>Targets</h2>\n<ul>\n";
  for (const auto& t : r.targets) {
    h += "<li><b>" + htmlEscape(t.name) + "</b>: " + htmlEscape(t.available ? t.description : t.unavailable);
    if (t.linkBytesPerSecond)
      h += " — link " + htmlEscape(formatGbps(*t.linkBytesPerSecond)) + " (" + htmlEscape(t.linkSource) + ")";
    h += "</li>\n";
  }
  return h + "</ul>\n";
}

}  // namespace

std::string renderHtmlReport(const CompareReport& r) {
  const bool withBaseline = !r.baselinePath.empty();
  std::string h = htmlHead(r);
  std::vector<std::string> footnotes;  // the flags' texts, numbered as the table marks them
  h += throughputHeader(r, withBaseline);
  for (const auto& [profile, dir] : r.rows) h += throughputRow(r, profile, dir, withBaseline, footnotes);
  h += "</tbody>\n</table>\n<p>MiB/s = 2<sup>20</sup> bytes/s; ratios of MiB/s in the same run. MB/s (10<sup>6</sup>) "
       "figures are in the JSON.</p>\n";
  // Right under the table, as in the text: what failed or read back wrong.
  h += listSection("Errors", " id=\"errors\"", errorLines(r), " class=\"flag\"");
  h += listSection("Commit", " id=\"commits\"", commitLines(r), "", "<p>" + htmlEscape(kCommitHeading) + "</p>\n");
  h += footnoteSection(footnotes);
  h += listSection("Bounds reached", " id=\"bounds\"", boundsReachedLines(r));
  h += listSection("n/a", "", unsupportedLines(r));
  if (withBaseline) h += baselineSection(r);
  h += chartsSection(r);
  h += latencyTable(r);
  h += targetsSection(r);
  h += listSection("Notes", " id=\"notes\"", r.notes);
  return h + "</body>\n</html>\n";
}

}  // namespace nfsrdma::bench
