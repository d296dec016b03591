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

// Option `name`'s help in a command's --help: its lines joined, spaces
// collapsed, without boost's "arg (=default)" (the defaults may differ).
std::string helpOf(const std::string& help, const std::string& name) {
  const auto at = help.find("\n  --" + name + " ");
  if (at == std::string::npos) return "(no --" + name + ")";
  std::istringstream lines(help.substr(at + 1));
  std::string text, line;
  for (bool first = true; std::getline(lines, line); first = false) {
    if (!first && (line.rfind("   ", 0) != 0)) break;  // the next option or the end
    text += " " + line;
  }
  std::istringstream in(text);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  std::size_t from = 1;  // after "--name"
  if (from < words.size() && words[from] == "arg") ++from;
  if (from < words.size() && words[from].rfind("(=", 0) == 0) ++from;
  std::string out;
  for (std::size_t i = from; i < words.size(); ++i) out += (out.empty() ? "" : " ") + words[i];
  return out;
}

std::string helpText(int (*command)(int, char**), std::vector<std::string> args) {
  args.emplace_back("--help");
  const auto r = testing::runCommand(command, args);
  EXPECT_EQ(r.rc, 0) << r.err;
  return r.out;
}

// Why: the workload options were declared in four tables with four help
// texts and two sets of bounds (kube took --numjobs up to 1024, which every
// pod's compare then refused). Each is declared once (bench/job/WorkloadOptions.h)
// and says the same thing in every command that takes it.
TEST(BenchCli, AWorkloadOptionSaysTheSameInEveryCommand) {
  const std::string file = helpText(runFileCommand, {"file"});
  const std::string compare = helpText(runCompareCommand, {"compare"});
  const std::string kube = helpText(runKubeCommand, {"kube"});
  const std::string anchor = helpText(runAnchorCommand, {"anchor"});
  for (const char* name : {"runtime", "ramp", "size", "iodepth", "numjobs", "verify"}) {
    EXPECT_EQ(helpOf(compare, name), helpOf(file, name)) << name;
    EXPECT_EQ(helpOf(kube, name), helpOf(file, name)) << name;
  }
  EXPECT_EQ(helpOf(kube, "profiles"), helpOf(compare, "profiles"));
  EXPECT_EQ(helpOf(anchor, "runtime"), helpOf(file, "runtime"));
  EXPECT_EQ(helpOf(anchor, "size"), helpOf(kube, "size"));
  EXPECT_NE(helpOf(file, "runtime").find("(0, 86400]"), std::string::npos) << file;
}

// Why: a refused value exited 1 in file, compare and anchor (a
// std::invalid_argument, as a failure) and 2 in link and kube. It is a
// usage error everywhere: exit 2, one "nfsrdma-bench COMMAND: message" line.
TEST(BenchCli, ARefusedValueExitsTwoInEveryCommand) {
  const std::string dir = std::filesystem::temp_directory_path().string();
  const std::string runtime = "--runtime must be in (0, 86400] seconds\n";
  struct Case {
    int (*command)(int, char**);
    std::vector<std::string> args;
    std::string err;
  };
  const std::vector<Case> cases = {
      {runFileCommand,
       {"file", "--target", "path:" + dir, "--runtime", "0"},
       "nfsrdma-bench file: " + runtime},
      {runCompareCommand,
       {"compare", "--target", "here=path:" + dir, "--json", "", "--html", "", "--runtime", "0"},
       "nfsrdma-bench compare: " + runtime},
      {runKubeCommand,
       {"kube", "--clients", "2", "--image", "reg.example/nfsrdma:1", "--volume",
        "nfs=rwx:nfs-client", "--runtime", "0"},
       "nfsrdma-bench kube: " + runtime},
      {runAnchorCommand, {"anchor", "--runtime", "0"}, "nfsrdma-bench anchor: " + runtime},
      {runFileCommand,
       {"file", "--target", "path:" + dir, "--numjobs", "300"},
       "nfsrdma-bench file: --numjobs must be 1..256\n"},
      {runKubeCommand,
       {"kube", "--clients", "2", "--image", "reg.example/nfsrdma:1", "--volume",
        "nfs=rwx:nfs-client", "--numjobs", "300"},
       "nfsrdma-bench kube: --numjobs must be 1..256\n"},
      {runFileCommand, {"file", "--target", "nfs:nfs://127.0.0.1/export?proto=carrier-pigeon"}, ""},
      {runFileCommand, {"file", "--target", "path:" + dir, "--profile", "8k-read"}, ""},
      {runLinkCommand, {"link", "-s", "0", "127.0.0.1"}, ""},
  };
  for (const auto& c : cases) {
    const auto r = testing::runCommand(c.command, c.args);
    EXPECT_EQ(r.rc, 2) << c.args[0] << ": " << r.err;
    if (!c.err.empty()) {
      EXPECT_EQ(r.err, c.err);
    }
    EXPECT_EQ(r.err.rfind("nfsrdma-bench " + c.args[0] + ": ", 0), 0U) << r.err;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "one line: " << r.err;
  }
}

}  // namespace
}  // namespace nfsrdma::bench
