// Why: a review of the file benchmark found that (a) a write's latency
// included generating its buffer's verify pattern, which also capped write
// throughput at the fill rate (~30 Gb/s per job), (b) --rwmixread turned
// every profile into a mix (4k-randwrite did 70% reads) while compare kept
// only the profile's direction, and (c) a baseline compared cells measured
// at another iodepth, numjobs, block size, working set, runtime or direct
// and called the difference a regression. Each test fails without its fix.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "bench/BenchCommands.h"
#include "bench/compare/CompareMatrix.h"
#include "bench/file/FileJob.h"
#include "bench/report/Json.h"
#include "bench/file/FileRun.h"
#include "bench/file/Verify.h"
#include "tests/unit/bench/FieldReport.h"

namespace nfsrdma::bench {
namespace {

JobSpec jobSpec(const char* profile, std::uint32_t depth, std::uint64_t fileBytes) {
  JobSpec s;
  s.profile = profileByName(profile);
  s.options.ramp = std::chrono::milliseconds(0);
  s.options.ioBytes = fileBytes;
  s.iodepth = depth;
  s.files = {"f0"};
  s.fileBytes = fileBytes;
  return s;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// With --verify every write still gets the pattern, but the latency clock
// starts after it: with an instantly completing "device" the recorded
// latency is a small part of what next() spent preparing the 4 MiB buffer
// (before the fix, all of it: ~1 ms per 4 MiB).
TEST(FileJobFixes, WriteLatencyStartsAfterTheBufferIsFilled) {
  JobSpec s = jobSpec("4m-write", 1, 64ULL << 20);
  s.options.verify = true;
  JobDriver d(s, nullptr);
  d.start();
  IoRequest req;
  std::vector<double> prepare, sinceIssued;
  while (prepare.size() < 12) {
    const auto t0 = BenchClock::now();
    ASSERT_TRUE(d.next(0, req));
    const auto t1 = BenchClock::now();
    prepare.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
    sinceIssued.push_back(std::chrono::duration<double, std::micro>(t1 - req.issued).count());
    // The pattern is there: a --verify read of this block would pass.
    VerifyStats v;
    EXPECT_EQ(checkPattern(req.buf, s.options.seed, 0, req.offset, v), 0U);
    d.complete(req, req.buf.size(), "");
  }
  EXPECT_LT(median(sinceIssued), 0.25 * median(prepare))
      << "issued is stamped before the buffer is filled: median prepare " << median(prepare) << " us, since issued "
      << median(sinceIssued) << " us";
}

// Without --verify a write does not regenerate its block (as fio writes a
// buffer filled once): only the 32-byte header of each 4 KiB unit is
// restamped with the unit's offset and file. The data stays non-trivial
// and unique per unit, so neither compression of zeros nor block dedup can
// flatter a target, and a later --verify read says where it came from.
TEST(FileJobFixes, WritesWithoutVerifyReuseAFilledBufferWithUniqueUnits) {
  JobSpec s = jobSpec("128k-write", 2, 4ULL << 20);
  s.fileIdBase = 3;
  JobDriver d(s, nullptr);
  d.start();
  IoRequest a, b, c;
  ASSERT_TRUE(d.next(0, a));
  const std::vector<std::uint8_t> first(a.buf.begin(), a.buf.end());
  d.complete(a, a.buf.size(), "");
  ASSERT_TRUE(d.next(0, b));  // the same slot, the next block
  ASSERT_EQ(b.buf.data(), a.buf.data());
  ASSERT_NE(b.offset, a.offset);
  ASSERT_TRUE(d.next(1, c));
  // Per 4 KiB unit, everything past the 24 stamped bytes is what the buffer
  // was filled with once: the pattern (a function of the offset) would differ.
  for (std::size_t u = 0; u < first.size(); u += kVerifyUnit) {
    EXPECT_EQ(std::memcmp(first.data() + u + 24, b.buf.data() + u + 24, kVerifyUnit - 24), 0)
        << "unit " << u / kVerifyUnit << " regenerated per write";
  }
  // Unique units: within a block, between blocks, between slots.
  std::set<std::string> units;
  std::size_t zeros = 0;
  auto add = [&](const std::uint8_t* p, std::size_t n) {
    for (std::size_t u = 0; u < n; u += kVerifyUnit) {
      units.emplace(reinterpret_cast<const char*>(p + u), kVerifyUnit);
      zeros += static_cast<std::size_t>(std::count(p + u, p + u + kVerifyUnit, 0));
    }
  };
  add(first.data(), first.size());
  add(b.buf.data(), b.buf.size());
  add(c.buf.data(), c.buf.size());
  EXPECT_EQ(units.size(), 3 * first.size() / kVerifyUnit);
  EXPECT_LT(zeros, 3 * first.size() / 64);  // random-looking bytes, not a zero page
  // Stamped with its own place: a --verify read checks it by its checksum
  // and place, and finds a block at the wrong place or with a flipped byte.
  std::uint64_t offset = 0;
  std::uint32_t file = 0;
  std::memcpy(&offset, b.buf.data() + kVerifyUnit + 8, 8);
  std::memcpy(&file, b.buf.data() + kVerifyUnit + 16, 4);
  EXPECT_EQ(offset, b.offset + kVerifyUnit);
  EXPECT_EQ(file, 3U);
  VerifyStats v;
  EXPECT_EQ(checkPattern(b.buf, s.options.seed, 3, b.offset, v), 0U);
  EXPECT_EQ(v.unitsChecked, b.buf.size() / kVerifyUnit);
  VerifyStats misplaced;
  EXPECT_EQ(checkPattern(b.buf, s.options.seed, 3, b.offset + b.buf.size(), misplaced), b.buf.size() / kVerifyUnit);
  ASSERT_FALSE(misplaced.first.empty());
  EXPECT_EQ(misplaced.first.front().kind.rfind("misplaced block: intact data of file 3 offset ", 0), 0U)
      << misplaced.first.front().kind;
  std::vector<std::uint8_t> flipped(b.buf.begin(), b.buf.end());
  flipped[kVerifyUnit + 1000] ^= 0x40;
  VerifyStats corrupt;
  EXPECT_EQ(checkPattern(flipped, s.options.seed, 3, b.offset, corrupt), 1U);
  ASSERT_EQ(corrupt.first.size(), 1U);
  EXPECT_EQ(corrupt.first.front().kind, "payload corrupt (checksum mismatch)");
  EXPECT_EQ(corrupt.first.front().firstBadByte, b.offset + kVerifyUnit);  // no reference: the unit
  // The header words outside the checksum are checked too: a flipped seed
  // byte, or the same data read back under another seed, is found.
  std::vector<std::uint8_t> seedFlipped(b.buf.begin(), b.buf.end());
  seedFlipped[24] ^= 0x01;
  VerifyStats header;
  EXPECT_EQ(checkPattern(seedFlipped, s.options.seed, 3, b.offset, header), 1U);
  VerifyStats otherSeed;
  EXPECT_EQ(checkPattern(b.buf, s.options.seed + 1, 3, b.offset, otherSeed), b.buf.size() / kVerifyUnit);
}

// A mixed job without --verify keeps its write buffers apart from the read
// buffers, so reads do not replace the data writes send.
TEST(FileJobFixes, MixedJobWritesFromTheirOwnBuffers) {
  JobSpec s = jobSpec("randrw", 1, 4ULL << 20);
  JobDriver d(s, nullptr);
  d.start();
  IoRequest req;
  const std::uint8_t* readBuf = nullptr;
  const std::uint8_t* writeBuf = nullptr;
  for (int i = 0; i < 200 && d.next(0, req); ++i) {
    (req.op == IoDirection::Read ? readBuf : writeBuf) = req.buf.data();
    d.complete(req, req.buf.size(), "");
  }
  ASSERT_NE(readBuf, nullptr);
  ASSERT_NE(writeBuf, nullptr);
  EXPECT_NE(readBuf, writeBuf);
}

int readsOf(const char* profile, std::optional<unsigned> rwmixread, int ops) {
  JobSpec s = jobSpec(profile, 1, 8ULL << 20);
  s.options.rwmixread = rwmixread;
  s.options.ioBytes = std::uint64_t{4096} * static_cast<std::uint32_t>(ops);
  JobDriver d(s, nullptr);
  d.start();
  IoRequest req;
  int reads = 0;
  while (d.next(0, req)) {
    reads += req.op == IoDirection::Read;
    d.complete(req, req.buf.size(), "");
  }
  return reads;
}

TEST(FileJobFixes, RwmixreadSetsTheMixOfRandrwOnly) {
  EXPECT_EQ(readsOf("4k-randwrite", 70, 1000), 0);
  EXPECT_EQ(readsOf("4k-randread", 70, 1000), 1000);
  const int mixed = readsOf("randrw", 70, 1000);
  EXPECT_GT(mixed, 620);
  EXPECT_LT(mixed, 780);
  // randrw:N keeps the mix its name says.
  const int named = readsOf("randrw:30", 70, 1000);
  EXPECT_GT(named, 230);
  EXPECT_LT(named, 370);
}

std::string rwmixError(const FileOptions& o, const std::vector<FileProfile>& profiles) {
  try {
    validateRwmixread(o, profiles);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(FileJobFixes, RwmixreadWithoutRandrwIsRefused) {
  FileOptions o;
  EXPECT_EQ(rwmixError(o, {profileByName("4k-randwrite")}), "");  // not given
  o.rwmixread = 70;
  EXPECT_EQ(rwmixError(o, {profileByName("4k-randwrite")}),
            "--rwmixread 70 sets the read percent of the randrw profile only, and the profile is 4k-randwrite: run "
            "randrw with --rwmixread 70 (or randrw:70), or drop --rwmixread");
  EXPECT_NE(rwmixError(o, {profileByName("randrw:30")}).find("its mix is in the name"), std::string::npos);
  EXPECT_EQ(rwmixError(o, {profileByName("randrw")}), "");
  EXPECT_EQ(rwmixError(o, fileProfiles()), "");  // compare's default set holds randrw
  EXPECT_NE(rwmixError(o, {profileByName("4k-randread"), profileByName("4m-write")})
                .find("the profiles are 4k-randread, 4m-write"),
            std::string::npos);
  // `file` refuses it before it runs anything (the target does not exist).
  std::vector<std::string> args = {"file", "--profile", "4k-randwrite", "--rwmixread", "70",
                                   "--target", "path:/nonexistent-nfsrdma-dir"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  ::testing::internal::CaptureStderr();
  const int rc = runFileCommand(static_cast<int>(argv.size()), argv.data());  // argv[0]: the subcommand
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(rc, 1);
  EXPECT_NE(err.find("--rwmixread 70 sets the read percent of the randrw profile only"), std::string::npos) << err;
}

// Rerun at iodepth 1 against a baseline at 128: not a -50% regression.
TEST(FileJobFixes, BaselineComparesOnlyCellsMeasuredUnderTheSameConditions) {
  const CompareReport before = testing::fieldNotesReport();
  CompareReport now = testing::fieldNotesReport();
  CompareCell* c = now.cell("4k-randread", IoDirection::Read, "nfs-tcp");
  c->iodepth = 1;
  c->mibPerSecond *= 0.5;
  c->iops *= 0.5;
  CompareCell* same = now.cell("4k-randread", IoDirection::Read, "local");
  same->mibPerSecond *= 0.5;  // same conditions: still a regression
  applyBaseline(now, before, "before.json", 10);
  EXPECT_FALSE(c->regression);
  EXPECT_FALSE(c->baselineMibPerSecond);
  EXPECT_EQ(c->baselineConfigChange, "iodepth 128 -> 1");
  EXPECT_TRUE(same->regression);
  EXPECT_EQ(now.regressions(), 1U);
  const std::string text = formatCompareText(now);
  EXPECT_NE(text.find("config changed (iodepth 128 -> 1)"), std::string::npos) << text;
  EXPECT_EQ(text.find("REGRESSION 4k-randread read nfs-tcp"), std::string::npos) << text;
  EXPECT_NE(text.find("REGRESSION 4k-randread read local"), std::string::npos) << text;

  // Every condition is named; runtime and direct come from the run's banner.
  CompareReport before2 = testing::fieldNotesReport();
  CompareReport now2 = testing::fieldNotesReport();
  before2.config = {{"workload", "per job 64 MiB in 1 file(s), numjobs 1, iodepth 8, 2.0 s time-based after a 0.3 s ramp, "
                                 "seed 1"},
                    {"direct", "O_DIRECT for path targets; NFS targets bypass the client's cache by design"}};
  now2.config = {{"workload", "per job 64 MiB in 1 file(s), numjobs 1, iodepth 8, 1 GiB per job after a 0.3 s ramp, "
                              "seed 1"},
                 {"direct", "buffered"}};
  CompareCell* d = now2.cell("128k-read", IoDirection::Read, "nfs-rdma");
  d->blockSize = 65536;
  d->numjobs = 4;
  d->workingSetBytes *= 2;
  applyBaseline(now2, before2, "before.json", 10);
  EXPECT_EQ(d->baselineConfigChange,
            "block 128 KiB -> 64 KiB, numjobs 128 -> 4, working set 12.5 GiB -> 25 GiB, runtime 2.0 s -> 1 GiB per job, "
            "direct 1 -> 0");
  const CompareCell* other = now2.cell("4m-read", IoDirection::Read, "local");
  EXPECT_EQ(other->baselineConfigChange, "runtime 2.0 s -> 1 GiB per job, direct 1 -> 0");
  EXPECT_EQ(now2.regressions(), 0U);
}

// A read cell that started cold is not compared with one that started warm
// (nor with a baseline that did not record it), and a write figure that
// counts its COMMIT is not compared with one from before it did.
TEST(FileJobFixes, BaselineNamesCacheStateAndCommitCounting) {
  CompareReport before = testing::fieldNotesReport();
  CompareReport now = testing::fieldNotesReport();
  before.cell("4k-randread", IoDirection::Read, "nfs-tcp")->serverCache = "dropped";
  now.cell("4k-randread", IoDirection::Read, "nfs-tcp")->serverCache = "warm";
  now.cell("4k-randread", IoDirection::Read, "local")->serverCache = "warm";  // baseline: unrecorded
  CompareCell* write = nullptr;
  for (auto& c : now.cells) {
    if (c.direction == IoDirection::Write && c.ran && write == nullptr) write = &c;
  }
  ASSERT_NE(write, nullptr);
  before.cell(write->profile, IoDirection::Write, write->target)->commitCounted = false;
  applyBaseline(now, before, "before.json", 10);
  EXPECT_EQ(now.cell("4k-randread", IoDirection::Read, "nfs-tcp")->baselineConfigChange, "server cache dropped -> warm");
  EXPECT_EQ(now.cell("4k-randread", IoDirection::Read, "local")->baselineConfigChange,
            "server cache unrecorded -> warm");
  EXPECT_EQ(write->baselineConfigChange, "commit counted no -> yes");
  EXPECT_FALSE(write->baselineMibPerSecond);
}

// Why: the read-back of a --verify write run could not fail for a write the
// target acknowledged and dropped, because every write stored the same
// bytes the layout had put there. The run's generation makes them differ;
// the job records what it wrote and the read-back holds those blocks to it.
TEST(FileJobFixes, VerifyReadBackFindsAWriteThatWasAcknowledgedButLost) {
  JobSpec w = jobSpec("4k-randwrite", 1, 1ULL << 20);
  w.options.verify = true;
  w.generation = 0x5EED;
  JobDriver writer(w, nullptr);
  writer.start();
  IoRequest req;
  ASSERT_TRUE(writer.next(0, req));
  const std::vector<std::uint8_t> written(req.buf.begin(), req.buf.end());
  const std::uint64_t offset = req.offset;
  writer.complete(req, req.buf.size(), "");
  const JobResult wr = writer.result();
  ASSERT_EQ(wr.writtenBlocks.size(), 256U);
  EXPECT_EQ(std::count(wr.writtenBlocks.begin(), wr.writtenBlocks.end(), true), 1);
  EXPECT_TRUE(wr.writtenBlocks[offset / 4096]);

  JobSpec r = jobSpec("4k-randread", 1, 1ULL << 20);
  r.profile.random = false;
  r.options.verify = true;
  r.generation = w.generation;
  r.writtenBlocks = std::make_shared<const std::vector<bool>>(wr.writtenBlocks);
  // The read-back of a target that returns the layout's data everywhere but
  // at the written block, where it returns what was written if it kept it.
  const auto readBack = [&](bool kept) {
    JobDriver reader(r, nullptr);
    reader.start();
    for (int i = 0; i < 256; ++i) {
      if (!reader.next(0, req)) {
        ADD_FAILURE() << "the read-back issued only " << i << " of 256 reads";
        break;
      }
      if (kept && req.offset == offset) {
        std::memcpy(req.buf.data(), written.data(), written.size());
      } else {
        fillPattern(req.buf, r.options.seed, 0, req.offset);
      }
      reader.complete(req, req.buf.size(), "");
    }
    return reader.result();
  };
  const JobResult dropped = readBack(false);
  EXPECT_EQ(dropped.verify.mismatches, 1U);
  ASSERT_EQ(dropped.verify.first.size(), 1U);
  EXPECT_EQ(dropped.verify.first[0].offset, offset);
  EXPECT_EQ(dropped.verify.first[0].kind.rfind("stale:", 0), 0U) << dropped.verify.first[0].kind;
  EXPECT_EQ(readBack(true).verify.mismatches, 0U);
}

// Why: requests in flight when the ramp ended were left out of the results
// although they completed inside the measured window (about one latency's
// worth of operations per run short, 6% in a review's short 4m-read runs).
// fio counts every completion after ramp_time.
TEST(FileJobFixes, ARequestInFlightAtTheEndOfTheRampCountsWhenItCompletesAfter) {
  JobSpec s = jobSpec("4k-randread", 2, 1ULL << 20);
  s.options.ioBytes = 0;
  s.options.runtime = std::chrono::seconds(5);
  s.options.ramp = std::chrono::milliseconds(30);
  JobDriver d(s, nullptr);
  d.start();
  IoRequest early, late;
  ASSERT_TRUE(d.next(0, early));
  EXPECT_FALSE(early.measured);
  d.complete(early, early.buf.size(), "");  // before the ramp ends: not counted
  ASSERT_TRUE(d.next(1, late));
  EXPECT_FALSE(late.measured);
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  d.complete(late, late.buf.size(), "");  // issued in the ramp, completed after it
  const JobResult r = d.result();
  EXPECT_EQ(r.dir[static_cast<int>(IoDirection::Read)].ops, 1U);
  EXPECT_EQ(r.dir[static_cast<int>(IoDirection::Read)].bytes, 4096U);
}

// Why: with --rwmixread 100 or 0, randrw's jobs did only one direction but
// every other decision followed randrw's default 80% mix: an empty write
// row and a commit after a read-only run, libnfs refused as a writer.
JsonValue fileJson(const std::string& dir, const char* mix) {
  std::vector<std::string> args = {
      "file",        "--profile", "randrw", "--rwmixread", mix, "--target",
      "path:" + dir, "--runtime", "0.2",    "--ramp",      "0", "--size",
      "1m",          "--direct",  "0",      "--json",      "-"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  const int rc = runFileCommand(static_cast<int>(argv.size()), argv.data());
  const std::string out = ::testing::internal::GetCapturedStdout();
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(rc, 0) << err;
  return parseJson(out);
}

TEST(FileJobFixes, RandrwWithAOneSidedMixIsRunAndReportedOneSided) {
  const std::string dir =
      std::filesystem::temp_directory_path() / ("nfsrdma-mix-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const JsonValue reads = fileJson(dir, "100");
  const JsonValue* r = reads.find("result");
  ASSERT_NE(r, nullptr);
  EXPECT_TRUE(r->find("read") && r->find("read")->isObject());
  EXPECT_TRUE(r->find("write") == nullptr || r->find("write")->kind == JsonValue::Kind::Null);
  EXPECT_EQ(r->num("commit_s"), 0);
  const JsonValue writes = fileJson(dir, "0");
  const JsonValue* w = writes.find("result");
  ASSERT_NE(w, nullptr);
  EXPECT_TRUE(w->find("write") && w->find("write")->isObject());
  EXPECT_TRUE(w->find("read") == nullptr || w->find("read")->kind == JsonValue::Kind::Null);
  // libnfs cannot write: a read-only randrw is not refused for it.
  TargetSpec libnfs;
  libnfs.engine = EngineKind::Libnfs;
  FileOptions o;
  o.rwmixread = 100;
  EXPECT_EQ(unsupportedReason(libnfs, profileAsRun(profileByName("randrw"), o)), "");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace nfsrdma::bench
