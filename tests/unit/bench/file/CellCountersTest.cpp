// bench/file/CellCounters and CounterReport: which sources a cell samples
// for each kind of target, what the client source says in flight, and the
// counters' JSON (deltas, resets, gauges, the series of what moved); and a
// real path run on this host carrying its counters in the JSON.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "bench/file/CellCounters.h"
#include "bench/file/CounterReport.h"
#include "bench/file/FileRun.h"
#include "bench/report/Json.h"
#include "tests/unit/bench/ScratchDir.h"

namespace nfsrdma::bench {
namespace {

std::vector<std::string> names(const std::vector<counters::CounterSource>& s) {
  std::vector<std::string> out;
  for (const auto& x : s) out.push_back(x.name);
  return out;
}

TEST(CellCounters, APathTargetSamplesTheHostAndItsOwnThreadsOnly) {
  const TargetSpec t = TargetSpec::parse("", "path:/tmp");
  EXPECT_EQ(names(cellSources(t, nullptr, 1)),
            (std::vector<std::string>{"host-cpu", "bench-threads"}));
}

TEST(CellCounters, AnNfsTargetSamplesItsClientThePortsTheNetdevsAndTheLocalNfsd) {
  testing::ScratchDir root("cellcounters");
  std::filesystem::create_directories(root.path() / "sys/class/infiniband/rxe1/ports/1");
  std::ofstream(root.path() / "sys/class/infiniband/rxe1/parent") << "veth1\n";
  const TargetSpec t = TargetSpec::parse("", "nfs:nfs://198.18.0.1/export?proto=rdma");
  const auto s = cellSources(
      t, [] { return std::optional<ClientLive>(); }, 32, root.path());
  EXPECT_EQ(names(s),
            (std::vector<std::string>{"client", "rdma:rxe1/1", "net:veth1", "nfsd-pool",
                                      "nfsd-threads", "svcrdma", "host-cpu", "bench-threads"}));
  EXPECT_FALSE(s[0].read());  // no client open yet: no reading, not zeros
}

TEST(CellCounters, TheClientSourceSaysWhatIsInFlightAgainstWhatWasWanted) {
  ClientLive l;
  l.calls = 100;
  l.replies = 90;
  l.timeouts = 2;
  l.credits = 4;
  l.slots = 64;
  const counters::NamedValues v = clientValues(l, 32);
  EXPECT_EQ(v.get("in_flight"), 8);
  EXPECT_EQ(v.get("wanted"), 32);
  EXPECT_EQ(v.get("credits"), 4);
  l.replies = 200;  // replies counted before their call's count was read
  EXPECT_EQ(clientValues(l, 32).get("in_flight"), 0);
}

counters::NamedValues two(std::int64_t sent, std::int64_t credits) {
  counters::NamedValues n;
  n.values = {{"sent", sent}, {"still", 5}, {"credits", credits}};
  return n;
}

TEST(CounterReport, WritesDeltasGaugesAndTheSeriesOfWhatMoved) {
  counters::CellSeries cell;
  cell.cpuSeconds = 0.002;
  counters::Series s{"client", {"credits"}, {}};
  s.readings = {{0, two(10, 4)}, {0.25, two(30, 4)}, {0.5, two(35, 8)}};
  cell.series.push_back(s);
  JsonWriter w;
  w.beginObject();
  writeCountersJson(w, cell);
  w.endObject();
  const JsonValue doc = parseJson(w.str());
  EXPECT_EQ(doc.find("counters")->num("sampler_cpu_s"), 0.002);
  const JsonValue& src = doc.find("counters")->find("sources")->array.at(0);
  EXPECT_EQ(src.str("source"), "client");
  const JsonValue* deltas = src.find("deltas");
  EXPECT_EQ(deltas->num("sent", -1), 25);
  EXPECT_EQ(deltas->num("still", -1), 0);
  EXPECT_EQ(deltas->find("credits"), nullptr);  // a gauge has no delta
  EXPECT_EQ(src.find("gauges")->find("credits")->num("max"), 8);
  const JsonValue* series = src.find("series");
  ASSERT_EQ(series->find("sent")->array.size(), 2U);
  EXPECT_EQ(series->find("sent")->array[0].number, 20);
  EXPECT_EQ(series->find("sent")->array[1].number, 5);
  EXPECT_EQ(series->find("still"), nullptr);  // did not move
}

TEST(CounterReport, AnIntervalWithoutTheCounterOrWhereItWentBackIsNotANumber) {
  counters::Series s{"svcrdma", {}, {}};
  counters::NamedValues a, b, c;
  a.values = {{"rdma_stat_recv", 10}};
  c.values = {{"rdma_stat_recv", 3}};  // written to zero meanwhile
  s.readings = {{0, a}, {0.25, b}, {0.5, c}};
  const auto v = intervalValues(s, "rdma_stat_recv");
  ASSERT_EQ(v.size(), 2U);
  EXPECT_TRUE(std::isnan(v[0]));
  EXPECT_TRUE(std::isnan(v[1]));
}

TEST(CellCounters, APathRunCarriesItsHostCpuAndThreadsInItsResult) {
  testing::ScratchDir dir("cellcounters-run");
  const TargetSpec t = TargetSpec::parse("", "path:" + dir.str());
  FileOptions o;
  o.sizeBytes = 4 << 20;
  o.runtime = std::chrono::milliseconds(600);
  o.ramp = std::chrono::milliseconds(0);
  o.sampleInterval = std::chrono::milliseconds(100);
  const RunResult r = runFileBenchmark(t, profileByName("4k-randread"), o);
  const auto* cpu = r.series.find("host-cpu");
  ASSERT_NE(cpu, nullptr);
  EXPECT_GE(cpu->readings.size(), 4U);
  ASSERT_NE(r.series.find("bench-threads"), nullptr);
  EXPECT_EQ(r.series.find("client"), nullptr);
  o.sampleInterval = std::chrono::milliseconds(0);
  EXPECT_TRUE(runFileBenchmark(t, profileByName("4k-randread"), o).series.series.empty());
}

}  // namespace
}  // namespace nfsrdma::bench
