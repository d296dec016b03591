// One horizontal bar chart as inline SVG, for the self-contained HTML
// reports (compare's bars per target, tune's bars per knob level): a label
// left of each bar, the bar scaled to the largest value, a text after it,
// and a row that has no figure said in words instead of a bar.
#pragma once

#include <string>
#include <vector>

namespace nfsrdma::bench {

struct SvgBar {
  std::string label;  // left of the bar
  double value = 0;   // the bar's length against the largest
  std::string text;   // right of the bar ("812.0 MiB/s (flagged)")
  std::string title;  // the tooltip
  std::string colour;
  bool dashed = false;  // outlined in red, dashed: a figure to distrust
  std::string missing;  // non-empty: no bar, these words instead ("did not run")
};

// aria: what the chart shows, for a screen reader. Text is escaped here.
std::string svgBarChart(const std::vector<SvgBar>& bars, const std::string& aria);

// A colour per series, in turn (Tableau's ten, the first seven).
const char* barColour(std::size_t i);

}  // namespace nfsrdma::bench
