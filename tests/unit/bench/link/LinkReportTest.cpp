// Why: users compare our link figures with perftest's, so the arithmetic
// (Gb/s = 10^9 bit/s, MiB = 2^20 B, Mpps) and the column layout are checked
// against a row perftest printed in the field (ib_write_bw --report_gbits
// on 400 Gb/s RoCE: "65536 5000 389.06 389.00 0.741968").
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "bench/link/LinkStats.h"
#include "bench/link/LinkTables.h"

namespace nfsrdma::bench {
namespace {

std::vector<std::string> tokens(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string t; in >> t;) out.push_back(t);
  return out;
}

// The field notes' row, rebuilt from its message rate and peak.
BandwidthResult fieldRow() {
  BandwidthResult r;
  r.messageBytes = 65536;
  r.iterations = 5000;
  r.messages = 5000;
  r.seconds = 5000 / 741968.0;            // 0.741968 Mpps
  r.peakBytesPerSecond = 389.06e9 / 8.0;  // 389.06 Gb/s
  return r;
}

TEST(LinkReport, ReproducesPerftestFieldRow) {
  ReportTable t = bandwidthTable(BandwidthUnit::GbitPerSecond);
  addBandwidthRow(t, fieldRow(), BandwidthUnit::GbitPerSecond);
  EXPECT_EQ(tokens(t.rowLine(0)),
            (std::vector<std::string>{"65536", "5000", "389.06", "389.00", "0.741968"}));
  EXPECT_EQ(t.headerLine(),
            " #bytes        #iterations    BW peak[Gb/sec]    BW average[Gb/sec]    MsgRate[Mpps]");
}

TEST(LinkReport, PerftestRowIsSelfConsistent) {
  // MsgRate x bytes x 8 must give the average: 0.741968e6 * 65536 * 8 = 389.0011e9.
  const double gbps = bandwidthIn(BandwidthUnit::GbitPerSecond, 0.741968e6 * 65536);
  EXPECT_NEAR(gbps, 389.00, 0.005);
  EXPECT_DOUBLE_EQ(fieldRow().messageRateMpps(), 0.741968);
}

TEST(LinkReport, ValuesStartUnderTheirHeaders) {
  ReportTable t = bandwidthTable(BandwidthUnit::GbitPerSecond);
  addBandwidthRow(t, fieldRow(), BandwidthUnit::GbitPerSecond);
  const std::string header = t.headerLine();
  const std::string row = t.rowLine(0);
  for (std::size_t c = 0; c < t.columns().size(); ++c) {
    const std::size_t at = t.columnStart(c);
    EXPECT_EQ(header.compare(at, t.columns()[c].header.size(), t.columns()[c].header), 0) << c;
    EXPECT_EQ(row.compare(at, t.cell(0, c).size(), t.cell(0, c)), 0) << c;
    EXPECT_EQ(row[at - 1], ' ') << c;
  }
}

TEST(LinkReport, UnitConversions) {
  EXPECT_DOUBLE_EQ(bandwidthIn(BandwidthUnit::GbitPerSecond, 125e6), 1.0);   // 10^9 bit/s
  EXPECT_DOUBLE_EQ(bandwidthIn(BandwidthUnit::MiBPerSecond, 1048576), 1.0);  // 2^20 B/s
  // 389.00 Gb/s is 48625 MB/s (10^6) but 46372.41 MiB/s (2^20).
  EXPECT_NEAR(bandwidthIn(BandwidthUnit::MiBPerSecond, 389.00e9 / 8), 46372.41, 0.005);
  ReportTable t = bandwidthTable(BandwidthUnit::MiBPerSecond);
  EXPECT_NE(t.headerLine().find("BW average[MiB/sec]"), std::string::npos);
}

TEST(LinkReport, SlowLinksKeepSixDecimalsLikePerftest) {
  // ib_write_bw under emulation printed "65536 3000 0.050387 0.037945 0.000072".
  BandwidthResult r;
  r.messageBytes = 65536;
  r.iterations = 3000;
  r.messages = 3000;
  r.seconds = 3000 * 65536 * 8 / 0.037945e9;
  r.peakBytesPerSecond = 0.050387e9 / 8;
  ReportTable t = bandwidthTable(BandwidthUnit::GbitPerSecond);
  addBandwidthRow(t, r, BandwidthUnit::GbitPerSecond);
  EXPECT_EQ(tokens(t.rowLine(0)),
            (std::vector<std::string>{"65536", "3000", "0.050387", "0.037945", "0.000072"}));
}

TEST(LinkReport, PeakIsNeverBelowAverage) {
  BandwidthResult r = fieldRow();
  r.peakBytesPerSecond = 0;
  ReportTable t = bandwidthTable(BandwidthUnit::GbitPerSecond);
  addBandwidthRow(t, r, BandwidthUnit::GbitPerSecond);
  EXPECT_EQ(t.cell(0, 2), "389.00");
}

TEST(LinkReport, JsonAndCsvComeFromTheSameCells) {
  ReportTable t = bandwidthTable(BandwidthUnit::GbitPerSecond);
  addBandwidthRow(t, fieldRow(), BandwidthUnit::GbitPerSecond);
  EXPECT_EQ(t.jsonRows(),
            "[{\"bytes\": 65536, \"iterations\": 5000, \"bw_peak_gbps\": 389.06, "
            "\"bw_average_gbps\": 389.00, \"msg_rate_mpps\": 0.741968}]");
  EXPECT_EQ(t.csv(),
            "bytes,iterations,bw_peak_gbps,bw_average_gbps,msg_rate_mpps\n"
            "65536,5000,389.06,389.00,0.741968\n");
}

TEST(LinkReport, LatencySummaryLikeSendLat) {
  std::vector<double> us;
  for (int i = 1; i <= 1000; ++i) us.push_back(i);  // 1..1000 us
  const LatencyResult r = summarizeLatency(2, us);
  EXPECT_EQ(r.iterations, 1000u);
  EXPECT_DOUBLE_EQ(r.minUs, 1);
  EXPECT_DOUBLE_EQ(r.maxUs, 1000);
  EXPECT_DOUBLE_EQ(r.typicalUs, 500.5);
  EXPECT_DOUBLE_EQ(r.averageUs, 500.5);
  EXPECT_DOUBLE_EQ(r.p99Us, 990);
  EXPECT_DOUBLE_EQ(r.p999Us, 999);
  EXPECT_NEAR(r.stdevUs, 288.675, 0.001);
  ReportTable t = latencyTable();
  addLatencyRow(t, r);
  EXPECT_EQ(tokens(t.rowLine(0)),
            (std::vector<std::string>{"2", "1000", "1.00", "1000.00", "500.50", "500.50", "288.67",
                                      "990.00", "999.00"}));
  EXPECT_NE(t.headerLine().find("t_typical[usec]"), std::string::npos);
  EXPECT_NE(t.headerLine().find("99.9% percentile[usec]"), std::string::npos);
}

// perftest's -b: each side's average over its own time, then the sum. A
// side that ran longer must not dilute the other's rate, as one total over
// the longer time did: 1000 messages in 1 s plus 1000 in 2 s is 1500/s,
// not 2000 / 2 s = 1000/s.
TEST(LinkReport, BidirectionalSumsTheTwoSidesRates) {
  BandwidthResult local;
  local.messageBytes = 65536;
  local.messages = 1000;
  local.seconds = 1.0;
  local.peakBytesPerSecond = 1200.0 * 65536;
  const BandwidthResult both = combineBidirectional(local, 1000, 2.0, 600.0 * 65536);
  EXPECT_EQ(both.messages, 2000u);
  EXPECT_DOUBLE_EQ(both.messageRateMpps(), 1500.0 / 1e6);
  EXPECT_DOUBLE_EQ(both.averageBytesPerSecond(), 1500.0 * 65536);
  EXPECT_DOUBLE_EQ(both.peakBytesPerSecond, 1800.0 * 65536);
  // A side that moved nothing adds nothing, and never divides by zero.
  const BandwidthResult oneSide = combineBidirectional(local, 0, 0, 0);
  EXPECT_DOUBLE_EQ(oneSide.averageBytesPerSecond(), 1000.0 * 65536);
}

TEST(LinkReport, PeakWindows) {
  // 100 messages/s for 10 s, then one second at 300 messages/s.
  std::vector<ProgressSample> s;
  for (int i = 0; i <= 10; ++i)
    s.push_back({static_cast<double>(i), static_cast<std::uint64_t>(i * 100)});
  s.push_back({11.0, 1300});
  EXPECT_DOUBLE_EQ(peakMessagesPerSecond(s, 100), 300.0);
  EXPECT_DOUBLE_EQ(peakMessagesPerSecond(s, 300), 300.0);
  EXPECT_DOUBLE_EQ(peakMessagesPerSecond(s, 400), 200.0);  // 900 -> 1300 over 2 s
  EXPECT_DOUBLE_EQ(peakMessagesPerSecond(s, 5000), 0.0);   // shorter than one window
}

TEST(LinkReport, DurationBannerSaysWhatWasMeasured) {
  EXPECT_EQ(durationBanner(0, 0), "by -n");
  EXPECT_EQ(durationBanner(2, 0), "2 s");
  EXPECT_EQ(durationBanner(2.5, 0), "2.5 s");
  EXPECT_EQ(durationBanner(10, 2), "10 s, measured 2..8 s");
}

TEST(LinkReport, SweepIsTwoBytesToEightMiB) {
  const auto sizes = sweepSizes();
  ASSERT_EQ(sizes.size(), 23u);
  EXPECT_EQ(sizes.front(), 2u);
  EXPECT_EQ(sizes.back(), 8u << 20);
}

TEST(LinkReport, BannerPairsAndJsonEscaping) {
  const std::string b =
      formatBanner("RDMA_Write BW Test", {{"Device", "rxe1"}, {"Number of qps", "1"}});
  EXPECT_NE(b.find("RDMA_Write BW Test"), std::string::npos);
  EXPECT_NE(b.find(" Device          : rxe1"), std::string::npos);
  EXPECT_EQ(jsonQuote("a\"b\\c\n"), "\"a\\\"b\\\\c\\n\"");
  EXPECT_EQ(jsonObject({{"k", "v"}}), "{\"k\": \"v\"}");
}

}  // namespace
}  // namespace nfsrdma::bench
