// The verdict's fabric rules: loss from the RDMA ports' retransmission and
// sequence counters and the RPC layer's retransmissions, congestion from
// ECN/CNP counters and the netdevs' pauses; thin against many packets, a
// reset never read as an event, absent counters named.
#include <gtest/gtest.h>

#include "bench/bound/Bound.h"
#include "tests/unit/bench/bound/CellSeriesBuilder.h"

namespace nfsrdma::bench {
namespace {

using testing::healthyCell;
using testing::kReadings;
using testing::rdmaFacts;
using testing::replaceSeries;
using testing::SeriesBuilder;

// rxe's port with `retries` completer retries and sequence NAKs in each of
// the intervals listed (others none) against 10,000 packets each way.
counters::Series rxeWithLoss(const std::vector<std::int64_t>& retries) {
  return SeriesBuilder("rdma:rxe1/1", kReadings)
      .rate("sent_pkts", 10000)
      .rate("rcvd_pkts", 10000)
      .rate("out_of_seq_request", 0)
      .rate("duplicate_request", 0)
      .steps("rcvd_seq_err", retries)
      .steps("completer_retry_err", retries)
      .rate("retry_exceeded_err", 0)
      .build();
}

TEST(BoundFabric, RetriesInMostIntervalsAreFabricLoss) {
  auto cell = healthyCell();
  replaceSeries(cell, rxeWithLoss(std::vector<std::int64_t>(40, 100)));  // 1% of packets
  const Verdict v = judgeCell(rdmaFacts(), cell);
  EXPECT_EQ(v.tag(), "fabric-loss");
  EXPECT_EQ(v.findings.at(0).evidence,
            "rdma:rxe1/1 rcvd_seq_err +4,000, rdma:rxe1/1 completer_retry_err +4,000 in 40 of 40 "
            "intervals (1.0000% of 800,000 packets)");
  EXPECT_TRUE(v.findings.at(0).knob.find("PFC/ECN") != std::string::npos);
}

TEST(BoundFabric, AHandfulOfRetriesInOneIntervalIsLossSeenEvidenceThin) {
  std::vector<std::int64_t> once(40, 0);
  once[17] = 2;
  auto cell = healthyCell();
  replaceSeries(cell, rxeWithLoss(once));
  const Verdict v = judgeCell(rdmaFacts(), cell);
  EXPECT_EQ(v.tag(), "none");
  ASSERT_EQ(v.findings.size(), 1u);
  EXPECT_TRUE(v.findings[0].thin);
  EXPECT_EQ(
      v.findings[0].evidence,
      "rdma:rxe1/1 rcvd_seq_err +2, rdma:rxe1/1 completer_retry_err +2 in 1 of 40 intervals "
      "(0.0005% of 800,000 packets); evidence thin: loss seen, a handful against many packets, "
      "moved in 1 of 40 intervals");
}

TEST(BoundFabric, ThreadsAndLossTogetherNameBoth) {
  auto cell = healthyCell();
  replaceSeries(cell, rxeWithLoss(std::vector<std::int64_t>(40, 100)));
  replaceSeries(cell, SeriesBuilder("nfsd-threads", kReadings)
                          .gauge("threads", 1)
                          .gauge("busy", 1)
                          .rate("ticks", 10)
                          .build());
  EXPECT_EQ(judgeCell(rdmaFacts(), cell).tag(), "server-threads+fabric-loss");
}

TEST(BoundFabric, AKernelMountsRetransmissionsAreLoss) {
  counters::CellSeries cell;
  cell.series.push_back(SeriesBuilder("mountstats:/mnt", kReadings)
                            .rate("sends", 1000)
                            .rate("req_u", 32000)
                            .rate("bklog_u", 0)
                            .rate("READ.ops", 1000)
                            .rate("READ.transmissions", 1010)
                            .build());
  CellFacts facts = rdmaFacts();
  facts.transport = "kernel-nfs";
  const Verdict v = judgeCell(facts, cell);
  EXPECT_EQ(v.tag(), "fabric-loss");
  EXPECT_EQ(v.findings.at(0).evidence,
            "mountstats:/mnt RPC retransmissions +400 in 40 of 40 intervals");
  EXPECT_TRUE(v.findings.at(0).knob.find("network path") != std::string::npos);
}

TEST(BoundFabric, APortWithoutLossCountersIsNotMeasuredAndNoPortAtAllIsSaid) {
  auto cell = healthyCell();
  replaceSeries(cell, SeriesBuilder("rdma:rxe1/1", kReadings).rate("sent_pkts", 10).build());
  Verdict v = judgeCell(rdmaFacts(), cell);
  EXPECT_EQ(v.tag(), "none");
  EXPECT_EQ(v.notMeasured,
            std::vector<std::string>{"rdma:rxe1/1: no retransmission or sequence counters"});
  testing::removeSeries(cell, "rdma:rxe1/1");
  v = judgeCell(rdmaFacts(), cell);
  EXPECT_EQ(v.notMeasured, std::vector<std::string>{"rdma ports: none sampled"});
}

TEST(BoundFabric, ALossCounterThatWentBackwardsCountsOnlyWhatFollowedIt) {
  auto cell = healthyCell(5);
  replaceSeries(cell, SeriesBuilder("rdma:mlx5_0/1", 5)
                          .values("out_of_sequence", {500, 500, 0, 3, 3})
                          .rate("port_rcv_packets", 1000)
                          .build());
  const Verdict v = judgeCell(rdmaFacts(), cell);
  ASSERT_EQ(v.findings.size(), 1u);
  // The packets are every port's: the healthy cell's rxe1/1 adds 80,000.
  EXPECT_EQ(v.findings[0].evidence,
            "rdma:mlx5_0/1 out_of_sequence +3 in 1 of 4 intervals (0.0036% of 84,000 packets); "
            "evidence thin: loss seen, a handful against many packets, moved in 1 of 4 intervals");
}

TEST(BoundFabric, CnpsAndPausesWithoutLossAreCongestion) {
  auto cell = healthyCell();
  cell.series.push_back(SeriesBuilder("rdma:mlx5_0/1", kReadings)
                            .rate("np_cnp_sent", 50)
                            .rate("np_ecn_marked_roce_packets", 60)
                            .rate("rp_cnp_handled", 0)
                            .rate("out_of_sequence", 0)
                            .build());
  cell.series.push_back(SeriesBuilder("net:eth0", kReadings)
                            .rate("rx_prio3_pause", 3)
                            .rate("rx_prio3_pause_duration", 900)
                            .rate("rx_discards_phy", 0)
                            .build());
  const Verdict v = judgeCell(rdmaFacts(), cell);
  EXPECT_EQ(v.tag(), "fabric-congestion");
  EXPECT_EQ(v.findings.at(0).evidence,
            "rdma:mlx5_0/1 np_cnp_sent +2,000, rdma:mlx5_0/1 np_ecn_marked_roce_packets +2,400, "
            "net:eth0 rx_prio3_pause +120 in 40 of 40 intervals");
}

TEST(BoundFabric, DiscardsAreCongestionOnlyWithoutLoss) {
  auto cell = healthyCell();
  cell.series.push_back(SeriesBuilder("net:eth0", kReadings).rate("rx_discards_phy", 5).build());
  EXPECT_EQ(judgeCell(rdmaFacts(), cell).tag(), "fabric-congestion");
  replaceSeries(cell, rxeWithLoss(std::vector<std::int64_t>(40, 100)));
  EXPECT_EQ(judgeCell(rdmaFacts(), cell).tag(), "fabric-loss");
}

}  // namespace
}  // namespace nfsrdma::bench
