#include "bench/ranks/RankReport.h"

#include <algorithm>

#include "bench/file/FileProfile.h"
#include "bench/report/Format.h"

namespace nfsrdma::bench {
namespace {

constexpr double kRankPercentiles[] = {50, 90, 99, 99.9};

std::string percentileKey(double p) {
  std::string s = fmt("p%g", p);
  std::replace(s.begin(), s.end(), '.', '_');
  return s;
}

std::string windowLine(const char* name, const char* what, const RankWindow& w) {
  return fmt(" %-11s %10.1f MiB/s %10.0f IOPS %12s in %.3f s (%s)\n", name, w.mibPerSec(),
             w.iops(), formatBytes(w.bytes).c_str(), w.seconds(), what);
}

std::string clockLine(const RankTotals& t, const RankClockNote& clocks) {
  std::string s = " clocks      " + clocks.how;
  if (!clocks.offsetsNs.empty()) {
    double worstUncertainty = 0;
    for (double u : clocks.uncertaintyNs) worstUncertainty = std::max(worstUncertainty, u);
    s += fmt(": largest offset to rank 0 %.3f ms (rank %u), each known to +-%.1f us",
             static_cast<double>(t.clocks.maxAbsOffsetNs) / 1e6, t.clocks.rank,
             worstUncertainty / 1e3);
  }
  s += "\n";
  if (!t.clocks.warning.empty()) s += " warning: " + t.clocks.warning + "\n";
  return s;
}

std::string latencyLine(const RankTotals& t) {
  std::string s = fmt(" latency     merged histograms of %zu clients (usec):", t.rows.size());
  for (double p : kRankPercentiles) s += fmt(" %s=%.0f", percentileKey(p).c_str(), t.all.percentile(p) / 1e3);
  return s + "\n";
}

std::string rowsText(const RankTotals& t) {
  std::string s = fmt("  %4s  %-16s %10s %10s %9s %9s %12s %7s\n", "rank", "host", "MiB/s", "IOPS",
                      "p50 usec", "p99 usec", "bytes", "errors");
  for (const RankRow& r : t.rows) {
    s += fmt("  %4u  %-16s %10.1f %10.0f %9.0f %9.0f %12s %7llu%s%s\n", r.rank, r.host.c_str(),
             r.mibPerSec, r.iops, r.p50Ns / 1e3, r.p99Ns / 1e3,
             formatBytes(static_cast<double>(r.bytes)).c_str(),
             static_cast<unsigned long long>(r.errors), r.straggler ? "  straggler" : "",
             r.overlapsAll ? "" : "  no overlap");
  }
  return s;
}

}  // namespace

std::string formatRanksText(const RankAggregate& a, const RankClockNote& clocks) {
  if (!a.totals) {
    std::string s = " clients lost: no totals (they would be short of what the lost ones moved)\n";
    for (const auto& e : a.errors) s += "  " + e + "\n";
    return s;
  }
  const RankTotals& t = *a.totals;
  std::string s = fmt(" clients     %zu, each its own jobs and files\n", t.rows.size());
  s += clockLine(t, clocks);
  s += windowLine("aggregate", "IOR: first start to last end = elbencho's last done", t.aggregate);
  s += windowLine("first done", "elbencho's stonewall: to the first client's end", t.firstDone);
  if (t.overlap.overlaps) {
    s += windowLine("overlap", "every client running", t.overlap.window);
  } else {
    s += " overlap     none: " + t.overlap.reason + "\n";
  }
  s += latencyLine(t);
  s += rowsText(t);
  s += fmt("  stragglers: below half the median client's %.1f MiB/s\n", t.medianMibPerSec);
  return s;
}

std::string xmlEscape(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string ranksSvg(const RankAggregate& a) {
  if (!a.totals) {
    std::string s = "<p class=\"lost\">clients lost, no totals:";
    for (const auto& e : a.errors) s += "<br>" + xmlEscape(e);
    return s + "</p>\n";
  }
  constexpr int kLabel = 150, kBarMax = 360, kRow = 18, kTop = 4;
  const auto& rows = a.totals->rows;
  double top = 0;
  for (const auto& r : rows) top = std::max(top, r.mibPerSec);
  std::string svg = fmt(
      "<svg class=\"clients\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
      "role=\"img\" aria-label=\"MiB/s per client\">\n",
      kLabel + kBarMax + 170, kTop * 2 + kRow * static_cast<int>(rows.size()));
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const RankRow& r = rows[i];
    const int y = kTop + kRow * static_cast<int>(i);
    const int w = std::max(1, static_cast<int>(top > 0 ? r.mibPerSec / top * kBarMax : 0));
    svg += fmt("<text x=\"%d\" y=\"%d\" text-anchor=\"end\">rank %u %s</text>", kLabel - 6, y + 13,
               r.rank, xmlEscape(r.host).c_str());
    svg += fmt("<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\"><title>rank %u: %.1f "
               "MiB/s, %.0f IOPS</title></rect>",
               kLabel, y + 3, w, kRow - 6, r.straggler ? "#e15759" : "#9ab7d3", r.rank, r.mibPerSec,
               r.iops);
    svg += fmt("<text x=\"%d\" y=\"%d\">%.1f MiB/s%s%s</text>\n", kLabel + w + 6, y + 13, r.mibPerSec,
               r.straggler ? " straggler" : "", r.overlapsAll ? "" : " no overlap");
  }
  return svg + "</svg>\n";
}

namespace {

void writeWindow(JsonWriter& w, std::string_view key, const RankWindow& win) {
  w.beginObject(key);
  w.field("seconds", win.seconds());
  w.field("bytes", win.bytes);
  w.field("ops", win.ops);
  w.field("mib_per_s", win.mibPerSec());
  w.field("iops", win.iops());
  w.endObject();
}

void writeRows(JsonWriter& w, const RankTotals& t, const RankClockNote& clocks) {
  w.beginArray("per_client");
  for (const RankRow& r : t.rows) {
    w.beginObject();
    w.field("rank", static_cast<std::uint64_t>(r.rank));
    w.field("host", r.host);
    w.field("mib_per_s", r.mibPerSec);
    w.field("iops", r.iops);
    w.field("p50_usec", r.p50Ns / 1e3);
    w.field("p99_usec", r.p99Ns / 1e3);
    w.field("bytes", r.bytes);
    w.field("ops", r.ops);
    w.field("errors", r.errors);
    w.field("straggler", r.straggler);
    w.field("overlaps_all", r.overlapsAll);
    if (r.rank < clocks.offsetsNs.size()) w.field("clock_offset_ns", clocks.offsetsNs[r.rank]);
    w.endObject();
  }
  w.endArray();
}

void writeTotals(JsonWriter& w, const RankTotals& t, const RankClockNote& clocks) {
  writeWindow(w, "aggregate", t.aggregate);
  writeWindow(w, "first_done", t.firstDone);
  if (t.overlap.overlaps) {
    writeWindow(w, "overlap", t.overlap.window);
  } else {
    w.field("overlap_missing", t.overlap.reason);
  }
  w.beginObject("latency_usec");
  for (double p : kRankPercentiles) w.field(percentileKey(p), t.all.percentile(p) / 1e3);
  w.endObject();
  w.beginObject("clocks");
  w.field("how", clocks.how);
  w.field("max_abs_offset_ns", static_cast<double>(t.clocks.maxAbsOffsetNs));
  w.field("rank", static_cast<std::uint64_t>(t.clocks.rank));
  if (!t.clocks.warning.empty()) w.field("warning", t.clocks.warning);
  w.endObject();
  w.field("straggler_median_mib_per_s", t.medianMibPerSec);
  writeRows(w, t, clocks);
}

}  // namespace

void writeRanksJson(JsonWriter& w, std::string_view key, const RankAggregate& a,
                    std::uint32_t clients, const RankClockNote& clocks) {
  w.beginObject(key);
  w.field("clients", static_cast<std::uint64_t>(clients));
  if (!a.totals) {
    w.beginArray("lost");
    for (const auto& e : a.errors) w.field("", e);
    w.endArray();
  } else {
    writeTotals(w, *a.totals, clocks);
  }
  w.endObject();
}

}  // namespace nfsrdma::bench
