// Why: a review of `nfsrdma-bench file` / `compare` found that (1) the nfs
// engine kept at most 32 requests on the wire whatever --iodepth said, (2) a
// typo in --size could fill a disk, and huge buffers were not refused, (3)
// Ctrl-C left the file set and the embedded server's directory behind, (4)
// a baseline compared runs of another --rwmixread, --verify, ramp or target,
// (5) `file` said nothing of the server's page cache and recorded a failed
// drop as done, (6) jobs started their clocks one after another, (7) sizes
// parsed loosely with errors that did not name the option, (8) `compare
// --json -` wrote a file named '-', (9) --io-bytes overshot by a block, (10)
// a failed fsync made the path engine close fds twice, and (11) the HTML
// called the submission-to-completion latency "completion latency". Each
// test fails without its fix.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <boost/program_options.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "bench/BenchCommands.h"
#include "bench/compare/CompareConditions.h"
#include "bench/compare/CompareMatrix.h"
#include "bench/file/FileCli.h"
#include "bench/file/FileJob.h"
#include "bench/report/Json.h"
#include "bench/file/FileReport.h"
#include "bench/file/FileRun.h"
#include "bench/compare/HtmlReport.h"
#include "tests/unit/bench/CommandCapture.h"
#include "tests/unit/bench/FieldReport.h"
#include "tests/unit/bench/ScratchDir.h"

namespace nfsrdma::bench {
namespace {

namespace fs = std::filesystem;

using testing::ScratchDir;

using testing::CommandResult;
using testing::runCommand;

std::string errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

// 1. The session is asked for the slots the iodepth needs, unless the URL
// set qd=; what the server granted shows as effective_iodepth.
TEST(FileReviewFixes, NfsTargetsAskForTheSlotsTheIodepthNeeds) {
  const TargetSpec plain = TargetSpec::parse("", "nfs:nfs://127.0.0.1/export");
  EXPECT_FALSE(plain.nfs.givenQueueDepth.has_value());
  EXPECT_EQ(plain.nfs.queueDepth, 32U);
  EXPECT_EQ(withQueueDepthFor(plain, 128, 4096).nfs.queueDepth, 128U);
  EXPECT_EQ(withQueueDepthFor(plain, 8, 4096).nfs.queueDepth, 32U);  // at least, never fewer
  // A 4 MiB request goes out as four 1 MiB READs, each on its own slot.
  EXPECT_EQ(withQueueDepthFor(plain, 16, 4U << 20).nfs.queueDepth, 64U);
  EXPECT_EQ(withQueueDepthFor(plain, 1024, 4U << 20).nfs.queueDepth, 1024U);  // qd='s range
  const TargetSpec given = TargetSpec::parse("", "nfs:nfs://127.0.0.1/export?proto=tcp&qd=16");
  EXPECT_TRUE(given.nfs.givenQueueDepth.has_value());
  EXPECT_EQ(withQueueDepthFor(given, 128, 4096).nfs.queueDepth, 16U);
  const TargetSpec path = TargetSpec::parse("", "path:/tmp");
  EXPECT_EQ(withQueueDepthFor(path, 128, 4096).nfs.queueDepth, path.nfs.queueDepth);

  RunResult r;
  r.target = "nfs-tcp";
  r.profile = "4k-randread";
  r.blockSize = 4096;
  r.iodepth = 128;
  r.effectiveIodepth = 64;
  r.numjobs = 1;
  EXPECT_NE(formatRunText(r).find("iodepth=128 (effective 64)"), std::string::npos)
      << formatRunText(r);
  JsonWriter w;
  writeRunJson(w, r);
  const JsonValue doc = parseJson(w.str());
  EXPECT_EQ(doc.num("iodepth"), 128);
  EXPECT_EQ(doc.num("effective_iodepth"), 64);
  CompareCell c = cellsOf(r, profileByName("4k-randread")).at(0);
  EXPECT_EQ(c.effectiveIodepth, 64U);
}

// 2. The free space of the target directory, the file-set cap and the
// buffer memory are checked before anything is written or allocated.
TEST(FileReviewFixes, FreeSpaceIsCheckedBeforeTheLayout) {
  ScratchDir dir("review-space");
  FileOptions o;
  o.sizeBytes = 8ULL << 20;
  o.numjobs = 2;
  EXPECT_EQ(bytesToLayOut(dir.str(), o), 16ULL << 20);
  {
    // A file that already holds its full size needs nothing; a short one the rest.
    std::ofstream(dir.path() / benchFileName(o, 0, 0)) << std::string(8U << 20, 'x');
    std::ofstream(dir.path() / benchFileName(o, 1, 0)) << std::string(1U << 20, 'x');
  }
  EXPECT_EQ(bytesToLayOut(dir.str(), o), 7ULL << 20);

  const std::string e =
      errorOf([&] { checkFreeSpace(o, "/d", 16ULL << 20, 40ULL << 20, 1ULL << 30); });
  EXPECT_EQ(e,
            "--size 8 MiB x 2 jobs in 1 file each = 16 MiB file set (16 MiB still to write) "
            "exceeds the free space "
            "of /d (40 MiB free, 64 MiB kept spare)");
  EXPECT_EQ(errorOf([&] { checkFreeSpace(o, "/d", 16ULL << 20, 1ULL << 30, 1ULL << 30); }), "");
  EXPECT_EQ(errorOf([&] { checkFreeSpace(o, "/d", 0, 0, 1ULL << 30); }), "");  // all there already

  // End to end on this disk: refused before a byte is written.
  struct statvfs st {};
  ASSERT_EQ(::statvfs(dir.str().c_str(), &st), 0);
  const std::uint64_t freeBytes = static_cast<std::uint64_t>(st.f_bavail) * st.f_frsize;
  if (freeBytes > (4ULL << 40)) GTEST_SKIP() << "more than 4 TiB free: an 8 TiB file set would fit";
  FileOptions huge;
  huge.sizeBytes = 8ULL << 40;
  huge.runtime = std::chrono::milliseconds(100);
  huge.direct = false;
  TargetSpec t = TargetSpec::parse("here", "path:" + dir.str());
  t.direct = false;
  const std::size_t before = dir.files();
  const std::string big = errorOf([&] { runFileBenchmark(t, profileByName("4k-randread"), huge); });
  EXPECT_NE(big.find("--size 8 TiB x 1 job in 1 file each = 8 TiB file set"), std::string::npos)
      << big;
  EXPECT_NE(big.find("exceeds the free space of " + dir.str()), std::string::npos) << big;
  EXPECT_EQ(dir.files(), before);
}

TEST(FileReviewFixes, HugeFileSetsAndBuffersAreRefused) {
  const FileProfile p = profileByName("4m-read");
  FileOptions o;
  o.sizeBytes = 1000000000000000000ULL;  // the parser's limit; x 256 jobs overflows 64 bits
  o.numjobs = 256;
  const std::string cap = errorOf([&] { validateOptions(o, p); });
  EXPECT_NE(cap.find(" jobs = "), std::string::npos) << cap;
  EXPECT_NE(cap.find("above the 16 TiB a file set may have"), std::string::npos) << cap;

  FileOptions b;
  b.iodepth = 1024;
  b.numjobs = 64;
  EXPECT_EQ(bufferBytes(b, p), 256ULL << 30);
  const std::string mem = errorOf([&] { validateBufferMemory(b, p, 8ULL << 30); });
  EXPECT_EQ(mem,
            "--iodepth 1024 x 4 MiB blocks (4m-read) x --numjobs 64 needs 256 GiB of I/O buffers, "
            "more than 3/4 of "
            "this host's 8 GiB MemAvailable: lower --iodepth or --numjobs");
  EXPECT_EQ(errorOf([&] { validateBufferMemory(FileOptions{}, p, 8ULL << 30); }), "");
  EXPECT_EQ(errorOf([&] { validateBufferMemory(b, p, std::nullopt); }), "");
  // A mix without --verify keeps write buffers apart from the read buffers.
  FileOptions m;
  EXPECT_EQ(bufferBytes(m, profileByName("randrw")), 2ULL * 32 * 4096);
  m.verify = true;
  EXPECT_EQ(bufferBytes(m, profileByName("randrw")), 32ULL * 4096);
  ASSERT_TRUE(memAvailableBytes().has_value());
  EXPECT_GT(*memAvailableBytes(), 0U);
}

// 3. SIGINT stops the jobs at their next request; the command removes the
// file set it laid out and exits 130 with one line.
TEST(FileReviewFixes, AnInterruptStopsTheJobsAtTheirNextRequest) {
  clearInterrupt();
  JobSpec s;
  s.profile = profileByName("4k-randread");
  s.options.ramp = std::chrono::milliseconds(0);
  s.options.runtime = std::chrono::seconds(30);
  s.iodepth = 1;
  s.files = {"f0"};
  s.fileBytes = 1 << 20;
  JobDriver d(s, nullptr);
  d.start();
  IoRequest req;
  ASSERT_TRUE(d.next(0, req));
  d.complete(req, req.buf.size(), "");
  const auto far = d.hardStop();
  requestInterrupt(SIGTERM);
  EXPECT_EQ(interruptSignal(), SIGTERM);
  EXPECT_FALSE(d.next(0, req));
  EXPECT_LT(d.hardStop(), far);  // stragglers get a short grace, not the run's
  EXPECT_LE(d.hardStop(), BenchClock::now() + std::chrono::seconds(10));
  clearInterrupt();
  EXPECT_EQ(signalName(SIGINT), "SIGINT");
  EXPECT_EQ(signalName(SIGTERM), "SIGTERM");
}

TEST(FileReviewFixes, CtrlCRemovesTheLaidOutFileSetAndExits130) {
  ScratchDir dir("review-sigint");
  const auto t0 = std::chrono::steady_clock::now();
  std::thread killer([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(700));
    ::kill(::getpid(), SIGINT);
  });
  const CommandResult r =
      runCommand(runFileCommand,
                 {"file", "--profile", "4k-randread", "--target", "path:" + dir.str(), "--size",
                  "4m", "--nrfiles", "2", "--direct", "0", "--ramp", "0", "--runtime", "20"});
  killer.join();
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(r.rc, 130) << r.err;
  EXPECT_NE(
      r.err.find("nfsrdma-bench file: interrupted by SIGINT; removed the 2 file(s) it laid out"),
      std::string::npos)
      << r.err;
  EXPECT_EQ(dir.files(), 0U);
  EXPECT_LT(secs, 10);
  EXPECT_EQ(interruptSignal(), 0);  // the handlers are gone with the command
  struct sigaction now {};
  ::sigaction(SIGINT, nullptr, &now);
  EXPECT_EQ(now.sa_handler, SIG_DFL);
}

// 4. A baseline of another mix, verify, ramp or target is another test.
TEST(FileReviewFixes, BaselineComparesMixVerifyRampAndTarget) {
  auto withRandrw = [](unsigned readPercent) {
    CompareReport r = testing::fieldNotesReport();
    r.config = {
        {"workload",
         "per job 64 MiB in 1 file(s), numjobs 1, iodepth 32, 2.0 s time-based after a 0.3 s "
         "ramp, seed 1"},
        {"server", "given with --target"}};
    r.rows.emplace_back("randrw", IoDirection::Read);
    CompareCell c = *r.cell("4k-randread", IoDirection::Read, "nfs-tcp");
    c.profile = "randrw";
    c.readPercent = readPercent;
    r.cells.push_back(c);
    return r;
  };
  const CompareReport before = withRandrw(80);
  CompareReport now = withRandrw(70);
  CompareCell* c = now.cell("randrw", IoDirection::Read, "nfs-tcp");
  c->mibPerSecond *= 0.5;  // the mix explains it: not a regression
  applyBaseline(now, before, "before.json", 10);
  EXPECT_EQ(c->baselineConfigChange, "mix 80/20 -> 70/30");
  EXPECT_FALSE(c->regression);
  EXPECT_EQ(now.regressions(), 0U);
  EXPECT_EQ(rowName(now, "randrw"), "randrw(70/30)");
  EXPECT_EQ(rowName(now, "4k-randread"), "4k-randread");
  const std::string text = formatCompareText(now);
  EXPECT_NE(text.find("| randrw(70/30) | read"), std::string::npos) << text;
  EXPECT_NE(
      text.find("not compared, config changed: randrw(70/30) read nfs-tcp: mix 80/20 -> 70/30"),
      std::string::npos)
      << text;
  EXPECT_NE(renderHtmlReport(now).find("randrw(70/30)"), std::string::npos);
  // Saved and read back with the mix.
  const CompareReport back = compareFromJson(parseJson(compareToJson(now)));
  ASSERT_NE(back.cell("randrw", IoDirection::Read, "nfs-tcp"), nullptr);
  EXPECT_EQ(back.cell("randrw", IoDirection::Read, "nfs-tcp")->readPercent, 70U);
  // A baseline that did not record randrw's mix cannot vouch for it; a pure
  // profile's name says its mix.
  CompareReport unrecorded = withRandrw(80);
  for (auto& x : unrecorded.cells) x.readPercent.reset();
  CompareReport same = withRandrw(80);
  applyBaseline(same, unrecorded, "before.json", 10);
  EXPECT_EQ(same.cell("randrw", IoDirection::Read, "nfs-tcp")->baselineConfigChange,
            "mix unrecorded -> 80/20");
  EXPECT_EQ(same.cell("4k-randread", IoDirection::Read, "nfs-tcp")->baselineConfigChange, "");

  // Verify, ramp and the target.
  CompareReport later = withRandrw(80);
  later.config[0].second =
      "per job 64 MiB in 1 file(s), numjobs 1, iodepth 32, 2.0 s time-based after a 1.0 s ramp, "
      "seed 1";
  later.cell("4k-randread", IoDirection::Read, "local")->verified = true;
  later.targets[2].description = "NFS over TCP to another server";
  applyBaseline(later, before, "before.json", 10);
  EXPECT_EQ(later.cell("4k-randread", IoDirection::Read, "local")->baselineConfigChange,
            "verify off -> on, ramp 0.3 s -> 1.0 s");
  EXPECT_EQ(later.cell("4k-randread", IoDirection::Read, "nfs-tcp")->baselineConfigChange,
            "ramp 0.3 s -> 1.0 s, target NFS over TCP -> NFS over TCP to another server");
  // The embedded server's targets change port and directory every run.
  CompareReport e1 = withRandrw(80), e2 = withRandrw(80);
  e1.config[1].second =
      "nfs-ganesha on 127.0.0.1:40001 (started for this run), exporting /var/tmp/a as /export";
  e2.config[1].second =
      "nfs-ganesha on 127.0.0.1:40002 (started for this run), exporting /var/tmp/b as /export";
  e2.targets[0].description = "path /var/tmp/b (O_DIRECT, io_uring)";
  applyBaseline(e2, e1, "before.json", 10);
  EXPECT_EQ(e2.cell("4k-randread", IoDirection::Read, "local")->baselineConfigChange, "");

  // compare's cells carry the mix the profile ran with.
  FileOptions o;
  o.rwmixread = 70;
  RunResult r;
  r.target = "nfs-tcp";
  const auto cells = cellsOf(r, profileAsRun(profileByName("randrw"), o));
  ASSERT_EQ(cells.size(), 2U);
  EXPECT_EQ(cells[0].readPercent, 70U);
}

// 5. and 9. `file` says what it knows of the server's page cache, and
// --io-bytes is whole blocks.
JsonValue fileJson(const std::string& dir, const char* profile = "4k-randread") {
  const CommandResult r = runCommand(
      runFileCommand, {"file", "--profile", profile, "--target", "path:" + dir, "--runtime", "0.1",
                       "--ramp", "0", "--size", "1m", "--direct", "0", "--json", "-"});
  EXPECT_EQ(r.rc, 0) << r.err;
  return parseJson(r.out);
}

TEST(FileReviewFixes, FileSaysWhatItKnowsOfTheServersCache) {
  ScratchDir dir("review-cache");
  const JsonValue first = fileJson(dir.str());
  const JsonValue* r = first.find("result");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->str("server_cache"),
            "unmanaged: the file set was just written and may be in this host's page cache");
  bool noted = false;
  for (const auto& n : r->find("notes")->array)
    noted = noted || n.string.find("server cache unmanaged") == 0;
  EXPECT_TRUE(noted);
  const JsonValue second = fileJson(dir.str());
  EXPECT_EQ(second.find("result")->str("server_cache"),
            "unmanaged: as earlier runs left it; the file set may be in the host's page cache");
  const JsonValue writes = fileJson(dir.str(), "4k-randwrite");
  EXPECT_EQ(writes.find("result")->str("server_cache"), "n/a: no reads");
}

TEST(FileReviewFixes, IoBytesAreWholeBlocksPerJob) {
  auto issued = [](const char* profile, std::uint64_t ioBytes) {
    JobSpec s;
    s.profile = profileByName(profile);
    s.options.ramp = std::chrono::milliseconds(0);
    s.options.ioBytes = ioBytes;
    s.iodepth = 2;
    s.files = {"f0"};
    s.fileBytes = 64ULL << 20;
    JobDriver d(s, nullptr);
    d.start();
    IoRequest req;
    std::uint64_t bytes = 0;
    for (int i = 0; i < 100000 && d.next(0, req); ++i) {
      bytes += req.buf.size();
      d.complete(req, req.buf.size(), "");
    }
    return bytes;
  };
  EXPECT_EQ(issued("4m-write", 10ULL << 20), 8ULL << 20);
  EXPECT_EQ(issued("4k-randread", 10000), 8192U);
  EXPECT_EQ(issued("4k-randread", 5000), 4096U);
  EXPECT_EQ(issued("128k-read", 1ULL << 20), 1ULL << 20);
  FileOptions o;
  o.ioBytes = 3000;
  EXPECT_EQ(errorOf([&] { validateOptions(o, profileByName("4k-randread")); }),
            "--io-bytes 2.93 KiB is less than one 4 KiB block of 4k-randread (it is rounded down "
            "to whole blocks "
            "per job)");
  o.ioBytes = 10ULL << 20;
  EXPECT_EQ(ioBytesPerJob(o, 4U << 20), 8ULL << 20);
}

// 6. Every job's clock starts after every job's setup; a failed setup
// releases the others instead of leaving them waiting.
TEST(FileReviewFixes, JobsStartTogetherAndAFailedSetupReleasesTheOthers) {
  {
    StartGate gate(3, std::chrono::seconds(10));
    std::vector<BenchClock::time_point> released(3);
    std::vector<std::thread> threads;
    for (int j = 0; j < 3; ++j) {
      threads.emplace_back([&, j] {
        std::this_thread::sleep_for(
            std::chrono::milliseconds(100 * j));  // setups of different lengths
        EXPECT_TRUE(gate.arriveAndWait());
        released[static_cast<std::size_t>(j)] = BenchClock::now();
      });
    }
    for (auto& t : threads) t.join();
    for (const auto& r : released) {
      EXPECT_GE(r - released[0], std::chrono::milliseconds(-50));
      EXPECT_LE(r - released[0], std::chrono::milliseconds(50));
    }
  }
  {
    StartGate gate(3, std::chrono::seconds(30));
    const auto t0 = BenchClock::now();
    std::thread waiter([&] { EXPECT_FALSE(gate.arriveAndWait()); });
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    gate.fail();
    waiter.join();
    EXPECT_LT(BenchClock::now() - t0, std::chrono::seconds(5));
    EXPECT_FALSE(gate.arriveAndWait());  // a late job does not wait either
  }
  {
    StartGate gate(2, std::chrono::milliseconds(300));
    EXPECT_EQ(errorOf([&] { gate.arriveAndWait(); }),
              "1 job(s) not ready (connected and opened) within 0.3 s of the first");
  }
  {
    StartGate gate(2, std::chrono::seconds(30));
    requestInterrupt(SIGINT);
    EXPECT_FALSE(gate.arriveAndWait());
    clearInterrupt();
  }
}

// 7. Sizes: the whole text, errors naming the option and the form.
TEST(FileReviewFixes, SizesParseStrictlyAndErrorsNameTheOption) {
  EXPECT_EQ(parseSize("64m", "--size"), 64ULL << 20);
  EXPECT_EQ(parseSize("1.5g", "--size"), 3ULL << 29);
  EXPECT_EQ(parseSize("64 MiB", "--size"), 64ULL << 20);
  EXPECT_EQ(parseSize("4096", "--size"), 4096U);
  EXPECT_EQ(errorOf([] { parseSize("4x", "--io-bytes"); }),
            "--io-bytes '4x': unknown unit 'x'; expected a number with an optional unit k, m, g or "
            "t (binary "
            "multiples), e.g. 4096, 64m, 1.5g");
  for (const char* bad : {".", "1.2.3m", "", "m", "-1m", "1.m", "1m2", "1 m b"}) {
    const std::string e = errorOf([&] { parseSize(bad, "--size"); });
    EXPECT_EQ(e.rfind(std::string("--size '") + bad + "': ", 0), 0U) << bad << ": " << e;
  }
  WorkloadArgs a;
  a.ioBytes = "0";
  EXPECT_EQ(errorOf([&] { toFileOptions(a); }),
            "--io-bytes '0': must be at least one block per job; leave it out for a time-based run "
            "(--runtime)");
  a = WorkloadArgs{};
  a.size = "0";
  EXPECT_EQ(errorOf([&] { toFileOptions(a); }), "--size '0': must be more than 0 bytes per job");
  // --seed through boost: "-1" no longer wraps to 2^64-1.
  namespace po = boost::program_options;
  WorkloadArgs parsed;
  po::options_description opts;
  addWorkloadOptions(opts, parsed);
  std::vector<std::string> args = {"file", "--seed=-1"};
  std::vector<char*> argv;
  for (auto& s : args) argv.push_back(s.data());
  po::variables_map vm;
  storeOptions(static_cast<int>(argv.size()), argv.data(), opts, vm, "--target");
  EXPECT_EQ(parsed.seed, -1);
  EXPECT_EQ(errorOf([&] { toFileOptions(parsed); }), "--seed -1: must be 0..9223372036854775807");
  parsed.seed = 42;
  EXPECT_EQ(toFileOptions(parsed).seed, 42U);
}

// 8. `compare --json -` writes the JSON to stdout, and no file named '-'.
TEST(FileReviewFixes, CompareJsonDashIsStdout) {
  ScratchDir dir("review-dash");
  const std::string saved = (dir.path() / "saved.json").string();
  std::ofstream(saved) << compareToJson(testing::fieldNotesReport());
  const fs::path cwd = fs::current_path();
  fs::current_path(dir.path());
  const CommandResult r =
      runCommand(runCompareCommand, {"compare", "--results", saved, "--json", "-"});
  const bool dashFile = fs::exists(dir.path() / "-");
  const bool htmlFile = fs::exists(dir.path() / "nfsrdma-bench-compare.html");
  fs::current_path(cwd);
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_FALSE(dashFile);
  EXPECT_FALSE(htmlFile);  // re-rendering writes only what was asked for
  EXPECT_EQ(compareFromJson(parseJson(r.out)).cells.size(),
            testing::fieldNotesReport().cells.size());
  const CommandResult both =
      runCommand(runCompareCommand, {"compare", "--results", saved, "--json", "-", "--html", "-"});
  EXPECT_EQ(both.rc, 1);
  EXPECT_NE(both.err.find("--json - and --html - both want stdout"), std::string::npos) << both.err;
}

// 10. A failed fsync in finish() still closes every fd once; the
// destructor must not close them again (the number may be reused by then).
TEST(FileReviewFixes, PathEngineClosesEveryFdOnceWhenFsyncFails) {
  ScratchDir dir("review-fsync");
  std::ofstream(dir.path() / "a") << "data";
  ASSERT_EQ(::mkfifo((dir.path() / "b").c_str(), 0644), 0);  // fsync on a FIFO: EINVAL
  TargetSpec t = TargetSpec::parse("here", "path:" + dir.str());
  t.direct = false;
  auto engine = makeEngine(t);
  engine->open({"a", "b"}, false);
  EXPECT_NE(errorOf([&] { engine->finish(); }).find("fsync: "), std::string::npos);
  // Takes the lowest free number: the one "a" had.
  const int mine = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(mine, 0);
  engine.reset();
  EXPECT_NE(::fcntl(mine, F_GETFD), -1)
      << "the engine's destructor closed fd " << mine << " a second time";
  ::close(mine);
}

// 11. The latency is submission to completion: fio's lat, not clat.
TEST(FileReviewFixes, LatencyIsLabelledLat) {
  const std::string html = renderHtmlReport(testing::fieldNotesReport());
  EXPECT_NE(html.find("<h2>Latency (lat), usec</h2>"), std::string::npos);
  EXPECT_EQ(html.find("Completion latency"), std::string::npos);
  RunResult r;
  r.target = "local";
  r.profile = "4k-randread";
  r.blockSize = 4096;
  r.iodepth = 1;
  r.seconds = 1;
  r.dir[0].ops = 1;
  r.dir[0].bytes = 4096;
  r.dir[0].lat.record(50000);
  const std::string text = formatRunText(r);
  EXPECT_NE(text.find("    lat (nsec): min=50000"), std::string::npos) << text;
  EXPECT_NE(text.find("    lat percentiles ("), std::string::npos) << text;
  EXPECT_EQ(text.find("clat"), std::string::npos) << text;
}

}  // namespace
}  // namespace nfsrdma::bench
