// The file benchmark against a real nfs-ganesha on loopback: each engine
// (nfs = our client, libnfs, path = the export's directory through io_uring)
// runs each profile briefly with --verify and must see 0 mismatches; numjobs
// on one shared client or a client each; a byte
// flipped on the server's disk is found at its offset; the `file` and
// `compare` commands run end to end, their JSON follows the schema, and a
// saved compare result with an injected 20% regression is flagged.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

#include "bench/compare/CompareMatrix.h"
#include "bench/file/FileRun.h"
#include "bench/report/Json.h"
#include "tests/integration/bench/ShellRun.h"
#include "tests/integration/client/GaneshaFixture.h"
#include "verbs/DeviceDiscovery.h"

namespace nfsrdma::bench {
namespace {

using nfsrdma::testing::GaneshaEnvironment;

std::string url() {
  return "nfs://127.0.0.1:" + std::to_string(GaneshaEnvironment::get().port()) + "/export";
}

TargetSpec target(EngineKind k) {
  switch (k) {
    case EngineKind::Nfs:
      return TargetSpec::parse("nfs-tcp", "nfs:" + url());
    case EngineKind::Libnfs:
      return TargetSpec::parse("libnfs", "libnfs:" + url());
    case EngineKind::Path:
    case EngineKind::Device:  // no device is ganesha's; the export's directory instead
      break;
  }
  return TargetSpec::parse("local", "path:" + GaneshaEnvironment::get().exportDir().string());
}

FileOptions shortOptions() {
  FileOptions o;
  o.sizeBytes = 8ULL << 20;
  o.runtime = std::chrono::milliseconds(300);
  o.ramp = std::chrono::milliseconds(0);
  o.verify = true;
  o.seed = 11;
  return o;
}

std::pair<int, std::string> runTool(const std::string& args) {
  const Ran r = runShell(std::string(NFSRDMA_BENCH_BIN) + " " + args, 600);
  return {r.status, r.out};
}

// The first mismatches, as a failure should show them: file, offset, kind.
std::string mismatchText(const VerifyStats& v) {
  std::ostringstream out;
  for (const VerifyMismatch& m : v.first) {
    out << "file " << m.fileId << " byte " << m.firstBadByte << ": " << m.kind << "\n";
  }
  return out.str();
}

class EveryEngineAndProfile : public ::testing::TestWithParam<std::tuple<EngineKind, std::string>> {
};

TEST_P(EveryEngineAndProfile, RunsWithVerifyAndZeroMismatches) {
  NFSRDMA_NEED_GANESHA();
  const auto [engine, name] = GetParam();
  const FileProfile p = profileByName(name);
  const RunResult r = runFileBenchmark(target(engine), p, shortOptions());
  if (!unsupportedReason(target(engine), p).empty()) {
    EXPECT_FALSE(r.unsupported.empty());
    GTEST_SKIP() << r.unsupported;
  }
  EXPECT_EQ(r.errors, 0U) << r.firstError;
  EXPECT_EQ(r.verify.mismatches, 0U) << mismatchText(r.verify);
  EXPECT_GT(r.verify.unitsChecked, 0U);
  if (p.reads()) {
    EXPECT_GT(r.dir[0].ops, 0U);
    EXPECT_GT(r.dir[0].lat.percentile(99.99), 0);
  }
  if (p.writes()) {
    EXPECT_GT(r.dir[1].ops, 0U);
  }
  EXPECT_GT(r.seconds, 0.2);
}

INSTANTIATE_TEST_SUITE_P(
    Ganesha, EveryEngineAndProfile,
    ::testing::Combine(::testing::Values(EngineKind::Nfs, EngineKind::Libnfs, EngineKind::Path),
                       ::testing::Values("4k-randread", "4k-randwrite", "128k-read", "128k-write",
                                         "4m-read", "4m-write", "randrw")),
    [](const auto& pinfo) {
      std::string n =
          std::string(engineName(std::get<0>(pinfo.param))) + "_" + std::get<1>(pinfo.param);
      for (char& c : n) {
        if (c == '-') c = '_';
      }
      return n;
    });

// Vectored READs (reads-per-compound): every byte verified, reads and
// writes of randrw mixed in the same groups, several files per job.
TEST(FileBench, VectoredReadsVerifyWithZeroMismatches) {
  NFSRDMA_NEED_GANESHA();
  const TargetSpec t = TargetSpec::parse("nfs-tcp-v8", "nfs:" + url() + "?reads-per-compound=8");
  ASSERT_EQ(t.nfs.readsPerCompound, 8U);
  EXPECT_NE(t.describe().find("reads-per-compound=8"), std::string::npos) << t.describe();
  for (const char* name : {"4k-randread", "randrw", "128k-read"}) {
    SCOPED_TRACE(name);
    FileOptions o = shortOptions();
    o.nrfiles = 2;
    const RunResult r = runFileBenchmark(t, profileByName(name), o);
    EXPECT_EQ(r.errors, 0U) << r.firstError;
    EXPECT_EQ(r.verify.mismatches, 0U);
    EXPECT_GT(r.verify.unitsChecked, 0U);
    EXPECT_GT(r.dir[0].ops, 0U);
  }
}

TEST(FileBench, VectoredReadsOverRdmaAreRefusedClearly) {
  try {
    (void)TargetSpec::parse("x", "nfs:nfs://198.18.0.1/export?proto=rdma&reads-per-compound=4");
    FAIL() << "reads-per-compound with proto=rdma was accepted";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("reads-per-compound=4 needs proto=tcp"), std::string::npos)
        << e.what();
  }
}

TEST(FileBench, NumjobsRunOneConnectionEach) {
  NFSRDMA_NEED_GANESHA();
  FileOptions o = shortOptions();
  o.numjobs = 3;
  o.nrfiles = 2;
  const RunResult r = runFileBenchmark(target(EngineKind::Nfs), profileByName("randrw"), o);
  EXPECT_EQ(r.errors, 0U) << r.firstError;
  EXPECT_EQ(r.verify.mismatches, 0U);
  EXPECT_EQ(r.numjobs, 3U);
  EXPECT_NE(r.notes.at(0).find("its own connection"), std::string::npos);
  for (std::uint32_t j = 0; j < 3; ++j) {
    for (std::uint32_t f = 0; f < 2; ++f) {
      EXPECT_TRUE(
          std::filesystem::exists(GaneshaEnvironment::get().exportDir() / benchFileName(o, j, f)));
    }
  }
}

// --client shared: the jobs issue on one client (one session, a connection
// per job) and their writes, from four threads at once, read back intact;
// every connection carried calls. Per job: a session and connection each.
TEST(FileBench, NumjobsShareOneClientWithAConnectionEach) {
  NFSRDMA_NEED_GANESHA();
  FileOptions o = shortOptions();
  o.numjobs = 4;
  o.sharedClient = true;
  const RunResult r = runFileBenchmark(target(EngineKind::Nfs), profileByName("randrw"), o);
  EXPECT_EQ(r.errors, 0U) << r.firstError;
  EXPECT_EQ(r.verify.mismatches, 0U);
  EXPECT_GT(r.verify.unitsChecked, 0U);
  EXPECT_EQ(r.client.mode, "shared");
  EXPECT_EQ(r.client.sessions, 1U);
  ASSERT_EQ(r.client.connections, 4U);
  for (const ConnectionUse& c : r.client.perConnection) {
    EXPECT_GT(c.calls, 0U) << c.peer;
    EXPECT_GT(c.bytesReceived, 0U) << c.peer;
    EXPECT_TRUE(c.up) << c.peer;
  }
  EXPECT_NE(r.notes.at(0).find("all on one client"), std::string::npos) << r.notes.at(0);
  EXPECT_FALSE(r.outage.any()) << r.outage.describe();

  o.sharedClient = false;
  o.numjobs = 3;
  const RunResult each = runFileBenchmark(target(EngineKind::Nfs), profileByName("4k-randread"), o);
  EXPECT_EQ(each.errors, 0U) << each.firstError;
  EXPECT_EQ(each.client.mode, "per-job");
  EXPECT_EQ(each.client.sessions, 3U);
  ASSERT_EQ(each.client.connections, 3U);
  for (std::uint32_t j = 0; j < 3; ++j) EXPECT_EQ(each.client.perConnection[j].job, j);
}

TEST(FileBench, VerifyFindsAByteFlippedOnTheServersDiskAtItsOffset) {
  NFSRDMA_NEED_GANESHA();
  FileOptions o = shortOptions();
  o.seed = 4242;
  o.ioBytes = o.sizeBytes;  // one full sequential pass: every block is read
  const FileProfile p = profileByName("128k-read");
  ASSERT_EQ(runFileBenchmark(target(EngineKind::Path), p, o).verify.mismatches, 0U);
  const auto file = GaneshaEnvironment::get().exportDir() / benchFileName(o, 0, 0);
  const std::uint64_t where = 5 * 4096 * 7 + 1234;
  {
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(static_cast<std::streamoff>(where));
    char c = 0;
    f.get(c);
    f.seekp(static_cast<std::streamoff>(where));
    f.put(static_cast<char>(c ^ 0x5A));
  }
  for (EngineKind k : {EngineKind::Nfs, EngineKind::Libnfs}) {
    const RunResult r = runFileBenchmark(target(k), p, o);
    EXPECT_EQ(r.errors, 0U) << r.firstError;
    ASSERT_EQ(r.verify.mismatches, 1U) << engineName(k);
    EXPECT_EQ(r.verify.first.at(0).offset, where / 4096 * 4096);
    EXPECT_EQ(r.verify.first.at(0).firstBadByte, where);
    EXPECT_EQ(r.verify.first.at(0).kind, "payload corrupt (checksum mismatch)");
  }
  std::filesystem::remove(file);
}

// Share of a file's pages in this host's page cache: ganesha's, as it runs here.
double residentShare(const std::filesystem::path& p) {
  const int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  struct stat st {};
  ::fstat(fd, &st);
  const auto len = static_cast<std::size_t>(st.st_size);
  void* m = ::mmap(nullptr, len, PROT_READ, MAP_SHARED, fd, 0);
  ::close(fd);
  if (m == MAP_FAILED) return -1;
  const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> in((len + page - 1) / page);
  const int rc = ::mincore(m, len, in.data());
  ::munmap(m, len);
  if (rc != 0) return -1;
  std::size_t n = 0;
  for (unsigned char c : in) n += c & 1;
  return static_cast<double>(n) / static_cast<double>(in.size());
}

void evict(const std::filesystem::path& p) {
  const int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0) << p;
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  ::close(fd);
}

// compare's warm-up: before a read cell the whole file set is read once,
// untimed, so the cell starts with it in the server's page cache, whichever
// target ran before (the layout by `local` is O_DIRECT and caches nothing).
TEST(FileBench, WarmPutsTheFileSetInTheServersPageCacheBeforeTheReads) {
  NFSRDMA_NEED_GANESHA();
  FileOptions o = shortOptions();
  o.sizeBytes = 32ULL << 20;
  o.runtime = std::chrono::milliseconds(100);
  o.verify = false;
  o.seed = 77;
  const FileProfile p = profileByName("4k-randread");
  ASSERT_EQ(runFileBenchmark(target(EngineKind::Path), p, o).errors, 0U);  // lays the set out
  const auto file = GaneshaEnvironment::get().exportDir() / benchFileName(o, 0, 0);
  evict(file);
  ASSERT_LT(residentShare(file), 0.05);
  const RunResult plain = runFileBenchmark(target(EngineKind::Libnfs), p, o);
  EXPECT_EQ(plain.serverCache, ServerCache::Unmanaged);
  EXPECT_LT(residentShare(file), 0.6)
      << "the timed reads alone touched most of the file: the check cannot tell";
  evict(file);
  RunSettings warm;
  warm.cache = CachePrep::Warm;
  const RunResult r = runFileBenchmark(target(EngineKind::Libnfs), p, o, warm);
  EXPECT_EQ(r.errors, 0U) << r.firstError;
  EXPECT_EQ(r.serverCache, ServerCache::Warm);
  EXPECT_GT(residentShare(file), 0.95);
  std::filesystem::remove(file);
}

// This host has no RDMA device (nor does CI's): the nfs-rdma target must say
// so, not fail obscurely. (With a device, ganesha has no RDMA listener here.)
TEST(FileBench, RdmaTargetWithoutDeviceSaysSo) {
  NFSRDMA_NEED_GANESHA();
  const TargetSpec t = TargetSpec::parse("nfs-rdma", "nfs:" + url() + "?proto=rdma");
  try {
    runFileBenchmark(t, profileByName("4k-randread"), shortOptions());
    FAIL() << "an nfs-rdma run against ganesha (no RDMA listener) succeeded";
  } catch (const std::exception& e) {
    if (std::filesystem::exists("/sys/class/infiniband") &&
        !std::filesystem::is_empty("/sys/class/infiniband")) {
      GTEST_SKIP() << "this host has an RDMA device: " << e.what();
    }
    EXPECT_NE(std::string(e.what()).find("no RDMA device found"), std::string::npos) << e.what();
  }
}

TEST(FileCommand, JsonOnStdoutHasEveryFigure) {
  NFSRDMA_NEED_GANESHA();
  const auto [rc, out] =
      runTool("file --target nfs:" + url() +
              " --profile randrw --runtime 0.3 --ramp 0 --size 8m --verify --json -");
  ASSERT_EQ(rc, 0) << out;
  const JsonValue doc = parseJson(out);
  EXPECT_EQ(doc.str("schema"), "nfsrdma-bench-file/3");
  const JsonValue* r = doc.find("result");
  ASSERT_NE(r, nullptr);
  for (const char* dir : {"read", "write"}) {
    const JsonValue* d = r->find(dir);
    ASSERT_TRUE(d != nullptr && d->isObject()) << dir;
    for (const char* k : {"ops", "bytes", "iops", "mib_per_s", "mb_per_s"})
      EXPECT_GT(d->num(k), 0) << k;
    for (const char* k : {"p50", "p90", "p99", "p99_9", "p99_99"})
      EXPECT_GT(d->find("lat_us")->num(k), 0) << k;
  }
  EXPECT_EQ(r->find("verify")->num("mismatches", -1), 0);
  EXPECT_GT(r->find("verify")->num("blocks_checked"), 0);
}

// The command's header and JSON say which client mode ran; a target that
// cannot share a client is refused before anything runs.
TEST(FileCommand, SharedClientIsInTheTextAndJson) {
  NFSRDMA_NEED_GANESHA();
  const auto [rc, out] =
      runTool("file --target nfs:" + url() +
              " --profile 4k-randread --iodepth 4 --numjobs 3 --client shared --runtime 0.3 "
              "--ramp 0 --size 4m --json -");
  ASSERT_EQ(rc, 0) << out;
  const JsonValue doc = parseJson(out);
  const JsonValue* c = doc.find("result")->find("client");
  ASSERT_TRUE(c != nullptr && c->isObject()) << out;
  EXPECT_EQ(c->str("mode"), "shared");
  EXPECT_EQ(c->num("sessions"), 1);
  EXPECT_EQ(c->num("connections"), 3);
  const JsonValue* per = c->find("per_connection");
  ASSERT_TRUE(per != nullptr && per->isArray());
  ASSERT_EQ(per->array.size(), 3U);
  for (const JsonValue& k : per->array) EXPECT_GT(k.num("calls"), 0) << out;

  const auto [trc, text] = runTool("file --target nfs:" + url() +
                                   "?nconnect=2 --profile 4k-randread --numjobs 3 --client shared "
                                   "--runtime 0.3 --ramp 0 --size 4m");
  ASSERT_EQ(trc, 0) << text;
  EXPECT_NE(text.find("  client: shared (1 session, 2 connections)\n"), std::string::npos) << text;
  EXPECT_NE(text.find("    connection 1: tcp 127.0.0.1:"), std::string::npos) << text;

  const auto [prc, path] =
      runTool("file --target path:" + GaneshaEnvironment::get().exportDir().string() +
              " --client shared --runtime 0.3 --ramp 0 --size 4m");
  EXPECT_EQ(prc, 2) << path;  // a refused value: a usage error
  EXPECT_NE(path.find("--client shared: the path engine has no shared client"), std::string::npos)
      << path;
}

TEST(FileCommand, TextFollowsFioConventions) {
  NFSRDMA_NEED_GANESHA();
  const auto [rc, out] =
      runTool("file --target nfs:" + url() +
              " --profile 4k-randwrite --runtime 0.3 --ramp 0 --size 8m --verify");
  ASSERT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("  write: IOPS="), std::string::npos) << out;
  EXPECT_NE(out.find("    lat percentiles ("), std::string::npos) << out;
  EXPECT_NE(out.find(" 99.99th=["), std::string::npos) << out;
  EXPECT_NE(out.find("  WRITE: bw="), std::string::npos) << out;
  EXPECT_NE(out.find("B/s ("), std::string::npos);
  EXPECT_NE(out.find(", 0 mismatches"), std::string::npos);
  EXPECT_EQ(out.find("\r"), std::string::npos);  // no progress line when not a terminal
}

// --iodepth above the default 32 slots: the session asks for them, and what
// the server granted is in the JSON (and said, when fewer); the server's
// cache after the layout is named, not left out.
TEST(FileCommand, DeepIodepthGetsItsSlotsOrSaysSo) {
  NFSRDMA_NEED_GANESHA();
  const auto json = std::filesystem::temp_directory_path() /
                    ("nfsrdma-deep-" + std::to_string(::getpid()) + ".json");
  const auto [rc, out] =
      runTool("file --target nfs:" + url() + " --profile 4k-randread --iodepth 128 --runtime 0.3 " +
              "--ramp 0 --size 8m --seed 9128 --json " + json.string());
  ASSERT_EQ(rc, 0) << out;
  const JsonValue doc = parseJsonFile(json.string());
  std::filesystem::remove(json);
  const JsonValue* r = doc.find("result");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->num("iodepth"), 128);
  const double effective = r->num("effective_iodepth");
  EXPECT_GT(effective, 32) << "the session kept its default 32 slots";
  EXPECT_LE(effective, 128);
  if (effective < 128) {
    EXPECT_NE(out.find("nfsrdma-bench: note: nfs-tcp: the server allows fewer calls in flight "
                       "(session slots, RDMA "
                       "credits) than "
                       "--iodepth 128"),
              std::string::npos)
        << out;
  }
  EXPECT_EQ(
      r->str("server_cache"),
      "unmanaged: the file set was just written through the server and may be in its page cache");
  FileOptions o;
  o.sizeBytes = 8ULL << 20;
  o.seed = 9128;
  std::error_code ec;
  std::filesystem::remove(GaneshaEnvironment::get().exportDir() / benchFileName(o, 0, 0), ec);
}

// Ctrl-C during a run on the embedded server: the run stops, the server
// stops, and neither its export directory nor the file set stays behind.
TEST(FileCommand, InterruptCleansUpTheEmbeddedServer) {
  const auto work =
      std::filesystem::temp_directory_path() / ("nfsrdma-intr-" + std::to_string(::getpid()));
  std::filesystem::create_directories(work);
  const std::string cmd =
      std::string("(") + NFSRDMA_BENCH_BIN +
      " file --profile 4k-randwrite --size 16m --runtime 30 --ramp 0 --work-dir " + work.string() +
      " 2>&1 & p=$!; sleep 4; kill -INT $p; wait $p; echo \"rc=$?\")";
  std::string out;
  FILE* f = ::popen(cmd.c_str(), "r");
  ASSERT_NE(f, nullptr);
  std::array<char, 4096> buf{};
  for (std::size_t n = 0; (n = std::fread(buf.data(), 1, buf.size(), f)) > 0;)
    out.append(buf.data(), n);
  ::pclose(f);
  if (out.find("cannot start the embedded nfs-ganesha") != std::string::npos) GTEST_SKIP() << out;
  EXPECT_NE(out.find("nfsrdma-bench file: interrupted by SIGINT"), std::string::npos) << out;
  EXPECT_NE(out.find("rc=130"), std::string::npos) << out;
  EXPECT_TRUE(std::filesystem::is_empty(work)) << "left behind in " << work;
  std::error_code ec;
  std::filesystem::remove_all(work, ec);
}

// A kept file set with one file missing, interrupted during the run: the
// layout writes the missing file only, the cleanup (through the server: the
// target has no local directory) removes that one, and the complete one stays
// as it was. The REMOVE is a first attempt after Ctrl-C, which must still go.
TEST(FileBench, AnInterruptRemovesOnlyTheFilesTheLayoutWrote) {
  NFSRDMA_NEED_GANESHA();
  const auto dir = GaneshaEnvironment::get().exportDir();
  FileOptions o = shortOptions();
  o.verify = false;
  o.nrfiles = 2;
  o.seed = 4711;
  const TargetSpec t = target(EngineKind::Nfs);
  ASSERT_TRUE(t.localDir.empty());
  ASSERT_EQ(runFileBenchmark(t, profileByName("4k-randwrite"), o).errors, 0U);
  const auto kept = dir / benchFileName(o, 0, 0);
  const auto missing = dir / benchFileName(o, 0, 1);
  // Through the server: ganesha's cache would not see a file removed behind it.
  makeEngine(t)->remove({benchFileName(o, 0, 1)});
  ASSERT_FALSE(std::filesystem::exists(missing));
  struct stat before {};
  ASSERT_EQ(::stat(kept.c_str(), &before), 0);

  o.runtime = std::chrono::seconds(30);
  CreatedFiles created;
  RunSettings rs;
  rs.created = &created;
  clearInterrupt();
  std::thread ctrlC([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    requestInterrupt(SIGINT);
  });
  int signal = 0;
  try {
    (void)runFileBenchmark(t, profileByName("4k-randread"), o, rs);
  } catch (const Interrupted& e) {
    signal = e.signal();
  }
  ctrlC.join();
  EXPECT_EQ(signal, SIGINT);
  EXPECT_EQ(created.count(), 1U);
  EXPECT_TRUE(created.holdsAll(t, {benchFileName(o, 0, 1)}));
  EXPECT_FALSE(created.holdsAll(t, {benchFileName(o, 0, 0)}));
  EXPECT_EQ(created.removeAll(), "");
  clearInterrupt();
  EXPECT_FALSE(std::filesystem::exists(missing));
  struct stat after {};
  ASSERT_EQ(::stat(kept.c_str(), &after), 0);
  EXPECT_EQ(after.st_size, before.st_size);
  EXPECT_EQ(after.st_mtim.tv_nsec, before.st_mtim.tv_nsec) << "the complete file was rewritten";
  std::filesystem::remove(kept);
}

TEST(CompareCommand, EmbeddedDefaultTableJsonHtmlAndBaselineRegression) {
  NFSRDMA_NEED_GANESHA();
  const auto dir =
      std::filesystem::temp_directory_path() / ("nfsrdma-compare-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string json = (dir / "run.json").string(), html = (dir / "run.html").string();
  const auto [rc, out] = runTool(
      "compare --profiles 4k-randread,128k-write --runtime 0.5 --ramp 0.1 --size 16m --verify "
      "--work-dir " +
      dir.string() + " --json " + json + " --html " + html);
  ASSERT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("| 4k-randread | read "), std::string::npos) << out;
  EXPECT_NE(out.find("| 128k-write  | write "), std::string::npos) << out;
  EXPECT_NE(out.find("local MiB/s"), std::string::npos);
  EXPECT_NE(out.find("nfs-tcp IOPS"), std::string::npos);
  EXPECT_NE(out.find("libnfs MiB/s"), std::string::npos);
  EXPECT_NE(out.find("nfs-tcp/libnfs"), std::string::npos);
  EXPECT_NE(out.find("4k-randread IOPS: nfs-tcp (our client)"), std::string::npos);
  bool haveDevice = true;
  try {
    haveDevice = !verbs::discoverDevices().empty();
  } catch (const std::exception&) {
    haveDevice = false;
  }
  if (!haveDevice) {
    EXPECT_NE(out.find("nfs-rdma: no RDMA device — see nfsrdma-server doctor"), std::string::npos)
        << out;
  }

  const JsonValue doc = parseJsonFile(json);
  EXPECT_EQ(doc.str("schema"), "nfsrdma-bench-compare/3");
  CompareReport saved = compareFromJson(doc);
  std::size_t ran = 0;
  for (const auto& c : saved.cells) {
    if (!c.ran) continue;
    ++ran;
    EXPECT_TRUE(c.verified);
    EXPECT_EQ(c.verifyMismatches, 0U) << c.target << " " << c.profile;
    EXPECT_GT(c.lat("p99_99"), 0);
    // Every target's read cell starts warm; every write cell counts its COMMIT/fsync.
    if (c.direction == IoDirection::Read) {
      EXPECT_EQ(c.serverCache, "warm") << c.target;
    } else {
      EXPECT_GT(c.commitSeconds, 0) << c.target;
      EXPECT_NEAR(c.mibPerSecond,
                  static_cast<double>(c.bytes) / (c.seconds + c.commitSeconds) / 1048576.0,
                  c.mibPerSecond * 1e-9)
          << c.target;
    }
  }
  EXPECT_GE(ran, 5U);  // local x2, nfs-tcp x2, libnfs read
  EXPECT_NE(out.find(" server cache: warm before every read cell of every target"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("Writes count the COMMIT/fsync"), std::string::npos) << out;
  std::ifstream h(html);
  std::stringstream hs;
  hs << h.rdbuf();
  EXPECT_NE(hs.str().find("<table id=\"compare-table\">"), std::string::npos);

  // A baseline 25% faster than this run: this run is a 20% regression.
  CompareCell* c = saved.cell("4k-randread", IoDirection::Read, "nfs-tcp");
  ASSERT_NE(c, nullptr);
  c->mibPerSecond *= 1.25;
  c->iops *= 1.25;
  const std::string baseline = (dir / "baseline.json").string();
  std::ofstream(baseline) << compareToJson(saved);
  const auto [rc2, out2] = runTool("compare --results " + json + " --baseline " + baseline);
  EXPECT_EQ(rc2, 0) << out2;
  EXPECT_NE(out2.find("REGRESSION 4k-randread read nfs-tcp"), std::string::npos) << out2;
  EXPECT_NE(out2.find("-20.0%!"), std::string::npos) << out2;
  const auto [rc3, out3] =
      runTool("compare --results " + json + " --baseline " + baseline + " --fail-on-regression");
  EXPECT_EQ(rc3, 3) << out3;
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}

}  // namespace
}  // namespace nfsrdma::bench
