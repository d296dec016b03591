// Profiles and the workload's options (job/FileProfile.h): sizes, the
// read/write mix, the caps on the file set and the buffers. The tests came
// from reviews that found a bug; each fails without its fix.
#include <gtest/gtest.h>

#include <boost/program_options.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/BenchCommands.h"
#include "bench/file/FileCli.h"
#include "bench/job/FileProfile.h"
#include "tests/unit/bench/ErrorOf.h"

namespace nfsrdma::bench {
namespace {

using testing::errorOf;

std::string rwmixError(const FileOptions& o, const std::vector<FileProfile>& profiles) {
  try {
    validateRwmixread(o, profiles);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

// Why: --rwmixread turned every profile into a mix; now it is refused for
// anything but randrw, with a line that says what to run instead.
TEST(FileProfile, RwmixreadWithoutRandrwIsRefused) {
  FileOptions o;
  EXPECT_EQ(rwmixError(o, {profileByName("4k-randwrite")}), "");  // not given
  o.rwmixread = 70;
  EXPECT_EQ(rwmixError(o, {profileByName("4k-randwrite")}),
            "--rwmixread 70 sets the read percent of the randrw profile only, and the profile is "
            "4k-randwrite: run "
            "randrw with --rwmixread 70 (or randrw:70), or drop --rwmixread");
  EXPECT_NE(rwmixError(o, {profileByName("randrw:30")}).find("its mix is in the name"),
            std::string::npos);
  EXPECT_EQ(rwmixError(o, {profileByName("randrw")}), "");
  EXPECT_EQ(rwmixError(o, fileProfiles()), "");  // compare's default set holds randrw
  EXPECT_NE(rwmixError(o, {profileByName("4k-randread"), profileByName("4m-write")})
                .find("the profiles are 4k-randread, 4m-write"),
            std::string::npos);
  // `file` refuses it before it runs anything (the target does not exist).
  std::vector<std::string> args = {"file",
                                   "--profile",
                                   "4k-randwrite",
                                   "--rwmixread",
                                   "70",
                                   "--target",
                                   "path:/nonexistent-nfsrdma-dir"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  ::testing::internal::CaptureStderr();
  const int rc =
      runFileCommand(static_cast<int>(argv.size()), argv.data());  // argv[0]: the subcommand
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(rc, 2);  // a refused value: a usage error
  EXPECT_NE(err.find("--rwmixread 70 sets the read percent of the randrw profile only"),
            std::string::npos)
      << err;
}

// Why: a typo in --size could fill a disk, and huge buffers were not refused.
TEST(FileProfile, HugeFileSetsAndBuffersAreRefused) {
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

// Sizes: the whole text, errors naming the option and the form (they parsed
// loosely, with errors that did not name the option).
TEST(FileProfile, SizesParseStrictlyAndErrorsNameTheOption) {
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

TEST(FileProfile, ClientIsPerJobOrShared) {
  WorkloadArgs a;
  EXPECT_FALSE(toFileOptions(a).sharedClient);
  a.client = "shared";
  EXPECT_TRUE(toFileOptions(a).sharedClient);
  a.client = "one";
  EXPECT_EQ(errorOf([&] { toFileOptions(a); }), "--client 'one': expected per-job or shared");
}

// --bs: the run's block size and name follow it, every rule (buffers,
// blocks per file) sees it, and a size that is no block is refused.
TEST(FileProfile, BlockSizeReplacesTheProfilesAndItsNameSaysSo) {
  WorkloadArgs a;
  a.bs = "1m";
  const FileOptions o = toFileOptions(a);
  EXPECT_EQ(o.blockSize, 1U << 20);
  const FileProfile run = profileAsRun(profileByName("4m-read"), o);
  EXPECT_EQ(run.name, "1m-read");
  EXPECT_EQ(run.blockSize, 1U << 20);
  EXPECT_FALSE(run.random);
  EXPECT_EQ(profileAsRun(run, o).name, "1m-read");
  EXPECT_EQ(profileAsRun(profileByName("randrw"), o).name, "randrw-1m");
  EXPECT_EQ(profileAsRun(profileByName("4k-randread"), FileOptions{}).name, "4k-randread");
  EXPECT_EQ(blockSizeLabel(1536), "1536");
  EXPECT_EQ(blockSizeLabel(64U << 10), "64k");
  // 8 x 1 MiB, not 8 x 128 KiB, of buffers; a 512 KiB file holds no 1 MiB block.
  EXPECT_EQ(bufferBytes(o, profileByName("128k-read")), 8ULL << 20);
  FileOptions small = o;
  small.sizeBytes = 512 << 10;
  EXPECT_EQ(errorOf([&] { validateOptions(small, profileByName("128k-read")); }),
            "--size 512 KiB over 1 file(s) leaves less than one 1 MiB block per file for 1m-read");
  for (const char* bad : {"100", "1000", "128m"}) {
    a.bs = bad;
    EXPECT_NE(
        errorOf([&] { toFileOptions(a); }).find("expected 512 bytes to 64m, a multiple of 512"),
        std::string::npos)
        << bad;
  }
  a.bs = "1q";
  EXPECT_NE(errorOf([&] { toFileOptions(a); }).find("--bs '1q'"), std::string::npos);
}

}  // namespace
}  // namespace nfsrdma::bench
