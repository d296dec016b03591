// bench/tune's knob space, budget, objective and report on fixed inputs:
// the knobs our client's URL offers for a workload (and those left alone
// with why), --knobs, the URL a setting makes, the verdict's screening
// order, the budget's forms and refusals, and the report's tables.
#include <gtest/gtest.h>

#include <stdexcept>

#include "bench/tune/KernelTarget.h"
#include "bench/tune/TuneBudget.h"
#include "bench/tune/TuneHtml.h"
#include "bench/tune/TuneObjective.h"
#include "bench/tune/TuneReport.h"
#include "bench/tune/TuneSpace.h"

namespace nfsrdma::bench {
namespace {

std::vector<std::string> names(const std::vector<Knob>& knobs) {
  std::vector<std::string> n;
  for (const auto& k : knobs) n.push_back(k.name);
  return n;
}

TEST(TuneSpace, OurClientsKnobsForTcpReadsLeaveAloneWhatCannotMatter) {
  const ClientOptions url = ClientOptions::fromUrl("nfs://10.0.0.1/export?nconnect=2");
  const KnobSpace s = clientKnobSpace(url, ClientWorkload{4096, 32, 1, true});
  EXPECT_EQ(names(s.knobs),
            (std::vector<std::string>{"nconnect", "iothreads", "reads-per-compound"}));
  EXPECT_EQ(s.knobs[0].levels, (std::vector<std::string>{"1", "2", "4", "8"}));
  EXPECT_EQ(s.knobs[0].start, 1U);  // the URL's nconnect=2
  EXPECT_EQ(s.knobs[1].levels.front(), "auto");
  ASSERT_EQ(s.leftAlone.size(), 3U);
  EXPECT_EQ(s.leftAlone[0].knob, "memreg");
  EXPECT_EQ(s.leftAlone[1].why,
            "the session asks for the slots the jobs keep in flight (32, from --iodepth)");
  EXPECT_EQ(s.leftAlone[2].why, "4k requests go in one piece at every level (256k and up)");
}

TEST(TuneSpace, RdmaLargeBlocksAndAGivenQdBringTheirKnobs) {
  const ClientOptions url =
      ClientOptions::fromUrl("nfs://10.0.0.1/export?proto=rdma&qd=8&nconnect=3&iothreads=3");
  const KnobSpace s = clientKnobSpace(url, ClientWorkload{4U << 20, 8, 1, true});
  EXPECT_EQ(names(s.knobs),
            (std::vector<std::string>{"nconnect", "iothreads", "memreg", "qd", "iosize"}));
  EXPECT_EQ(s.knobs[0].levels, (std::vector<std::string>{"1", "2", "3", "4", "8"}));
  EXPECT_EQ(s.knobs[0].start, 2U);
  EXPECT_EQ(s.knobs[1].levels[s.knobs[1].start], "3");
  EXPECT_EQ(s.knobs[2].levels[s.knobs[2].start], "pooled");  // the benchmark's default
  // 8 requests of 4 MiB in 1 MiB pieces need 32 slots; twice that; the URL's 8.
  EXPECT_EQ(s.knobs[3].levels, (std::vector<std::string>{"8", "32", "64"}));
  EXPECT_EQ(s.knobs[3].start, 0U);
  EXPECT_EQ(s.knobs[4].levels, (std::vector<std::string>{"262144", "1048576", "4194304"}));
  EXPECT_EQ(s.knobs[4].start, 1U);
}

TEST(TuneSpace, KnobsRestrictsAndRefusesWithTheReason) {
  const ClientOptions url = ClientOptions::fromUrl("nfs://10.0.0.1/export");
  KnobSpace s = clientKnobSpace(url, ClientWorkload{});
  restrictKnobs(s, "reads-per-compound,nconnect");
  EXPECT_EQ(names(s.knobs), (std::vector<std::string>{"nconnect", "reads-per-compound"}));
  EXPECT_EQ(s.leftAlone.back().knob, "iothreads");
  EXPECT_EQ(s.leftAlone.back().why, "not in --knobs");
  KnobSpace t = clientKnobSpace(url, ClientWorkload{});
  try {
    restrictKnobs(t, "memreg");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "--knobs memreg: not for this run: RDMA only");
  }
  EXPECT_THROW(restrictKnobs(t, ","), std::invalid_argument);
}

TEST(TuneSpace, TheUrlOfASettingChangesOnlyWhatDiffersFromTheStart) {
  const std::vector<Knob> knobs = {{"nconnect", {"1", "2", "4"}, 1},
                                   {"iothreads", {"auto", "1", "2"}, 2},
                                   {"memreg", {"pooled", "per-io"}, 0}};
  const Setting start{1, 2, 0};
  const std::string url = "nfs://h/export?proto=rdma&nconnect=2&iothreads=2";
  EXPECT_EQ(urlWithSetting(url, knobs, start, start), url);
  EXPECT_EQ(urlWithSetting(url, knobs, {2, 0, 1}, start),
            "nfs://h/export?proto=rdma&nconnect=4&memreg=per-io");
  EXPECT_EQ(urlWithSetting("nfs://h/export", knobs, {0, 2, 0}, start), "nfs://h/export?nconnect=1");
  EXPECT_EQ(changedKeys(knobs, {2, 2, 1}, start), "nconnect=4&memreg=per-io");
  EXPECT_EQ(changedKeys(knobs, start, start), "");
}

TEST(TuneSpace, TheStartsVerdictChoosesTheKnobsScreenedFirst) {
  const std::vector<Knob> knobs = {
      {"nconnect", {"1"}, 0}, {"iothreads", {"auto"}, 0}, {"qd", {"8"}, 0}};
  EXPECT_EQ(knobsForVerdicts(knobs, {"credits", "credits", "none"}),
            (std::vector<std::size_t>{2, 0}));
  EXPECT_EQ(knobsForVerdicts(knobs, {"client-cpu+credits", "client-cpu", "none"}),
            (std::vector<std::size_t>{1, 0}));
  EXPECT_TRUE(knobsForVerdicts(knobs, {"none", "disk", ""}).empty());
  // Both bounds in every run: the one the verdict names first leads.
  const std::vector<Knob> server = {{"nfsd.threads", {"1"}, 0}, {"svcrdma.max_requests", {"8"}, 0}};
  EXPECT_EQ(knobsForVerdicts(server, {"server-threads+credits", "server-threads+credits"}),
            (std::vector<std::size_t>{0}));
}

TEST(TuneBudget, TakesTimesAndRefusesWhatCannotHoldASearch) {
  EXPECT_EQ(parseDuration("90", "--budget"), 90);
  EXPECT_EQ(parseDuration("90s", "--budget"), 90);
  EXPECT_EQ(parseDuration("2m", "--budget"), 120);
  EXPECT_EQ(parseDuration("1.5h", "--budget"), 5400);
  for (const char* bad : {"", "m", "2 m", "-1m", "0", "10x", "9999h"}) {
    EXPECT_THROW(parseDuration(bad, "--budget"), std::invalid_argument) << bad;
  }
  const TuneBudget b(120.0, 60);
  EXPECT_EQ(b.describe(), "2m and 60 trials");
  EXPECT_NO_THROW(b.checkHolds(3.3, 10));
  try {
    b.checkHolds(20, 10);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(),
                 "--budget 2m and 60 trials holds about 6 trials of 20.0 s; tune needs at least "
                 "10: a longer --budget or a shorter --runtime");
  }
  EXPECT_THROW(TuneBudget(std::nullopt, 5).checkHolds(1, 10), std::invalid_argument);
  EXPECT_EQ(TuneBudget(std::nullopt, 12).trialsThatFit(1), 12U);
}

TEST(TuneObjective, NamesAndFiguresInTheirUnits) {
  EXPECT_EQ(parseObjective("cpu-per-op"), Objective::CpuPerOp);
  EXPECT_THROW(parseObjective("IOPS"), std::invalid_argument);
  EXPECT_EQ(objectiveText(Objective::Iops, 41230.4), "41,230 IOPS");
  EXPECT_EQ(objectiveText(Objective::P99, 1e6 / 1204), "p99 1,204 us");
  EXPECT_EQ(objectiveCell(Objective::CpuPerOp, 1e6 / 9.84), "9.84");
  EXPECT_EQ(objectiveInUnit(Objective::P99, 0), 0);
}

TEST(TuneReport, TablesRecommendationAndHandOver) {
  TuneRun t;
  t.target = "nfs-rdma";
  t.profile = "4k-randread";
  t.budget = "2m and 60 trials";
  t.startUrl = "nfs://10.0.0.2/export?proto=rdma";
  t.space.knobs = {{"nconnect", {"1", "4"}, 0}, {"memreg", {"pooled", "per-io"}, 0}};
  t.space.leftAlone = {{"iosize", "4k requests go in one piece"}};
  SearchResult& s = t.search;
  s.start = {0, 0};
  s.startMean = 1000;
  s.noise = 0.02;
  s.trials = {{{0, 0}, {1000, "credits"}, true, 0},
              {{1, 0}, {1500, "none"}, false, 0.5},
              {{0, 1}, {990, "credits"}, false, -0.01},
              {{0, 0}, {1000, "credits"}, true, 0}};
  s.effects = {{0, {0, 0.5}, 1, 0.5, true}, {1, {0, -0.01}, 0, 0, false}};
  s.best = {1, 0};
  s.changed = true;
  s.gain = 0.48;
  s.gainLow = 0.4;
  s.gainHigh = 0.56;
  s.gainMedian = 0.47;
  s.stopReason = "confirmed";
  t.trials.resize(4);
  const std::string header = formatTuneHeader(t);
  EXPECT_NE(header.find(" knobs in play (* the start): nconnect 1*|4; memreg pooled*|per-io\n"),
            std::string::npos)
      << header;
  EXPECT_NE(header.find(" left alone: iosize: 4k requests go in one piece\n"), std::string::npos);
  const std::string text = formatTuneText(t);
  EXPECT_NE(text.find("nconnect: matters, best 4 (+50.0%)\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  4                     1,500     +50.0%   none\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("recommendation: nconnect=4 (+48.0%, 95% interval +40.0%..+56.0%, median "
                      "+47.0%, measured against the start in alternated pairs)\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  nconnect 1 -> 4: +50.0% alone in the screening, bound there: none\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("did not matter: memreg"), std::string::npos) << text;
  EXPECT_NE(text.find("  URL:  nfs://10.0.0.2/export?proto=rdma&nconnect=4\n"), std::string::npos)
      << text;
  const std::string line = formatTrialLine(t, 2, {1, 0}, {1500, "none"}, TrialRun{});
  EXPECT_EQ(line, "trial  2  nconnect=4                         1,500 IOPS  bound: none\n");
  const std::string page = tuneHtml(t);
  EXPECT_NE(page.find("<h2>nconnect <small>(matters)</small></h2>"), std::string::npos) << page;
  // The best level in green, the start grey, with their figures.
  EXPECT_NE(page.find("fill=\"#59a14f\"><title>nconnect=4: 1,500 IOPS (+50.0%)</title>"),
            std::string::npos)
      << page;
  EXPECT_NE(page.find("fill=\"#9e9e9e\"><title>nconnect=1: 1,000 IOPS</title>"), std::string::npos)
      << page;
  EXPECT_NE(page.find("recommendation: nconnect=4 (+48.0%"), std::string::npos);
}

TEST(KernelTarget, AnExportWithTheStartsMountOptions) {
  const KernelTarget t = parseKernelTarget(
      "knfs:198.18.0.1:/srv/"
      "nfs?proto=rdma&nconnect=1&rsize=4096&wsize=4096&noatime&read_ahead_kb=256");
  EXPECT_EQ(t.request.server, "198.18.0.1");
  EXPECT_EQ(t.request.exportPath, "/srv/nfs");
  EXPECT_EQ(t.request.proto, "rdma");
  EXPECT_EQ(t.request.nconnect, 1U);
  EXPECT_EQ(t.request.rsize, 4096U);
  EXPECT_EQ(t.request.extraOptions, (std::vector<std::string>{"noatime"}));
  EXPECT_EQ(t.readAheadKb, 256U);
  const KernelTarget v6 = parseKernelTarget("knfs:[fd00::1]:/e");
  EXPECT_EQ(v6.request.server, "[fd00::1]");
  EXPECT_EQ(v6.request.exportPath, "/e");
  EXPECT_EQ(v6.request.proto, "rdma");  // the mount helper's default
  for (const char* bad : {"knfs:", "knfs:host", "knfs::/e", "nfs:h:/e", "knfs:h:/e?port=0",
                          "knfs:h:/e?rsize=12", "knfs:h:/e?proto=both"}) {
    EXPECT_THROW(parseKernelTarget(bad), std::invalid_argument) << bad;
  }
}

TEST(KernelTarget, KnobsFollowTheWorkloadAndTheSettingBecomesMountOptions) {
  const KernelTarget t = parseKernelTarget("knfs:10.0.0.1:/e?nconnect=1&rsize=4096&wsize=4096");
  const KnobSpace rand = kernelKnobSpace(t, ClientWorkload{4096, 32, 1, true, false}, true, false);
  EXPECT_EQ(names(rand.knobs), (std::vector<std::string>{"nconnect", "rsize"}));
  EXPECT_EQ(rand.knobs[1].levels, (std::vector<std::string>{"4096", "65536", "262144", "1048576"}));
  EXPECT_EQ(rand.knobs[1].start, 0U);
  ASSERT_EQ(rand.leftAlone.size(), 2U);
  EXPECT_EQ(rand.leftAlone[1].why, "O_DIRECT reads bypass read-ahead (--direct 0 tunes it)");
  const KnobSpace seq =
      kernelKnobSpace(t, ClientWorkload{1U << 20, 8, 1, true, false}, false, true);
  EXPECT_EQ(names(seq.knobs), (std::vector<std::string>{"nconnect", "rsize", "read_ahead_kb"}));
  EXPECT_EQ(seq.knobs[2].levels[seq.knobs[2].start], "128");
  const KernelSetting ks = kernelSetting(t, seq.knobs, {2, 3, 2});
  EXPECT_EQ(ks.request.nconnect, 4U);
  EXPECT_EQ(ks.request.rsize, 1U << 20);
  EXPECT_EQ(ks.request.wsize, 4096U);  // not a knob here: the start's
  EXPECT_EQ(ks.readAheadKb, 4096U);
  mount::HostFacts facts;
  facts.rdmaClientModule = true;
  facts.kernelMajor = 6;
  facts.kernelMinor = 12;
  const KernelHandOver h = kernelHandOver(ks, facts);
  EXPECT_NE(h.mountCommand.find("nconnect=4"), std::string::npos) << h.mountCommand;
  EXPECT_NE(h.mountCommand.find("rsize=1048576"), std::string::npos) << h.mountCommand;
  EXPECT_NE(h.fstabLine.find("10.0.0.1:/e /mnt/nfs nfs "), std::string::npos) << h.fstabLine;
  EXPECT_NE(h.kubernetesYaml.find("mountOptions:"), std::string::npos);
  EXPECT_EQ(h.readAheadNfsConf, "[nfsrahead]\nnfs4=4096\n");
  EXPECT_NE(h.readAheadUdevRule.find("ATTR{read_ahead_kb}=\"4096\""), std::string::npos);
  const std::string text = kernelSettingText(ks, facts);
  EXPECT_EQ(text.substr(text.find(", read_ahead_kb")), ", read_ahead_kb=4096") << text;
}

}  // namespace
}  // namespace nfsrdma::bench
