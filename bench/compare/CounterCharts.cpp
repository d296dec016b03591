#include "bench/compare/CounterCharts.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <vector>

#include "bench/file/CounterReport.h"
#include "util/HtmlEscape.h"

namespace nfsrdma::bench {
namespace {

struct Line {
  std::string label;  // "rdma:rxe1/1 rcvd_seq_err /s"
  std::vector<double> values;
  int rank = 1;  // 0: a counter the verdicts read, drawn first
};

// The counters a verdict reads, by name anywhere in a source.
bool telling(const std::string& name) {
  static const char* const kNames[] = {"in_flight",
                                       "credits",
                                       "busy",
                                       "busiest_ticks",
                                       "softirq",
                                       "rcvd_seq_err",
                                       "out_of_seq_request",
                                       "duplicate_request",
                                       "completer_retry_err",
                                       "out_of_sequence",
                                       "packet_seq_err",
                                       "local_ack_timeout_err",
                                       "np_cnp_sent",
                                       "rp_cnp_handled",
                                       "rdma_stat_sq_starve",
                                       "bklog_u",
                                       "packets-arrived"};
  return std::any_of(std::begin(kNames), std::end(kNames),
                     [&](const char* n) { return name == n; });
}

// A counter's rate per second in each interval, or a gauge's readings.
std::vector<double> perSecond(const counters::Series& s, const std::string& name) {
  std::vector<double> v = intervalValues(s, name);
  if (s.isGauge(name)) return v;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const double dt = s.readings[i + 1].seconds - s.readings[i].seconds;
    v[i] = dt > 0 ? v[i] / dt : std::nan("");
  }
  return v;
}

bool moved(const std::vector<double>& v, bool gauge) {
  double lo = std::numeric_limits<double>::infinity();
  double hi = -lo;
  for (double x : v) {
    if (std::isnan(x)) continue;
    lo = std::min(lo, x);
    hi = std::max(hi, x);
  }
  if (lo > hi) return false;
  return gauge ? hi > lo : hi > 0;
}

std::vector<Line> linesOf(const counters::CellSeries& cell) {
  std::vector<Line> lines;
  for (const auto& s : cell.series) {
    if (s.readings.size() < 2) continue;
    for (const auto& n : counters::counterNames(s)) {
      std::vector<double> v = perSecond(s, n);
      if (!moved(v, s.isGauge(n))) continue;
      lines.push_back(
          {s.source + " " + n + (s.isGauge(n) ? "" : " /s"), std::move(v), telling(n) ? 0 : 1});
    }
  }
  std::stable_sort(lines.begin(), lines.end(),
                   [](const Line& a, const Line& b) { return a.rank < b.rank; });
  return lines;
}

std::string sparkline(const Line& l) {
  constexpr int kW = 160, kH = 28;
  double hi = 0;
  for (double x : l.values) hi = std::isnan(x) ? hi : std::max(hi, x);
  std::string points;
  const std::size_t n = l.values.size();
  for (std::size_t i = 0; i < n; ++i) {
    if (std::isnan(l.values[i])) continue;
    const double x = n > 1 ? static_cast<double>(i) * kW / static_cast<double>(n - 1) : 0;
    const double y = hi > 0 ? kH - l.values[i] / hi * (kH - 2) - 1 : kH - 1;
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.1f,%.1f ", x, y);
    points += buf;
  }
  char peak[64];
  std::snprintf(peak, sizeof peak, "%.4g", hi);
  return "<figure class=\"spark\"><svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
         std::to_string(kW) + "\" height=\"" + std::to_string(kH) +
         "\"><polyline fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"1.5\" points=\"" + points +
         "\"/></svg><figcaption>" + util::htmlEscape(l.label) + " (peak " + peak +
         ")</figcaption></figure>\n";
}

}  // namespace

std::string counterCharts(const counters::CellSeries& cell) {
  const std::vector<Line> lines = linesOf(cell);
  if (lines.empty()) return {};
  std::string h = "<div class=\"sparks\">\n";
  for (std::size_t i = 0; i < lines.size() && i < kMaxCharts; ++i) h += sparkline(lines[i]);
  if (lines.size() > kMaxCharts) {
    h += "<p>" + std::to_string(lines.size() - kMaxCharts) +
         " more counters moved: see the JSON.</p>\n";
  }
  return h + "</div>\n";
}

}  // namespace nfsrdma::bench
