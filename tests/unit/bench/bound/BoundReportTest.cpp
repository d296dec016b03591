// The verdict written out: the lines under a cell of the text table and the
// cell's "bound" object in the JSON, byte for byte.
#include <gtest/gtest.h>

#include "bench/bound/Bound.h"
#include "bench/bound/BoundRules.h"
#include "bench/report/Json.h"

namespace nfsrdma::bench {
namespace {

Verdict twoBoundsAndAThinOne() {
  Verdict v;
  v.findings = {
      {"server-threads", "nfsd threads busy in 94% of 40 samples (1 thread)", "more nfsd threads",
       false},
      {"fabric-congestion",
       "net:eth0 rx_prio3_pause +1 in 1 of 40 intervals; evidence thin: moved in 1 of 40 intervals",
       "PFC", true},
      {"fabric-loss", "rdma:rxe1/1 completer_retry_err +400", "PFC/ECN", false},
      {"server-threads", "again", "more nfsd threads", false}};
  v.notMeasured = {"svcrdma: not on this host", "rdma ports: none sampled"};
  return v;
}

TEST(BoundReport, TheTagNamesEachBoundOnceAndLeavesThinOnesOut) {
  EXPECT_EQ(twoBoundsAndAThinOne().tag(), "server-threads+fabric-loss");
  Verdict thinOnly;
  thinOnly.findings = {{"fabric-loss", "x", "y", true}};
  EXPECT_EQ(thinOnly.tag(), "none");
  EXPECT_EQ(Verdict{}.tag(), "none");
}

TEST(BoundReport, LinesSayTheTagThenEachFindingWithItsKnobThenWhatWasNotMeasured) {
  Verdict v = twoBoundsAndAThinOne();
  v.findings.pop_back();
  EXPECT_EQ(
      boundLines(v),
      (std::vector<std::string>{
          "bound: server-threads+fabric-loss",
          "  server-threads: nfsd threads busy in 94% of 40 samples (1 thread) -> more nfsd "
          "threads",
          "  fabric-congestion: net:eth0 rx_prio3_pause +1 in 1 of 40 intervals; evidence thin: "
          "moved in 1 of 40 intervals -> PFC",
          "  fabric-loss: rdma:rxe1/1 completer_retry_err +400 -> PFC/ECN",
          "  not measured: svcrdma: not on this host; rdma ports: none sampled"}));
  EXPECT_EQ(boundLines(Verdict{}), std::vector<std::string>{"bound: none"});
}

TEST(BoundReport, TheJsonBoundObjectReadsBackWithEveryField) {
  Verdict v;
  v.findings = {{"latency", "latency-bound: 1.0 in flight", "qd=", false}};
  v.notMeasured = {"nfsd-pool: not on this host"};
  JsonWriter w;
  w.beginObject();
  writeBoundJson(w, v);
  w.endObject();
  const JsonValue doc = parseJson(w.str());
  const JsonValue* bound = doc.find("bound");
  ASSERT_NE(bound, nullptr);
  EXPECT_EQ(bound->str("tag"), "latency");
  const JsonValue* findings = bound->find("findings");
  ASSERT_TRUE(findings && findings->isArray() && findings->array.size() == 1);
  const JsonValue& f = findings->array[0];
  EXPECT_EQ(f.str("bound"), "latency");
  EXPECT_EQ(f.str("evidence"), "latency-bound: 1.0 in flight");
  EXPECT_EQ(f.str("knob"), "qd=");
  ASSERT_NE(f.find("thin"), nullptr);
  EXPECT_EQ(f.find("thin")->kind, JsonValue::Kind::Bool);
  EXPECT_FALSE(f.find("thin")->boolean);
  const JsonValue* nm = bound->find("not_measured");
  ASSERT_TRUE(nm && nm->isArray() && nm->array.size() == 1);
  EXPECT_EQ(nm->array[0].string, "nfsd-pool: not on this host");
}

TEST(BoundReport, CountsAreGroupedByThousands) {
  EXPECT_EQ(countText(0), "0");
  EXPECT_EQ(countText(999), "999");
  EXPECT_EQ(countText(1000), "1,000");
  EXPECT_EQ(countText(12340), "12,340");
  EXPECT_EQ(countText(1234567), "1,234,567");
  EXPECT_EQ(countText(-4000), "-4,000");
}

}  // namespace
}  // namespace nfsrdma::bench
