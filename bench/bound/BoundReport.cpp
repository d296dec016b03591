// The verdict written out: lines under a cell of the text table, and the
// cell's "bound" object in the JSON.
#include "bench/bound/Bound.h"
#include "bench/report/Json.h"

namespace nfsrdma::bench {

std::vector<std::string> boundLines(const Verdict& v) {
  std::vector<std::string> lines{"bound: " + v.tag()};
  for (const auto& f : v.findings) {
    std::string line = "  " + f.bound + ": " + f.evidence;
    if (!f.knob.empty()) line += " -> " + f.knob;
    lines.push_back(std::move(line));
  }
  if (!v.notMeasured.empty()) {
    std::string line = "  not measured: ";
    for (std::size_t i = 0; i < v.notMeasured.size(); ++i) {
      line += (i ? "; " : "") + v.notMeasured[i];
    }
    lines.push_back(std::move(line));
  }
  return lines;
}

void writeBoundJson(JsonWriter& w, const Verdict& v) {
  w.beginObject("bound");
  w.field("tag", v.tag());
  w.beginArray("findings");
  for (const auto& f : v.findings) {
    w.beginObject();
    w.field("bound", f.bound);
    w.field("evidence", f.evidence);
    w.field("knob", f.knob);
    w.field("thin", f.thin);
    w.endObject();
  }
  w.endArray();
  w.beginArray("not_measured");
  for (const auto& n : v.notMeasured) w.field("", n);
  w.endArray();
  w.endObject();
}

}  // namespace nfsrdma::bench
