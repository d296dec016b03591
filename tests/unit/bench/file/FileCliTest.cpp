// The command line of the bench commands, read through file/FileCli.h: a
// word that is not an option is an error naming it (a server is given with
// --target), a report's path is checked before anything runs, and compare,
// like file, refuses --rwmixread when no profile is randrw.
#include <gtest/gtest.h>

#include <boost/program_options.hpp>
#include <filesystem>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/BenchCommands.h"
#include "bench/file/FileCli.h"
#include "tests/unit/bench/CommandCapture.h"

namespace nfsrdma::bench {
namespace {

namespace po = boost::program_options;

std::string parseError(std::vector<std::string> args) {
  args.insert(args.begin(), "file");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  po::options_description opts;
  std::string target;
  opts.add_options()("target", po::value(&target));
  po::variables_map vm;
  try {
    storeOptions(static_cast<int>(argv.size()), argv.data(), opts, vm, "--target nfs:URL");
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

TEST(BenchCli, AWordThatIsNoOptionIsAnError) {
  EXPECT_EQ(parseError({"--target", "nfs:nfs://h/e"}), "");
  EXPECT_EQ(parseError({"nfs://h/e"}),
            "unexpected argument 'nfs://h/e': every setting is an option (see --help); a server or "
            "directory "
            "is given with --target nfs:URL");
  EXPECT_EQ(parseError({"--target", "nfs:nfs://h/e", "fast"}),
            "unexpected argument 'fast': every setting is an option (see --help)");
}

TEST(BenchCli, OutputPathIsCheckedBeforeARun) {
  EXPECT_NO_THROW(checkOutputPath("", "--json"));
  EXPECT_NO_THROW(checkOutputPath("-", "--json"));
  EXPECT_NO_THROW(checkOutputPath("report.json", "--json"));  // the current directory
  const std::filesystem::path dir = std::filesystem::temp_directory_path();
  EXPECT_NO_THROW(checkOutputPath((dir / "x.json").string(), "--json"));
  const std::string missing = (dir / "nfsrdma-no-such-dir" / "x.json").string();
  try {
    checkOutputPath(missing, "--html");
    ADD_FAILURE() << "a file in a missing directory was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), "--html " + missing + ": directory " +
                                         (dir / "nfsrdma-no-such-dir").string() +
                                         " does not exist");
  }
}

// compare, like file, refuses --rwmixread when no profile is randrw (it
// had run 4k-randwrite as a 70/30 mix and shown only its write row).
TEST(BenchCli, CompareRefusesRwmixreadWithoutRandrw) {
  std::vector<std::string> args = {
      "compare",    "--target",     "here=path:" + std::filesystem::temp_directory_path().string(),
      "--profiles", "4k-randwrite", "--rwmixread",
      "70"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  ::testing::internal::CaptureStderr();
  const int status = runCompareCommand(static_cast<int>(argv.size()), argv.data());
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(status, 0);
  EXPECT_NE(
      err.find(
          "--rwmixread 70 sets the read percent of the randrw profile only, and the profile is "
          "4k-randwrite"),
      std::string::npos)
      << err;
}

}  // namespace
}  // namespace nfsrdma::bench
