// One client of many, without MPI: the run's RankHooks (a recording double
// stands in for the cluster's hooks), the held start gate, {rank} in
// targets, the client options checked against the mode, and each client's
// own jobs. The real hooks are tested in bench_cluster_unit, the real MPI
// launch in bench_many_clients_integration.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "bench/cluster/ClusterCell.h"
#include "bench/file/FileClients.h"
#include "bench/file/FileRun.h"
#include "bench/job/FileJob.h"
#include "bench/ranks/RankResult.h"
#include "tests/unit/bench/ErrorOf.h"
#include "tests/unit/bench/RankRun.h"
#include "tests/unit/bench/ScratchDir.h"

namespace nfsrdma::bench {
namespace {

using namespace std::chrono_literals;
using testing::errorOf;
using testing::ScratchDir;

// Records the calls; says "stop" once stopAfter has passed since the start.
class RecordingHooks final : public RankHooks {
 public:
  bool startTogether(const std::string& failure) override {
    ++starts;
    seenFailure = failure;
    started = std::chrono::steady_clock::now();
    return failure.empty() && letStart;
  }
  std::string abandonReason() const override { return "abandoned for the test"; }
  bool stopNow(bool issuingDone) override {
    ++polls;
    sawIssuingDone = sawIssuingDone || issuingDone;
    return stopAfter.count() > 0 && std::chrono::steady_clock::now() - started >= stopAfter;
  }
  std::chrono::milliseconds pollInterval() const override { return 5ms; }
  void ended() override { ++ends; }
  std::int64_t clockNs(std::chrono::steady_clock::time_point t) const override {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
  }

  bool letStart = true;
  std::chrono::milliseconds stopAfter{0};
  int starts = 0, polls = 0, ends = 0;
  bool sawIssuingDone = false;
  std::string seenFailure;
  std::chrono::steady_clock::time_point started;
};

FileOptions quick() {
  FileOptions o;
  o.sizeBytes = 4ULL << 20;
  o.runtime = 600ms;
  o.ramp = 100ms;
  o.numjobs = 2;
  return o;
}

TargetSpec scratchTarget(const ScratchDir& dir) {
  TargetSpec t = TargetSpec::parse("here", "path:" + dir.str());
  t.direct = false;  // tmpfs refuses O_DIRECT
  return t;
}

TEST(FileClients, ARunWithHooksRecordsATimelineThatAddsUp) {
  ScratchDir dir("clients-timeline");
  RecordingHooks hooks;
  RunSettings rs;
  rs.rank = &hooks;
  const RunResult r =
      runFileBenchmark(scratchTarget(dir), profileByName("4k-randread"), quick(), rs);
  EXPECT_EQ(hooks.starts, 1);
  EXPECT_EQ(hooks.ends, 1);
  EXPECT_GT(hooks.polls, 10);  // every 5 ms for 0.7 s
  EXPECT_TRUE(hooks.sawIssuingDone);
  ASSERT_GT(r.dir[0].ops, 0U);
  // What a rank reports from it passes the aggregator's own checks.
  RankOutcome o;
  o.timeline = r.timeline;
  o.dir[0] = r.dir[0];
  o.dir[1] = r.dir[1];
  const RankResult rank = rankResultOf(o, {0, "host-a"}, "4k-randread here");
  EXPECT_EQ(rankResultProblem(rank), std::nullopt);
  EXPECT_GE(rank.samples.size(), 5U) << "a sample every 100 ms of a 0.6 s window";
  const double window = static_cast<double>(r.timeline.endNs - r.timeline.startNs) / 1e9;
  EXPECT_NEAR(window, 0.6, 0.1);
}

TEST(FileClients, StopNowEndsTheRunEarly) {
  ScratchDir dir("clients-stop");
  RecordingHooks hooks;
  hooks.stopAfter = 300ms;  // 0.2 s after the ramp, of a 5 s runtime
  RunSettings rs;
  rs.rank = &hooks;
  FileOptions o = quick();
  o.runtime = 5s;
  const auto t0 = std::chrono::steady_clock::now();
  const RunResult r = runFileBenchmark(scratchTarget(dir), profileByName("4k-randread"), o, rs);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 3s);
  EXPECT_GT(r.dir[0].ops, 0U);
  EXPECT_LT(r.seconds, 1.0);
}

TEST(FileClients, AnAbandonedStartRunsNothingAndSaysWhy) {
  ScratchDir dir("clients-abandon");
  RecordingHooks hooks;
  hooks.letStart = false;
  RunSettings rs;
  rs.rank = &hooks;
  EXPECT_EQ(errorOf([&] {
              runFileBenchmark(scratchTarget(dir), profileByName("4k-randread"), quick(), rs);
            }),
            "abandoned for the test");
  EXPECT_EQ(hooks.polls, 0);
  EXPECT_EQ(hooks.ends, 1);
}

TEST(FileClients, EachClientRunsItsOwnJobs) {
  ClientRun alone = ClientRun::start({}, quick());
  EXPECT_TRUE(alone.alone());
  EXPECT_TRUE(alone.leader());
  ClientsArgs pod;
  pod.clients = 4;
  pod.clientIndex = 3;
  pod.startAt = "1764687600";
  pod.cellSlot = 30;
  const ClientRun third = ClientRun::start(pod, quick());
  EXPECT_TRUE(third.pod());
  EXPECT_FALSE(third.leader()) << "a pod prints its lines; aggregate prints the report";
  EXPECT_EQ(third.forThisClient(quick()).jobBase, 6U) << "client 3 of numjobs 2: jobs 6 and 7";
  FileOptions o = quick();
  o.jobBase = 6;
  EXPECT_EQ(benchFileName(o, 1, 0), "nfsrdma-bench.s1.b4194304.j7.f0");
}

TEST(FileClients, SharedFileJobsWriteDisjointRangesThatVerify) {
  ScratchDir dir("clients-shared");
  FileOptions o = quick();
  o.sharedFile = true;
  o.sharingJobs = 2;
  o.verify = true;
  o.ramp = 0ms;
  o.runtime = 300ms;
  const RunResult w = runFileBenchmark(scratchTarget(dir), profileByName("4k-randwrite"), o);
  EXPECT_EQ(w.errors, 0U) << w.firstError;
  EXPECT_EQ(w.verify.mismatches, 0U);
  const auto file = dir.path() / "nfsrdma-bench.s1.b4194304.shared2.f0";
  ASSERT_TRUE(std::filesystem::exists(file));
  EXPECT_EQ(std::filesystem::file_size(file), 2U * (4U << 20)) << "job 1's range follows job 0's";
  const RunResult r = runFileBenchmark(scratchTarget(dir), profileByName("4k-randread"), o);
  EXPECT_EQ(r.verify.mismatches, 0U) << "each job reads back its own range's pattern";
  EXPECT_GT(r.verify.unitsChecked, 0U);
  EXPECT_EQ(sharedRangeOffset(o, 1), 4U << 20);
  o.jobBase = 4;
  EXPECT_EQ(sharedRangeOffset(o, 1), 5U * (4U << 20)) << "rank 2 of numjobs 2: job 5";
}

// One rank's verified read of a cell, as rank 0 gets it.
RankResult verifiedRank(std::uint32_t rank, std::uint64_t units, std::uint64_t mismatches,
                        std::uint64_t ioErrors) {
  RankResult r = testing::ranFor(rank, "4k-randread nfs-tcp", 1, 2, units);
  r.verify.unitsChecked = units;
  r.verify.bytesChecked = units * 4096;
  r.verify.mismatches = mismatches;
  for (std::uint64_t i = 0; i < mismatches; ++i)
    r.verify.first.push_back({rank, i * 4096, i * 4096 + 5, "payload corrupt (checksum mismatch)"});
  r.errors = ioErrors + mismatches;
  if (ioErrors > 0) r.firstError = "READ: NFS4ERR_IO";
  if (ioErrors == 0 && mismatches > 0)
    r.firstError = std::to_string(mismatches) + " verify mismatches";
  return r;
}

// Rank 0 reported its own verify statistics as the cell's: the blocks the
// other ranks checked and their mismatches were lost (only counted as errors).
TEST(FileClients, ManyClientsVerifyStatisticsAreMerged) {
  CellRanks c;
  c.results = {verifiedRank(0, 10, 0, 0), verifiedRank(1, 20, 2, 0), verifiedRank(2, 30, 0, 1)};
  c.aggregate = aggregateRanks(c.results, 3);
  RunResult local;
  local.verified = true;
  local.verify = c.results[0].verify;
  const RunResult m = mergeClients(local, c, {"test", {}, {}});
  EXPECT_EQ(m.verify.unitsChecked, 60U);
  EXPECT_EQ(m.verify.bytesChecked, 60U * 4096);
  EXPECT_EQ(m.verify.mismatches, 2U);
  ASSERT_EQ(m.verify.first.size(), 2U);
  EXPECT_EQ(m.verify.first[1].fileId, 1U) << "rank 1's file";
  EXPECT_EQ(m.errors, 1U) << "the I/O error; the mismatches are the verify's";
  EXPECT_EQ(m.firstError, "rank 2 (node-2): READ: NFS4ERR_IO");
  EXPECT_FALSE(m.ok());
  ASSERT_TRUE(c.aggregate.totals.has_value());
  EXPECT_EQ(c.aggregate.totals->verify.unitsChecked, 60U) << "the clients' block says the same";
}

TEST(FileClients, RankInATargetIsTheClientsNumber) {
  EXPECT_EQ(withRank("nfs:nfs://10.0.0.{rank}/export{rank}", 7), "nfs:nfs://10.0.0.7/export7");
  EXPECT_EQ(withRank("path:/mnt/nfs", 7), "path:/mnt/nfs");
  ::unsetenv("NFSRDMA_POD_IP");
  EXPECT_EQ(errorOf([] { withRank("nfs:nfs://s/e?proto=rdma&bind={pod-ip}", 0); }),
            "target nfs:nfs://s/e?proto=rdma&bind={pod-ip}: {pod-ip} needs NFSRDMA_POD_IP (a pod's "
            "status.podIP, which `nfsrdma-bench kube` renders into its environment)");
  ::setenv("NFSRDMA_POD_IP", "10.1.2.3", 1);
  EXPECT_EQ(withRank("nfs:nfs://s/e?proto=rdma&bind={pod-ip}", 0),
            "nfs:nfs://s/e?proto=rdma&bind=10.1.2.3");
  ::unsetenv("NFSRDMA_POD_IP");
}

TEST(FileClients, PodOptionsAreCheckedTogether) {
  ClientsArgs a;
  a.clients = 4;
  a.clientIndex = 4;
  a.startAt = "1764687600";
  a.cellSlot = 30;
  EXPECT_EQ(errorOf([&] { ClientRun::start(a, quick()); }),
            "--client-index 4: expected 0..3 (--clients 4)");
  a.clientIndex = 0;
  a.startAt = "soon";
  EXPECT_EQ(errorOf([&] { ClientRun::start(a, quick()); }),
            "--start-at 'soon': expected Unix seconds, e.g. 1764687600 (date +%s)");
  a.startAt = "1764687600";
  a.cellSlot = 0.5;
  EXPECT_EQ(errorOf([&] { ClientRun::start(a, quick()); }),
            "--cell-slot 0.5: expected more than the ramp and runtime (0.7 s) so that one cell "
            "ends before the next starts");
  a.cellSlot = 30;
  a.stonewall = 5;
  EXPECT_EQ(errorOf([&] { ClientRun::start(a, quick()); }),
            "--stonewall needs mpirun: pods have no channel to stop each other");
  ClientsArgs s;
  s.stonewall = 5;
  EXPECT_EQ(errorOf([&] { ClientRun::start(s, quick()); }), "--stonewall needs mpirun (MPI ranks)");
  ClientsArgs noStart;
  noStart.clients = 2;
  noStart.clientIndex = 0;
  EXPECT_EQ(errorOf([&] { ClientRun::start(noStart, quick()); }),
            "--clients needs --start-at (Unix seconds)");
}

TEST(StartGate, AHeldGateOpensOnlyWhenItsCoordinatorSays) {
  StartGate gate(2, 10s, true);
  std::atomic<int> released{0};
  std::thread a([&] { released += gate.arriveAndWait() ? 1 : 0; });
  std::thread b([&] { released += gate.arriveAndWait() ? 1 : 0; });
  EXPECT_TRUE(gate.awaitJobs());
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(released.load(), 0) << "both arrived, the gate is still held";
  gate.open();
  a.join();
  b.join();
  EXPECT_EQ(released.load(), 2);
}

TEST(StartGate, AHeldGateThatFailsReleasesTheJobsWithFalse) {
  StartGate gate(1, 10s, true);
  bool started = true;
  std::thread a([&] { started = gate.arriveAndWait(); });
  EXPECT_TRUE(gate.awaitJobs());
  gate.fail();
  a.join();
  EXPECT_FALSE(started);
}

}  // namespace
}  // namespace nfsrdma::bench
