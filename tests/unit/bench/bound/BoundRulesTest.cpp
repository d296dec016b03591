// The verdict's rules on the server, credits and depth, the CPUs and
// compare's flags: each fires on a series that shows its bound, stays quiet
// on a healthy one, says "evidence thin" on too little, and names a source
// it needed and did not get instead of reading it as zero.
#include <gtest/gtest.h>

#include "bench/bound/Bound.h"
#include "tests/unit/bench/bound/CellSeriesBuilder.h"

namespace nfsrdma::bench {
namespace {

using testing::healthyCell;
using testing::hostCpu;
using testing::kReadings;
using testing::rdmaFacts;
using testing::removeSeries;
using testing::replaceSeries;
using testing::SeriesBuilder;

const Finding* findingOf(const Verdict& v, const std::string& bound) {
  for (const auto& f : v.findings) {
    if (f.bound == bound) return &f;
  }
  return nullptr;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(BoundRules, AHealthyCellNamesNoBoundAndMissesNoSource) {
  const Verdict v = judgeCell(rdmaFacts(), healthyCell());
  EXPECT_EQ(v.tag(), "none");
  EXPECT_TRUE(v.findings.empty()) << v.findings.front().bound << ": "
                                  << v.findings.front().evidence;
  EXPECT_TRUE(v.notMeasured.empty()) << v.notMeasured.front();
}

counters::Series nfsdThreads(std::int64_t threads, std::int64_t busy, std::int64_t ticks,
                             int readings = kReadings) {
  return SeriesBuilder("nfsd-threads", readings)
      .gauge("threads", threads)
      .gauge("busy", busy)
      .rate("ticks", ticks)
      .build();
}

TEST(BoundRules, ServerThreadsFireWhenEveryThreadIsBusyWhileRpcsArrive) {
  auto cell = healthyCell();
  replaceSeries(cell, nfsdThreads(1, 1, 10));
  const Verdict v = judgeCell(rdmaFacts(), cell);
  EXPECT_EQ(v.tag(), "server-threads");
  const Finding* f = findingOf(v, "server-threads");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->evidence,
            "nfsd threads busy in 100% of 39 samples (1 thread), 400,000 RPCs arrived");
  EXPECT_TRUE(contains(f->knob, "echo N > /proc/fs/nfsd/threads"));
  EXPECT_FALSE(f->thin);
}

TEST(BoundRules, ServerThreadsDoNotFireWhenNoRpcArrives) {
  auto cell = healthyCell();
  replaceSeries(cell, nfsdThreads(1, 1, 10));
  replaceSeries(cell, SeriesBuilder("nfsd-pool", kReadings).rate("packets-arrived", 0).build());
  EXPECT_EQ(findingOf(judgeCell(rdmaFacts(), cell), "server-threads"), nullptr);
}

TEST(BoundRules, ServerThreadsBusyInFewSamplesIsThinAndLeftOutOfTheTag) {
  auto cell = healthyCell(3);
  replaceSeries(cell, nfsdThreads(1, 1, 10, 3));
  const Verdict v = judgeCell(rdmaFacts(), cell);
  const Finding* f = findingOf(v, "server-threads");
  ASSERT_NE(f, nullptr);
  EXPECT_TRUE(f->thin);
  EXPECT_TRUE(contains(f->evidence, "evidence thin: only 1 sample")) << f->evidence;
  EXPECT_EQ(v.tag(), "none");
}

TEST(BoundRules, AServerNotOnThisHostIsNotMeasuredNotIdle) {
  auto cell = healthyCell();
  for (const char* s : {"nfsd-pool", "nfsd-threads", "svcrdma"}) removeSeries(cell, s);
  const Verdict v = judgeCell(rdmaFacts(), cell);
  EXPECT_EQ(v.tag(), "none");
  EXPECT_TRUE(v.findings.empty());
  EXPECT_EQ(v.notMeasured,
            (std::vector<std::string>{"nfsd-threads: not on this host",
                                      "nfsd-pool: not on this host", "svcrdma: not on this host"}));
}

TEST(BoundRules, ThreadsOnTheCpuAllTheTimeAreServerCpuToo) {
  auto cell = healthyCell();
  replaceSeries(cell, nfsdThreads(2, 2, 48));  // 48 ticks / 0.25 s / 100 Hz = 1.92 CPUs
  replaceSeries(cell, hostCpu(0, 49, 0));
  const Verdict v = judgeCell(rdmaFacts(), cell);
  EXPECT_EQ(v.tag(), "server-threads+server-cpu");
  const Finding* f = findingOf(v, "server-cpu");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->evidence,
            "nfsd threads on the CPU in 40 of 40 intervals (1.92 CPUs used of 2 threads, 2 CPUs)");
  EXPECT_EQ(findingOf(v, "client-cpu"), nullptr) << "nfsd filled the host, not the client";
}

TEST(BoundRules, CreditsFireWhenTheClientHeldTheGrantNotTheDepthAsked) {
  auto cell = healthyCell();
  replaceSeries(cell, testing::clientSeries(32, 4, 4));
  const Verdict v = judgeCell(rdmaFacts(), cell);
  EXPECT_EQ(v.tag(), "credits");
  const Finding* f = findingOf(v, "credits");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->evidence,
            "4.0 in flight (client's mean in flight) of 32 asked, at the 4 credits; the client "
            "wanted 32.0 calls out and had 4.0");
  EXPECT_TRUE(contains(f->knob, "tuning max_requests"));
}

TEST(BoundRules, CreditsFireWhenOurClientHoldsMoreCallsThanTheGrant) {
  // Our client counts a call from its submission: with 4 credits its 16
  // calls are outstanding, 4 on the wire and 12 waiting inside it.
  auto cell = healthyCell();
  replaceSeries(cell, testing::clientSeries(16, 16, 4));
  const CellFacts facts = rdmaFacts(16);
  const Verdict v = judgeCell(facts, cell);
  EXPECT_EQ(v.tag(), "credits");
  const Finding* f = findingOf(v, "credits");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->evidence,
            "16.0 calls outstanding of 16 asked, but the server granted 4 credits: at most that "
            "many on the wire, the rest wait in the client");
  replaceSeries(cell, testing::clientSeries(16, 16, 64));  // the grant covers the depth
  EXPECT_EQ(judgeCell(facts, cell).tag(), "none");
}

TEST(BoundRules, CreditsFromTheDepthGrantedAndLittlesLaw) {
  auto cell = healthyCell();
  removeSeries(cell, "client");
  CellFacts facts = rdmaFacts();
  facts.effectiveIodepth = 8;
  facts.iops = 100000;
  facts.meanLatencyUs = 80;  // 8 in flight
  const Finding* f = nullptr;
  const Verdict v = judgeCell(facts, cell);
  f = findingOf(v, "credits");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->evidence, "8.0 in flight (IOPS x mean latency) of 32 asked, at the 8 depth granted");
}

TEST(BoundRules, AKernelMountsSlotBacklogIsCredits) {
  counters::CellSeries cell;
  cell.series.push_back(SeriesBuilder("mountstats:/mnt", kReadings)
                            .rate("sends", 1000)
                            .rate("req_u", 8000)
                            .rate("bklog_u", 5000)
                            .rate("READ.ops", 1000)
                            .rate("READ.transmissions", 1000)
                            .rate("READ.queue_ms", 400)
                            .rate("READ.rtt_ms", 100)
                            .build());
  CellFacts facts = rdmaFacts();
  facts.transport = "kernel-nfs";
  const Verdict v = judgeCell(facts, cell);
  const Finding* f = findingOf(v, "credits");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->evidence,
            "8.0 in flight (mountstats' in flight) of 32 asked; 5.0 calls on the slot backlog per "
            "send, queued 16,000 ms against 4,000 ms round trip");
  EXPECT_EQ(findingOf(v, "fabric-loss"), nullptr) << "transmissions == ops: nothing resent";
}

TEST(BoundRules, SendQueueStarvationIsSaidAsTheServersSendQueue) {
  auto cell = healthyCell();
  replaceSeries(cell, SeriesBuilder("svcrdma", kReadings).rate("rdma_stat_sq_starve", 7).build());
  const Verdict v = judgeCell(rdmaFacts(), cell);
  const Finding* f = findingOf(v, "credits");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->evidence,
            "svcrdma's Send Queue starved 280 times in 40 of 40 intervals: the server waited for "
            "room to send its replies");
  EXPECT_TRUE(contains(f->knob, "more max_requests will not help"));
}

TEST(BoundRules, ASvcrdmaCounterResetMidCellCountsOnlyWhatFollowedIt) {
  auto cell = healthyCell(5);
  // Written to 0 between the second and third readings: that interval has
  // no delta (not -900), the two after it count what they added.
  replaceSeries(
      cell,
      SeriesBuilder("svcrdma", 5).values("rdma_stat_sq_starve", {900, 900, 0, 5, 10}).build());
  const Verdict v = judgeCell(rdmaFacts(), cell);
  const Finding* f = findingOf(v, "credits");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->evidence,
            "svcrdma's Send Queue starved 10 times in 2 of 4 intervals: the server waited for "
            "room to send its replies");
  EXPECT_FALSE(f->thin);
}

TEST(BoundRules, QueueDepthOneKeptFullIsLatency) {
  auto cell = healthyCell();
  replaceSeries(cell, testing::clientSeries(1, 1, 64));
  CellFacts facts = rdmaFacts(1);
  facts.iops = 12000;
  facts.meanLatencyUs = 83;
  const Verdict v = judgeCell(facts, cell);
  EXPECT_EQ(v.tag(), "latency");
  EXPECT_EQ(v.findings.at(0).evidence,
            "latency-bound: 1.0 in flight x 83 us = 12000 IOPS (1 asked, IOPS x mean latency); "
            "more qd= would help");
}

TEST(BoundRules, LatencyCountsRequestsNotTheRpcsALargeRequestTakes) {
  // 4 MiB requests at QD2 as 1 MiB RPCs: 8 RPCs out, 2 requests.
  auto cell = healthyCell();
  replaceSeries(cell, testing::clientSeries(2, 8, 64));
  CellFacts facts = rdmaFacts(2);
  facts.blockSize = 4 << 20;
  facts.iops = 100;
  facts.meanLatencyUs = 20000;
  const Verdict v = judgeCell(facts, cell);
  ASSERT_EQ(v.tag(), "latency");
  EXPECT_EQ(v.findings.at(0).evidence,
            "latency-bound: 2.0 in flight x 20000 us = 100 IOPS (2 asked, IOPS x mean latency); "
            "more qd= would help");
}

TEST(BoundRules, LatencyIsNotNamedWhenSomethingElseSaturated) {
  auto cell = healthyCell();
  replaceSeries(cell, nfsdThreads(1, 1, 10));
  replaceSeries(cell, testing::clientSeries(1, 1, 64));
  EXPECT_EQ(judgeCell(rdmaFacts(1), cell).tag(), "server-threads");
}

TEST(BoundRules, ABusiestThreadOnTheCpuIsClientCpuOnCpusSharedWithTheServer) {
  auto cell = healthyCell();
  replaceSeries(cell, SeriesBuilder("bench-threads", kReadings)
                          .rate("busiest_ticks", 24)
                          .rate("ticks", 30)
                          .gauge("hz", 100)
                          .build());
  const Verdict v = judgeCell(rdmaFacts(), cell);
  EXPECT_EQ(v.tag(), "client-cpu");
  EXPECT_EQ(v.findings.at(0).evidence,
            "the busiest benchmark thread on the CPU in 40 of 40 intervals (96% of a CPU on "
            "average); client and server share these 2 CPUs");
  EXPECT_TRUE(contains(v.findings.at(0).knob, "numjobs="));
}

TEST(BoundRules, AHostFullOfSoftirqIsClientCpuNamingSoftirq) {
  auto cell = healthyCell();
  for (const char* s : {"nfsd-pool", "nfsd-threads", "svcrdma"}) removeSeries(cell, s);
  replaceSeries(cell, hostCpu(10, 10, 30));
  const Verdict v = judgeCell(rdmaFacts(), cell);
  const Finding* f = findingOf(v, "client-cpu");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->evidence,
            "host CPUs 100% busy in 40 of 40 intervals (2 CPUs, mostly softirq), the benchmark's "
            "threads 24% of it");
  EXPECT_TRUE(contains(f->knob, "IRQ affinity"));
}

TEST(BoundRules, AHostCpuLineWithoutTheLaterColumnsIsStillJudged) {
  auto cell = healthyCell();
  for (const char* s : {"nfsd-pool", "nfsd-threads", "svcrdma"}) removeSeries(cell, s);
  replaceSeries(cell, SeriesBuilder("host-cpu", kReadings)
                          .rate("user", 30)
                          .rate("nice", 0)
                          .rate("system", 20)
                          .rate("idle", 0)
                          .gauge("cpus", 2)
                          .gauge("hz", 100)
                          .build());
  const Verdict v = judgeCell(rdmaFacts(), cell);
  EXPECT_EQ(v.tag(), "client-cpu");
  EXPECT_EQ(
      v.findings.at(0).evidence,
      "host CPUs 100% busy in 40 of 40 intervals (2 CPUs), the benchmark's threads 24% of it");
}

TEST(BoundRules, AHostBusyWithOtherWorkSaysSoInItsKnob) {
  auto cell = healthyCell();
  for (const char* s : {"nfsd-pool", "nfsd-threads", "svcrdma"}) removeSeries(cell, s);
  replaceSeries(cell, hostCpu(30, 20, 0));
  CellFacts facts = rdmaFacts();
  Verdict v = judgeCell(facts, cell);
  ASSERT_EQ(v.tag(), "client-cpu");
  EXPECT_EQ(v.findings.at(0).knob,
            "an idle client host: other processes used most of its CPU during the cell");
  facts.serverOnThisHost = true;  // the embedded server: its CPU is in the host's
  v = judgeCell(facts, cell);
  EXPECT_EQ(v.tag(), "host-cpu");
  EXPECT_EQ(v.findings.at(0).evidence,
            "host CPUs 100% busy in 40 of 40 intervals (2 CPUs), the benchmark's threads 24% of "
            "it; client, server and the kernel's network work share these 2 CPUs");
}

TEST(BoundRules, ABenchmarkThreadKeptOffItsCpuIsClientCpu) {
  auto cell = healthyCell();
  // 250 ms intervals: a thread that waited 230 ms of each on a run queue.
  replaceSeries(cell, SeriesBuilder("bench-threads", kReadings)
                          .rate("busiest_ticks", 1)
                          .rate("longest_wait_ms", 230)
                          .rate("ticks", 2)
                          .gauge("threads", 3)
                          .gauge("hz", 100)
                          .build());
  Verdict v = judgeCell(rdmaFacts(), cell);
  ASSERT_EQ(v.tag(), "client-cpu");
  EXPECT_EQ(v.findings.at(0).evidence,
            "a benchmark thread waited for a CPU 92% of the time in 40 of 40 intervals (run "
            "queue); client and server share these 2 CPUs");
  EXPECT_EQ(v.findings.at(0).knob,
            "CPUs of its own for the benchmark: other work held the CPUs it runs on (taskset, "
            "nice, an idle host)");
  // Half the time waiting: a CPU shared fairly, not a bound.
  replaceSeries(cell, SeriesBuilder("bench-threads", kReadings)
                          .rate("busiest_ticks", 1)
                          .rate("longest_wait_ms", 125)
                          .rate("ticks", 2)
                          .gauge("threads", 3)
                          .gauge("hz", 100)
                          .build());
  EXPECT_EQ(judgeCell(rdmaFacts(), cell).tag(), "none");
}

TEST(BoundRules, CpuSourcesAbsentAreNotMeasuredAndFireNothing) {
  auto cell = healthyCell();
  removeSeries(cell, "host-cpu");
  removeSeries(cell, "bench-threads");
  const Verdict v = judgeCell(rdmaFacts(), cell);
  EXPECT_EQ(v.tag(), "none");
  EXPECT_EQ(v.notMeasured,
            (std::vector<std::string>{"host-cpu: not sampled", "bench-threads: not sampled"}));
}

TEST(BoundRules, AHostFilledMostlyByNfsdIsServerCpuNotClientCpu) {
  auto cell = healthyCell();
  replaceSeries(cell, nfsdThreads(8, 3, 30));  // 1.2 CPUs: not every thread, not every CPU
  replaceSeries(cell, hostCpu(10, 40, 0));
  const Verdict v = judgeCell(rdmaFacts(), cell);
  EXPECT_EQ(v.tag(), "server-cpu");
  EXPECT_EQ(v.findings.at(0).evidence,
            "host CPUs 100% busy in 40 of 40 intervals (2 CPUs), the benchmark's threads 24% of "
            "it, nfsd's threads 60% of it");
}

TEST(BoundRules, SaturationInAShortCellIsThinEverywhere) {
  auto cell = healthyCell(3);  // 2 intervals
  replaceSeries(cell, nfsdThreads(2, 1, 48, 3));
  replaceSeries(cell, SeriesBuilder("bench-threads", 3)
                          .rate("busiest_ticks", 25)
                          .rate("ticks", 25)
                          .gauge("hz", 100)
                          .build());
  replaceSeries(cell, SeriesBuilder("svcrdma", 3).rate("rdma_stat_sq_starve", 4).build());
  const Verdict v = judgeCell(rdmaFacts(), cell);
  EXPECT_EQ(v.tag(), "none");
  ASSERT_EQ(v.findings.size(), 3u);
  for (const auto& f : v.findings) {
    EXPECT_TRUE(f.thin) << f.bound;
    EXPECT_TRUE(contains(f.evidence, "evidence thin: only 2 intervals sampled")) << f.evidence;
  }
  EXPECT_EQ(v.findings[0].bound, "server-cpu");
  EXPECT_EQ(v.findings[1].bound, "credits");
  EXPECT_EQ(v.findings[2].bound, "client-cpu");
}

TEST(BoundRules, LatencyWithoutTheCellsFiguresIsNotMeasured) {
  auto cell = healthyCell();
  CellFacts facts = rdmaFacts(1);
  facts.iops = 0;
  const Verdict v = judgeCell(facts, cell);
  EXPECT_EQ(v.tag(), "none");
  EXPECT_EQ(v.notMeasured, std::vector<std::string>{"latency: the cell's IOPS or mean latency"});
}

TEST(BoundRules, ComparesFlagsBecomeFindingsWithTheirText) {
  CellFacts facts = rdmaFacts();
  facts.flags = {{"link-bound", "randread 11.2 GB/s: link-bound: 90 Gb/s is 96% of the link's"},
                 {"server-page-cache", "served from the server's page cache"},
                 {"above-link", "above the link"}};
  const Verdict v = judgeCell(facts, healthyCell());
  EXPECT_EQ(v.tag(), "link+server-cache+above-link");
  EXPECT_EQ(v.findings.at(0).evidence, facts.flags[0].second);
  EXPECT_TRUE(contains(v.findings.at(0).knob, "faster link"));
  EXPECT_TRUE(v.findings.at(2).knob.empty()) << "a kind not known here keeps its name";
}

}  // namespace
}  // namespace nfsrdma::bench
