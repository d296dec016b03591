// A run of the file benchmark over the engines (file/FileRun.h): the queue
// depth asked of an NFS session, the free-space check before the layout, the
// files it created and what an interrupt does to them. The tests came from
// reviews that found a bug; each fails without its fix.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "bench/compare/CompareConditions.h"
#include "bench/file/FileReport.h"
#include "bench/file/FileRun.h"
#include "bench/file/engines/Engine.h"
#include "bench/job/Interrupt.h"
#include "bench/report/Json.h"
#include "tests/unit/bench/ErrorOf.h"
#include "tests/unit/bench/ScratchDir.h"

namespace nfsrdma::bench {
namespace {

using testing::errorOf;
using testing::ScratchDir;

// The session is asked for the slots the iodepth needs, unless the URL set
// qd=; what the server granted shows as effective_iodepth (the nfs engine
// kept at most 32 requests on the wire whatever --iodepth said).
TEST(FileRun, NfsTargetsAskForTheSlotsTheIodepthNeeds) {
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

// The free space of the target directory, the file-set cap and the buffer
// memory are checked before anything is written or allocated (a typo in
// --size could fill a disk).
TEST(FileRun, FreeSpaceIsCheckedBeforeTheLayout) {
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

// The margin is capped: a small layout fits a huge file system with room
// (the margin grew without bound with the file system).
TEST(FileRun, TheFreeSpaceMarginIsCappedAt4GiB) {
  FileOptions o;
  o.sizeBytes = 1ULL << 30;
  const std::uint64_t pib = 1ULL << 50;
  EXPECT_NO_THROW(checkFreeSpace(o, "/big", 1ULL << 30, 100ULL << 30, pib));
  try {
    checkFreeSpace(o, "/big", 2ULL << 30, 5ULL << 30, pib);
    ADD_FAILURE() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("(5 GiB free, 4 GiB kept spare)"), std::string::npos)
        << e.what();
  }
  // Small file systems keep at least 64 MiB, mid-sized ones 1%.
  EXPECT_THROW(checkFreeSpace(o, "/s", 1ULL << 30, (1ULL << 30) + (32ULL << 20), 2ULL << 30),
               std::invalid_argument);
  EXPECT_NO_THROW(checkFreeSpace(o, "/m", 1ULL << 30, (1ULL << 30) + (2ULL << 30), 100ULL << 30));
  EXPECT_THROW(checkFreeSpace(o, "/m", 1ULL << 30, (1ULL << 30) + (512ULL << 20), 100ULL << 30),
               std::invalid_argument);
}

// Why: an interrupt removed files of the set that were complete before the
// run; the set of created files knows which it laid out.
TEST(FileRun, CreatedFilesCountsEachFileOnceAndKnowsWhatItHolds) {
  TargetSpec local = TargetSpec::parse("local", "path:/tmp/x");
  TargetSpec nfs = TargetSpec::parse("nfs-tcp", "nfs:nfs://127.0.0.1/export");
  nfs.localDir = "/tmp/x";  // the embedded server's export: the same directory
  CreatedFiles c;
  c.add(local, {"a", "b"});
  c.add(nfs, {"b"});  // laid out again after a failed cell
  EXPECT_EQ(c.count(), 2U);
  EXPECT_TRUE(c.holdsAll(nfs, {"a", "b"}));
  EXPECT_FALSE(c.holdsAll(nfs, {"a", "c"}));
  EXPECT_FALSE(c.holdsAll(TargetSpec::parse("other", "path:/tmp/y"), {"a"}));
}

// 8. Files about to be removed are closed without COMMIT or fsync.
class CountingEngine final : public Engine {
 public:
  std::vector<std::uint64_t> open(const std::vector<std::string>&, bool) override { return {}; }
  void run(JobDriver&) override {}
  void commit() override { ++commits; }
  void finish() override { ++finishes; }
  void abandon() override { ++abandons; }
  int commits = 0, finishes = 0, abandons = 0;
};

TEST(FileRun, AnInterruptDoesNotCommitFilesAboutToBeRemoved) {
  CountingEngine removed;
  EXPECT_THROW(stopInterrupted(removed, SIGINT, false), Interrupted);
  EXPECT_EQ(removed.finishes + removed.commits, 0);
  EXPECT_EQ(removed.abandons, 1);
  CountingEngine kept;
  try {
    stopInterrupted(kept, SIGTERM, true);
  } catch (const Interrupted& e) {
    EXPECT_EQ(e.signal(), SIGTERM);
  }
  EXPECT_EQ(kept.finishes, 1);
  EXPECT_EQ(kept.abandons, 0);

  // The path engine's abandon() does not fsync (a FIFO's fsync fails: finish() would say so).
  ScratchDir dir("interrupt-abandon");
  ASSERT_EQ(::mkfifo((dir.path() / "p").c_str(), 0644), 0);
  TargetSpec t = TargetSpec::parse("here", "path:" + dir.str());
  t.direct = false;
  auto engine = makeEngine(t);
  const int probe = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  ::close(probe);
  engine->open({"p"}, false);
  EXPECT_NO_THROW(engine->abandon());
  const int again = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  EXPECT_EQ(again, probe) << "abandon() left the fd open";
  ::close(again);
}

// --shared-file laid the whole set out again before every cell of a
// command (its size cannot say whether this process's ranges are written):
// a command lays it out once, and again only after a layout that failed.
TEST(FileRun, ASharedFileSetIsLaidOutOncePerCommand) {
  ScratchDir dir("shared-once");
  TargetSpec t = TargetSpec::parse("here", "path:" + dir.str());
  t.direct = false;
  FileOptions o;
  o.sizeBytes = 1 << 20;
  o.numjobs = 2;
  o.sharedFile = true;
  o.sharingJobs = 2;
  o.verify = true;
  o.ramp = std::chrono::milliseconds(0);
  o.runtime = std::chrono::milliseconds(100);
  CreatedFiles created;
  RunSettings rs;
  rs.created = &created;
  const RunResult first = runFileBenchmark(t, profileByName("4k-randread"), o, rs);
  ASSERT_EQ(first.errors, 0U) << first.firstError;
  const std::string file = (dir.path() / benchFileName(o, 0, 0)).string();
  struct stat before {};
  ASSERT_EQ(::stat(file.c_str(), &before), 0);
  EXPECT_EQ(before.st_size, 2 << 20);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // a rewrite would show in the mtime
  const RunResult second = runFileBenchmark(t, profileByName("128k-read"), o, rs);
  ASSERT_EQ(second.errors, 0U) << second.firstError;
  EXPECT_EQ(second.verify.mismatches, 0U);
  struct stat after {};
  ASSERT_EQ(::stat(file.c_str(), &after), 0);
  EXPECT_EQ(after.st_mtim.tv_sec, before.st_mtim.tv_sec);
  EXPECT_EQ(after.st_mtim.tv_nsec, before.st_mtim.tv_nsec) << "the shared set was laid out again";
  EXPECT_EQ(created.count(), 1U) << "created by this command: removed after an interrupt";
  EXPECT_FALSE(created.claimSharedLayout(t, o)) << "claimed by the first cell";
  created.forgetSharedLayout(t, o);
  EXPECT_TRUE(created.claimSharedLayout(t, o)) << "a failed layout is tried again";
}

}  // namespace
}  // namespace nfsrdma::bench
