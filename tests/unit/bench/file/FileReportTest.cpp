// The file benchmark's report (file/FileReport.h) and the names its figures
// carry into the HTML.
#include <gtest/gtest.h>

#include <string>

#include "bench/compare/HtmlReport.h"
#include "bench/file/FileReport.h"
#include "bench/report/Json.h"
#include "tests/unit/bench/FieldReport.h"

namespace nfsrdma::bench {
namespace {

// A 4 KiB, iodepth 1, one-second run on target, with no I/O in it yet.
RunResult oneSecondRun(const std::string& target) {
  RunResult r;
  r.target = target;
  r.profile = "4k-randread";
  r.blockSize = 4096;
  r.iodepth = 1;
  r.seconds = 1;
  return r;
}

// The latency is submission to completion: fio's lat, not clat (the HTML
// called it "completion latency").
TEST(FileReport, LatencyIsLabelledLat) {
  const std::string html = renderHtmlReport(testing::fieldNotesReport());
  EXPECT_NE(html.find("<h2>Latency (lat), usec</h2>"), std::string::npos);
  EXPECT_EQ(html.find("Completion latency"), std::string::npos);
  RunResult r = oneSecondRun("local");
  r.dir[0].ops = 1;
  r.dir[0].bytes = 4096;
  r.dir[0].lat.record(50000);
  const std::string text = formatRunText(r);
  EXPECT_NE(text.find("    lat (nsec): min=50000"), std::string::npos) << text;
  EXPECT_NE(text.find("    lat percentiles ("), std::string::npos) << text;
  EXPECT_EQ(text.find("clat"), std::string::npos) << text;
}

// The text says how the jobs reached the server, and on a shared client how
// the load spread; the JSON has every connection's counters.
TEST(FileReport, SaysWhetherTheJobsSharedAClient) {
  RunResult r = oneSecondRun("nfs-tcp");
  r.client.mode = "shared";
  r.client.sessions = 1;
  r.client.connections = 2;
  r.client.perConnection = {{0, "tcp 127.0.0.1:2049", 10, 1000, 40960, 0, 0, true},
                            {0, "tcp 127.0.0.1:2049", 12, 1200, 49152, 0, 1, false}};
  const std::string text = formatRunText(r);
  EXPECT_NE(text.find("  client: shared (1 session, 2 connections)\n"), std::string::npos) << text;
  EXPECT_NE(text.find("    connection 1: tcp 127.0.0.1:2049 calls=12 bytes-sent=1200 "
                      "bytes-received=49152 credits=0 reconnects=1 up=no\n"),
            std::string::npos)
      << text;
  JsonWriter w;
  w.beginObject();
  writeRunJson(w, r, "result");
  w.endObject();
  const JsonValue doc = parseJson(w.str());
  const JsonValue* c = doc.find("result")->find("client");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->str("mode"), "shared");
  EXPECT_EQ(c->num("sessions"), 1);
  const JsonValue* per = c->find("per_connection");
  ASSERT_TRUE(per != nullptr && per->isArray());
  ASSERT_EQ(per->array.size(), 2U);
  EXPECT_EQ(per->array[1].num("calls"), 12);
  EXPECT_EQ(per->array[1].num("reconnects"), 1);
  // A path target has no client: no line, and null in the JSON.
  r.client = {};
  EXPECT_EQ(formatRunText(r).find("client:"), std::string::npos);
}

}  // namespace
}  // namespace nfsrdma::bench
