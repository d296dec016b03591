// Why: a review of the file benchmark found that --rwmixread turned every
// profile into a mix (4k-randwrite did 70% reads) while compare kept only
// the profile's direction. Each test fails without its fix.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/BenchCommands.h"
#include "bench/FileJob.h"

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

}  // namespace
}  // namespace nfsrdma::bench
