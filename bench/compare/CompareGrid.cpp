#include "bench/compare/CompareGrid.h"

#include "bench/report/Format.h"

namespace nfsrdma::bench {
namespace {

GridCell textCell(std::string text) {
  GridCell c;
  c.text = std::move(text);
  return c;
}

std::vector<GridColumn> gridColumns(const CompareReport& r, bool withBaseline) {
  std::vector<GridColumn> cols = {{"test", "test", false}, {"dir", "dir", false}};
  for (const auto& t : r.targets) {
    if (!t.available) {
      cols.push_back({t.name, t.name, false});
      continue;
    }
    cols.push_back({t.name + " MiB/s", t.name + " MiB/s", true});
    cols.push_back({t.name + " IOPS", t.name + " IOPS", true});
    if (withBaseline) cols.push_back({t.name + " chg", t.name + " change", true});
  }
  for (const auto& q : r.ratios) cols.push_back({q.name(), q.name(), true});
  return cols;
}

// A target's cells for a cell that did not run: why not, then no IOPS.
void notRunCells(const CompareCell* c, bool withBaseline, std::vector<GridCell>& row) {
  GridCell shown = textCell(notRunText(c));
  shown.missing = true;
  if (c != nullptr && !c->firstError.empty()) {
    shown.error = true;
    shown.why = c->firstError;
  } else if (c != nullptr && !c->unsupported.empty()) {
    shown.why = c->unsupported;
    shown.span = 2;
  }
  GridCell iops = textCell("-");
  iops.missing = true;
  iops.covered = shown.span == 2;
  row.push_back(std::move(shown));
  row.push_back(std::move(iops));
  if (withBaseline) row.push_back(GridCell{});  // no change to show
}

// A target's cells for a cell that ran; its warnings become footnotes.
void ranCells(const CompareCell& c, const std::string& target, bool withBaseline,
              std::vector<GridCell>& row, std::vector<std::string>& footnotes) {
  GridCell mib = textCell(fmt("%.1f", c.mibPerSecond));
  mib.number = true;
  mib.badData = c.verifyMismatches;
  if (c.bound) mib.bound = c.bound->tag();
  for (const auto& f : c.flags) {
    if (f.severity != FlagSeverity::Warning) continue;
    footnotes.push_back(target + " " + f.message);
    mib.flags.push_back(footnotes.size());
  }
  GridCell iops = textCell(fmt("%.0f", c.iops));
  iops.number = true;
  row.push_back(std::move(mib));
  row.push_back(std::move(iops));
  if (!withBaseline) return;
  GridCell change = textCell(baselineChangeText(c));
  change.number = c.baselineMibPerSecond.has_value();
  change.regression = c.regression;
  row.push_back(std::move(change));
}

std::vector<GridCell> gridRow(const CompareReport& r, const std::string& profile, IoDirection dir,
                              bool withBaseline, std::vector<std::string>& footnotes) {
  std::vector<GridCell> row = {textCell(rowName(r, profile)), textCell(directionName(dir))};
  for (const auto& t : r.targets) {
    if (!t.available) {
      GridCell gone = textCell(t.name + ": " + t.unavailable);
      gone.missing = true;
      row.push_back(std::move(gone));
      continue;
    }
    const CompareCell* c = r.cell(profile, dir, t.name);
    if (c == nullptr || !c->ran) {
      notRunCells(c, withBaseline, row);
    } else {
      ranCells(*c, t.name, withBaseline, row, footnotes);
    }
  }
  for (const auto& q : r.ratios) {
    const auto v = r.ratio(q, profile, dir);
    GridCell ratio = textCell(v ? fmt("%.2fx", *v) : "-");
    ratio.number = v.has_value();
    ratio.missing = !v;
    row.push_back(std::move(ratio));
  }
  return row;
}

}  // namespace

CompareGrid compareGrid(const CompareReport& r) {
  const bool withBaseline = !r.baselinePath.empty();
  CompareGrid g;
  g.columns = gridColumns(r, withBaseline);
  for (const auto& [profile, dir] : r.rows) {
    g.rows.push_back(gridRow(r, profile, dir, withBaseline, g.footnotes));
  }
  return g;
}

}  // namespace nfsrdma::bench
