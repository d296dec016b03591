// The job driver's rule for a --verify job that reads and writes
// (job/FileJob.h; fio's serialize_overlap): it never has two requests on one
// block in flight, so a read never sees half of the job's own write to that
// block. Without --verify, requests may share a block.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <set>
#include <utility>
#include <vector>

#include "bench/job/FileJob.h"

namespace nfsrdma::bench {
namespace {

JobSpec mixedVerifySpec(std::uint32_t depth, std::uint64_t fileBytes) {
  JobSpec s;
  s.profile = profileByName("randrw");
  s.options.ramp = std::chrono::milliseconds(0);
  s.options.runtime = std::chrono::seconds(5);
  s.options.verify = true;
  s.iodepth = depth;
  s.files = {"f0", "f1"};
  s.fileBytes = fileBytes;
  return s;
}

std::pair<std::uint32_t, std::uint64_t> where(const IoRequest& r) {
  return {r.file, r.offset};
}

// Two files of two 4 KiB blocks and 16 slots: at most four requests can be
// in flight, each on its own block; a fifth slot rests instead of doubling up.
TEST(FileVerifyOverlap, AMixedVerifyJobNeverHasTwoRequestsOnOneBlock) {
  JobDriver d(mixedVerifySpec(16, 8192), nullptr);
  d.start();
  std::vector<IoRequest> reqs(16);
  std::set<std::pair<std::uint32_t, std::uint64_t>> busy;
  for (std::uint32_t i = 0; i < 4; ++i) {
    ASSERT_TRUE(d.next(i, reqs[i])) << "slot " << i;
    EXPECT_TRUE(busy.insert(where(reqs[i])).second)
        << "slot " << i << " got block " << reqs[i].offset << " of file " << reqs[i].file
        << ", already in flight";
  }
  EXPECT_FALSE(d.next(4, reqs[4])) << "every block is in flight; the slot must rest";
  EXPECT_FALSE(d.stopped()) << "a resting slot does not end the job";
  // A completion frees its block for the next request, and only that one.
  const auto freed = where(reqs[2]);
  d.complete(reqs[2], reqs[2].buf.size(), "");
  ASSERT_TRUE(d.next(2, reqs[2]));
  EXPECT_EQ(where(reqs[2]), freed) << "the one free block";
  EXPECT_FALSE(d.next(5, reqs[5])) << "and none beside it";
}

// The rule holds over a long random run: with 8 slots over 64 blocks no
// request is ever issued on a block another slot holds.
TEST(FileVerifyOverlap, ARandomMixedRunKeepsItsInFlightBlocksDistinct) {
  JobDriver d(mixedVerifySpec(8, 32ULL * 4096), nullptr);
  d.start();
  std::vector<IoRequest> reqs(8);
  std::set<std::pair<std::uint32_t, std::uint64_t>> busy;
  for (std::uint32_t i = 0; i < 8; ++i) {
    ASSERT_TRUE(d.next(i, reqs[i]));
    ASSERT_TRUE(busy.insert(where(reqs[i])).second);
  }
  int reads = 0, writes = 0;
  for (int n = 0; n < 5000; ++n) {
    const std::uint32_t i = static_cast<std::uint32_t>(n * 5 % 8);  // out of issue order
    busy.erase(where(reqs[i]));
    d.complete(reqs[i], reqs[i].buf.size(), "");
    ASSERT_TRUE(d.next(i, reqs[i])) << "request " << n;
    ASSERT_TRUE(busy.insert(where(reqs[i])).second)
        << "request " << n << " reuses block " << reqs[i].offset << " of file " << reqs[i].file;
    (reqs[i].op == IoDirection::Read ? reads : writes)++;
  }
  EXPECT_GT(reads, 1000);
  EXPECT_GT(writes, 1000);
}

// Without --verify nothing is checked, so nothing is serialised: a job may
// have every slot on its one block, as fio does by default.
TEST(FileVerifyOverlap, WithoutVerifySlotsMayShareABlock) {
  JobSpec s = mixedVerifySpec(4, 4096);
  s.files = {"f0"};
  s.options.verify = false;
  JobDriver d(s, nullptr);
  d.start();
  IoRequest a, b;
  ASSERT_TRUE(d.next(0, a));
  ASSERT_TRUE(d.next(1, b));
  EXPECT_EQ(where(a), where(b));
}

}  // namespace
}  // namespace nfsrdma::bench
