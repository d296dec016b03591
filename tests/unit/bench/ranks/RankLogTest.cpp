// The clients' result lines out of logs as `kubectl logs` gives them, and a
// cell's report (text, JSON, the per-client chart) from them.
#include <gtest/gtest.h>

#include <fstream>

#include "bench/ranks/RankJson.h"
#include "bench/ranks/RankLog.h"
#include "bench/ranks/RankReport.h"
#include "tests/unit/bench/ErrorOf.h"
#include "tests/unit/bench/RankRun.h"
#include "tests/unit/bench/ScratchDir.h"

namespace nfsrdma::bench {
namespace {

using testing::errorOf;
using testing::ranFor;
using testing::ScratchDir;

std::string line(const RankResult& r) {
  return rankToJsonLine(r);
}

// A log file holding text, read as aggregate reads one.
class Log {
 public:
  explicit Log(const std::string& text) : dir_("rank-log"), path_(dir_.str() + "/pods.log") {
    std::ofstream(path_, std::ios::binary) << text;
  }
  const std::string& path() const { return path_; }
  void readInto(RankLogCells& cells) const {
    InputLines in = rankLogLines(path_);
    readRankLog(in, cells);
  }

 private:
  ScratchDir dir_;
  std::string path_;
};

TEST(RankLog, ReadsOnlyResultLinesWithOrWithoutKubectlsPrefix) {
  const Log log("nfsrdma-bench compare: 2 profiles x 1 targets\n" +
                line(ranFor(0, "4k-randread nfs", 10, 12, 100)) + "[pod/run-1-x/bench] " +
                line(ranFor(1, "4k-randread nfs", 10, 12, 90)) + "  read: IOPS=12.9k\n" +
                line(ranFor(0, "128k-write nfs", 20, 22, 50)));
  RankLogCells cells;
  log.readInto(cells);
  ASSERT_EQ(cells.cells, (std::vector<std::string>{"4k-randread nfs", "128k-write nfs"}));
  EXPECT_EQ(cells.results[0].size(), 2U);
  EXPECT_EQ(cells.results[1].size(), 1U);
  EXPECT_EQ(cells.highestRank, 1U);
  EXPECT_EQ(cells.lines, 3U);
}

TEST(RankLog, ABrokenResultLineIsAnErrorNamingTheLogAndLine) {
  std::string broken = line(ranFor(0, "4k-randread nfs", 10, 12, 100));
  broken.replace(broken.find("\"rank\": 0"), 9, "\"rank\": -1");
  const Log log("first line\n" + broken);
  RankLogCells cells;
  const std::string error = errorOf([&] { log.readInto(cells); });
  EXPECT_EQ(error.rfind(log.path() + " line 2: field \"rank\"", 0), 0U) << error;
}

TEST(RankLog, ARankReportingACellTwiceIsAnError) {
  const Log log(line(ranFor(1, "4k-randread nfs", 10, 12, 100)) +
                line(ranFor(1, "4k-randread nfs", 10, 12, 100)));
  RankLogCells cells;
  EXPECT_EQ(
      errorOf([&] { log.readInto(cells); }),
      log.path() + " line 2: rank 1 (node-1) reported cell \"4k-randread nfs\" a second time");
}

TEST(RankReport, TextShowsTheWindowsTheRowsAndTheStraggler) {
  const RankAggregate a = aggregateRanks(
      {ranFor(0, "c", 10, 12, 200), ranFor(1, "c", 10, 12, 190), ranFor(2, "c", 10, 12, 40)}, 3);
  const std::string text = formatRanksText(a, {"measured", {0, 2000, -1000}, {500, 700, 900}});
  // 430 MiB in 2 s
  EXPECT_NE(text.find(" aggregate        215.0 MiB/s        215 IOPS      430 MiB in 2.000 s"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("each known to +-0.9 us"), std::string::npos) << text;
  const auto rowOf = [&](const std::string& host) {
    const auto at = text.find("  " + host + " ");
    return at == std::string::npos ? std::string() : text.substr(at, text.find('\n', at) - at);
  };
  EXPECT_NE(rowOf("node-2").find("20.0"), std::string::npos) << text;
  EXPECT_NE(rowOf("node-2").find("straggler"), std::string::npos) << "below half of 95 MiB/s";
  EXPECT_EQ(rowOf("node-1").find("straggler"), std::string::npos) << text;
}

TEST(RankReport, ALostClientHasNoTotalsInTextJsonOrChart) {
  RankResult lost;
  lost.rank = 1;
  lost.host = "node-1";
  lost.cell = "c";
  lost.failed = true;
  lost.firstError = "nfs://10.0.0.9/export: connection refused";
  const RankAggregate a = aggregateRanks({ranFor(0, "c", 10, 12, 200), lost}, 2);
  const std::string text = formatRanksText(a, {});
  EXPECT_NE(text.find("rank 1 (node-1): nfs://10.0.0.9/export: connection refused"),
            std::string::npos);
  EXPECT_EQ(text.find("aggregate"), std::string::npos) << text;
  JsonWriter w;
  w.beginObject();
  writeRanksJson(w, "clients", a, 2, {});
  w.endObject();
  const JsonValue doc = parseJson(w.str());
  EXPECT_EQ(doc.find("clients")->find("aggregate"), nullptr);
  EXPECT_EQ(doc.find("clients")->find("lost")->array.size(), 1U);
  EXPECT_NE(ranksSvg(a).find("clients lost"), std::string::npos);
}

TEST(RankReport, JsonRowsAddUpToTheAggregate) {
  const RankAggregate a =
      aggregateRanks({ranFor(0, "c", 10, 12, 200), ranFor(1, "c", 11, 13, 100)}, 2);
  JsonWriter w;
  w.beginObject();
  writeRanksJson(w, "clients", a, 2, {});
  w.endObject();
  const JsonValue doc = parseJson(w.str());
  const JsonValue* c = doc.find("clients");
  double bytes = 0;
  for (const auto& row : c->find("per_client")->array) bytes += row.num("bytes");
  EXPECT_DOUBLE_EQ(c->find("aggregate")->num("bytes"), bytes);
  EXPECT_DOUBLE_EQ(c->find("aggregate")->num("seconds"), 3.0);  // 10 .. 13
  EXPECT_DOUBLE_EQ(c->find("overlap")->num("seconds"), 1.0);    // 11 .. 12
  EXPECT_NE(ranksSvg(a).find("rank 1 node-1"), std::string::npos);
}

}  // namespace
}  // namespace nfsrdma::bench
