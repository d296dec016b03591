// `nfsrdma-bench file` end to end in this process (runFileCommand over a
// path target): Ctrl-C's cleanup and exit code, what the JSON says of the
// server's cache and of a one-sided mix. The tests came from reviews that
// found a bug; each fails without its fix.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "bench/BenchCommands.h"
#include "bench/file/FileRun.h"
#include "bench/job/FileProfile.h"
#include "bench/job/Interrupt.h"
#include "bench/report/Json.h"
#include "tests/unit/bench/CommandCapture.h"
#include "tests/unit/bench/ScratchDir.h"
#include "tests/unit/bench/file/FullFifo.h"
#include "util/Version.h"

namespace nfsrdma::bench {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

using testing::CommandResult;
using testing::FullFifo;
using testing::runCommand;
using testing::ScratchDir;

// Sends the signal to this process after the delay, on its own thread.
class DelayedSignal {
 public:
  DelayedSignal(std::chrono::milliseconds after, int signal)
      : thread_([after, signal] {
          std::this_thread::sleep_for(after);
          ::kill(::getpid(), signal);
        }) {}
  ~DelayedSignal() { thread_.join(); }

 private:
  std::thread thread_;
};

// The command removes the file set it laid out and exits 130 with one line
// (Ctrl-C left the file set and the embedded server's directory behind).
TEST(FileCommand, CtrlCRemovesTheLaidOutFileSetAndExits130) {
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

// A kept file set with one file missing: the layout writes the missing one
// only, and an interrupt removes that one only (it removed files of the set
// that were complete before the run).
TEST(FileCommand, AnInterruptKeepsTheFilesThatWereCompleteBefore) {
  ScratchDir dir("interrupt-kept");
  const std::vector<std::string> common = {"file",
                                           "--profile",
                                           "4k-randread",
                                           "--target",
                                           "path:" + dir.str(),
                                           "--size",
                                           "4m",
                                           "--nrfiles",
                                           "2",
                                           "--direct",
                                           "0",
                                           "--ramp",
                                           "0"};
  auto with = [&](std::vector<std::string> more) {
    std::vector<std::string> a = common;
    a.insert(a.end(), more.begin(), more.end());
    return a;
  };
  const CommandResult first = runCommand(runFileCommand, with({"--runtime", "0.2"}));
  ASSERT_EQ(first.rc, 0) << first.err;
  const auto names = dir.names();
  ASSERT_EQ(names.size(), 2U);
  const fs::path kept = dir.path() / names[0];
  fs::remove(dir.path() / names[1]);
  struct stat before {};
  ASSERT_EQ(::stat(kept.c_str(), &before), 0);
  std::this_thread::sleep_for(20ms);  // a rewrite would show in the mtime

  CommandResult r;
  {
    DelayedSignal ctrlC(700ms, SIGINT);
    r = runCommand(runFileCommand, with({"--runtime", "20"}));
  }
  EXPECT_EQ(r.rc, 130) << r.err;
  EXPECT_NE(r.err.find("interrupted by SIGINT; removed the 1 file(s) it laid out"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(dir.names(), std::vector<std::string>{names[0]});
  struct stat after {};
  ASSERT_EQ(::stat(kept.c_str(), &after), 0);
  EXPECT_EQ(after.st_size, before.st_size);
  EXPECT_EQ(after.st_mtim.tv_sec, before.st_mtim.tv_sec);
  EXPECT_EQ(after.st_mtim.tv_nsec, before.st_mtim.tv_nsec) << "the complete file was rewritten";
}

// --shared-file: an interrupt removed the shared file although an earlier
// run had completed it (it is laid out again, once per command, and so was
// recorded as this command's).
TEST(FileCommand, AnInterruptKeepsASharedFileAnEarlierRunCompleted) {
  ScratchDir dir("interrupt-shared");
  const std::vector<std::string> common = {
      "file",     "--profile", "4k-randread", "--target", "path:" + dir.str(),
      "--size",   "4m",        "--numjobs",   "2",        "--shared-file",
      "--direct", "0",         "--ramp",      "0"};
  auto with = [&](const std::string& runtime) {
    std::vector<std::string> a = common;
    a.insert(a.end(), {"--runtime", runtime});
    return a;
  };
  const CommandResult first = runCommand(runFileCommand, with("0.2"));
  ASSERT_EQ(first.rc, 0) << first.err;
  const auto names = dir.names();
  ASSERT_EQ(names.size(), 1U);
  const auto size = fs::file_size(dir.path() / names[0]);
  CommandResult r;
  {
    DelayedSignal ctrlC(700ms, SIGINT);
    r = runCommand(runFileCommand, with("20"));
  }
  EXPECT_EQ(r.rc, 130) << r.err;
  EXPECT_NE(r.err.find("nfsrdma-bench file: interrupted by SIGINT\n"), std::string::npos) << r.err;
  EXPECT_EQ(dir.names(), names) << "the complete shared file was removed";
  EXPECT_EQ(fs::file_size(dir.path() / names[0]), size);
  // One the interrupted command created is its own: removed.
  fs::remove(dir.path() / names[0]);
  {
    DelayedSignal ctrlC(700ms, SIGINT);
    r = runCommand(runFileCommand, with("20"));
  }
  EXPECT_EQ(r.rc, 130) << r.err;
  EXPECT_NE(r.err.find("interrupted by SIGINT; removed the 1 file(s) it laid out"),
            std::string::npos)
      << r.err;
  EXPECT_TRUE(dir.names().empty());
}

// A JSON that cannot be written is a failure (an ofstream was checked
// before its buffer reached the file).
TEST(FileCommand, AJsonThatCannotBeWrittenIsAFailure) {
  ScratchDir dir("json-full");
  const CommandResult r =
      runCommand(runFileCommand,
                 {"file", "--profile", "4k-randread", "--target", "path:" + dir.str(), "--runtime",
                  "0.1", "--ramp", "0", "--size", "1m", "--direct", "0", "--json", "/dev/full"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err,
            "nfsrdma-bench file: cannot write the JSON to /dev/full: No space left on device\n");
}

// When the 10 s after Ctrl-C run out with a request still out, the error
// that ends the layout is the interrupt's: cleanup and exit 130 (it exited 1
// without cleanup).
TEST(FileCommand, AnErrorAfterCtrlCStillCleansUpAndExits130) {
  ScratchDir dir("interrupt-grace");
  const std::vector<std::string> args = {
      "file",     "--profile", "4k-randread", "--target", "path:" + dir.str(), "--size", "1m",
      "--direct", "0",         "--ramp",      "0",        "--runtime",         "20"};
  // The file's name as the command makes it: lay it out once, replace it by a full FIFO.
  {
    std::vector<std::string> quick = args;
    quick.back() = "0.1";
    ASSERT_EQ(runCommand(runFileCommand, quick).rc, 0);
  }
  const auto names = dir.names();
  ASSERT_EQ(names.size(), 1U);
  fs::remove(dir.path() / names[0]);
  FullFifo fifo(dir.path() / names[0]);
  CommandResult r;
  {
    DelayedSignal ctrlC(500ms, SIGINT);
    r = runCommand(runFileCommand, args);
  }
  EXPECT_EQ(r.rc, 130) << r.err;
  EXPECT_NE(r.err.find("interrupted by SIGINT; removed the 1 file(s) it laid out"),
            std::string::npos)
      << r.err;
  EXPECT_TRUE(dir.names().empty());
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

// `file` says what it knows of the server's page cache (it said nothing,
// and recorded a failed drop as done).
TEST(FileCommand, FileSaysWhatItKnowsOfTheServersCache) {
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

// The result names the build that measured it, next to its schema.
TEST(FileCommand, TheJsonNamesTheBuildThatMeasured) {
  ScratchDir dir("file-version");
  const JsonValue doc = fileJson(dir.str());
  EXPECT_EQ(doc.str("schema"), "nfsrdma-bench-file/3");
  EXPECT_EQ(doc.str("nfsrdma_version"), util::versionText());
}

// The file command's JSON of a randrw run at --rwmixread mix.
JsonValue randrwJson(const std::string& dir, const char* mix) {
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

// Why: with --rwmixread 100 or 0, randrw's jobs did only one direction but
// every other decision followed randrw's default 80% mix: an empty write
// row and a commit after a read-only run, libnfs refused as a writer.
TEST(FileCommand, RandrwWithAOneSidedMixIsRunAndReportedOneSided) {
  const std::string dir =
      std::filesystem::temp_directory_path() / ("nfsrdma-mix-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const JsonValue reads = randrwJson(dir, "100");
  const JsonValue* r = reads.find("result");
  ASSERT_NE(r, nullptr);
  EXPECT_TRUE(r->find("read") && r->find("read")->isObject());
  EXPECT_TRUE(r->find("write") == nullptr || r->find("write")->kind == JsonValue::Kind::Null);
  EXPECT_EQ(r->num("commit_s"), 0);
  const JsonValue writes = randrwJson(dir, "0");
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
