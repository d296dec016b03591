// The commands of nfsrdma-bench side by side (bench/BenchCommands.h): the
// workload options every command shares read the same in each one's --help,
// and a refused value ends each the same way; the tool's --version.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "bench/BenchCommands.h"
#include "tests/unit/bench/CommandCapture.h"
#include "util/Version.h"

namespace nfsrdma::bench {
namespace {

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

// Each workload option is declared once (bench/job/WorkloadOptions.h) and
// says the same thing, with the same bounds, in every command that takes it.
TEST(BenchCommands, AWorkloadOptionSaysTheSameInEveryCommand) {
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

// A refused value is a usage error in every command: exit 2 and one
// "nfsrdma-bench COMMAND: message" line.
TEST(BenchCommands, ARefusedValueExitsTwoInEveryCommand) {
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
      {runFileCommand,
       {"file", "--target", "path:" + dir, "--clients", "2", "--client-index", "5", "--start-at",
        "1764687600", "--cell-slot", "30"},
       "nfsrdma-bench file: --client-index 5: expected 0..1 (--clients 2)\n"},
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

// The tool's standard output and exit status for `nfsrdma-bench WORD`.
std::pair<int, std::string> benchTool(const std::string& word) {
  FILE* p = ::popen((std::string(NFSRDMA_BENCH_BIN) + " " + word + " 2>&1").c_str(), "r");
  if (p == nullptr) return {-1, "popen failed"};
  std::string out;
  char buf[256];
  while (std::fgets(buf, sizeof buf, p) != nullptr) out += buf;
  return {::pclose(p), out};
}

// --version and version: the build's one line, exit 0; the usage says so.
TEST(BenchCommands, VersionPrintsTheBuildsLine) {
  for (const char* word : {"--version", "version"}) {
    const auto [status, out] = benchTool(word);
    EXPECT_EQ(status, 0) << word;
    EXPECT_EQ(out, "nfsrdma-bench " + std::string(util::versionText()) + "\n") << word;
  }
  EXPECT_NE(benchTool("--help").second.find("'nfsrdma-bench --version'"), std::string::npos);
}

}  // namespace
}  // namespace nfsrdma::bench
