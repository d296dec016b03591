// The NFSv4.1 client against a real nfs-ganesha on loopback: byte-exact
// round trips (sha256), concurrency, directories, renames, the NFS4ERR_
// mapping of real server errors, interop with libnfs, and the CLI.
#include <fcntl.h>
#include <openssl/evp.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "client/Client.h"
#include "client/nfs4/Nfs4Status.h"
#include "tests/integration/client/GaneshaFixture.h"

extern "C" {
#include <nfsc/libnfs.h>
}

namespace nfsrdma::testing {
namespace {

namespace fs = std::filesystem;

std::string sha256(std::span<const std::uint8_t> data) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> md{};
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), md.data(), &len, EVP_sha256(), nullptr);
  std::string hex;
  char buf[3];
  for (unsigned i = 0; i < len; ++i) {
    std::snprintf(buf, sizeof buf, "%02x", md[i]);
    hex += buf;
  }
  return hex;
}

std::vector<std::uint8_t> randomBytes(std::size_t n, std::uint64_t seed) {
  std::vector<std::uint8_t> v(n);
  std::mt19937_64 rng(seed);
  for (std::size_t i = 0; i < n; i += 8) {
    const std::uint64_t x = rng();
    std::memcpy(v.data() + i, &x, std::min<std::size_t>(8, n - i));
  }
  return v;
}

std::vector<std::uint8_t> readLocal(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void writeLocal(const fs::path& p, std::span<const std::uint8_t> data) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
  ASSERT_TRUE(out.good()) << p;
}

OpenFlags writeFlags() {
  OpenFlags f;
  f.read = true;
  f.write = true;
  f.create = true;
  f.truncate = true;
  return f;
}

// Creates (or truncates) name on the server and writes data through client.
void writeRemote(Client& client, const std::string& name, std::span<const std::uint8_t> data) {
  OpenFile w = client.open(name, writeFlags());
  client.pwrite(w, data, 0);
  client.close(w);
}

struct CommandOutput {
  int rc = -1;
  std::string out;
  std::string err;
};

std::string slurpAndRemove(const std::string& file) {
  std::ifstream in(file);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::remove(file.c_str());
  return text;
}

CommandOutput runCapturing(const std::string& cmd) {
  const std::string stem = "/tmp/nfsrdma-itest-" + std::to_string(::getpid());
  const int rc = std::system((cmd + " >" + stem + ".out 2>" + stem + ".err").c_str());
  return {WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, slurpAndRemove(stem + ".out"),
          slurpAndRemove(stem + ".err")};
}

// Runs a command, returning its exit status and what it wrote to stderr.
std::pair<int, std::string> runCommand(const std::string& cmd) {
  CommandOutput r = runCapturing(cmd);
  return {r.rc, r.err};
}

class ClientGanesha : public ::testing::Test {
 protected:
  void SetUp() override {
    NFSRDMA_NEED_GANESHA();
    client_ = Client::connect(GaneshaEnvironment::get().options());
  }
  void TearDown() override {
    if (client_) client_->close();
  }
  const fs::path& exportDir() const { return GaneshaEnvironment::get().exportDir(); }

  std::unique_ptr<Client> client_;
};

TEST_F(ClientGanesha, RoundTripsAreByteExact) {
  const std::size_t sizes[] = {0, 1, 4096, (1U << 20) + 7, 64U << 20};
  for (std::size_t size : sizes) {
    SCOPED_TRACE("size " + std::to_string(size));
    const std::string name = "roundtrip-" + std::to_string(size);
    auto data = randomBytes(size, size + 1);
    writeRemote(*client_, name, data);

    OpenFile r = client_->open(name, {});
    EXPECT_EQ(r.sizeAtOpen(), size);
    std::vector<std::uint8_t> back(size + 100, 0xAA);
    const std::size_t got = client_->pread(r, back, 0);
    client_->close(r);
    ASSERT_EQ(got, size);
    back.resize(got);
    EXPECT_EQ(sha256(back), sha256(data));
    // And at rest on the server's disk.
    EXPECT_EQ(sha256(readLocal(exportDir() / name)), sha256(data));
    client_->unlink(name);
  }
}

// Over TCP the transport receives a large READ reply's data straight into
// the caller's buffer; a reply shorter than asked (EOF) arrives whole. Both
// must give the same bytes, and the counters say which path each took.
TEST_F(ClientGanesha, LargeReadsArePlacedDirectlyAndShortOnesAreNot) {
  const std::size_t size = (3U << 20) + 7;
  auto data = randomBytes(size, 31);
  writeRemote(*client_, "placed", data);
  auto directReplies = [&] {
    const std::string line = client_->transportStats();
    const auto at = line.find("direct_replies=");
    return at == std::string::npos ? -1L : std::stol(line.substr(at + 15));
  };
  const long before = directReplies();
  ASSERT_GE(before, 0) << client_->transportStats();
  OpenFile r = client_->open("placed", {});
  std::vector<std::uint8_t> back(size, 0);
  std::vector<std::uint8_t> chunk(1U << 20);
  std::size_t at = 0;
  for (int i = 0; i < 4; ++i) {  // three full 1 MiB READs, then 7 bytes at EOF
    std::fill(chunk.begin(), chunk.end(), 0xAA);
    const std::size_t got = client_->pread(r, chunk, at);
    ASSERT_EQ(got, std::min<std::size_t>(chunk.size(), size - at));
    std::copy_n(chunk.begin(), got, back.begin() + static_cast<std::ptrdiff_t>(at));
    at += got;
  }
  client_->close(r);
  EXPECT_EQ(at, size);
  EXPECT_EQ(sha256(back), sha256(data));
  EXPECT_EQ(directReplies() - before, 3) << client_->transportStats();
  client_->unlink("placed");
}

// Vectored reads: many READs in one COMPOUND, each result byte-exact and
// in its own buffer, including reads at and past EOF.
TEST_F(ClientGanesha, VectoredReadsAreByteExact) {
  const std::size_t size = (1U << 20) + 123;
  auto data = randomBytes(size, 41);
  writeRemote(*client_, "vectored", data);
  OpenFile r = client_->open("vectored", {});
  const std::size_t n = client_->maxReadsPerCompound(4096);
  ASSERT_EQ(n, Client::kMaxReadsPerCompound);
  std::vector<std::vector<std::uint8_t>> bufs(n, std::vector<std::uint8_t>(4096, 0xAA));
  std::vector<Client::ReadVector> reads(n);
  std::mt19937_64 rng(5);
  for (std::size_t i = 0; i < n; ++i) reads[i] = {bufs[i], rng() % (size - 4096)};
  reads[n - 2].offset = size - 100;   // 100 bytes, then EOF
  reads[n - 1].offset = size + 4096;  // past EOF: 0 bytes
  // Runs one vectored read and waits (bounded) for every callback; a read
  // reported twice or never shows up as a missing or surplus result.
  auto readVectored = [&](const std::vector<Client::ReadVector>& v) {
    struct Wait {  // shared: a late callback after a failed wait must not touch a dead frame
      std::mutex mu;
      std::condition_variable cv;
      std::vector<std::optional<IoResult>> out;
      std::size_t calls = 0;
    };
    auto st = std::make_shared<Wait>();
    st->out.resize(v.size());
    client_->preadvAsync(r, v, [st](std::size_t i, const IoResult& res) {
      std::lock_guard lock(st->mu);
      st->out.at(i) = res;
      ++st->calls;
      st->cv.notify_all();
    });
    std::unique_lock lock(st->mu);
    EXPECT_TRUE(
        st->cv.wait_for(lock, std::chrono::seconds(10), [&] { return st->calls >= v.size(); }))
        << st->calls << " of " << v.size();
    EXPECT_EQ(st->calls, v.size());
    return st->out;
  };
  auto results = readVectored(reads);
  for (std::size_t i = 0; i < n; ++i) {
    SCOPED_TRACE(i);
    ASSERT_TRUE(results[i].has_value());
    ASSERT_FALSE(results[i]->error) << results[i]->error.message();
    const std::size_t want =
        reads[i].offset >= size ? 0 : std::min<std::size_t>(4096, size - reads[i].offset);
    ASSERT_EQ(results[i]->bytes, want);
    EXPECT_TRUE(std::equal(bufs[i].begin(), bufs[i].begin() + static_cast<std::ptrdiff_t>(want),
                           data.begin() + static_cast<std::ptrdiff_t>(
                                              std::min(reads[i].offset, std::uint64_t{size}))));
  }
  EXPECT_TRUE(results[n - 1]->eof);

  // A READ the server refuses stops the COMPOUND: it gets its own error and
  // the READs after it still get their data.
  std::vector<Client::ReadVector> bad = {
      {bufs[0], 0}, {bufs[1], ~std::uint64_t{0} - 10}, {bufs[2], 8192}};
  std::fill(bufs[2].begin(), bufs[2].end(), 0);
  results = readVectored(bad);
  ASSERT_TRUE(results[0] && results[1] && results[2]);
  EXPECT_FALSE(results[0]->error);
  EXPECT_TRUE(results[1]->error) << "a READ at offset 2^64-11 succeeded with " << results[1]->bytes
                                 << " bytes";
  EXPECT_NE(results[1]->error.message().find("NFS4ERR_"), std::string::npos)
      << results[1]->error.message();
  ASSERT_FALSE(results[2]->error) << results[2]->error.message();
  EXPECT_TRUE(std::equal(bufs[2].begin(), bufs[2].end(), data.begin() + 8192));

  // More than fit one COMPOUND: each read fails with a message saying so.
  std::vector<Client::ReadVector> many(n + 1, Client::ReadVector{bufs[0], 0});
  std::vector<std::string> errors;
  client_->preadvAsync(
      r, many, [&](std::size_t, const IoResult& res) { errors.push_back(res.error.message()); });
  ASSERT_EQ(errors.size(), n + 1);
  EXPECT_NE(errors[0].find("do not fit one COMPOUND"), std::string::npos) << errors[0];
  client_->close(r);
  client_->unlink("vectored");
}

TEST_F(ClientGanesha, FileSyncWritesNeedNoCommit) {
  auto data = randomBytes(300000, 9);
  OpenFile w = client_->open("filesync", writeFlags());
  client_->pwrite(w, data, 0, StableHow::kFileSync);
  client_->close(w);
  EXPECT_EQ(sha256(readLocal(exportDir() / "filesync")), sha256(data));
  client_->unlink("filesync");
}

TEST_F(ClientGanesha, SixtyFourConcurrentRandomWritesReadBack) {
  constexpr std::size_t kBlock = 4096;
  constexpr std::size_t kBlocks = 1024;  // a 4 MiB file
  OpenFile f = client_->open("concurrent", writeFlags());
  client_->truncate("concurrent", kBlock * kBlocks);
  std::vector<std::size_t> order(kBlocks);
  for (std::size_t i = 0; i < kBlocks; ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), std::mt19937(7));
  order.resize(64);
  std::vector<std::vector<std::uint8_t>> blocks;
  for (std::size_t i = 0; i < 64; ++i) blocks.push_back(randomBytes(kBlock, 100 + i));

  std::mutex mu;
  std::condition_variable cv;
  int done = 0;
  std::vector<std::string> errors;
  for (std::size_t i = 0; i < 64; ++i) {
    client_->pwriteAsync(f, blocks[i], order[i] * kBlock, StableHow::kUnstable,
                         [&](const IoResult& r) {
                           std::lock_guard lock(mu);
                           if (r.error) errors.push_back(r.error.message());
                           if (!r.error && r.bytes != kBlock)
                             errors.push_back("short write " + std::to_string(r.bytes));
                           ++done;
                           cv.notify_all();
                         });
  }
  {
    std::unique_lock lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(30), [&] { return done == 64; }));
  }
  EXPECT_TRUE(errors.empty()) << errors.front();
  client_->fsync(f);
  std::vector<std::uint8_t> whole(kBlock * kBlocks);
  ASSERT_EQ(client_->pread(f, whole, 0), whole.size());
  client_->close(f);
  std::vector<std::uint8_t> expected(kBlock * kBlocks, 0);
  for (std::size_t i = 0; i < 64; ++i)
    std::memcpy(expected.data() + order[i] * kBlock, blocks[i].data(), kBlock);
  EXPECT_EQ(sha256(whole), sha256(expected));
  EXPECT_LE(client_->stats().session.slots, 64U);
  client_->unlink("concurrent");
}

TEST_F(ClientGanesha, ListsAThousandEntriesCompletely) {
  const fs::path dir = exportDir() / "thousand";
  fs::create_directories(dir);
  std::set<std::string> expected;
  for (int i = 0; i < 1000; ++i) {
    const std::string name = "entry-with-a-longish-name-" + std::to_string(i);
    std::ofstream(dir / name) << i;
    expected.insert(name);
  }
  const auto before = client_->stats().session.compounds;
  auto entries = client_->readdir("thousand");
  const auto rounds = client_->stats().session.compounds - before;
  std::set<std::string> got;
  for (const auto& e : entries) {
    got.insert(e.name);
    EXPECT_EQ(e.attrs.type, FileType::kRegular) << e.name;
  }
  EXPECT_EQ(entries.size(), 1000U);
  EXPECT_EQ(got, expected);
  EXPECT_GE(rounds, 2U) << "a 1,000-entry directory should take several READDIR rounds";
  fs::remove_all(dir);
}

TEST_F(ClientGanesha, MkdirRenameRemove) {
  client_->mkdir("a");
  client_->mkdir("b", 0700);
  EXPECT_EQ(client_->stat("b").mode & 0777U, 0700U);
  EXPECT_EQ(client_->stat("b").type, FileType::kDirectory);
  auto data = randomBytes(5000, 3);
  OpenFile f = client_->open("a/file", writeFlags());
  client_->pwrite(f, data, 0);
  client_->close(f);
  client_->rename("a/file", "b/renamed");
  EXPECT_FALSE(fs::exists(exportDir() / "a/file"));
  EXPECT_EQ(sha256(readLocal(exportDir() / "b/renamed")), sha256(data));
  try {
    client_->stat("a/file");
    FAIL() << "stat of a renamed-away file succeeded";
  } catch (const NfsException& e) {
    EXPECT_EQ(e.code(), nfs4::statusError(nfs4::kErrNoEnt));
  }
  try {
    client_->unlink("b");
    FAIL() << "removing a non-empty directory succeeded";
  } catch (const NfsException& e) {
    EXPECT_EQ(e.code(), nfs4::statusError(nfs4::kErrNotEmpty));
    EXPECT_STREQ(e.what(), "remove /export/b: NFS4ERR_NOTEMPTY (directory not empty)");
  }
  client_->unlink("b/renamed");
  client_->unlink("b");
  client_->unlink("a");
  EXPECT_FALSE(fs::exists(exportDir() / "a"));
  EXPECT_FALSE(fs::exists(exportDir() / "b"));
}

// A rename walks both paths in one COMPOUND: two 7-deep paths need 19
// operations, more than the session's 18. Within one directory it walks
// once; across two, the target directory is looked up first.
TEST_F(ClientGanesha, RenamesBetweenDeepDirectories) {
  std::string a = "deep-a", b = "deep-b";
  for (int i = 0; i < 6; ++i) {
    a += "/d" + std::to_string(i);
    b += "/d" + std::to_string(i);
  }
  fs::create_directories(exportDir() / a);
  fs::create_directories(exportDir() / b);
  const auto data = randomBytes(1000, 5);
  writeRemote(*client_, a + "/x", data);
  client_->rename(a + "/x", a + "/y");
  EXPECT_TRUE(fs::exists(exportDir() / a / "y"));
  client_->rename(a + "/y", b + "/z");
  EXPECT_FALSE(fs::exists(exportDir() / a / "y"));
  EXPECT_EQ(sha256(readLocal(exportDir() / b / "z")), sha256(data));
  // A target directory that does not exist is the RENAME's lookup error.
  EXPECT_THROW(client_->rename(b + "/z", b + "/nothere/z"), NfsException);
  fs::remove_all(exportDir() / "deep-a");
  fs::remove_all(exportDir() / "deep-b");
}

TEST_F(ClientGanesha, TruncateAndChmod) {
  OpenFile f = client_->open("attrs", writeFlags());
  client_->pwrite(f, randomBytes(10000, 1), 0);
  client_->close(f);
  client_->truncate("attrs", 1234);
  client_->chmod("attrs", 0600);
  Attributes a = client_->stat("attrs");
  EXPECT_EQ(a.size, 1234U);
  EXPECT_EQ(a.mode & 07777U, 0600U);
  EXPECT_EQ(fs::file_size(exportDir() / "attrs"), 1234U);
  client_->unlink("attrs");
}

// Two opens of one file are two states: I/O through either and a CLOSE of
// one leave the other usable, in both orders (reader first, writer first).
TEST_F(ClientGanesha, TwoOpensOfOneFileEachStayUsable) {
  OpenFlags readOnly;
  readOnly.read = true;
  OpenFlags readWrite;  // no create, no truncate: both opens see the file's data
  readWrite.read = true;
  readWrite.write = true;
  const auto first = randomBytes(5000, 11);
  const auto second = randomBytes(3000, 12);
  for (bool readerFirst : {true, false}) {
    SCOPED_TRACE(readerFirst ? "reader opened first" : "writer opened first");
    writeRemote(*client_, "twice", first);
    OpenFile a = client_->open("twice", readerFirst ? readOnly : readWrite);
    OpenFile b = client_->open("twice", readerFirst ? readWrite : readOnly);
    OpenFile& reader = readerFirst ? a : b;
    OpenFile& writer = readerFirst ? b : a;
    std::vector<std::uint8_t> back(first.size());
    ASSERT_EQ(client_->pread(reader, back, 0), first.size());
    EXPECT_EQ(back, first);
    client_->pwrite(writer, second, 0, StableHow::kFileSync);
    client_->close(a);  // the first open goes; the second stays usable
    ASSERT_EQ(client_->pread(b, back, 0), first.size());
    EXPECT_TRUE(std::equal(second.begin(), second.end(), back.begin()));
    client_->close(b);
    auto expected = first;
    std::copy(second.begin(), second.end(), expected.begin());
    EXPECT_EQ(sha256(readLocal(exportDir() / "twice")), sha256(expected));
  }
  client_->unlink("twice");
}

TEST_F(ClientGanesha, NonexistentPathIsNoEnt) {
  try {
    client_->open("no/such/file", {});
    FAIL() << "opened a nonexistent file";
  } catch (const NfsException& e) {
    EXPECT_EQ(e.code(), nfs4::statusError(nfs4::kErrNoEnt));
    EXPECT_STREQ(e.what(), "open /export/no/such/file: NFS4ERR_NOENT (no such file or directory)");
  }
}

TEST_F(ClientGanesha, PermissionErrorIsAccess) {
  const fs::path secret = exportDir() / "secret";
  writeLocal(secret, randomBytes(100, 5));
  ASSERT_EQ(::chmod(secret.c_str(), 0600), 0);
  ClientOptions o = GaneshaEnvironment::get().options();
  o.uid = 4242;
  o.gid = 4242;
  auto user = Client::connect(o);
  try {
    user->open("secret", {});
    FAIL() << "uid 4242 opened a root-owned 0600 file";
  } catch (const NfsException& e) {
    EXPECT_EQ(e.code(), nfs4::statusError(nfs4::kErrAccess)) << e.what();
    EXPECT_STREQ(e.what(), "open /export/secret: NFS4ERR_ACCESS (permission denied)");
  }
  user->close();
  fs::remove(secret);
}

TEST_F(ClientGanesha, ReadOnlyExportRefusesWrites) {
  auto data = randomBytes(777, 11);
  writeLocal(GaneshaEnvironment::get().readOnlyDir() / "readme", data);
  auto ro = Client::connect(GaneshaEnvironment::get().options("/ro"));
  OpenFile r = ro->open("readme", {});
  std::vector<std::uint8_t> back(1000);
  back.resize(ro->pread(r, back, 0));
  ro->close(r);
  EXPECT_EQ(back, data);
  try {
    ro->open("new-file", writeFlags());
    FAIL() << "created a file on a read-only export";
  } catch (const NfsException& e) {
    EXPECT_EQ(e.code(), nfs4::statusError(nfs4::kErrRofs)) << e.what();
    EXPECT_STREQ(e.what(), "open /ro/new-file: NFS4ERR_ROFS (read-only file system)");
  }
  try {
    ro->mkdir("dir");
    FAIL() << "mkdir on a read-only export";
  } catch (const NfsException& e) {
    EXPECT_EQ(e.code(), nfs4::statusError(nfs4::kErrRofs)) << e.what();
  }
  ro->close();
  EXPECT_FALSE(fs::exists(GaneshaEnvironment::get().readOnlyDir() / "new-file"));
}

// A client process stopped longer than its lease (Ctrl-Z, a debugger, a VM
// pause) finds that ganesha dropped its session and client ID. It replaces
// them, opens its file again and goes on, and says so.
TEST_F(ClientGanesha, AClientStoppedPastItsLeaseGetsANewSessionAndGoesOn) {
  const fs::path report =
      exportDir().parent_path() / ("stopped-client-" + std::to_string(::getpid()) + ".txt");
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // A forked copy of a threaded process may block on a lock another thread
    // held at the fork: the alarm bounds the child whatever happens.
    ::alarm(120);
    std::ofstream out(report);
    try {
      ClientOptions options = GaneshaEnvironment::get().options();
      options.onSessionReplaced = [&out](const std::string& what) {
        out << "notice: " << what << std::endl;
      };
      auto c = Client::connect(options);
      OpenFile f = c->open("stopped", writeFlags());
      c->pwrite(f, randomBytes(10, 1), 0, StableHow::kFileSync);
      out << "before: ok" << std::endl;
      ::raise(SIGSTOP);
      const std::uint64_t size = c->stat("stopped").size;  // replaces the session, with a notice
      out << "stat: size " << size << std::endl;
      try {
        c->pwrite(f, randomBytes(10, 2), 0, StableHow::kFileSync);
        out << "old open: wrote" << std::endl;
      } catch (const NfsException& e) {
        out << "old open: " << e.what() << std::endl;
      }
      OpenFile g = c->open("stopped", writeFlags());
      c->pwrite(g, randomBytes(20, 3), 0, StableHow::kFileSync);
      c->close(g);
      out << "new open: ok" << std::endl;
      out << "recoveries: " << c->stats().session.recoveries << std::endl;
      c->close();
      out << "close: ok" << std::endl;
    } catch (const std::exception& e) {
      out << "error: " << e.what() << std::endl;
    }
    out.close();
    ::_exit(0);
  }
  // Bounded waits for the child's stop and end; a child that overstays is killed.
  const auto waitChild = [child](int options) -> std::optional<int> {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < deadline) {
      int st = 0;
      if (::waitpid(child, &st, options | WNOHANG) == child) return st;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ::kill(child, SIGKILL);
    ::waitpid(child, nullptr, 0);
    return std::nullopt;
  };
  const auto stopped = waitChild(WUNTRACED);
  ASSERT_TRUE(stopped && WIFSTOPPED(*stopped))
      << "the child did not stop: " << slurpAndRemove(report.string());
  // ganesha expires a client some time after its lease ends.
  std::this_thread::sleep_for(std::chrono::seconds(4 * GaneshaEnvironment::kLeaseSeconds));
  ::kill(child, SIGCONT);
  ASSERT_TRUE(waitChild(0)) << "the child did not end: " << slurpAndRemove(report.string());
  const std::string text = slurpAndRemove(report.string());
  EXPECT_NE(text.find("before: ok\nnotice: the server no longer knew this client's session "
                      "(SEQUENCE: NFS4ERR_"),
            std::string::npos)
      << text;
  // The lease is over, so there is no grace period to reclaim in: the open
  // is opened again the ordinary way (as the Linux client's no-grace
  // recovery does) and the old OpenFile keeps working.
  EXPECT_NE(text.find("); a new session replaced it under a new client ID: 1 open to reopen (the "
                      "server offered no grace period); 1 open reopened ("),
            std::string::npos)
      << text;
  EXPECT_NE(text.find(" s without service)\nstat: size 10\nold open: wrote\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("new open: ok\nrecoveries: 1\nclose: ok\n"), std::string::npos) << text;
  EXPECT_EQ(fs::file_size(exportDir() / "stopped"), 20U);
  client_->unlink("stopped");
}

TEST_F(ClientGanesha, LibnfsReadsWhatWeWrote) {
  auto data = randomBytes((3U << 20) + 123, 21);
  writeRemote(*client_, "for-libnfs", data);

  nfs_context* nfs = nfs_init_context();
  ASSERT_NE(nfs, nullptr);
  const std::string url = "nfs://127.0.0.1/export/for-libnfs?version=4&nfsport=" +
                          std::to_string(GaneshaEnvironment::get().port());
  nfs_url* parsed = nfs_parse_url_full(nfs, url.c_str());
  ASSERT_NE(parsed, nullptr) << nfs_get_error(nfs);
  ASSERT_EQ(nfs_mount(nfs, parsed->server, parsed->path), 0) << nfs_get_error(nfs);
  nfsfh* fh = nullptr;
  ASSERT_EQ(nfs_open(nfs, parsed->file, O_RDONLY, &fh), 0) << nfs_get_error(nfs);
  std::vector<std::uint8_t> back(data.size());
  std::size_t got = 0;
  while (got < back.size()) {
    const int n = nfs_pread(nfs, fh, got, std::min<std::size_t>(back.size() - got, 256 * 1024),
                            back.data() + got);
    ASSERT_GT(n, 0) << nfs_get_error(nfs);
    got += static_cast<std::size_t>(n);
  }
  nfs_close(nfs, fh);
  nfs_destroy_url(parsed);
  nfs_destroy_context(nfs);
  EXPECT_EQ(sha256(back), sha256(data));
  client_->unlink("for-libnfs");
}

TEST_F(ClientGanesha, ReadsAFilePlacedOnTheServer) {
  auto data = randomBytes((2U << 20) + 5, 31);
  writeLocal(exportDir() / "placed", data);
  OpenFile r = client_->open("placed", {});
  std::vector<std::uint8_t> back(data.size() + 10);
  back.resize(client_->pread(r, back, 0));
  client_->close(r);
  EXPECT_EQ(sha256(back), sha256(data));
  fs::remove(exportDir() / "placed");
}

TEST_F(ClientGanesha, SessionSurvivesIdlePeriodsLongerThanTheLease) {
  const auto renewalsBefore = client_->stats().session.renewals;
  std::this_thread::sleep_for(std::chrono::seconds(GaneshaEnvironment::kLeaseSeconds * 2 + 1));
  EXPECT_GT(client_->stats().session.renewals, renewalsBefore);
  // Our open state is still valid: the lease was renewed.
  OpenFile f = client_->open("after-idle", writeFlags());
  client_->pwrite(f, randomBytes(10, 1), 0);
  client_->close(f);
  client_->unlink("after-idle");
}

TEST_F(ClientGanesha, CliCopiesSixtyFourMiBBothWaysByteExact) {
  const fs::path local = fs::temp_directory_path() / ("nfsrdma-cli-" + std::to_string(::getpid()));
  const fs::path back = local.string() + ".back";
  auto data = randomBytes(64U << 20, 77);
  writeLocal(local, data);
  const std::string url =
      "nfs://127.0.0.1:" + std::to_string(GaneshaEnvironment::get().port()) + "/export/cli-copy";
  auto [rc1, err1] =
      runCommand(std::string(NFSRDMA_CLIENT_BIN) + " cp " + local.string() + " " + url);
  ASSERT_EQ(rc1, 0) << err1;
  auto [rc2, err2] =
      runCommand(std::string(NFSRDMA_CLIENT_BIN) + " cp " + url + " " + back.string());
  ASSERT_EQ(rc2, 0) << err2;
  EXPECT_EQ(sha256(readLocal(back)), sha256(data));
  EXPECT_EQ(sha256(readLocal(exportDir() / "cli-copy")), sha256(data));
  auto [rc3, err3] = runCommand(std::string(NFSRDMA_CLIENT_BIN) + " rm " + url);
  EXPECT_EQ(rc3, 0) << err3;
  EXPECT_FALSE(fs::exists(exportDir() / "cli-copy"));
  fs::remove(local);
  fs::remove(back);
}

TEST_F(ClientGanesha, CliReportsErrorsOnOneLine) {
  const std::string base = "nfs://127.0.0.1:" + std::to_string(GaneshaEnvironment::get().port());
  auto [rc, err] = runCommand(std::string(NFSRDMA_CLIENT_BIN) + " cat " + base + "/export/x");
  EXPECT_EQ(rc, 1);
  EXPECT_EQ(err, "nfsrdma-client: open /export/x: NFS4ERR_NOENT (no such file or directory)\n");
  auto [rc2, err2] =
      runCommand(std::string(NFSRDMA_CLIENT_BIN) + " ls '" + base + "/export?version=4'");
  EXPECT_EQ(rc2, 2);  // a URL the client refuses is a usage error
  EXPECT_NE(err2.find("version=4 is not supported"), std::string::npos) << err2;
}

// cp opens its destination with truncation, so whatever makes the copy
// impossible must be found first: a copy onto itself used to empty the file
// and exit 0, and a directory as the source emptied the destination, then failed.
TEST_F(ClientGanesha, CliCopyRefusesBeforeTouchingTheDestination) {
  const std::string base =
      "nfs://127.0.0.1:" + std::to_string(GaneshaEnvironment::get().port()) + "/export/";
  const auto data = randomBytes(300000, 91);
  writeLocal(exportDir() / "cp-self", data);
  auto [rc, err] =
      runCommand(std::string(NFSRDMA_CLIENT_BIN) + " cp " + base + "cp-self " + base + "cp-self");
  EXPECT_EQ(rc, 1);
  EXPECT_EQ(err, "nfsrdma-client: cp " + base + "cp-self " + base +
                     "cp-self: source and destination are the same file\n");
  EXPECT_EQ(sha256(readLocal(exportDir() / "cp-self")), sha256(data));

  // The same file through another spelling of the server: what the server
  // says the files are decides, not the URLs' text.
  const std::string viaName =
      "nfs://localhost:" + std::to_string(GaneshaEnvironment::get().port()) + "/export/cp-self";
  auto [rc1, err1] =
      runCommand(std::string(NFSRDMA_CLIENT_BIN) + " cp " + base + "cp-self " + viaName);
  EXPECT_EQ(rc1, 1);
  EXPECT_NE(err1.find("source and destination are the same file"), std::string::npos) << err1;
  EXPECT_EQ(sha256(readLocal(exportDir() / "cp-self")), sha256(data));

  // The export's backing file on this host against its own URL, both ways:
  // ganesha's file ID is its inode number.
  const std::string backing = (exportDir() / "cp-self").string();
  for (const auto& [from, to] :
       {std::pair{base + "cp-self", backing}, std::pair{backing, base + "cp-self"}}) {
    auto [rcb, errb] = runCommand(std::string(NFSRDMA_CLIENT_BIN) + " cp " + from + " " + to);
    EXPECT_EQ(rcb, 1) << from << " -> " << to;
    EXPECT_NE(errb.find("source and destination are the same file"), std::string::npos) << errb;
    EXPECT_EQ(sha256(readLocal(exportDir() / "cp-self")), sha256(data)) << from << " -> " << to;
  }

  // The same file on the local side (here: the export's backing file).
  const std::string local = (exportDir() / "cp-self").string();
  auto [rc2, err2] = runCommand(std::string(NFSRDMA_CLIENT_BIN) + " cp " + local + " " + local);
  EXPECT_EQ(rc2, 1);
  EXPECT_NE(err2.find("source and destination are the same file"), std::string::npos) << err2;
  EXPECT_EQ(sha256(readLocal(exportDir() / "cp-self")), sha256(data));

  const fs::path dir =
      fs::temp_directory_path() / ("nfsrdma-cli-dir-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  auto [rc3, err3] =
      runCommand(std::string(NFSRDMA_CLIENT_BIN) + " cp " + dir.string() + " " + base + "cp-self");
  EXPECT_EQ(rc3, 1);
  EXPECT_EQ(err3, "nfsrdma-client: cp " + dir.string() + ": is a directory (cp copies one file)\n");
  EXPECT_EQ(sha256(readLocal(exportDir() / "cp-self")), sha256(data));

  // A different file on the same server is copied, replacing the longer destination.
  const auto shorter = randomBytes(1000, 92);
  writeLocal(exportDir() / "cp-other", shorter);
  auto [rc4, err4] =
      runCommand(std::string(NFSRDMA_CLIENT_BIN) + " cp " + base + "cp-other " + base + "cp-self");
  EXPECT_EQ(rc4, 0) << err4;
  EXPECT_EQ(sha256(readLocal(exportDir() / "cp-self")), sha256(shorter));
  fs::remove(dir);
  fs::remove(exportDir() / "cp-self");
  fs::remove(exportDir() / "cp-other");
}

// As cp(1): a destination directory receives the source under its own name,
// a destination ending in '/' must be a directory, and a destination that is
// not a regular file (/dev/null) takes the data without an fsync error.
TEST_F(ClientGanesha, CliCopiesIntoADirectoryLikeCp) {
  const std::string base =
      "nfs://127.0.0.1:" + std::to_string(GaneshaEnvironment::get().port()) + "/export/";
  const auto data = randomBytes(5000, 95);
  writeLocal(exportDir() / "cp-into", data);
  fs::create_directories(exportDir() / "cp-dir");
  auto [rc, err] =
      runCommand(std::string(NFSRDMA_CLIENT_BIN) + " cp " + base + "cp-into " + base + "cp-dir");
  ASSERT_EQ(rc, 0) << err;
  EXPECT_EQ(sha256(readLocal(exportDir() / "cp-dir" / "cp-into")), sha256(data));

  auto [rc2, err2] =
      runCommand(std::string(NFSRDMA_CLIENT_BIN) + " cp " + base + "cp-into " + base + "cp-none/");
  EXPECT_EQ(rc2, 1);
  EXPECT_EQ(err2,
            "nfsrdma-client: cp " + base + "cp-into " + base + "cp-none/: no such directory\n");
  EXPECT_FALSE(fs::exists(exportDir() / "cp-none"));

  const fs::path local =
      fs::temp_directory_path() / ("nfsrdma-cli-into-" + std::to_string(::getpid()));
  fs::create_directories(local);
  auto [rc3, err3] =
      runCommand(std::string(NFSRDMA_CLIENT_BIN) + " cp " + base + "cp-into " + local.string());
  ASSERT_EQ(rc3, 0) << err3;
  EXPECT_EQ(sha256(readLocal(local / "cp-into")), sha256(data));

  auto [rc4, err4] =
      runCommand(std::string(NFSRDMA_CLIENT_BIN) + " cp " + base + "cp-into /dev/null");
  EXPECT_EQ(rc4, 0) << err4;
  auto [rc5, err5] =
      runCommand("sh -c '" + std::string(NFSRDMA_CLIENT_BIN) + " ls " + base + " >/dev/full'");
  EXPECT_EQ(rc5, 1);
  EXPECT_EQ(err5, "nfsrdma-client: ls: write to standard output: No space left on device\n");
  fs::remove_all(local);
  fs::remove_all(exportDir() / "cp-dir");
  fs::remove(exportDir() / "cp-into");
}

// "." and ".." are resolved in the client (a server answers NFS4ERR_BADNAME
// to a LOOKUP of them); ".." may not climb above the export.
TEST_F(ClientGanesha, DotAndDotDotInPathsAreResolvedAndBounded) {
  fs::create_directories(exportDir() / "dots/sub");
  const auto data = randomBytes(100, 94);
  writeLocal(exportDir() / "dots/file", data);
  EXPECT_EQ(client_->stat("dots/sub/../file").size, 100U);
  EXPECT_EQ(client_->stat("./dots/./file").size, 100U);
  try {
    (void)client_->stat("dots/../../outside");
    ADD_FAILURE() << "a path above the export was looked up";
  } catch (const NfsException& e) {
    EXPECT_EQ(e.code(), make_error_code(ClientErrc::kInvalidArgument));
    EXPECT_NE(std::string(e.what()).find("'..' leads above the export's root"), std::string::npos)
        << e.what();
  }
  fs::remove_all(exportDir() / "dots");
}

// Paths follow symbolic links as POSIX calls do (the server only answers
// NFS4ERR_SYMLINK): in the middle of a path always, at its end except for
// lstat, readlink, unlink and rename; relative targets from the link's
// directory, absolute ones from the server's root, within the export.
TEST_F(ClientGanesha, SymbolicLinksAreFollowedAsPosixDoes) {
  const fs::path dir = exportDir() / "links";
  fs::remove_all(dir);
  fs::create_directories(dir / "dir");
  const auto inner = randomBytes(5000, 41);
  const auto file = randomBytes(70000, 42);
  writeLocal(dir / "dir/inner", inner);
  writeLocal(dir / "f", file);
  fs::create_symlink("f", dir / "lf");
  fs::create_symlink("dir", dir / "ld");
  fs::create_symlink("/export/links/f", dir / "labs");
  fs::create_symlink("../links/./dir//inner", dir / "lup");
  fs::create_symlink("lf", dir / "lchain");
  fs::create_symlink("/etc/passwd", dir / "lout");
  fs::create_symlink("loop2", dir / "loop1");
  fs::create_symlink("loop1", dir / "loop2");
  fs::create_symlink("nothere", dir / "dangling");
  fs::create_symlink("..", dir / "dir/lparent");
  fs::create_directories(dir / "dir/sub");
  fs::create_symlink("dir/sub", dir / "ld2");

  const auto readAll = [&](const std::string& path) {
    OpenFile r = client_->open(path, {});
    std::vector<std::uint8_t> back(200000);
    back.resize(client_->pread(r, back, 0));
    client_->close(r);
    return back;
  };
  EXPECT_EQ(sha256(readAll("links/lf")), sha256(file));
  EXPECT_EQ(sha256(readAll("links/ld/inner")), sha256(inner));
  EXPECT_EQ(sha256(readAll("links/labs")), sha256(file));
  EXPECT_EQ(sha256(readAll("links/lup")), sha256(inner));
  EXPECT_EQ(sha256(readAll("links/lchain")), sha256(file));
  EXPECT_EQ(sha256(readAll("links/ld/lparent/lf")), sha256(file));

  EXPECT_EQ(client_->stat("links/lf").type, FileType::kRegular);
  EXPECT_EQ(client_->stat("links/lf").size, file.size());
  EXPECT_EQ(client_->stat("links/ld").type, FileType::kDirectory);
  EXPECT_EQ(client_->lstat("links/lf").type, FileType::kSymlink);
  EXPECT_EQ(client_->lstat("links/ld/inner").size, inner.size());
  EXPECT_EQ(client_->readlink("links/lf"), "f");
  EXPECT_EQ(client_->readlink("links/ld/lparent"), "..");
  const auto entries = client_->readdir("links/ld");
  std::set<std::string> names;
  for (const auto& e : entries) names.insert(e.name);
  EXPECT_EQ(names, (std::set<std::string>{"inner", "lparent", "sub"}));
  // ".." goes back from where the link led (links/dir/sub/..), not from the
  // link's name: read as text this would be links/inner, which is not there.
  EXPECT_EQ(sha256(readAll("links/ld2/../inner")), sha256(inner));
  EXPECT_EQ(client_->stat("links/ld2/..").fileId, client_->stat("links/dir").fileId);
  // A trailing '/' names a directory: even lstat follows the link there.
  EXPECT_EQ(client_->lstat("links/ld/").type, FileType::kDirectory);
  EXPECT_EQ(client_->lstat("links/ld/.").type, FileType::kDirectory);
  EXPECT_EQ(client_->lstat("links/dangling").type, FileType::kSymlink);

  const auto expectError = [&](const std::function<void()>& call, std::error_code code,
                               const std::string& text) {
    try {
      call();
      ADD_FAILURE() << "no error; expected " << text;
    } catch (const NfsException& e) {
      EXPECT_EQ(e.code(), code) << e.what();
      EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
    }
  };
  expectError([&] { (void)client_->open("links/loop1", {}); },
              std::make_error_code(std::errc::too_many_symbolic_link_levels),
              "open /export/links/loop1: more than 40 symbolic links on the way");
  expectError([&] { (void)client_->stat("links/lout"); },
              make_error_code(ClientErrc::kInvalidArgument),
              "symbolic link 'lout' points to /etc/passwd, outside the export /export");
  expectError([&] { (void)client_->open("links/dangling", {}); },
              nfs4::statusError(nfs4::kErrNoEnt), "open /export/links/dangling");
  expectError([&] { (void)client_->readlink("links/f"); }, nfs4::statusError(nfs4::kErrInval),
              "readlink /export/links/f");
  expectError([&] { (void)client_->readlink("links/ld/"); }, nfs4::statusError(nfs4::kErrInval),
              "readlink /export/links/ld/");
  expectError([&] { (void)client_->stat("links/dangling"); }, nfs4::statusError(nfs4::kErrNoEnt),
              "stat /export/links/dangling");
  expectError([&] { (void)client_->stat("links/loop2"); },
              std::make_error_code(std::errc::too_many_symbolic_link_levels),
              "stat /export/links/loop2");
  expectError([&] { client_->unlink("links/ld/"); }, nfs4::statusError(nfs4::kErrNotDir),
              "remove /export/links/ld/ (a path that ends in '/' names a directory)");
  EXPECT_TRUE(fs::is_symlink(dir / "ld"));
  expectError([&] { client_->unlink("links/ld/.."); },
              make_error_code(ClientErrc::kInvalidArgument),
              "expected a path naming an entry below the export");
  EXPECT_TRUE(fs::is_directory(dir));
  expectError([&] { (void)client_->open("links/f/", {}); }, nfs4::statusError(nfs4::kErrNotDir),
              "open /export/links/f/");
  expectError([&] { (void)client_->open("links/ld/", {}); }, nfs4::statusError(nfs4::kErrIsDir),
              "open /export/links/ld/");
  expectError([&] { (void)client_->stat("links/lf/"); }, nfs4::statusError(nfs4::kErrNotDir),
              "stat /export/links/lf/ (a path that ends in '/' names a directory)");
  EXPECT_EQ(client_->stat("links/ld/").type, FileType::kDirectory);
  expectError([&] { (void)client_->stat("links/f/../dir"); }, nfs4::statusError(nfs4::kErrNotDir),
              "stat /export/links/f/../dir: 'f' is not a directory");
  expectError(
      [&] { client_->rename("links/ld/", "links/x"); }, nfs4::statusError(nfs4::kErrNotDir),
      "rename /export/links/ld/ to /export/links/x (a path that ends in '/' names a directory)");
  expectError([&] { client_->unlink("links/dir/."); },
              make_error_code(ClientErrc::kInvalidArgument),
              "remove /export/links/dir/.: expected a path naming an entry below the export");
  expectError([&] { (void)client_->open("links/missing/", {}); },
              nfs4::statusError(nfs4::kErrNoEnt), "open /export/links/missing/");
  client_->mkdir("links/newdir/");
  EXPECT_TRUE(fs::is_directory(dir / "newdir"));

  // Writes, creation and directory operations through links.
  const std::string base =
      "nfs://127.0.0.1:" + std::to_string(GaneshaEnvironment::get().port()) + "/export/links/";
  const auto fresh = randomBytes(3000, 43);
  writeRemote(*client_, "links/ld/new", fresh);
  EXPECT_EQ(sha256(readLocal(dir / "dir/new")), sha256(fresh));
  // cp does not write through a link to nothing, as GNU cp.
  const fs::path local =
      fs::temp_directory_path() / ("nfsrdma-link-src-" + std::to_string(::getpid()));
  writeLocal(local, fresh);
  const CommandOutput cpDangling = runCapturing(std::string(NFSRDMA_CLIENT_BIN) + " cp " +
                                                local.string() + " " + base + "dangling");
  EXPECT_EQ(cpDangling.rc, 1);
  EXPECT_NE(cpDangling.err.find("not writing through dangling symbolic link"), std::string::npos)
      << cpDangling.err;
  EXPECT_FALSE(fs::exists(dir / "nothere"));
  const CommandOutput cpFileSlash =
      runCapturing(std::string(NFSRDMA_CLIENT_BIN) + " cp " + local.string() + " " + base + "f/");
  EXPECT_EQ(cpFileSlash.rc, 1);
  EXPECT_NE(cpFileSlash.err.find(base + "f/: not a directory"), std::string::npos)
      << cpFileSlash.err;
  fs::remove(local);
  // The library creates what it points to, as open(O_CREAT).
  writeRemote(*client_, "links/dangling", fresh);
  EXPECT_TRUE(fs::is_symlink(dir / "dangling"));
  EXPECT_EQ(sha256(readLocal(dir / "nothere")), sha256(fresh));
  client_->mkdir("links/ld/made");
  EXPECT_TRUE(fs::is_directory(dir / "dir/made"));
  client_->rename("links/ld/new", "links/ld/sub/moved");
  EXPECT_TRUE(fs::exists(dir / "dir/sub/moved"));
  // A link as the target of a rename is replaced, not followed.
  writeLocal(dir / "repl", fresh);
  client_->rename("links/repl", "links/lchain");
  EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(dir / "lchain")));
  client_->unlink("links/ld2/../sub/moved");
  EXPECT_FALSE(fs::exists(dir / "dir/sub/moved"));
  client_->truncate("links/lf", 10);
  EXPECT_EQ(fs::file_size(dir / "f"), 10U);
  EXPECT_TRUE(fs::is_symlink(dir / "lf"));
  client_->chmod("links/lf", 0600);
  EXPECT_EQ(fs::status(dir / "f").permissions(), fs::perms::owner_read | fs::perms::owner_write);
  client_->unlink("links/lf");  // the link, not the file
  EXPECT_FALSE(fs::exists(fs::symlink_status(dir / "lf")));
  EXPECT_TRUE(fs::exists(dir / "f"));

  // The CLI: cat through a link; ls of a link to a directory lists the link,
  // with '/' (or "/.") the directory; stat with '/' shows the directory.
  const CommandOutput cat =
      runCapturing(std::string(NFSRDMA_CLIENT_BIN) + " cat " + base + "ld/inner");
  ASSERT_EQ(cat.rc, 0) << cat.err;
  EXPECT_EQ(
      sha256(std::span(reinterpret_cast<const std::uint8_t*>(cat.out.data()), cat.out.size())),
      sha256(inner));
  const CommandOutput lsLink = runCapturing(std::string(NFSRDMA_CLIENT_BIN) + " ls " + base + "ld");
  ASSERT_EQ(lsLink.rc, 0) << lsLink.err;
  EXPECT_NE(lsLink.out.find(" /export/links/ld -> dir\n"), std::string::npos) << lsLink.out;
  const CommandOutput lsDir = runCapturing(std::string(NFSRDMA_CLIENT_BIN) + " ls " + base + "ld/");
  ASSERT_EQ(lsDir.rc, 0) << lsDir.err;
  EXPECT_NE(lsDir.out.find(" inner\n"), std::string::npos) << lsDir.out;
  EXPECT_NE(lsDir.out.find(" lparent -> ..\n"), std::string::npos) << lsDir.out;
  const CommandOutput lsDot =
      runCapturing(std::string(NFSRDMA_CLIENT_BIN) + " ls " + base + "ld/.");
  ASSERT_EQ(lsDot.rc, 0) << lsDot.err;
  EXPECT_EQ(lsDot.out, lsDir.out);
  const CommandOutput statDir =
      runCapturing(std::string(NFSRDMA_CLIENT_BIN) + " stat " + base + "ld/");
  ASSERT_EQ(statDir.rc, 0) << statDir.err;
  EXPECT_NE(statDir.out.find("Type: directory"), std::string::npos) << statDir.out;
  fs::remove_all(dir);
}

// mkdir, ls, stat and rename through the CLI, checked against what the
// server really has: the export's directory on this host.
TEST_F(ClientGanesha, CliListsStatsCreatesAndRenamesLikeCoreutils) {
  const std::string cli = NFSRDMA_CLIENT_BIN;
  const std::string base =
      "nfs://127.0.0.1:" + std::to_string(GaneshaEnvironment::get().port()) + "/export/cli-tree";
  const fs::path tree = exportDir() / "cli-tree";
  fs::remove_all(tree);
  const CommandOutput mk = runCapturing(cli + " mkdir " + base);
  ASSERT_EQ(mk.rc, 0) << mk.err;
  ASSERT_TRUE(fs::is_directory(tree));
  const auto data = randomBytes(12345, 95);
  writeLocal(tree / "b-data", data);
  ASSERT_EQ(::chmod((tree / "b-data").c_str(), 04755), 0);
  fs::create_directory(tree / "a-sticky");
  ASSERT_EQ(::chmod((tree / "a-sticky").c_str(), 01777), 0);
  fs::create_symlink("b-data", tree / "c-link");
  writeLocal(tree / "d-setgid", {});
  ASSERT_EQ(::chmod((tree / "d-setgid").c_str(), 02644), 0);
  fs::create_directory(tree / "e-sticky");
  ASSERT_EQ(::chmod((tree / "e-sticky").c_str(), 01776), 0);

  const CommandOutput ls = runCapturing(cli + " ls " + base);
  ASSERT_EQ(ls.rc, 0) << ls.err;
  std::vector<std::string> lines;
  std::istringstream in(ls.out);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  ASSERT_EQ(lines.size(), 5U) << ls.out;
  // mode, owner, group, size, mtime, name; sorted by name
  const auto lsLine = [](const std::string& mode, const std::string& size,
                         const std::string& name) {
    return std::regex(mode + " \\S+ +\\S+ +" + size +
                      " [0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2} " + name);
  };
  EXPECT_TRUE(std::regex_match(lines[0], lsLine("drwxrwxrwt", "[0-9]+", "a-sticky"))) << lines[0];
  EXPECT_TRUE(std::regex_match(lines[1], lsLine("-rwsr-xr-x", "12345", "b-data"))) << lines[1];
  EXPECT_TRUE(std::regex_match(lines[2], lsLine("l[rwx-]{9}", "6", "c-link -> b-data")))
      << lines[2];
  // Capitals: setgid and sticky without the execute bit under them.
  EXPECT_TRUE(std::regex_match(lines[3], lsLine("-rw-r-Sr--", "0", "d-setgid"))) << lines[3];
  EXPECT_TRUE(std::regex_match(lines[4], lsLine("drwxrwxrwT", "[0-9]+", "e-sticky"))) << lines[4];

  // As ls -l: a file is listed as itself, under the path given; so is a
  // symbolic link, with its target, not what it points to.
  const CommandOutput one = runCapturing(cli + " ls " + base + "/b-data");
  ASSERT_EQ(one.rc, 0) << one.err;
  EXPECT_TRUE(std::regex_match(one.out, lsLine("-rwsr-xr-x", "12345", "/export/cli-tree/b-data\n")))
      << one.out;
  const CommandOutput lnk = runCapturing(cli + " ls " + base + "/c-link");
  ASSERT_EQ(lnk.rc, 0) << lnk.err;
  EXPECT_TRUE(
      std::regex_match(lnk.out, lsLine("l[rwx-]{9}", "6", "/export/cli-tree/c-link -> b-data\n")))
      << lnk.out;
  // A file in the middle of the path keeps the server's error.
  const CommandOutput mid = runCapturing(cli + " ls " + base + "/b-data/x");
  EXPECT_EQ(mid.rc, 1);
  EXPECT_EQ(mid.err,
            "nfsrdma-client: lstat /export/cli-tree/b-data/x: NFS4ERR_NOTDIR (not a directory)\n");

  struct stat local {};
  ASSERT_EQ(::stat((tree / "b-data").c_str(), &local), 0);
  const CommandOutput st = runCapturing(cli + " stat " + base + "/b-data");
  ASSERT_EQ(st.rc, 0) << st.err;
  for (const std::string& want : {std::string("  File: /export/cli-tree/b-data\n"),
                                  std::string("  Size: 12345\tType: regular file\n"),
                                  std::string("  Mode: 4755 (-rwsr-xr-x)\tLinks: 1\n"),
                                  "FileId: " + std::to_string(local.st_ino) + "\t"}) {
    EXPECT_NE(st.out.find(want), std::string::npos) << "missing: " << want << "\nin:\n" << st.out;
  }
  const CommandOutput link = runCapturing(cli + " stat " + base + "/c-link");
  ASSERT_EQ(link.rc, 0) << link.err;
  EXPECT_NE(
      link.out.find("  File: /export/cli-tree/c-link -> b-data\n  Size: 6\tType: symbolic link\n"),
      std::string::npos)
      << link.out;
  const CommandOutput empty = runCapturing(cli + " stat " + base + "/d-setgid");
  ASSERT_EQ(empty.rc, 0) << empty.err;
  EXPECT_NE(empty.out.find("  Size: 0\tType: regular empty file\n  Mode: 2644 (-rw-r-Sr--)"),
            std::string::npos)
      << empty.out;

  const CommandOutput mv =
      runCapturing(cli + " rename " + base + "/b-data " + base + "/a-sticky/moved");
  ASSERT_EQ(mv.rc, 0) << mv.err;
  EXPECT_FALSE(fs::exists(tree / "b-data"));
  EXPECT_EQ(sha256(readLocal(tree / "a-sticky/moved")), sha256(data));
  fs::remove_all(tree);
}

// SIGSTOP stops a process's threads one by one: true once all of them are
// stopped ('T' in /proc/PID/task/TID/stat), within about two seconds.
bool allThreadsStopped(pid_t pid) {
  for (int attempt = 0; attempt < 200; ++attempt) {
    bool all = true;
    for (const auto& task : fs::directory_iterator("/proc/" + std::to_string(pid) + "/task")) {
      std::ifstream in(task.path() / "stat");
      std::string line;
      std::getline(in, line);
      const auto name = line.rfind(')');
      if (name == std::string::npos || name + 2 >= line.size() || line[name + 2] != 'T')
        all = false;
    }
    if (all) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

// An error that never reaches the COMPOUND's results (here: no reply in
// time, ganesha stopped) still says which operation on which path failed.
// A call unanswered within the timeout is ridden through like a lost
// connection (reconnect, bind, replay), so the error comes once the
// recovery timeout is spent, and says why.
TEST_F(ClientGanesha, ErrorsWithoutAReplyNameTheOperationAndPath) {
  ClientOptions o = GaneshaEnvironment::get().options();
  o.timeout = std::chrono::milliseconds(500);
  o.recoveryTimeout = std::chrono::milliseconds(1500);
  auto c = Client::connect(o);
  const pid_t ganesha = GaneshaEnvironment::get().pid();
  ASSERT_GT(ganesha, 0);
  std::string stat, mkdir;
  {
    ASSERT_EQ(::kill(ganesha, SIGSTOP), 0);
    struct Resume {
      pid_t pid;
      ~Resume() { ::kill(pid, SIGCONT); }
    } resume{ganesha};
    ASSERT_TRUE(allThreadsStopped(ganesha));
    try {
      (void)c->stat("nowhere");
    } catch (const NfsException& e) {
      stat = e.what();
    }
    try {
      c->mkdir("new-dir");
    } catch (const NfsException& e) {
      mkdir = e.what();
    }
  }
  EXPECT_EQ(stat.rfind("stat /export/nowhere: tcp 127.0.0.1:", 0), 0U) << stat;
  EXPECT_NE(stat.find("(recovery-timeout 1500 ms, "), std::string::npos) << stat;
  EXPECT_NE(stat.find("; last: no reply from tcp 127.0.0.1:"), std::string::npos) << stat;
  EXPECT_NE(stat.find(" within 500 ms"), std::string::npos) << stat;
  EXPECT_EQ(mkdir.rfind("mkdir /export/new-dir: ", 0), 0U) << mkdir;
  // The server catches up; the client goes on with the slots it has left.
  EXPECT_EQ(c->stat("").type, FileType::kDirectory);
  // The server may still be finishing the calls that timed out: close()
  // waits out its DELAY and CLIENTID_BUSY answers instead of failing.
  c->close();
  EXPECT_EQ(c->teardownError(), "");
  fs::remove_all(exportDir() / "new-dir");  // the late mkdir may well have run
}

// As rm(1): one bad argument does not stop the others, and the status says something failed.
TEST_F(ClientGanesha, CliRmGoesOnAfterAFailure) {
  const std::string base =
      "nfs://127.0.0.1:" + std::to_string(GaneshaEnvironment::get().port()) + "/export/";
  writeLocal(exportDir() / "rm-me", randomBytes(10, 93));
  auto [rc, err] =
      runCommand(std::string(NFSRDMA_CLIENT_BIN) + " rm " + base + "rm-missing " + base + "rm-me");
  EXPECT_EQ(rc, 1);
  EXPECT_EQ(
      err,
      "nfsrdma-client: remove /export/rm-missing: NFS4ERR_NOENT (no such file or directory)\n");
  EXPECT_FALSE(fs::exists(exportDir() / "rm-me"));
}

}  // namespace
}  // namespace nfsrdma::testing
