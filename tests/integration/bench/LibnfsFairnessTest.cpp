// The libnfs column is what libnfs itself can do. On the client tests'
// nfs-ganesha (its default maximum I/O, as the quick start's), the file
// benchmark's libnfs column must reach, within noise, what the anchor's
// libnfs row (the same engine as the anchor runs it: no ramp, one job)
// reaches with the same block size, queue depth, file and cache state. Each side runs five times,
// alternating, and the median of the five back-to-back ratios is compared: the two runs of a round
// share the host's load of the moment, so a burst that lifts one run of one side (a best-of-each
// once read 1.53x on a machine busy with builds, where the rounds' own ratios were 1.53, 1.07,
// 0.92) moves one ratio, not the verdict. A handicapped engine (a request split into 4 KiB RPCs
// once made it 0.08x) is far outside any noise of a warm loopback read.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "bench/anchor/AnchorRuns.h"
#include "bench/file/FileRun.h"
#include "client/Client.h"
#include "tests/integration/client/GaneshaFixture.h"

namespace nfsrdma::bench {
namespace {

using nfsrdma::testing::GaneshaEnvironment;

constexpr std::chrono::milliseconds kRun{1500};
constexpr int kRounds = 5;
// The band a warm loopback read on this 2-core host stays in from run to
// run (both sides share two cores with the server and with each other's
// leftovers): 4 MiB reads at QD2 have differed by up to 1.4x between runs
// of one tool. Below it the engine is slower than libnfs, above it the
// anchor is.
constexpr double kLowest = 0.67;
constexpr double kHighest = 1.5;

std::string exportUrl() {
  return "nfs://127.0.0.1:" + std::to_string(GaneshaEnvironment::get().port()) + "/export";
}

FileOptions fairnessOptions() {
  FileOptions o;
  o.sizeBytes = 64ULL << 20;
  o.runtime = kRun;
  o.ramp = std::chrono::milliseconds(200);
  o.seed = 26;
  return o;
}

struct Pair {
  double column = 0;  // the file benchmark's libnfs engine, MiB/s
  double anchor = 0;  // the anchor's libnfs row, MiB/s
};

struct Rounds {
  Pair median;       // the round whose ratio is the median
  double ratio = 0;  // its column / anchor
};

Rounds medianOfRounds(const FileProfile& p) {
  const FileOptions o = fairnessOptions();
  const TargetSpec t = TargetSpec::parse("libnfs", "libnfs:" + exportUrl());
  ReadWorkload w;
  w.name = p.name;
  w.blockSize = p.blockSize;
  w.queueDepth = p.defaultIodepth;
  w.random = p.random;
  w.fileSize = fileBytes(o, p.blockSize);
  w.runtime = kRun;
  std::vector<Pair> rounds;
  for (int round = 0; round < kRounds; ++round) {
    // The first file run lays the file out: both then read it warm.
    const RunResult r = runFileBenchmark(t, p, o);
    EXPECT_EQ(r.errors, 0U) << r.firstError;
    const ReadMeasurement m =
        runLibnfsReads(ClientOptions::fromUrl(exportUrl()), benchFileName(o, 0, 0), w);
    EXPECT_EQ(m.error, "");
    std::printf("libnfs fairness %-9s round %d: column %8.1f MiB/s, anchor %8.1f MiB/s\n",
                p.name.c_str(), round + 1, r.mibPerSecond(IoDirection::Read), m.mibPerSecond());
    rounds.push_back({r.mibPerSecond(IoDirection::Read), m.mibPerSecond()});
    if (!(m.mibPerSecond() > 0)) return {};  // a failed anchor run: no ratio to take
  }
  const auto ratioOf = [](const Pair& x) { return x.column / x.anchor; };
  std::sort(rounds.begin(), rounds.end(),
            [&](const Pair& a, const Pair& b) { return ratioOf(a) < ratioOf(b); });
  const Pair& mid = rounds[rounds.size() / 2];
  return {mid, ratioOf(mid)};
}

TEST(LibnfsFairness, TheLibnfsColumnReachesWhatTheAnchorsLibnfsRowReaches) {
  NFSRDMA_NEED_GANESHA();
  for (const char* name : {"128k-read", "4m-read"}) {
    SCOPED_TRACE(name);
    const FileProfile p = profileByName(name);
    const Rounds r = medianOfRounds(p);
    ASSERT_GT(r.median.anchor, 0);
    std::printf(
        "libnfs fairness %-9s bs %7u QD %2u: file-bench libnfs column %8.1f MiB/s, anchor libnfs "
        "row "
        "%8.1f MiB/s, ratio %.2f (median round of %d)\n",
        name, p.blockSize, p.defaultIodepth, r.median.column, r.median.anchor, r.ratio, kRounds);
    EXPECT_GE(r.ratio, kLowest);
    EXPECT_LE(r.ratio, kHighest);
  }
}

}  // namespace
}  // namespace nfsrdma::bench
