// The device anchor's reading of fio's JSON: the figures it compares ours
// with come from these fields (fio 3.33's --output-format=json, trimmed).
#include <gtest/gtest.h>

#include "bench/anchor/DeviceAnchor.h"

namespace nfsrdma::bench {
namespace {

TEST(DeviceAnchor, ReadsFiosJobFigures) {
  const ReadMeasurement r = fioRunFromJson(parseJson(R"({
    "fio version": "fio-3.33",
    "jobs": [{"jobname": "anchor", "error": 0, "job_runtime": 2000,
              "usr_cpu": 5.8, "sys_cpu": 13.55,
              "read": {"io_bytes": 6979321856, "iops": 26619.69, "total_ios": 53248}}]})"));
  EXPECT_EQ(r.client, "fio");
  EXPECT_EQ(r.ops, 53248U);
  EXPECT_EQ(r.bytes, 6979321856U);
  EXPECT_DOUBLE_EQ(r.seconds, 2.0);
  EXPECT_NEAR(r.cpuSeconds, 0.387, 1e-9);
  EXPECT_NEAR(r.iops(), 26624, 1e-9);
  EXPECT_TRUE(r.error.empty());
}

TEST(DeviceAnchor, AFailedFioJobIsAnError) {
  const ReadMeasurement r = fioRunFromJson(parseJson(
      R"({"jobs": [{"error": 5, "job_runtime": 10, "read": {"total_ios": 0, "io_bytes": 0}}]})"));
  EXPECT_EQ(r.error, "fio job error 5");
}

// fio runs at its best: one batch submitted per call, completions reaped
// half the depth at a time, the clock read seldom; what it reads is
// ours (block size, depth, O_DIRECT, random or sequential).
TEST(DeviceAnchor, FioRunsBatchedWithFewClockReadsAtOurBlockSizeAndDepth) {
  EXPECT_EQ(fioOptions(profileByName("4k-randread")),
            "--ioengine=io_uring --direct=1 --rw=randread --bs=4096 --iodepth=32 --fixedbufs=1 "
            "--registerfiles=1 --iodepth_batch_submit=32 --iodepth_batch_complete_min=16 "
            "--iodepth_batch_complete_max=32 --gtod_reduce=1 --norandommap --disk_util=0");
  EXPECT_EQ(fioOptions(profileByName("128k-read")),
            "--ioengine=io_uring --direct=1 --rw=read --bs=131072 --iodepth=8 --fixedbufs=1 "
            "--registerfiles=1 --iodepth_batch_submit=8 --iodepth_batch_complete_min=4 "
            "--iodepth_batch_complete_max=8 --gtod_reduce=1 --norandommap --disk_util=0");
}

TEST(DeviceAnchor, ADocumentWithoutJobsIsRefused) {
  EXPECT_THROW((void)fioRunFromJson(parseJson(R"({"fio version": "fio-3.33"})")),
               std::runtime_error);
  EXPECT_THROW((void)fioRunFromJson(parseJson(R"({"jobs": [{"error": 0}]})")), std::runtime_error);
}

}  // namespace
}  // namespace nfsrdma::bench
