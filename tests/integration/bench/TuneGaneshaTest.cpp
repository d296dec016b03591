// `nfsrdma-bench tune` end to end on the embedded nfs-ganesha (started by
// the command itself, on 127.0.0.1, over TCP): our client's knobs for
// 4k-randread within a 2-minute budget. Over TCP, ganesha answers a
// COMPOUND of several READs about as fast as one READ, so
// reads-per-compound is the knob that matters; the search must find it,
// recommend it, and measure the recommendation again against the start in
// alternated runs of the same run. Then the inputs it refuses.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "bench/report/Json.h"
#include "tests/integration/bench/ShellRun.h"

namespace nfsrdma::bench {
namespace {

struct WorkDir : ScratchDir {
  WorkDir() : ScratchDir("nfsrdma-tune") {}
};

std::string readText(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

Ran tune(const std::string& args) {
  return runShell(std::string(NFSRDMA_BENCH_BIN) + " tune " + args, 240);
}

#define NFSRDMA_SKIP_WITHOUT_GANESHA(out)                                       \
  if ((out).find("cannot start the embedded nfs-ganesha") != std::string::npos) \
  GTEST_SKIP() << (out)

TEST(TuneGanesha, FindsTheKnobThatMattersWithinTwoMinutesAndConfirmsItAgainstTheStart) {
  WorkDir work;
  const std::string json = (work.path / "tune.json").string();
  const std::string html = (work.path / "tune.html").string();
  const Ran r = tune(
      "--profile 4k-randread --size 32m --runtime 1 --ramp 0.2 --budget 2m "
      "--work-dir " +
      work.path.string() + " --json " + json + " --html " + html);
  NFSRDMA_SKIP_WITHOUT_GANESHA(r.out);
  ASSERT_EQ(r.status, 0) << r.out;
  // The budget held: the search and its set-up (ganesha's start, the warm-up).
  EXPECT_LT(r.seconds, 120 + 20) << r.out;
  const JsonValue doc = parseJsonFile(json);
  EXPECT_EQ(doc.str("schema"), "nfsrdma-bench-tune/1");
  EXPECT_LE(doc.num("seconds"), 120.0);
  const JsonValue* trials = doc.find("trials");
  ASSERT_TRUE(trials != nullptr && trials->isArray());
  ASSERT_GE(trials->array.size(), 10U);
  EXPECT_LE(trials->array.size(), 60U);
  // Every trial is a real run with its full result.
  for (const JsonValue& t : trials->array) {
    const JsonValue* result = t.find("result");
    ASSERT_NE(result, nullptr) << t.str("error");
    EXPECT_GT(t.num("value"), 0);
    EXPECT_FALSE(t.str("ran_with").empty());
  }
  // The knob that matters over TCP was found, and the others named.
  const JsonValue* effects = doc.find("effects");
  ASSERT_TRUE(effects != nullptr && effects->isArray() && !effects->array.empty());
  EXPECT_EQ(effects->array.front().str("knob"), "reads-per-compound") << r.out;
  EXPECT_TRUE(effects->array.front().find("matters")->boolean);
  // A knob that did not matter is named so (which do depends on the
  // noise of the run: nconnect's +5% can be above it or within it).
  for (const JsonValue& e : effects->array) {
    if (!e.find("matters")->boolean) {
      EXPECT_NE(r.out.find("did not matter: "), std::string::npos) << r.out;
      EXPECT_NE(r.out.find(e.str("knob") + ": did not matter"), std::string::npos) << r.out;
    }
  }
  EXPECT_NE(r.out.find(" left alone: memreg: RDMA only"), std::string::npos) << r.out;
  // Recommended, and measured again against the start: six trials in a row
  // alternate the recommendation and the start (the last six, or those
  // before a second round that found nothing better).
  const JsonValue* rec = doc.find("recommendation");
  ASSERT_NE(rec, nullptr);
  ASSERT_TRUE(rec->find("changed")->boolean) << r.out;
  // (With another knob, when the joint search found them better together.)
  EXPECT_NE(rec->str("keys").find("reads-per-compound="), std::string::npos) << rec->str("keys");
  EXPECT_GT(rec->num("gain_low"), 0.2) << r.out;
  EXPECT_NE(rec->str("url").find(rec->str("keys")), std::string::npos);
  const auto& all = trials->array;
  const auto confirmedFrom = [&](std::size_t first) {
    for (std::size_t i = first; i < first + 6; ++i) {
      const bool start = all[i].find("start")->boolean;
      if (start != ((i - first) % 2 == 1)) return false;
      if (!start && all[i].str("ran_with") != rec->str("url")) return false;
    }
    return true;
  };
  bool confirmed = false;
  for (std::size_t first = 0; first + 6 <= all.size() && !confirmed; ++first)
    confirmed = confirmedFrom(first);
  EXPECT_TRUE(confirmed) << r.out;
  EXPECT_NE(r.out.find("recommendation: " + rec->str("keys") + " ("), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  reads-per-compound 1 -> "), std::string::npos) << r.out;
  // The HTML page: a chart per knob, the report whole.
  const std::string page = readText(html);
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0U);
  EXPECT_NE(page.find("<h2>reads-per-compound <small>(matters)</small></h2>"), std::string::npos);
  EXPECT_NE(page.find("aria-label=\"nconnect: IOPS by level\""), std::string::npos);
  std::string keysInHtml;
  for (char c : rec->str("keys")) keysInHtml += c == '&' ? std::string("&amp;") : std::string(1, c);
  EXPECT_NE(page.find("recommendation: " + keysInHtml), std::string::npos);
  EXPECT_NE(r.out.find("check it: nfsrdma-bench file --target 'nfs:nfs://127.0.0.1:"),
            std::string::npos)
      << r.out;
}

// Under mpirun (Debian's OpenMPI, three ranks on this host): rank 0 starts
// ganesha and runs the search, every rank runs every trial with its own
// jobs and files and the trial's URL, and a trial's figure is the three
// ranks' aggregate over IOR's window; the other ranks end when rank 0 does.
TEST(TuneGanesha, UnderMpirunEveryRankRunsEveryTrialAndTheFigureIsTheirAggregate) {
  WorkDir work;
  const std::string json = (work.path / "tune.json").string();
  const Ran r = runShell(mpirunRanks(3) + " " + NFSRDMA_BENCH_BIN +
                             " tune --knobs reads-per-compound --trials 12 --budget 3m --size 8m "
                             "--runtime 0.5 --ramp 0.1 --work-dir " +
                             work.path.string() + " --json " + json +
                             " --versus 'one:reads-per-compound=1' --versus-pairs 4",
                         300);
  NFSRDMA_SKIP_WITHOUT_GANESHA(r.out);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find(" clients: 3 MPI ranks, each with its own jobs and files"),
            std::string::npos)
      << r.out;
  const JsonValue doc = parseJsonFile(json);
  EXPECT_EQ(doc.str("clients"), "3 MPI ranks");
  const JsonValue* trials = doc.find("trials");
  ASSERT_TRUE(trials != nullptr && trials->isArray());
  ASSERT_GE(trials->array.size(), 10U);
  EXPECT_LE(trials->array.size(), 12U);
  for (const JsonValue& t : trials->array) {
    const JsonValue* result = t.find("result");
    ASSERT_NE(result, nullptr) << t.str("error");
    // The figure is the merged run of all three ranks' jobs, not rank 0's.
    const JsonValue* read = result->find("read");
    ASSERT_NE(read, nullptr);
    EXPECT_NEAR(t.num("value"), read->num("iops"), read->num("iops") * 1e-9);
    bool merged = false;
    for (const JsonValue& note : result->find("notes")->array)
      merged = merged || note.string.rfind("3 clients x numjobs 1,", 0) == 0;
    EXPECT_TRUE(merged) << t.str("ran_with");
    EXPECT_EQ(result->find("client")->num("sessions"), 3);
  }
  const JsonValue* versus = doc.find("versus");
  ASSERT_TRUE(versus != nullptr && versus->isArray() && versus->array.size() == 1);
  // Four pairs: the other ranks' count of runs holds them too.
  EXPECT_EQ(versus->array[0].num("pairs"), 4);
}

TEST(TuneGanesha, RefusesWhatItCannotTuneBeforeAnyTrial) {
  struct Case {
    std::string args;
    std::string error;
  };
  const Case cases[] = {
      {"--knobs memreg", "--knobs memreg: not for this run: RDMA only"},
      {"--knobs nconnect,bogus",
       "--knobs bogus: expected one of nconnect, iothreads, "
       "reads-per-compound"},
      {"--objective fast", "--objective fast: expected iops, mibps, p99 or cpu-per-op"},
      {"--budget 10x", "--budget 10x: expected a time such as 90s, 10m or 1h"},
      {"--budget 10s", "--budget 10s and 60 trials holds about 3 trials"},
      {"--trials 5", "--trials 5: tune needs at least 10"},
      {"--target path:/tmp", "--target path:/tmp: tune turns our client's knobs"},
      {"--target knfs:server", "--target knfs:server: no SERVER:/export"},
      {"--search best", "--search best: expected tune or grid"},
      {"--json - --html -", "--json - and --html -: only one of them can go to stdout"},
      {"--search grid --trials 20", "--search grid: 64 settings, more than --trials 20"},
      {"--target knfs:h:/e?nconnect=99", "knfs: nconnect=99: expected a whole number 1..16"},
      {"--versus qd=64", "--versus qd=64: not for this run: the session asks for the slots"},
      {"--versus rules:nconnect", "--versus 'nconnect': 'nconnect' is no KNOB=LEVEL"},
      {"--versus-pairs 1", "--versus-pairs 1: expected 2 to 50 pairs"},
      {"--bs 100", "--bs 100: expected 512 bytes to 64m, a multiple of 512"},
  };
  for (const Case& c : cases) {
    const Ran r = tune(c.args);
    EXPECT_EQ(r.status, 2) << c.args << "\n" << r.out;
    EXPECT_NE(r.out.find(c.error), std::string::npos) << c.args << "\n" << r.out;
    EXPECT_EQ(r.out.find("trial "), std::string::npos) << c.args << "\n" << r.out;
  }
}

}  // namespace
}  // namespace nfsrdma::bench
