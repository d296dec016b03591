// The job driver (job/FileJob.h): what each request carries, when its
// latency starts, which requests count, the mix, the start gate. Most tests
// came from reviews that found a bug; each fails without its fix.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "bench/job/FileJob.h"
#include "bench/job/Interrupt.h"
#include "bench/job/Verify.h"
#include "tests/unit/bench/ErrorOf.h"

namespace nfsrdma::bench {
namespace {

using testing::errorOf;

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
// (before the fix, all of it: ~1 ms per 4 MiB, which also capped write
// throughput at the fill rate, ~30 Gb/s per job).
TEST(FileJob, WriteLatencyStartsAfterTheBufferIsFilled) {
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
      << "issued is stamped before the buffer is filled: median prepare " << median(prepare)
      << " us, since issued " << median(sinceIssued) << " us";
}

// Without --verify a write does not regenerate its block (as fio writes a
// buffer filled once): only the 32-byte header of each 4 KiB unit is
// restamped with the unit's offset and file. The data stays non-trivial
// and unique per unit, so neither compression of zeros nor block dedup can
// flatter a target, and a later --verify read says where it came from.
TEST(FileJob, WritesWithoutVerifyReuseAFilledBufferWithUniqueUnits) {
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
  EXPECT_EQ(checkPattern(b.buf, s.options.seed, 3, b.offset + b.buf.size(), misplaced),
            b.buf.size() / kVerifyUnit);
  ASSERT_FALSE(misplaced.first.empty());
  EXPECT_EQ(misplaced.first.front().kind.rfind("misplaced block: intact data of file 3 offset ", 0),
            0U)
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
  EXPECT_EQ(checkPattern(b.buf, s.options.seed + 1, 3, b.offset, otherSeed),
            b.buf.size() / kVerifyUnit);
}

// A mixed job without --verify keeps its write buffers apart from the read
// buffers, so reads do not replace the data writes send.
TEST(FileJob, MixedJobWritesFromTheirOwnBuffers) {
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

// Why: --rwmixread turned every profile into a mix (4k-randwrite did 70%
// reads) while compare kept only the profile's direction.
TEST(FileJob, RwmixreadSetsTheMixOfRandrwOnly) {
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

// Why: the read-back of a --verify write run could not fail for a write the
// target acknowledged and dropped, because every write stored the same
// bytes the layout had put there. The run's generation makes them differ;
// the job records what it wrote and the read-back holds those blocks to it.
TEST(FileJob, VerifyReadBackFindsAWriteThatWasAcknowledgedButLost) {
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
TEST(FileJob, ARequestInFlightAtTheEndOfTheRampCountsWhenItCompletesAfter) {
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

// An engine that reads the clock once per batch hands the driver its
// readings: the latency is the difference of the engine's two times (not
// the driver's own clock at the call), and the deadline is judged at the
// engine's time.
TEST(FileJob, TheEnginesClockReadingsAreTheLatencyAndTheDeadline) {
  JobSpec s = jobSpec("4k-randread", 2, 1ULL << 20);
  s.options.ioBytes = 0;
  s.options.runtime = std::chrono::seconds(5);
  JobDriver d(s, nullptr);
  d.start();
  const auto t0 = BenchClock::now();
  IoRequest req;
  ASSERT_TRUE(d.next(0, req, t0));
  EXPECT_EQ(req.issued, t0);
  d.complete(req, req.buf.size(), "", t0 + std::chrono::milliseconds(3));
  const LatencyHistogram& lat = d.result().dir[static_cast<int>(IoDirection::Read)].lat;
  ASSERT_EQ(lat.count(), 1U);
  EXPECT_NEAR(lat.percentile(50), 3e6, 3e6 / 32);  // within the histogram's bucket
  IoRequest late;
  EXPECT_FALSE(d.next(1, late, t0 + std::chrono::seconds(6)));  // past the 5 s run
  EXPECT_TRUE(d.stopped());
}

// SIGINT stops the jobs at their next request (a review found Ctrl-C left the
// file set and the embedded server's directory behind; FileCommandTest has
// the command's side).
TEST(FileJob, AnInterruptStopsTheJobsAtTheirNextRequest) {
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

// Why: --io-bytes overshot by a block.
TEST(FileJob, IoBytesAreWholeBlocksPerJob) {
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

// Every job's clock starts after every job's setup; a failed setup releases
// the others instead of leaving them waiting (jobs used to start their
// clocks one after another).
TEST(FileJob, JobsStartTogetherAndAFailedSetupReleasesTheOthers) {
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

}  // namespace
}  // namespace nfsrdma::bench
