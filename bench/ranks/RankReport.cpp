#include "bench/ranks/RankReport.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "bench/job/FileProfile.h"
#include "bench/report/Format.h"
#include "util/HtmlEscape.h"

namespace nfsrdma::bench {
namespace {

std::string percentileKey(double p) {
  std::string s = fmt("p%g", p);
  std::replace(s.begin(), s.end(), '.', '_');
  return s;
}

std::string windowLine(const char* name, const char* what, const RankWindow& w) {
  return fmt(" %-11s %10.1f MiB/s %10.0f IOPS %12s in %.3f s (%s)\n", name, w.mibPerSec(), w.iops(),
             formatBytes(w.bytes).c_str(), w.seconds(), what);
}

std::string clockLine(const RankTotals& t, const RankClockNote& clocks) {
  std::string s = " clocks      " + clocks.how;
  if (!clocks.offsetsNs.empty()) {
    s += fmt(": largest offset to rank 0 %.3f ms (rank %u)",
             static_cast<double>(t.clocks.maxAbsOffsetNs) / 1e6, t.clocks.rank);
  }
  // A report read back from a JSON written before the uncertainty was kept has none.
  if (!clocks.offsetsNs.empty() && !clocks.uncertaintyNs.empty()) {
    double worstUncertainty = 0;
    for (double u : clocks.uncertaintyNs) worstUncertainty = std::max(worstUncertainty, u);
    s += fmt(", each known to +-%.1f us", worstUncertainty / 1e3);
  }
  s += "\n";
  if (!t.clocks.warning.empty()) s += " warning: " + t.clocks.warning + "\n";
  return s;
}

std::string latencyLine(const RankTotals& t) {
  std::string s = fmt(" latency     merged histograms of %zu clients (usec):", t.rows.size());
  for (const auto& [p, usec] : t.latencyUsec) s += fmt(" %s=%.0f", percentileKey(p).c_str(), usec);
  return s + "\n";
}

// Only a run that verified: what all ranks checked together.
std::string verifyLine(const RankTotals& t) {
  if (t.verify.unitsChecked == 0 && t.verify.mismatches == 0) return {};
  return fmt(" verify      %llu blocks (%s) checked by all clients, %llu mismatches\n",
             static_cast<unsigned long long>(t.verify.unitsChecked),
             formatBytes(static_cast<double>(t.verify.bytesChecked)).c_str(),
             static_cast<unsigned long long>(t.verify.mismatches));
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
  s += verifyLine(t);
  s += rowsText(t);
  s += fmt("  stragglers: below half the median client's %.1f MiB/s\n", t.medianMibPerSec);
  return s;
}

std::string ranksSvg(const RankAggregate& a) {
  if (!a.totals) {
    std::string s = "<p class=\"lost\">clients lost, no totals:";
    for (const auto& e : a.errors) s += "<br>" + util::htmlEscape(e);
    return s + "</p>\n";
  }
  constexpr int kLabel = 150, kBarMax = 360, kRow = 18, kTop = 4;
  const auto& rows = a.totals->rows;
  double top = 0;
  for (const auto& r : rows) top = std::max(top, r.mibPerSec);
  std::string svg =
      fmt("<svg class=\"clients\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
          "role=\"img\" aria-label=\"MiB/s per client\">\n",
          kLabel + kBarMax + 170, kTop * 2 + kRow * static_cast<int>(rows.size()));
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const RankRow& r = rows[i];
    const int y = kTop + kRow * static_cast<int>(i);
    const int w = std::max(1, static_cast<int>(top > 0 ? r.mibPerSec / top * kBarMax : 0));
    svg += fmt("<text x=\"%d\" y=\"%d\" text-anchor=\"end\">rank %u %s</text>", kLabel - 6, y + 13,
               r.rank, util::htmlEscape(r.host).c_str());
    svg +=
        fmt("<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\"><title>rank %u: %.1f "
            "MiB/s, %.0f IOPS</title></rect>",
            kLabel, y + 3, w, kRow - 6, r.straggler ? "#e15759" : "#9ab7d3", r.rank, r.mibPerSec,
            r.iops);
    svg += fmt("<text x=\"%d\" y=\"%d\">%.1f MiB/s%s%s</text>\n", kLabel + w + 6, y + 13,
               r.mibPerSec, r.straggler ? " straggler" : "", r.overlapsAll ? "" : " no overlap");
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
    if (r.rank < clocks.uncertaintyNs.size())
      w.field("clock_uncertainty_ns", clocks.uncertaintyNs[r.rank]);
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
  for (const auto& [p, usec] : t.latencyUsec) w.field(percentileKey(p), usec);
  w.endObject();
  w.beginObject("clocks");
  w.field("how", clocks.how);
  w.field("max_abs_offset_ns", static_cast<double>(t.clocks.maxAbsOffsetNs));
  w.field("rank", static_cast<std::uint64_t>(t.clocks.rank));
  if (!t.clocks.warning.empty()) w.field("warning", t.clocks.warning);
  w.endObject();
  w.field("straggler_median_mib_per_s", t.medianMibPerSec);
  w.beginObject("verify").field("blocks_checked", t.verify.unitsChecked);
  w.field("bytes_checked", t.verify.bytesChecked).field("mismatches", t.verify.mismatches);
  w.endObject();
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

namespace {

RankWindow windowFromJson(const JsonValue& w) {
  // From 0: a report keeps each window's length, not where it lay.
  return {0, std::llround(w.num("seconds") * 1e9), w.num("bytes"), w.num("ops")};
}

RankRow rowFromJson(const JsonValue& r) {
  RankRow row;
  row.rank = static_cast<std::uint32_t>(r.whole("rank", kMaxRank));
  row.host = r.str("host");
  row.mibPerSec = r.num("mib_per_s");
  row.iops = r.num("iops");
  row.p50Ns = r.num("p50_usec") * 1e3;
  row.p99Ns = r.num("p99_usec") * 1e3;
  row.bytes = r.whole("bytes");
  row.ops = r.whole("ops");
  row.errors = r.whole("errors");
  const JsonValue* straggler = r.find("straggler");
  row.straggler = straggler != nullptr && straggler->boolean;
  const JsonValue* overlaps = r.find("overlaps_all");
  row.overlapsAll = overlaps == nullptr || overlaps->boolean;
  return row;
}

// The offsets (and their uncertainty) by rank, from the rows that carry them.
void clocksFromRows(const JsonValue& rows, RankClockNote& note) {
  for (const auto& r : rows.array) {
    const auto rank = static_cast<std::size_t>(r.whole("rank", kMaxRank));
    if (const JsonValue* o = r.find("clock_offset_ns"); o != nullptr && o->isNumber()) {
      note.offsetsNs.resize(std::max(note.offsetsNs.size(), rank + 1));
      note.offsetsNs[rank] = o->number;
    }
    if (const JsonValue* u = r.find("clock_uncertainty_ns"); u != nullptr && u->isNumber()) {
      note.uncertaintyNs.resize(std::max(note.uncertaintyNs.size(), rank + 1));
      note.uncertaintyNs[rank] = u->number;
    }
  }
}

RankTotals totalsFromJson(const JsonValue& v, RankClockNote& clocks) {
  RankTotals t;
  if (const JsonValue* w = v.find("aggregate")) t.aggregate = windowFromJson(*w);
  if (const JsonValue* w = v.find("first_done")) t.firstDone = windowFromJson(*w);
  if (const JsonValue* w = v.find("overlap")) {
    t.overlap.overlaps = true;
    t.overlap.window = windowFromJson(*w);
  } else {
    t.overlap.reason = v.str("overlap_missing");
  }
  if (const JsonValue* lat = v.find("latency_usec")) {
    for (double p : kRankPercentiles) t.latencyUsec.emplace_back(p, lat->num(percentileKey(p)));
  }
  if (const JsonValue* c = v.find("clocks")) {
    clocks.how = c->str("how");
    t.clocks.maxAbsOffsetNs = std::llround(c->num("max_abs_offset_ns"));
    t.clocks.rank = static_cast<std::uint32_t>(c->whole("rank", kMaxRank));
    t.clocks.warning = c->str("warning");
  }
  t.medianMibPerSec = v.num("straggler_median_mib_per_s");
  if (const JsonValue* verify = v.find("verify")) {
    t.verify.unitsChecked = verify->whole("blocks_checked");
    t.verify.bytesChecked = verify->whole("bytes_checked");
    t.verify.mismatches = verify->whole("mismatches");
  }
  if (const JsonValue* rows = v.find("per_client"); rows != nullptr && rows->isArray()) {
    for (const auto& r : rows->array) t.rows.push_back(rowFromJson(r));
    clocksFromRows(*rows, clocks);
  }
  return t;
}

}  // namespace

RanksReport ranksFromJson(const JsonValue& v) {
  const JsonValue* count = v.find("clients");
  if (count == nullptr || !count->isNumber() || !(count->number >= 1) ||
      count->number > kMaxRank + 1) {
    throw std::runtime_error("clients: expected an object whose \"clients\" is 1.." +
                             std::to_string(kMaxRank + 1));
  }
  RanksReport c;
  c.clients = static_cast<std::uint32_t>(count->number);
  if (const JsonValue* lost = v.find("lost")) {
    for (const auto& e : lost->array) c.aggregate.errors.push_back(e.string);
    return c;
  }
  c.aggregate.totals = totalsFromJson(v, c.clocks);
  return c;
}

}  // namespace nfsrdma::bench
