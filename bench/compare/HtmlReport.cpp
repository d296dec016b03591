#include "bench/compare/HtmlReport.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>

#include "bench/compare/CompareGrid.h"
#include "bench/compare/CounterCharts.h"
#include "bench/file/FileReport.h"
#include "bench/report/Format.h"
#include "bench/report/SvgBars.h"

namespace nfsrdma::bench {
namespace {

// One horizontal bar chart: a bar per available target.
std::string barChart(const CompareReport& r, const std::string& profile, IoDirection d) {
  std::vector<SvgBar> bars;
  for (std::size_t i = 0; i < r.targets.size(); ++i) {
    const auto& t = r.targets[i];
    SvgBar b;
    b.label = t.name;
    const CompareCell* c = r.cell(profile, d, t.name);
    if (!t.available || c == nullptr || !c->ran) {
      b.missing = !t.available                              ? t.unavailable
                  : c != nullptr && !c->unsupported.empty() ? "n/a for this engine"
                  : c != nullptr && !c->firstError.empty()  ? "error: " + c->firstError
                                                            : "did not run";
      bars.push_back(b);
      continue;
    }
    b.dashed = std::any_of(c->flags.begin(), c->flags.end(),
                           [](const Flag& f) { return f.severity == FlagSeverity::Warning; });
    b.value = c->mibPerSecond;
    b.colour = barColour(i);
    b.title = t.name + fmt(": %.1f MiB/s, %.0f IOPS", c->mibPerSecond, c->iops);
    b.text = fmt("%.1f MiB/s%s%s", c->mibPerSecond, b.dashed ? " (flagged)" : "",
                 c->verifyMismatches ? " BAD-DATA" : "");
    bars.push_back(b);
  }
  return svgBarChart(bars, profile + " " + directionName(d) + " MiB/s by target");
}

std::string htmlHead(const CompareReport& r) {
  std::string h = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  h +=
      "<title>nfsrdma-bench compare</title>\n<style>\n"
      "body{font-family:system-ui,sans-serif;margin:24px;color:#222;max-width:1400px}\n"
      "table{border-collapse:collapse;margin:12px 0}th,td{border:1px solid #bbb;padding:3px 8px}\n"
      "td.num{text-align:right;font-variant-numeric:tabular-nums}th{background:#eef}\n"
      "td.na{color:#777;font-style:italic}.flag{color:#c00;font-weight:bold}.reg{background:#fdd}\n"
      "td.err{color:#c00;font-weight:bold;font-style:normal}td.bad{background:#fdd}\n"
      "svg.chart text{font-size:12px;font-family:system-ui,sans-serif}svg.chart "
      "text.na{fill:#777;font-style:italic}\n"
      "section.row{display:inline-block;vertical-align:top;margin:0 24px 16px 0}\n"
      "a.bound{font-size:11px;color:#555}figure.spark{display:inline-block;margin:0 12px 8px 0}"
      "figure.spark "
      "figcaption{font-size:11px;color:#555}\n"
      "</style>\n</head>\n<body>\n<h1>nfsrdma-bench compare</h1>\n";
  h += "<table id=\"config\">\n";
  for (const auto& [k, v] : r.config)
    h += "<tr><th>" + htmlEscape(k) + "</th><td>" + htmlEscape(v) + "</td></tr>\n";
  h += "</table>\n";
  return h;
}

std::string throughputHeader(const CompareGrid& g) {
  std::string h = "<h2>Throughput</h2>\n<table id=\"compare-table\">\n<thead><tr>";
  for (const auto& col : g.columns) h += "<th>" + htmlEscape(col.html) + "</th>";
  return h + "</tr></thead>\n<tbody>\n";
}

std::string classOf(const GridCell& c) {
  if (c.number)
    return std::string("num") + (c.badData ? " bad" : "") + (c.regression ? " reg" : "");
  if (c.missing) return c.error ? "na err" : "na";
  return {};
}

// What a cell holds: its text (an error links to the Errors list), then
// links to its flags' footnotes and the BAD-DATA mark.
std::string htmlContent(const GridCell& c) {
  std::string h = c.error ? "<a class=\"flag\" href=\"#errors\">" + htmlEscape(c.text) + "</a>"
                          : htmlEscape(c.text);
  for (std::size_t n : c.flags) h += fmt(" <a class=\"flag\" href=\"#flag-%zu\">[%zu]</a>", n, n);
  if (c.badData) {
    h += fmt(" <a class=\"flag\" href=\"#errors\" title=\"%llu verify mismatches\">%s</a>",
             static_cast<unsigned long long>(c.badData), kBadDataMark);
  }
  if (!c.bound.empty()) h += " <a class=\"bound\" href=\"#why\">" + htmlEscape(c.bound) + "</a>";
  return h;
}

std::string htmlCell(const GridCell& c) {
  std::string h = "<td";
  if (const std::string cls = classOf(c); !cls.empty()) h += " class=\"" + cls + "\"";
  if (c.span > 1) h += fmt(" colspan=\"%zu\"", c.span);
  if (!c.why.empty()) h += " title=\"" + htmlEscape(c.why) + "\"";
  return h + ">" + htmlContent(c) + "</td>";
}

std::string throughputRows(const CompareGrid& g) {
  std::string h;
  for (const auto& row : g.rows) {
    h += "<tr>";
    for (const auto& c : row) {
      if (!c.covered) h += htmlCell(c);
    }
    h += "</tr>\n";
  }
  return h;
}

// "<h2>heading</h2>" and a list of escaped lines (nothing when there are none).
std::string listSection(const std::string& heading, const std::string& listAttrs,
                        const std::vector<std::string>& lines, const char* itemAttrs = "",
                        const std::string& intro = {}) {
  if (lines.empty()) return {};
  std::string h = "<h2>" + heading + "</h2>\n" + intro + "<ul" + listAttrs + ">\n";
  for (const auto& line : lines)
    h += std::string("<li") + itemAttrs + ">" + htmlEscape(line) + "</li>\n";
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
  std::string h =
      "<h2>Baseline</h2>\n<p>" + htmlEscape(r.baselinePath) +
      fmt(": regression = a drop of more than %.0f%% in MiB/s. %zu regression(s).</p>\n",
          r.regressionThresholdPercent, r.regressions());
  std::string changed;
  for (const auto& c : r.cells) {
    if (c.baselineConfigChange.empty()) continue;
    changed += "<li>" +
               htmlEscape(rowName(r, c.profile) + " " + directionName(c.direction) + " " +
                          c.target + ": " + c.baselineConfigChange) +
               "</li>\n";
  }
  if (!changed.empty())
    h += "<p>Not compared, config changed:</p>\n<ul id=\"config-changed\">\n" + changed + "</ul>\n";
  return h;
}

// A many-client run: under a row's chart, a bar per client of each target.
std::string clientCharts(const CompareReport& r, const std::string& profile, IoDirection d) {
  std::string h;
  for (const auto& t : r.targets) {
    const CompareCell* c = r.cell(profile, d, t.name);
    if (c == nullptr || !c->clients) continue;
    h += "<h4>" + htmlEscape(t.name) + ": per client</h4>\n" + ranksSvg(c->clients->aggregate);
  }
  return h;
}

std::string chartsSection(const CompareReport& r) {
  std::string h = "<h2>Charts (MiB/s)</h2>\n";
  for (const auto& [profile, dir] : r.rows) {
    h += "<section class=\"row\"><h3>" + htmlEscape(rowName(r, profile)) + " " +
         directionName(dir) + "</h3>\n" + barChart(r, profile, dir) +
         clientCharts(r, profile, dir) + "</section>\n";
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
      h += "<tr><td>" + htmlEscape(rowName(r, profile)) + "</td><td>" + directionName(dir) +
           "</td><td>" + htmlEscape(t.name) + "</td>";
      h += fmt("<td class=\"num\">%.1f</td>", c->lat("mean"));
      for (double p : kPercentiles)
        h += fmt("<td class=\"num\">%.1f</td>", c->lat(percentileKey(p)));
      h += fmt("<td class=\"num\">%.1f</td></tr>\n", c->lat("max"));
    }
  }
  return h + "</tbody>\n</table>\n";
}

// The cell's verdict: "bound: TAG" and a line per finding.
std::string cellBoundHtml(const CompareCell& c) {
  if (!c.bound) return {};
  std::string h = "<ul class=\"why\">\n";
  for (const auto& line : boundLines(*c.bound)) h += "<li>" + htmlEscape(line) + "</li>\n";
  return h + "</ul>\n";
}

// Under each cell that was sampled: its verdict and the counters that
// moved while it ran, as small time series.
std::string boundSection(const CompareReport& r) {
  std::string h;
  for (const auto& [profile, dir] : r.rows) {
    for (const auto& t : r.targets) {
      const CompareCell* c = r.cell(profile, dir, t.name);
      if (c == nullptr || !c->ran || !c->series) continue;
      h += "<section class=\"bound\"><h3>" + htmlEscape(t.name) + " " +
           htmlEscape(rowName(r, profile)) + " " + directionName(dir) + "</h3>\n";
      h += cellBoundHtml(*c) + counterCharts(*c->series) + "</section>\n";
    }
  }
  return h.empty() ? h : "<h2 id=\"why\">What bounded each cell</h2>\n" + h;
}

std::string targetsSection(const CompareReport& r) {
  std::string h = "<h2>Targets</h2>\n<ul>\n";
  for (const auto& t : r.targets) {
    h += "<li><b>" + htmlEscape(t.name) +
         "</b>: " + htmlEscape(t.available ? t.description : t.unavailable);
    if (t.linkBytesPerSecond)
      h += " — link " + htmlEscape(formatGbps(*t.linkBytesPerSecond)) + " (" +
           htmlEscape(t.linkSource) + ")";
    h += "</li>\n";
  }
  return h + "</ul>\n";
}

}  // namespace

std::string renderHtmlReport(const CompareReport& r) {
  const bool withBaseline = !r.baselinePath.empty();
  std::string h = htmlHead(r);
  const CompareGrid grid = compareGrid(r);
  const std::vector<std::string>& footnotes = grid.footnotes;  // numbered as the table marks them
  h += throughputHeader(grid) + throughputRows(grid);
  h += "</tbody>\n</table>\n<p>MiB/s = 2<sup>20</sup> bytes/s; ratios of MiB/s in the same run. "
       "MB/s (10<sup>6</sup>) "
       "figures are in the JSON.</p>\n";
  // Right under the table, as in the text: what failed or read back wrong.
  h += listSection("Errors", " id=\"errors\"", errorLines(r), " class=\"flag\"");
  h += listSection("Commit", " id=\"commits\"", commitLines(r), "",
                   "<p>" + htmlEscape(kCommitHeading) + "</p>\n");
  h += footnoteSection(footnotes);
  h += listSection("Bounds reached", " id=\"bounds\"", boundsReachedLines(r));
  h += listSection("n/a", "", unsupportedLines(r));
  if (withBaseline) h += baselineSection(r);
  h += chartsSection(r);
  h += boundSection(r);
  h += latencyTable(r);
  h += targetsSection(r);
  h += listSection("Notes", " id=\"notes\"", r.notes);
  return h + "</body>\n</html>\n";
}

}  // namespace nfsrdma::bench
