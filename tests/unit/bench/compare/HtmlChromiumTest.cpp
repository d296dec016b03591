// The HTML report rendered by a real browser: Debian's headless chromium
// takes a screenshot (a non-empty PNG) and dumps the DOM it built, which
// must hold the table. No network, no profile outside a temp dir. Without
// chromium the test skips with the reason (fails under NFSRDMA_REQUIRE_REAL=1).
#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "bench/compare/HtmlReport.h"
#include "tests/unit/bench/FieldReport.h"

namespace nfsrdma::bench {
namespace {

std::string findChromium() {
  for (const char* p : {"/usr/bin/chromium", "/usr/bin/chromium-browser"}) {
    if (::access(p, X_OK) == 0) return p;
  }
  return {};
}

std::pair<int, std::string> run(const std::string& cmd) {
  std::string out;
  FILE* f = ::popen(cmd.c_str(), "r");
  if (f == nullptr) return {-1, ""};
  std::array<char, 4096> buf{};
  std::size_t n = 0;
  while ((n = std::fread(buf.data(), 1, buf.size(), f)) > 0) out.append(buf.data(), n);
  return {::pclose(f), out};
}

TEST(HtmlReportChromium, RendersTheTableAndAScreenshot) {
  const std::string chromium = findChromium();
  if (chromium.empty()) {
    const char* req = std::getenv("NFSRDMA_REQUIRE_REAL");
    if (req != nullptr && std::string(req) == "1")
      FAIL() << "NFSRDMA_REQUIRE_REAL=1 but chromium is not installed";
    GTEST_SKIP() << "chromium is not installed (apt-get install chromium)";
  }
  const auto dir =
      std::filesystem::temp_directory_path() / ("nfsrdma-html-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  CompareReport report = testing::fieldNotesReport();
  report.targets.push_back({"nfs-rdma2", "nfs", "", false,
                            "no RDMA device — see nfsrdma-server doctor", true, std::nullopt, "",
                            "rdma", 1});
  report.cell("4k-randread", IoDirection::Read, "nfs-tcp")->verifyMismatches = 7;
  CompareCell* failed = report.cell("4m-read", IoDirection::Read, "nfs-rdma");
  failed->ran = false;
  failed->firstError = "READ: NFS4ERR_IO";
  const auto html = dir / "report.html";
  std::ofstream(html) << renderHtmlReport(report);
  const std::string common =
      "timeout 120 " + chromium +
      " --headless --no-sandbox --disable-gpu --disable-background-networking"
      " --disable-component-update --disable-sync --no-first-run --user-data-dir=" +
      (dir / "profile").string() + " --window-size=1400,2400 ";
  const auto shot = dir / "shot.png";
  const auto [rc1, log1] =
      run(common + "--screenshot=" + shot.string() + " file://" + html.string() + " 2>&1");
  ASSERT_EQ(rc1, 0) << log1;
  ASSERT_TRUE(std::filesystem::exists(shot)) << log1;
  EXPECT_GT(std::filesystem::file_size(shot), 10000U);
  std::ifstream png(shot, std::ios::binary);
  char sig[8] = {};
  png.read(sig, 8);
  EXPECT_EQ(std::string(sig + 1, 3), "PNG");

  const auto [rc2, dom] = run(common + "--dump-dom file://" + html.string() + " 2>/dev/null");
  ASSERT_EQ(rc2, 0);
  EXPECT_NE(dom.find("<table id=\"compare-table\">"), std::string::npos) << dom.substr(0, 500);
  EXPECT_NE(dom.find("4m-read"), std::string::npos);
  EXPECT_NE(dom.find("served from the server's page cache"), std::string::npos);
  EXPECT_NE(dom.find("no RDMA device — see nfsrdma-server doctor"), std::string::npos);
  // Data corruption and errors are in the table and the Errors list, not only in a chart.
  EXPECT_NE(dom.find("title=\"7 verify mismatches\">BAD-DATA</a>"), std::string::npos);
  EXPECT_NE(dom.find("<li class=\"flag\">nfs-rdma 4m-read: READ: NFS4ERR_IO</li>"),
            std::string::npos);
  EXPECT_NE(dom.find("<ul id=\"bounds\">"), std::string::npos);
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}

}  // namespace
}  // namespace nfsrdma::bench
