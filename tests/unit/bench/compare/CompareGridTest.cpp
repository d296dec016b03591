// The one model of the compare throughput table, and the text and HTML
// tables drawn from it: same columns, same cells, same footnote numbers.
#include <gtest/gtest.h>

#include "bench/compare/CompareGrid.h"
#include "bench/compare/HtmlReport.h"
#include "tests/unit/bench/FieldReport.h"

namespace nfsrdma::bench {
namespace {

TEST(CompareGrid, ColumnsFollowTheTargetsAndRatios) {
  const CompareReport r = testing::fieldNotesReport();
  const CompareGrid g = compareGrid(r);
  // test, dir, three targets x (MiB/s, IOPS), then the ratios.
  ASSERT_EQ(g.columns.size(), 2 + 3 * 2 + r.ratios.size());
  EXPECT_EQ(g.columns[2].text, "local MiB/s");
  EXPECT_TRUE(g.columns[2].number);
  EXPECT_FALSE(g.columns[0].number);
  ASSERT_EQ(g.rows.size(), r.rows.size());
  for (const auto& row : g.rows) EXPECT_EQ(row.size(), g.columns.size());
}

TEST(CompareGrid, FootnotesAreNumberedInRowOrderAndBothTablesMarkThem) {
  const CompareReport r = testing::fieldNotesReport();
  const CompareGrid g = compareGrid(r);
  ASSERT_EQ(g.footnotes.size(), r.warnings());
  std::size_t expected = 1;
  for (const auto& row : g.rows) {
    for (const auto& c : row) {
      for (std::size_t n : c.flags) EXPECT_EQ(n, expected++);
    }
  }
  EXPECT_EQ(expected, g.footnotes.size() + 1);
  const std::string text = formatCompareText(r);
  const std::string html = renderHtmlReport(r);
  for (std::size_t n = 1; n <= g.footnotes.size(); ++n) {
    EXPECT_NE(text.find(" [" + std::to_string(n) + "] " + g.footnotes[n - 1]), std::string::npos)
        << text;
    EXPECT_NE(html.find("href=\"#flag-" + std::to_string(n) + "\">[" + std::to_string(n) + "]</a>"),
              std::string::npos);
  }
}

TEST(CompareGrid, NotApplicableCoversMibAndIopsInHtmlAndBothInText) {
  CompareReport r = testing::fieldNotesReport();
  CompareCell* c = r.cell("4k-randread", IoDirection::Read, "nfs-tcp");
  c->ran = false;
  c->unsupported = "cannot <do> this";
  const CompareGrid g = compareGrid(r);
  const auto& row = g.rows[1];
  ASSERT_EQ(row[0].text, "4k-randread");
  const std::size_t at = 2 + 2 * 2;  // nfs-tcp MiB/s
  EXPECT_EQ(row[at].text, "n/a");
  EXPECT_EQ(row[at].span, 2U);
  EXPECT_TRUE(row[at + 1].covered);
  const std::string html = renderHtmlReport(r);
  EXPECT_NE(html.find("<td class=\"na\" colspan=\"2\" title=\"cannot &lt;do&gt; this\">n/a</td>"),
            std::string::npos)
      << html;
  EXPECT_NE(formatCompareText(r).find("n/a |"), std::string::npos);
}

TEST(CompareGrid, BaselineAddsAChangeColumnPerTarget) {
  CompareReport r = testing::fieldNotesReport();
  r.baselinePath = "before.json";
  const CompareGrid g = compareGrid(r);
  ASSERT_EQ(g.columns.size(), 2 + 3 * 3 + r.ratios.size());
  EXPECT_EQ(g.columns[4].text, "local chg");
  EXPECT_EQ(g.columns[4].html, "local change");
  EXPECT_EQ(g.rows[0][4].text, "new");  // no baseline figure for the cell
  EXPECT_FALSE(g.rows[0][4].number);
}

}  // namespace
}  // namespace nfsrdma::bench
