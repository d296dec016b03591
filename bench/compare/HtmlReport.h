// The compare report as one self-contained HTML page: no script, no external
// style sheet, font or image, so it opens from a file, an e-mail or a CI
// artifact store alike. It holds the configuration, the table (same rows,
// columns, flags, BAD-DATA marks and changes as the text), the errors
// (failed cells, verify mismatches) and bounds reached as the text lists
// them (CompareMatrix.h's shared pieces), one SVG bar chart per row
// (MiB/s per target, bars of flagged figures hatched in the legend colour),
// the latency percentiles per cell (submission to completion, fio's lat), and the notes.
#pragma once

#include <string>
#include <string_view>

#include "bench/compare/CompareMatrix.h"
#include "util/HtmlEscape.h"

namespace nfsrdma::bench {

std::string renderHtmlReport(const CompareReport& report);
// Text escaped for HTML element content and attribute values.
using util::htmlEscape;

}  // namespace nfsrdma::bench
