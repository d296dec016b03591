// plan/apply against nfs.conf as nfs-utils reads it: same-name sections,
// continued lines, inline comments, quotes and yes/no synonyms in
// /etc/nfs.conf, and values set again in files nfsrdma-server does not edit
// (/etc/nfs.conf.d/*.conf, `include`d files), which plan lists and apply
// refuses, naming the file and line, without touching anything.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "server/CommandRunner.h"
#include "server/HostPaths.h"
#include "server/NfsConf.h"
#include "tests/unit/server/StagedHost.h"
#include "tests/unit/server/ToolRunner.h"

using nfsrdma::server::EffectiveNfsConf;
using nfsrdma::server::HostPaths;
using nfsrdma::server::testing::replaced;
using nfsrdma::server::testing::runTool;
using nfsrdma::server::testing::StagedHost;

namespace {

const char* kConfig =
    "exports:\n"
    "  - path: /srv/nfsrdma/data\n"
    "    clients:\n"
    "      - host: 192.168.100.0/24\n"
    "        insecure: true\n"
    "nfsd:\n"
    "  threads: 16\n"
    "  versions: [\"4.1\", \"4.2\"]\n"
    "rdma:\n"
    "  device: rxe0\n"
    "  netdev: eth0\n";

bool has(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

class NfsConfOverride : public ::testing::Test {
 protected:
  void SetUp() override {
    host.write("cfg/server.yaml", kConfig);
    cfg = (host.root / "cfg/server.yaml").string();
    root = host.root.string();
  }
  // A first apply, so the host matches the config and nfs.conf has our keys.
  void applyOnce() {
    auto r = runTool({"--root", root, "apply", cfg});
    ASSERT_EQ(r.status, 0) << r.err << r.out;
    auto again = runTool({"--root", root, "apply", cfg});
    ASSERT_EQ(again.status, 0) << again.err;
    ASSERT_TRUE(has(again.out, "No change")) << again.out;
  }
  std::optional<std::string> effective(const std::string& key) const {
    auto o = EffectiveNfsConf(HostPaths(host.root), host.read("etc/nfs.conf")).get("nfsd", key);
    if (!o) return std::nullopt;
    return o->value;
  }
  StagedHost host;
  std::string cfg, root;
};

}  // namespace

TEST_F(NfsConfOverride, NfsConfDOverrideIsListedByPlanAndRefusedByApply) {
  applyOnce();
  // vers4.1 = yes agrees with the config: not an override.
  host.write("etc/nfs.conf.d/local.conf", "[nfsd]\nthreads=8\nrdma=n\nvers4.1 = yes\n");
  const auto before = host.snapshot();

  auto plan = runTool({"--root", root, "plan", cfg});
  EXPECT_EQ(plan.status, 1) << "plan exits 1 when apply would refuse";
  EXPECT_FALSE(has(plan.out, "No changes: the host already matches")) << plan.out;
  EXPECT_TRUE(has(plan.out, "Apply refuses")) << plan.out;
  EXPECT_TRUE(has(plan.out, "/etc/nfs.conf.d/local.conf:2: threads=8 overrides the threads=16"))
      << plan.out;
  EXPECT_TRUE(has(plan.out, "/etc/nfs.conf.d/local.conf:3: rdma=n overrides the rdma=y"))
      << plan.out;
  EXPECT_FALSE(has(plan.out, "vers4.1")) << plan.out;

  for (auto args : {std::vector<std::string>{"--root", root, "apply", cfg},
                    std::vector<std::string>{"--root", root, "--dry-run", "apply", cfg}}) {
    auto apply = runTool(args);
    EXPECT_EQ(apply.status, 1) << apply.out;
    EXPECT_TRUE(has(apply.err, "refusing to apply")) << apply.err;
    EXPECT_TRUE(has(apply.err, "/etc/nfs.conf.d/local.conf:2: threads=8")) << apply.err;
    EXPECT_TRUE(has(apply.err, "/etc/nfs.conf.d/local.conf:3: rdma=n")) << apply.err;
  }
  EXPECT_EQ(host.snapshot(), before) << "a refused apply must change nothing";
}

TEST_F(NfsConfOverride, RefusedBeforeAnythingIsDoneOnAFreshHost) {
  host.write("etc/nfs.conf.d/50-site.conf", "# site\n[nfsd]\nvers4.0 = yes\n");
  const auto before = host.snapshot();
  auto apply = runTool({"--root", root, "apply", cfg});
  EXPECT_EQ(apply.status, 1) << apply.out;
  EXPECT_TRUE(has(apply.err, "/etc/nfs.conf.d/50-site.conf:3: vers4.0=yes overrides the vers4.0=n"))
      << apply.err;
  EXPECT_EQ(host.snapshot(), before) << "no module, file or kernel value may change";
}

TEST_F(NfsConfOverride, AnIncludeAfterOurKeysIsRefused) {
  applyOnce();
  host.write("etc/nfs-site.conf", "vers3=y\n");
  const std::string conf = host.read("etc/nfs.conf") + "[nfsd]\ninclude = nfs-site.conf\n";
  host.write("etc/nfs.conf", conf);
  const auto line = std::to_string(std::count(conf.begin(), conf.end(), '\n'));
  const auto before = host.snapshot();
  auto plan = runTool({"--root", root, "plan", cfg});
  EXPECT_EQ(plan.status, 1);
  EXPECT_TRUE(has(plan.out,
                  "/etc/nfs-site.conf:1: vers3=y overrides the vers3=n set in "
                  "/etc/nfs.conf (included from /etc/nfs.conf:" +
                      line + ")"))
      << plan.out;
  auto apply = runTool({"--root", root, "apply", cfg});
  EXPECT_EQ(apply.status, 1);
  EXPECT_TRUE(has(apply.err, "/etc/nfs-site.conf:1: vers3=y")) << apply.err;
  EXPECT_EQ(host.snapshot(), before);
}

TEST_F(NfsConfOverride, AKeyOnlyAnEarlierIncludeSetsIsSetAfterIt) {
  // The include comes before the place we add our keys: ours are read last.
  host.write("etc/nfs-site.conf", "vers3=y\nthreads=4\n");
  host.write("etc/nfs.conf", std::string(nfsrdma::server::testing::kSampleNfsConf) +
                                 "\n[nfsd]\ninclude = /etc/nfs-site.conf\n");
  applyOnce();
  EXPECT_EQ(host.read("etc/nfs-site.conf"), "vers3=y\nthreads=4\n");
  EXPECT_EQ(effective("vers3"), "n");
  EXPECT_EQ(effective("threads"), "16");
}

TEST_F(NfsConfOverride, ASecondNfsdSectionIsEditedNotIgnored) {
  applyOnce();
  const std::string first = host.read("etc/nfs.conf");
  host.write("etc/nfs.conf", first + "\n# added by admin\n[nfsd]\nthreads=4\nvers4.0=y\n");
  auto plan = runTool({"--root", root, "plan", cfg});
  ASSERT_EQ(plan.status, 0) << plan.err;
  EXPECT_TRUE(has(plan.out, "-threads=4\n-vers4.0=y\n+threads=16\n+vers4.0=n\n")) << plan.out;
  applyOnce();
  EXPECT_EQ(host.read("etc/nfs.conf"),
            first + "\n# added by admin\n[nfsd]\nthreads=16\nvers4.0=n\n");
  EXPECT_EQ(effective("threads"), "16");
  EXPECT_EQ(effective("vers4.0"), "n");
}

TEST_F(NfsConfOverride, AContinuedCommentLineHidesTheKeyAndPlanSeesIt) {
  applyOnce();
  const std::string conf = replaced(host.read("etc/nfs.conf"), "threads=16\n",
                                    "# old setting, see wiki \\\nthreads=16\n");
  host.write("etc/nfs.conf", conf);
  ASSERT_EQ(effective("threads"), std::nullopt);  // nfsconf --get nfsd threads: unset
  auto plan = runTool({"--root", root, "plan", cfg});
  EXPECT_TRUE(has(plan.out, "+threads=16")) << plan.out;
  applyOnce();
  EXPECT_EQ(effective("threads"), "16");
  EXPECT_TRUE(has(host.read("etc/nfs.conf"), "# old setting, see wiki \\\nthreads=16\n"));
}

TEST_F(NfsConfOverride, ValuesThatMeanTheSameAreLeftAsWritten) {
  applyOnce();
  std::string conf = host.read("etc/nfs.conf");
  conf = replaced(conf, "threads=16\n", "threads = 16   # sized for 2 NICs\n");
  conf = replaced(conf, "vers3=n\n", "vers3 = no\n");
  conf = replaced(conf, "vers4.1=y\n", "vers4.1=\"y\"\n");
  conf = replaced(conf, "rdma=y\n", "rdma = On ; RoCE\n");
  host.write("etc/nfs.conf", conf);
  const auto before = host.snapshot();
  auto plan = runTool({"--root", root, "plan", cfg});
  ASSERT_EQ(plan.status, 0) << plan.err;
  EXPECT_TRUE(has(plan.out, "No changes: the host already matches")) << plan.out;
  auto apply = runTool({"--root", root, "apply", cfg});
  ASSERT_EQ(apply.status, 0) << apply.err;
  EXPECT_TRUE(has(apply.out, "No change")) << apply.out;
  EXPECT_EQ(host.snapshot(), before);

  // A real change replaces the value only: the comment stays.
  host.write("cfg/server.yaml", replaced(kConfig, "threads: 16", "threads: 32"));
  applyOnce();
  EXPECT_TRUE(has(host.read("etc/nfs.conf"), "\nthreads = 32   # sized for 2 NICs\n"));
}

// An /etc/nfs.conf with a NUL byte (a file a crash left with a zeroed tail):
// nfs-utils reads nothing from the NUL on, so apply puts our keys before it,
// keeps the bytes after it, and says once that nfs-utils ignores them (at
// the line the NUL has in the file as apply leaves it).
TEST_F(NfsConfOverride, ANulByteInNfsConfGetsOurKeysBeforeIt) {
  const std::string tail = std::string(1, '\0') + std::string(4095, '\0');
  host.write("etc/nfs.conf", "[nfsd]\nthreads=4\n" + tail);
  auto apply = runTool({"--root", root, "apply", cfg});
  ASSERT_EQ(apply.status, 0) << apply.err << apply.out;
  EXPECT_TRUE(has(apply.out,
                  "note: /etc/nfs.conf:12: a NUL byte; nfs-utils reads nothing from "
                  "there on (4096 bytes)"))
      << apply.out;
  const std::string conf = host.read("etc/nfs.conf");
  const auto nul = conf.find('\0');
  ASSERT_NE(nul, std::string::npos);
  EXPECT_EQ(conf.substr(nul), tail);
  EXPECT_TRUE(has(conf.substr(0, nul), "[nfsd]\nthreads=16\nvers3=n\n")) << conf.substr(0, nul);
  EXPECT_EQ(effective("threads"), "16");
  EXPECT_EQ(effective("rdma"), "y");
  const std::string nfsconf =
      nfsrdma::server::findHostTool(nfsrdma::server::HostPaths("/"), "nfsconf");
  if (nfsconf.empty()) GTEST_SKIP() << "nfsconf (nfs-common) is not installed: no oracle";
  nfsrdma::server::SystemCommandRunner run(std::chrono::seconds(10));
  const auto got = run.run(
      {nfsconf, "--file", (host.root / "etc/nfs.conf").string(), "--get", "nfsd", "threads"});
  EXPECT_EQ(got.exitStatus, 0) << got.output;
  EXPECT_EQ(got.output, "16\n");
}
