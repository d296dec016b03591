// The compare report from numbers: the field-notes table rendered as text,
// JSON (schema checked, read back), baseline regressions, link JSON.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "bench/compare/CompareMatrix.h"
#include "bench/compare/HtmlReport.h"
#include "bench/ranks/RankAggregate.h"
#include "bench/report/Json.h"
#include "tests/unit/bench/FieldReport.h"
#include "tests/unit/bench/RankRun.h"
#include "util/Version.h"

namespace nfsrdma::bench {
namespace {

TEST(CompareReport, TextTableHasFieldNotesShape) {
  const CompareReport r = testing::fieldNotesReport();
  const std::string text = formatCompareText(r);
  EXPECT_NE(text.find("| test "), std::string::npos) << text;
  EXPECT_NE(text.find("local MiB/s"), std::string::npos);
  EXPECT_NE(text.find("nfs-rdma IOPS"), std::string::npos);
  EXPECT_NE(text.find("nfs-rdma/nfs-tcp"), std::string::npos);
  EXPECT_NE(text.find("| 4m-read "), std::string::npos);
  EXPECT_NE(text.find("43417.6 [2]"), std::string::npos) << text;  // 42.4 GiB/s, flagged
  EXPECT_NE(text.find("16896.0 [1]"), std::string::npos) << text;
  EXPECT_NE(text.find("served from the server's page cache"), std::string::npos);
  EXPECT_EQ(r.warnings(), 2U);
  // The 4M RDMA read over TCP's: 42.4 GiB/s / 2754 MiB/s.
  EXPECT_NE(text.find("15.77x"), std::string::npos) << text;
}

TEST(CompareReport, UnavailableTargetSaysWhyInItsColumn) {
  CompareReport r = testing::fieldNotesReport();
  r.targets[1].available = false;
  r.targets[1].unavailable = "no RDMA device — see nfsrdma-server doctor";
  const std::string text = formatCompareText(r);
  EXPECT_NE(text.find("| nfs-rdma: no RDMA device — see nfsrdma-server doctor |"),
            std::string::npos)
      << text;
}

// A sampled cell: its verdict as a tag in the table, its lines under "What
// bounded each cell" in the text, the JSON's bound object, and in the HTML
// the same lines over a time series of the counters that moved.
TEST(CompareReport, ASampledCellSaysWhatBoundedItInTextJsonAndHtml) {
  CompareReport r = testing::fieldNotesReport();
  CompareCell* c = r.cell("4k-randread", IoDirection::Read, "nfs-rdma");
  ASSERT_NE(c, nullptr);
  auto series = std::make_shared<counters::CellSeries>();
  counters::Series rxe{"rdma:rxe1/1", {}, {}};
  for (int i = 0; i < 9; ++i) {
    counters::NamedValues v;
    v.values = {{"rcvd_pkts", i * 10000}, {"completer_retry_err", i * 40}};
    rxe.readings.push_back({i * 0.25, v});
  }
  series->series.push_back(rxe);
  c->series = series;
  c->facts.transport = "rdma";
  c->facts.iodepth = 32;
  c->facts.numjobs = 1;
  computeFlags(r);  // judges the sampled cell with its flags
  ASSERT_TRUE(c->bound.has_value());
  EXPECT_EQ(c->bound->tag(), "fabric-loss");
  const std::string text = formatCompareText(r);
  EXPECT_NE(text.find("(fabric-loss) |"), std::string::npos) << text;
  EXPECT_NE(text.find(" What bounded each cell\n - nfs-rdma 4k-randread read: bound: fabric-loss\n"
                      "     fabric-loss: rdma:rxe1/1 completer_retry_err +320"),
            std::string::npos)
      << text;
  const std::string html = renderHtmlReport(r);
  EXPECT_NE(html.find("<h2 id=\"why\">What bounded each cell</h2>"), std::string::npos);
  EXPECT_NE(html.find("<li>bound: fabric-loss</li>"), std::string::npos);
  EXPECT_NE(html.find("<figcaption>rdma:rxe1/1 completer_retry_err /s (peak 160)</figcaption>"),
            std::string::npos)
      << html.substr(html.find("why"), 2000);
  const JsonValue doc = parseJson(compareToJson(r));
  bool found = false;
  ASSERT_NE(doc.find("results"), nullptr);
  for (const auto& cell : doc.find("results")->array) {
    if (const JsonValue* b = cell.find("bound")) found = b->str("tag") == "fabric-loss";
  }
  EXPECT_TRUE(found);
}

// Schema of "nfsrdma-bench-compare/3": the keys and kinds every consumer relies on.
void checkSchema(const JsonValue& doc) {
  ASSERT_TRUE(doc.isObject());
  EXPECT_EQ(doc.str("schema"), "nfsrdma-bench-compare/3");
  for (const char* k : {"config", "limits"})
    ASSERT_TRUE(doc.find(k) && doc.find(k)->isObject()) << k;
  for (const char* k : {"targets", "rows", "results", "ratios", "notes"})
    ASSERT_TRUE(doc.find(k) && doc.find(k)->isArray()) << k;
  for (const auto& t : doc.find("targets")->array) {
    for (const char* k : {"name", "engine", "description", "unavailable", "link_source"})
      EXPECT_TRUE(t.find(k) && t.find(k)->isString()) << k;
    EXPECT_EQ(t.find("available")->kind, JsonValue::Kind::Bool);
  }
  for (const auto& c : doc.find("results")->array) {
    for (const char* k : {"profile", "direction", "target", "first_error", "server_cache"}) {
      EXPECT_TRUE(c.find(k) && c.find(k)->isString()) << k;
    }
    for (const char* k :
         {"mib_per_s", "mb_per_s", "iops", "ops", "bytes", "run_s", "commit_s", "block_bytes",
          "iodepth", "numjobs", "working_set_bytes", "verify_mismatches", "errors"}) {
      EXPECT_TRUE(c.find(k) && c.find(k)->isNumber()) << k;
    }
    const JsonValue* lat = c.find("lat_us");
    ASSERT_TRUE(lat && lat->isObject());
    for (const char* k : {"min", "mean", "max", "p50", "p90", "p99", "p99_9", "p99_99"}) {
      EXPECT_TRUE(lat->find(k) && lat->find(k)->isNumber()) << k;
    }
    ASSERT_TRUE(c.find("flags") && c.find("flags")->isArray());
    for (const auto& f : c.find("flags")->array) {
      EXPECT_TRUE(f.str("severity") == "warning" || f.str("severity") == "info");
      EXPECT_FALSE(f.str("message").empty());
    }
  }
}

TEST(CompareReport, JsonFollowsTheSchemaAndReadsBack) {
  const CompareReport r = testing::fieldNotesReport();
  const std::string json = compareToJson(r);
  const JsonValue doc = parseJson(json);
  checkSchema(doc);
  const CompareReport back = compareFromJson(doc);
  EXPECT_EQ(formatCompareText(back), formatCompareText(r));
}

// The document names the build that measured it, next to its schema; one
// saved by an earlier build, without it, still reads back as a baseline.
TEST(CompareReport, JsonNamesItsBuildAndReadsBackWithoutIt) {
  const CompareReport r = testing::fieldNotesReport();
  std::string json = compareToJson(r);
  EXPECT_EQ(parseJson(json).str("nfsrdma_version"), util::versionText());
  const std::string field = R"("nfsrdma_version": )" + jsonQuote(util::versionText()) + ", ";
  ASSERT_NE(json.find(field), std::string::npos) << json.substr(0, 200);
  json.erase(json.find(field), field.size());
  const JsonValue old = parseJson(json);
  EXPECT_EQ(old.find("nfsrdma_version"), nullptr);
  EXPECT_EQ(formatCompareText(compareFromJson(old)), formatCompareText(r));
}

TEST(CompareReport, BaselineFlagsAnInjectedTwentyPercentRegressionOnly) {
  const CompareReport before = testing::fieldNotesReport();
  CompareReport now = testing::fieldNotesReport();
  CompareCell* c = now.cell("4k-randread", IoDirection::Read, "nfs-tcp");
  ASSERT_NE(c, nullptr);
  c->mibPerSecond *= 0.8;
  c->iops *= 0.8;
  CompareCell* small = now.cell("4m-write", IoDirection::Write, "local");
  small->mibPerSecond *= 0.95;  // noise, under the threshold
  applyBaseline(now, before, "old.json", 10);
  EXPECT_EQ(now.regressions(), 1U);
  EXPECT_TRUE(c->regression);
  EXPECT_NEAR(c->changePercent, -20, 1e-9);
  EXPECT_FALSE(small->regression);
  const std::string text = formatCompareText(now);
  EXPECT_NE(text.find("REGRESSION 4k-randread read nfs-tcp"), std::string::npos) << text;
  EXPECT_NE(text.find("-20.0%!"), std::string::npos) << text;
  EXPECT_NE(renderHtmlReport(now).find("class=\"num reg\""), std::string::npos);
  // Through JSON, as `compare --results now.json --baseline old.json` does it.
  CompareReport reread = compareFromJson(parseJson(compareToJson(now)));
  applyBaseline(reread, compareFromJson(parseJson(compareToJson(before))), "old.json", 10);
  EXPECT_EQ(reread.regressions(), 1U);
}

TEST(CompareReport, LinkFiguresFromLinkJson) {
  const JsonValue both = parseJson(
      R"({"rdma": {"test": "rdma_write_bw", "unit": "Gb/sec", "results": [{"bytes": 4096, "bw_average_gbps": 100.0},)"
      R"( {"bytes": 65536, "bw_average_gbps": 389.00}]}, "tcp": {"test": "tcp_bw", "unit": "Gb/sec",)"
      R"( "results": [{"bytes": 65536, "bw_average_gbps": 23.4}]}, "ratio": []})");
  const LinkFigures f = linkFiguresFromJson(both);
  ASSERT_TRUE(f.rdmaBytesPerSecond && f.tcpBytesPerSecond);
  EXPECT_DOUBLE_EQ(*f.rdmaBytesPerSecond, 389.0e9 / 8);
  EXPECT_DOUBLE_EQ(*f.tcpBytesPerSecond, 23.4e9 / 8);
  const LinkFigures m = linkFiguresFromJson(parseJson(
      R"({"test": "tcp_bw", "unit": "MiB/sec", "results": [{"bytes": 65536, "bw_average_mibps": 1024}]})"));
  EXPECT_FALSE(m.rdmaBytesPerSecond);
  EXPECT_DOUBLE_EQ(*m.tcpBytesPerSecond, 1024 * 1048576.0);
}

TEST(CompareReport, HtmlIsSelfContainedWithTableChartsAndPercentiles) {
  const std::string html = renderHtmlReport(testing::fieldNotesReport());
  EXPECT_NE(html.find("<table id=\"compare-table\">"), std::string::npos);
  EXPECT_NE(html.find("<svg class=\"chart\""), std::string::npos);
  EXPECT_NE(html.find("<th>p99.99</th>"), std::string::npos);
  EXPECT_NE(html.find("served from the server&#39;s page cache"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("http://"), html.find("http://www.w3.org/2000/svg"));  // no external resource
  EXPECT_EQ(htmlEscape("<a href=\"x\">&</a>"), "&lt;a href=&quot;x&quot;&gt;&amp;&lt;/a&gt;");
}

// The HTML said '-' for a failed cell and nothing of verify mismatches,
// while the text marked BAD-DATA and listed the errors; the bounds reached
// (info flags) were in the text only.
TEST(CompareReport, HtmlShowsBadDataErrorsAndBoundsAsTheTextDoes) {
  CompareReport r = testing::fieldNotesReport();
  CompareCell* bad = r.cell("4k-randread", IoDirection::Read, "nfs-tcp");
  bad->verified = true;
  bad->verifyMismatches = 7;
  CompareCell* failed = r.cell("4m-read", IoDirection::Read, "nfs-rdma");
  failed->ran = false;
  failed->errors = 1;
  failed->firstError = "READ: NFS4ERR_IO <server>";
  computeFlags(r);
  const std::string text = formatCompareText(r);
  const std::string html = renderHtmlReport(r);
  EXPECT_NE(text.find("BAD-DATA"), std::string::npos);
  EXPECT_NE(html.find("<td class=\"num bad\">311.0 <a class=\"flag\" href=\"#errors\" title=\"7 "
                      "verify mismatches\">"
                      "BAD-DATA</a></td>"),
            std::string::npos)
      << html;
  EXPECT_NE(
      html.find("<td class=\"na err\" title=\"READ: NFS4ERR_IO &lt;server&gt;\"><a class=\"flag\" "
                "href=\"#errors\">error</a></td>"),
      std::string::npos);
  // The Errors list: the same lines as the text's.
  const auto errors = errorLines(r);
  ASSERT_EQ(errors.size(), 2U);
  EXPECT_NE(text.find(" - nfs-tcp 4k-randread read: 7 verify mismatches\n"), std::string::npos)
      << text;
  EXPECT_NE(
      html.find("<ul id=\"errors\">\n<li class=\"flag\">nfs-tcp 4k-randread read: 7 verify "
                "mismatches</li>\n"
                "<li class=\"flag\">nfs-rdma 4m-read: READ: NFS4ERR_IO &lt;server&gt;</li>\n</ul>"),
      std::string::npos)
      << html;
  // Bounds reached, as in the text.
  const auto bounds = boundsReachedLines(r);
  ASSERT_FALSE(bounds.empty());
  EXPECT_NE(text.find("Bounds reached"), std::string::npos);
  EXPECT_NE(html.find("<ul id=\"bounds\">\n<li>" + htmlEscape(bounds.front()) + "</li>"),
            std::string::npos)
      << html;
  // No claim of MB/s in an HTML report that has none.
  EXPECT_EQ(text.find("HTML"), std::string::npos);
  EXPECT_EQ(html.find("MB/s</th>"), std::string::npos);
}

TEST(CompareReport, DefaultRatiosFollowTheTargetsPresent) {
  std::vector<CompareTarget> t(3);
  t[0].name = "local";
  t[1].name = "nfs-tcp";
  t[2].name = "libnfs";
  const auto r = defaultRatios(t);
  ASSERT_EQ(r.size(), 2U);
  EXPECT_EQ(r[0].name(), "nfs-tcp/libnfs");
  EXPECT_EQ(r[1].name(), "nfs-tcp/local");
}

std::vector<CompareTarget> named(const std::vector<std::string>& names) {
  std::vector<CompareTarget> t(names.size());
  for (std::size_t i = 0; i < names.size(); ++i) t[i].name = names[i];
  return t;
}

TEST(CompareReport, BlockTargetsGetTheirRatiosByName) {
  const auto r = defaultRatios(
      named({"local", "nvmf-rdma", "nvme-tcp", "iser", "iscsi", "nfs-rdma", "nfs-tcp"}));
  std::vector<std::string> got;
  for (const auto& q : r) got.push_back(q.name());
  EXPECT_EQ(got, (std::vector<std::string>{"nfs-rdma/nfs-tcp", "nfs-tcp/local", "nfs-rdma/local",
                                           "nfs-rdma/nvmf-rdma", "nfs-rdma/iser",
                                           "nvmf-rdma/nvme-tcp", "iser/iscsi", "nvmf-rdma/local"}));
}

TEST(CompareReport, RatiosGivenReplaceTheDefaultsAndNameTargets) {
  const auto t = named({"a", "b", "c"});
  const auto r = parseRatios("c/a,a/b", t);
  ASSERT_EQ(r.size(), 2U);
  EXPECT_EQ(r[0].name(), "c/a");
  EXPECT_EQ(r[1].name(), "a/b");
  EXPECT_THROW(
      {
        try {
          (void)parseRatios("a/x", t);
        } catch (const std::invalid_argument& e) {
          EXPECT_STREQ(e.what(), "--ratios a/x: no target is named x");
          throw;
        }
      },
      std::invalid_argument);
  EXPECT_THROW((void)parseRatios("a", t), std::invalid_argument);
  EXPECT_THROW((void)parseRatios("a/b,", t), std::invalid_argument);
}

// A baseline saved before the latency object was renamed (schema /1,
// "clat_us") still loads, with its latencies.
TEST(CompareReport, ReadsABaselineOfSchemaOne) {
  const CompareReport r = testing::fieldNotesReport();
  std::string old = compareToJson(r);
  for (auto at = old.find("\"lat_us\""); at != std::string::npos; at = old.find("\"lat_us\"", at)) {
    old.replace(at, 8, "\"clat_us\"");
  }
  old.replace(old.find("nfsrdma-bench-compare/3"), 23, "nfsrdma-bench-compare/1");
  const CompareReport back = compareFromJson(parseJson(old));
  EXPECT_EQ(formatCompareText(back), formatCompareText(r));
}

// A client's read of the cell that checked `verified` blocks.
RankResult clientRan(std::uint32_t rank, double startS, double endS, std::uint64_t mib,
                     std::uint64_t verified) {
  RankResult r = testing::ranFor(rank, "4k-randread nfs-tcp", startS, endS, mib);
  r.verify.unitsChecked = verified;
  r.verify.bytesChecked = verified * 4096;
  return r;
}

// `compare --results` of a many-client run's JSON (schema /3) printed the
// table without the clients' breakdown it holds, and the HTML without its
// chart: what the text and the HTML show of the clients reads back.
// The field notes with two many-client cells: three clients (one a
// straggler, clock offsets measured) and two of which one was lost.
CompareReport manyClientReport() {
  CompareReport r = testing::fieldNotesReport();
  const RankAggregate a =
      aggregateRanks({clientRan(0, 10, 12, 200, 10), clientRan(1, 10.5, 12.5, 190, 20),
                      clientRan(2, 11, 14, 40, 30)},
                     3);
  r.cells[3].clients = std::make_shared<const RanksReport>(
      RanksReport{3,
                  a,
                  {"put on rank 0's by offsets measured at the barrier (ping-pong)",
                   {0, 2500, -1250000},
                   {0, 4000, 12000}}});
  const RankAggregate lost = aggregateRanks({clientRan(0, 10, 12, 200, 0)}, 2);
  r.cells[4].clients =
      std::make_shared<const RanksReport>(RanksReport{2, lost, {"not measured", {}, {}}});
  return r;
}

TEST(CompareReport, AManyClientCellKeepsItsClientsThroughItsJson) {
  const CompareReport r = manyClientReport();
  const std::string text = formatCompareText(r);
  ASSERT_NE(text.find("     2  node-2 "), std::string::npos) << "no breakdown to compare: " << text;
  ASSERT_NE(text.find("rank 1: no result"), std::string::npos) << text;
  ASSERT_NE(text.find("each known to +-12.0 us"), std::string::npos) << text;
  ASSERT_NE(text.find("60 blocks (240 KiB) checked by all clients, 0 mismatches"),
            std::string::npos)
      << text;
  const CompareReport back = compareFromJson(parseJson(compareToJson(r)));
  EXPECT_EQ(formatCompareText(back), text);
  EXPECT_EQ(renderHtmlReport(back), renderHtmlReport(r));
  for (const std::size_t i : {std::size_t{3}, std::size_t{4}}) {
    ASSERT_TRUE(back.cells[i].clients) << i;
    const RanksReport& was = *r.cells[i].clients;
    const RanksReport& is = *back.cells[i].clients;
    JsonWriter before, after;
    writeRanksJson(before, "", was.aggregate, was.clients, was.clocks);
    writeRanksJson(after, "", is.aggregate, is.clients, is.clocks);
    EXPECT_EQ(after.str(), before.str()) << i;
  }
}

// A saved report is user input: a breakdown out of range is refused naming
// its cell, and numbers beyond their fields' types are clamped, not cast.
TEST(CompareReport, AClientsBreakdownOutOfRangeIsRefusedNamingItsCell) {
  const std::string json = compareToJson(manyClientReport());
  const auto replaced = [&](const std::string& from, const std::string& to) {
    std::string s = json;
    const auto at = s.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return s.replace(at, from.size(), to);
  };
  try {
    compareFromJson(
        parseJson(replaced(R"("clients": {"clients": 3)", R"("clients": {"clients": 1e300)")));
    ADD_FAILURE() << "accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(),
                 "compare JSON: 4k-randread local: clients: expected an object whose "
                 "\"clients\" is 1..4096");
  }
  const CompareReport back = compareFromJson(
      parseJson(replaced(R"("rank": 2, "host": "node-2")", R"("rank": 1e300, "host": "node-2")")));
  ASSERT_TRUE(back.cells[3].clients && back.cells[3].clients->aggregate.totals);
  EXPECT_EQ(back.cells[3].clients->aggregate.totals->rows[2].rank, kMaxRank);
}

}  // namespace
}  // namespace nfsrdma::bench
