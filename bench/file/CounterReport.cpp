#include "bench/file/CounterReport.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "counters/CounterDelta.h"

namespace nfsrdma::bench {
namespace {

using counters::Series;

void writeGauges(JsonWriter& w, const Series& s, const std::vector<std::string>& names) {
  w.beginObject("gauges");
  for (const auto& n : names) {
    if (!s.isGauge(n)) continue;
    double lo = std::numeric_limits<double>::max(), hi = -lo, sum = 0;
    std::size_t count = 0;
    for (const auto& r : s.readings) {
      if (const auto v = r.values.get(n)) {
        const double x = static_cast<double>(*v);
        lo = std::min(lo, x);
        hi = std::max(hi, x);
        sum += x;
        ++count;
      }
    }
    if (count == 0) continue;
    w.beginObject(n).field("min", lo).field("mean", sum / static_cast<double>(count));
    w.field("max", hi).endObject();
  }
  w.endObject();
}

void writeSeries(JsonWriter& w, const Series& s, const std::vector<std::string>& names,
                 const counters::NamedValues& deltas) {
  w.beginObject("series");
  w.beginArray("t");
  for (std::size_t i = 1; i < s.readings.size(); ++i) w.field("", s.readings[i].seconds);
  w.endArray();
  for (const auto& n : names) {
    const auto d = deltas.get(n);
    if (!s.isGauge(n) && (!d || *d == 0))
      continue;  // a counter that did not move: its delta says all
    w.beginArray(n);
    for (double v : intervalValues(s, n)) {
      if (std::isnan(v)) {
        w.null("");
      } else {
        w.field("", v);
      }
    }
    w.endArray();
  }
  w.endObject();
}

void writeSource(JsonWriter& w, const Series& s) {
  const std::vector<std::string> names = counters::counterNames(s);
  const auto& first = s.readings.front().values;
  const auto& last = s.readings.back().values;
  const counters::CounterDeltas d = counters::counterDeltas(first, last);
  w.beginObject().field("source", s.source).field("readings", std::uint64_t{s.readings.size()});
  w.field("from_s", s.readings.front().seconds).field("to_s", s.readings.back().seconds);
  w.beginObject("deltas");
  for (const auto& [n, v] : d.deltas.values) {
    if (!s.isGauge(n)) w.field(n, static_cast<double>(v));
  }
  w.endObject();
  w.beginArray("reset");
  for (const auto& n : d.reset) w.field("", n);
  w.endArray();
  writeGauges(w, s, names);
  writeSeries(w, s, names, d.deltas);
  w.endObject();
}

}  // namespace

std::vector<double> intervalValues(const Series& s, const std::string& name) {
  std::vector<double> out;
  const bool gauge = s.isGauge(name);
  for (std::size_t i = 1; i < s.readings.size(); ++i) {
    const auto now = s.readings[i].values.get(name);
    const auto before = s.readings[i - 1].values.get(name);
    if (gauge) {
      out.push_back(now ? static_cast<double>(*now) : std::nan(""));
    } else if (now && before && *now >= *before) {
      out.push_back(static_cast<double>(*now - *before));
    } else {
      out.push_back(std::nan(""));
    }
  }
  return out;
}

void writeCountersJson(JsonWriter& w, const counters::CellSeries& cell) {
  if (cell.series.empty()) return;
  w.beginObject("counters").field("interval_s", cell.intervalSeconds);
  w.field("sampler_cpu_s", cell.cpuSeconds);
  w.beginArray("sources");
  for (const auto& s : cell.series) {
    if (!s.readings.empty()) writeSource(w, s);
  }
  w.endArray();
  w.endObject();
}

}  // namespace nfsrdma::bench
