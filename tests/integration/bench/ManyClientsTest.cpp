// Many clients under a real MPI launch: Debian's OpenMPI `mpirun` starts
// three ranks of nfsrdma-bench on this host; without --target rank 0 starts
// the embedded nfs-ganesha on 127.0.0.1 and tells the others its address.
// Checks what rank 0 prints (the aggregate equals the ranks' bytes over the
// common window, a row per rank, merged percentiles, --verify clean on every
// rank and its statistics merged), that `compare --results` of such a run
// shows its clients again, that an interrupt keeps a shared file an earlier
// run completed, and that a rank with a bad target, and a rank killed
// mid-run, each end the run within 30 s with that rank named and a non-zero
// exit.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "bench/report/Json.h"
#include "tests/integration/bench/ShellRun.h"

namespace nfsrdma::bench {
namespace {

std::string bench(int ranks, const std::string& args) {
  return mpirunRanks(ranks) + " " + NFSRDMA_BENCH_BIN + " " + args;
}

struct WorkDir : ScratchDir {
  WorkDir() : ScratchDir("nfsrdma-ranks") {}
};

#define NFSRDMA_SKIP_WITHOUT_GANESHA(out)                                       \
  if ((out).find("cannot start the embedded nfs-ganesha") != std::string::npos) \
  GTEST_SKIP() << (out)

// The JSON document is the only thing on stdout (--json -); mpirun's
// stderr is merged in by runShell(), so the document is found by its first brace.
JsonValue documentIn(const std::string& out) {
  const auto at = out.find("{\"schema\"");
  if (at == std::string::npos) throw std::runtime_error("no JSON in:\n" + out);
  const auto end = out.rfind('}');
  return parseJson(out.substr(at, end - at + 1));
}

// Three ranks of `file ARGS --json -` on the embedded server (its
// directory in work).
Ran threeRanksJson(const std::string& args, const WorkDir& work) {
  return runShell(bench(3, "file " + args + " --json - --work-dir " + work.path.string()));
}

TEST(ManyClients, ThreeRanksAddUpOverTheCommonWindowAndVerify) {
  WorkDir work;
  const Ran r =
      threeRanksJson("--profile 4k-randwrite --size 8m --runtime 1.5 --ramp 0.2 --verify", work);
  NFSRDMA_SKIP_WITHOUT_GANESHA(r.out);
  ASSERT_EQ(r.status, 0) << r.out;
  const JsonValue doc = documentIn(r.out);
  EXPECT_EQ(doc.str("schema"), "nfsrdma-bench-file/3");
  const JsonValue* clients = doc.find("clients");
  ASSERT_NE(clients, nullptr) << r.out;
  EXPECT_EQ(clients->num("clients"), 3);
  const JsonValue* rows = clients->find("per_client");
  ASSERT_NE(rows, nullptr);
  ASSERT_EQ(rows->array.size(), 3U) << "MPI started three ranks, each one row";
  double bytes = 0;
  for (std::size_t k = 0; k < rows->array.size(); ++k) {
    const JsonValue& row = rows->array[k];
    EXPECT_EQ(row.num("rank"), static_cast<double>(k));
    EXPECT_GT(row.num("bytes"), 0);
    EXPECT_EQ(row.num("errors"), 0) << "rank " << k;
    bytes += row.num("bytes");
  }
  // IOR's window runs from the first start to the last end: every byte of every rank is in it.
  EXPECT_DOUBLE_EQ(clients->find("aggregate")->num("bytes"), bytes);
  EXPECT_GT(clients->find("latency_usec")->num("p99"), clients->find("latency_usec")->num("p50"));
  EXPECT_GT(clients->find("latency_usec")->num("p50"), 0);
  // Rank 0's own read-back; the others' mismatches would be in their rows' errors.
  const JsonValue* result = doc.find("result");
  ASSERT_NE(result, nullptr);
  EXPECT_TRUE(std::filesystem::is_empty(work.path)) << "the embedded server's directory stayed";
}

TEST(ManyClients, SharedFileRanksWriteDisjointRangesOfOneFile) {
  WorkDir work;
  const Ran r =
      runShell(bench(3,
                     "file --profile 4k-randwrite --size 8m --runtime 1 --ramp 0 --verify "
                     "--shared-file --direct 0 --target path:" +
                         work.path.string()));
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("note: --shared-file: the 3 jobs of the run"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" 0 mismatches"), std::string::npos) << r.out;
  std::vector<std::filesystem::directory_entry> files(
      std::filesystem::directory_iterator(work.path), {});
  ASSERT_EQ(files.size(), 1U) << "one file for the three ranks";
  EXPECT_EQ(files[0].file_size(), 3U * (8U << 20)) << files[0].path();
}

// Rank 0 reported its own verify statistics as the run's: each rank's now
// travel in its result line and add up (a 4k read checks one block per op).
TEST(ManyClients, EveryRanksVerifyStatisticsAreMerged) {
  WorkDir work;
  const Ran r =
      threeRanksJson("--profile 4k-randread --size 8m --runtime 1 --ramp 0.2 --verify", work);
  NFSRDMA_SKIP_WITHOUT_GANESHA(r.out);
  ASSERT_EQ(r.status, 0) << r.out;
  const JsonValue doc = documentIn(r.out);
  const JsonValue* rows = doc.find("clients") ? doc.find("clients")->find("per_client") : nullptr;
  ASSERT_NE(rows, nullptr) << r.out;
  double ops = 0;
  for (const auto& row : rows->array) {
    EXPECT_GT(row.num("ops"), 0);
    ops += row.num("ops");
  }
  // The ramp's reads are checked too, and counted in no window.
  const JsonValue* verify = doc.find("result")->find("verify");
  ASSERT_NE(verify, nullptr);
  EXPECT_GE(verify->num("blocks_checked"), ops) << "every rank's reads, not rank 0's";
  EXPECT_EQ(verify->num("bytes_checked"), verify->num("blocks_checked") * 4096);
  EXPECT_EQ(verify->num("mismatches"), 0);
  const JsonValue* merged = doc.find("clients")->find("verify");
  ASSERT_NE(merged, nullptr) << r.out;
  EXPECT_EQ(merged->num("blocks_checked"), verify->num("blocks_checked"));
}

// The text between " Clients:" and the last "stragglers:" line: what a
// many-client report says of its clients.
std::string clientsSection(const std::string& out) {
  const auto from = out.find(" Clients:");
  const auto last = out.rfind("  stragglers:");
  if (from == std::string::npos || last == std::string::npos) return {};
  return out.substr(from, out.find('\n', last) - from);
}

// `compare --results` of a many-client run's JSON printed the table without
// the clients' breakdown: it prints the run's own again.
TEST(ManyClients, CompareResultsOfARunShowItsClientsAgain) {
  WorkDir work;
  const std::string json = (work.path / "run.json").string();
  const Ran r = runShell(bench(3, "compare --profiles 4k-randread --size 8m --runtime 1 --json " +
                                      json + " --html '' --work-dir " + work.path.string()));
  NFSRDMA_SKIP_WITHOUT_GANESHA(r.out);
  ASSERT_EQ(r.status, 0) << r.out;
  const std::string ran = clientsSection(r.out);
  ASSERT_FALSE(ran.empty()) << r.out;
  const Ran again = runShell(std::string(NFSRDMA_BENCH_BIN) + " compare --results " + json);
  ASSERT_EQ(again.status, 0) << again.out;
  EXPECT_EQ(clientsSection(again.out), ran) << again.out;
  for (const char* rank : {"     0  ", "     1  ", "     2  "})
    EXPECT_NE(clientsSection(again.out).find(rank), std::string::npos) << rank;
}

// --shared-file under mpirun: a run interrupted after an earlier one had
// completed the shared file removed it (every rank laid its ranges out
// again and took the file for its own).
TEST(ManyClients, AnInterruptKeepsASharedFileAnEarlierRunCompleted) {
  WorkDir work;
  const std::string args =
      "file --profile 4k-randread --size 8m --ramp 0 --shared-file "
      "--direct 0 --target path:" +
      work.path.string();
  const Ran first = runShell(bench(3, args + " --runtime 0.5"));
  ASSERT_EQ(first.status, 0) << first.out;
  std::vector<std::filesystem::directory_entry> files(
      std::filesystem::directory_iterator(work.path), {});
  ASSERT_EQ(files.size(), 1U);
  const std::filesystem::path shared = files[0].path();
  // The ranks are this test's only nfsrdma-bench processes with this
  // target; the pattern's start leaves mpirun out (the ranks get the signal,
  // as from a terminal's Ctrl-C).
  const std::string ranks =
      "pgrep -f -- '^" + std::string(NFSRDMA_BENCH_BIN) + " file .*" + work.path.string() + "'";
  const std::string script =
      (work.path.parent_path() / ("nfsrdma-ranks-int-" + std::to_string(::getpid()) + ".sh"))
          .string();
  std::ofstream(script) << bench(3, args + " --runtime 60") << " & m=$!\n"
                        << "for i in $(seq 1 100); do\n"
                        << "  [ \"$(" << ranks << " | wc -l)\" -ge 3 ] && break\n"
                        << "  sleep 0.1\ndone\nsleep 4\n"
                        << "kill -INT $(" << ranks << ")\n"
                        << "wait $m; echo \"rc=$?\"\n";
  const Ran r = runShell("bash " + script);
  std::filesystem::remove(script);
  EXPECT_EQ(r.out.find("rc=0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("interrupted by SIGINT"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("removed the"), std::string::npos) << r.out;
  ASSERT_TRUE(std::filesystem::exists(shared)) << "the complete shared file was removed\n" << r.out;
  EXPECT_EQ(std::filesystem::file_size(shared), 3U * (8U << 20));
}

TEST(ManyClients, StonewallStopsEveryRankWithTheFirst) {
  WorkDir work;
  // A 60 s runtime that the stonewall cuts to 0.5 s after the ramp.
  const Ran r = runShell(bench(3,
                               "file --size 8m --runtime 60 --ramp 0.2 --stonewall 0.5 --json - "
                               "--work-dir " +
                                   work.path.string()));
  NFSRDMA_SKIP_WITHOUT_GANESHA(r.out);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_LT(r.seconds, 30) << r.out;
  // The document outlives the pointers into it.
  const JsonValue doc = documentIn(r.out);
  const JsonValue* clients = doc.find("clients");
  ASSERT_NE(clients, nullptr) << r.out;
  const double all = clients->find("aggregate")->num("seconds");
  EXPECT_GT(all, 0.4);
  // Without the stonewall every rank would run 60 s; the slack is for a loaded 2-core host.
  EXPECT_LT(all, 5) << "every rank stopped soon after the stonewall\n" << r.out;
  EXPECT_GT(clients->find("first_done")->num("seconds"), 0.4) << r.out;
}

TEST(ManyClients, CompareUnderMpiShowsEachCellsRanks) {
  WorkDir work;
  const Ran r = runShell(bench(3,
                               "compare --profiles 4k-randread --size 8m --runtime 1 --json '' "
                               "--html '' --work-dir " +
                                   work.path.string()));
  NFSRDMA_SKIP_WITHOUT_GANESHA(r.out);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find(" clients: 3 MPI ranks"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" 4k-randread read nfs-tcp:"), std::string::npos) << r.out;
  for (const char* rank : {"     0  ", "     1  ", "     2  "}) {
    EXPECT_NE(r.out.find(rank), std::string::npos) << rank << "\n" << r.out;
  }
  // No MPI warnings a user would have to decode.
  EXPECT_EQ(r.out.find("WARNING"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("mpirun"), std::string::npos) << r.out;
}

TEST(ManyClients, ARankWithABadTargetEndsTheRunNamingIt) {
  WorkDir work;
  std::filesystem::create_directories(work.path / "r0");
  std::filesystem::create_directories(work.path / "r1");
  // Rank 2's directory does not exist: its target cannot be set up.
  const Ran r = runShell(
      bench(3, "file --size 4m --runtime 20 --target path:" + work.path.string() + "/r{rank}"));
  EXPECT_NE(r.status, 0) << r.out;
  EXPECT_LT(r.seconds, 30) << r.out;
  EXPECT_NE(r.out.find("rank 2 ("), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("r2: not a directory"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("clients lost: no totals"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("aggregate "), std::string::npos) << "no totals for a run that lost a rank";
}

TEST(ManyClients, ARankToAServerThatIsNotThereEndsTheRun) {
  // Port 1 on loopback: nothing listens, the connect is refused at once.
  const Ran r =
      runShell(bench(3, "file --size 4m --runtime 20 --target nfs:nfs://127.0.0.1:1/export"));
  EXPECT_NE(r.status, 0) << r.out;
  EXPECT_LT(r.seconds, 30) << r.out;
  for (const char* rank : {"rank 0 (", "rank 1 (", "rank 2 ("})
    EXPECT_NE(r.out.find(rank), std::string::npos) << rank << "\n" << r.out;
}

TEST(ManyClients, ARankKilledMidRunEndsTheRun) {
  WorkDir work;
  // The ranks are this test's only nfsrdma-bench processes with this work dir.
  const std::string marker = work.path.string();
  const std::string script = (work.path / "kill-one-rank.sh").string();
  std::ofstream(script)
      << bench(3, "file --profile 4k-randread --size 8m --runtime 60 --work-dir " + marker)
      << " & m=$!\n"
      // Until the three ranks are up (at most 10 s), then 4 s into the run.
      << "for i in $(seq 1 100); do\n"
      << "  [ \"$(pgrep -f -- 'nfsrdma-bench file .*" << marker << "' | wc -l)\" -ge 3 ] && break\n"
      << "  sleep 0.1\ndone\nsleep 4\n"
      << "kill -9 $(pgrep -n -f -- 'nfsrdma-bench file .*" << marker << "')\n"
      << "wait $m; echo \"rc=$?\"\n";
  const std::string cmd = "bash " + script;
  const Ran r = runShell(cmd);
  NFSRDMA_SKIP_WITHOUT_GANESHA(r.out);
  EXPECT_LT(r.seconds, 4 + 30) << r.out;
  EXPECT_EQ(r.out.find("rc=0"), std::string::npos) << r.out;
  // The launcher names the rank it lost and its host.
  EXPECT_NE(r.out.find("exited on signal 9"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("process rank "), std::string::npos) << r.out;
}

}  // namespace
}  // namespace nfsrdma::bench
