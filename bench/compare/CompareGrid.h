// The throughput table of a compare report before it is drawn: one model of
// its columns and cells, which the text table (formatCompareText) and the
// HTML table (renderHtmlReport) both render, so the two cannot show
// different cells, flags or footnote numbers. The JSON carries the report's
// figures themselves (compareToJson).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "bench/compare/CompareMatrix.h"

namespace nfsrdma::bench {

struct GridColumn {
  std::string text;     // header in the text table: "nfs-tcp chg"
  std::string html;     // header in the HTML table: "nfs-tcp change"
  bool number = false;  // figures: right-aligned in the text
};

struct GridCell {
  std::string text;      // what it shows, marks aside: "1234.5", "-", "n/a", "1.20x"
  bool number = false;   // a figure (HTML class "num")
  bool missing = false;  // no figure: not run, unavailable, no ratio (class "na")
  bool error = false;    // did not run because of an error (links to the Errors list)
  bool regression = false;
  std::uint64_t badData = 0;       // verify mismatches: the BAD-DATA mark
  std::vector<std::size_t> flags;  // footnote numbers of its warnings
  std::string bound;     // a sampled cell's verdict tag ("latency", "none"): what bounded it
  std::string why;       // the error or the n/a reason (HTML hover text)
  std::size_t span = 1;  // columns it covers in HTML (n/a covers MiB/s and IOPS)
  bool covered = false;  // under the previous cell's span: text shows it, HTML does not
};

struct CompareGrid {
  std::vector<GridColumn> columns;
  std::vector<std::vector<GridCell>> rows;
  std::vector<std::string> footnotes;  // the warnings' texts, numbered from 1 in row order
};

// Columns: test, dir, per target (MiB/s, IOPS[, change]) or one column when
// the target is unavailable, then the ratios. With a baseline (the report
// names one) each target has its change column.
CompareGrid compareGrid(const CompareReport& report);

}  // namespace nfsrdma::bench
