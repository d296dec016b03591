// The file benchmark's report (file/FileReport.h) and the names its figures
// carry into the HTML.
#include "bench/file/FileReport.h"

#include <gtest/gtest.h>

#include <string>

#include "bench/compare/HtmlReport.h"
#include "tests/unit/bench/FieldReport.h"

namespace nfsrdma::bench {
namespace {

// The latency is submission to completion: fio's lat, not clat (the HTML
// called it "completion latency").
TEST(FileReport, LatencyIsLabelledLat) {
  const std::string html = renderHtmlReport(testing::fieldNotesReport());
  EXPECT_NE(html.find("<h2>Latency (lat), usec</h2>"), std::string::npos);
  EXPECT_EQ(html.find("Completion latency"), std::string::npos);
  RunResult r;
  r.target = "local";
  r.profile = "4k-randread";
  r.blockSize = 4096;
  r.iodepth = 1;
  r.seconds = 1;
  r.dir[0].ops = 1;
  r.dir[0].bytes = 4096;
  r.dir[0].lat.record(50000);
  const std::string text = formatRunText(r);
  EXPECT_NE(text.find("    lat (nsec): min=50000"), std::string::npos) << text;
  EXPECT_NE(text.find("    lat percentiles ("), std::string::npos) << text;
  EXPECT_EQ(text.find("clat"), std::string::npos) << text;
}

}  // namespace
}  // namespace nfsrdma::bench
