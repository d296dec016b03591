// The device anchor's reading of fio's JSON: the figures it compares ours
// with come from these fields (fio 3.33's --output-format=json, trimmed).
#include "bench/anchor/DeviceAnchor.h"

#include <gtest/gtest.h>

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

TEST(DeviceAnchor, ADocumentWithoutJobsIsRefused) {
  EXPECT_THROW((void)fioRunFromJson(parseJson(R"({"fio version": "fio-3.33"})")), std::runtime_error);
  EXPECT_THROW((void)fioRunFromJson(parseJson(R"({"jobs": [{"error": 0}]})")), std::runtime_error);
}

}  // namespace
}  // namespace nfsrdma::bench
