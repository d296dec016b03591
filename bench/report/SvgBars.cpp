#include "bench/report/SvgBars.h"

#include <algorithm>

#include "bench/report/Format.h"
#include "util/HtmlEscape.h"

namespace nfsrdma::bench {

const char* barColour(std::size_t i) {
  static const char* const kColours[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759",
                                         "#76b7b2", "#edc948", "#b07aa1"};
  return kColours[i % (sizeof kColours / sizeof kColours[0])];
}

std::string svgBarChart(const std::vector<SvgBar>& bars, const std::string& aria) {
  using util::htmlEscape;
  constexpr int kLabel = 110, kBarMax = 420, kRow = 26, kTop = 8;
  double top = 0;
  for (const auto& b : bars) {
    if (b.missing.empty()) top = std::max(top, b.value);
  }
  const int height = kTop * 2 + kRow * static_cast<int>(bars.size());
  std::string svg =
      fmt("<svg class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
          "role=\"img\" "
          "aria-label=\"%s\">\n",
          kLabel + kBarMax + 150, height, htmlEscape(aria).c_str());
  for (std::size_t i = 0; i < bars.size(); ++i) {
    const SvgBar& b = bars[i];
    const int y = kTop + kRow * static_cast<int>(i);
    svg += fmt("<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text>", kLabel - 6, y + 17,
               htmlEscape(b.label).c_str());
    if (!b.missing.empty()) {
      svg += fmt("<text x=\"%d\" y=\"%d\" class=\"na\">%s</text>\n", kLabel, y + 17,
                 htmlEscape(b.missing).c_str());
      continue;
    }
    const double frac = top > 0 ? b.value / top : 0;
    const int w = std::max(1, static_cast<int>(frac * kBarMax));
    svg += fmt(
        "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\"%s><title>%s</title></rect>",
        kLabel, y + 4, w, kRow - 8, b.colour.c_str(),
        b.dashed ? " stroke=\"#c00\" stroke-width=\"2\" stroke-dasharray=\"4 2\"" : "",
        htmlEscape(b.title).c_str());
    svg += fmt("<text x=\"%d\" y=\"%d\">%s</text>\n", kLabel + w + 6, y + 17,
               htmlEscape(b.text).c_str());
  }
  return svg + "</svg>\n";
}

}  // namespace nfsrdma::bench
