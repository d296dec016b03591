// bench/tune/ServerKnobs against a runner that answers in the server's
// place (the real knfsd and nfsrdma-server are the VM's 72-tune): the
// knobs from the server's values, the config variants and fragment, the
// prefix's quoting, and the session's rules: nothing before its checks,
// an apply only when a server knob changes, a rollback at the end also
// when the run ends by an error.
#include <gtest/gtest.h>

#include <map>
#include <stdexcept>

#include "bench/tune/ServerKnobs.h"
#include "client/mount/MountPlan.h"

namespace nfsrdma::bench {
namespace {

// Answers by the command's first words; records every command.
class FakeServer : public hostcheck::CommandRunner {
 public:
  std::map<std::string, hostcheck::CommandResult> answers;  // "nfsrdma-server apply" -> result
  std::vector<std::vector<std::string>> ran;
  hostcheck::CommandResult run(const std::vector<std::string>& argv) override {
    ran.push_back(argv);
    const std::string two = argv.size() > 1 ? argv[0] + " " + argv[1] : argv[0];
    if (answers.count(two) != 0) return answers[two];
    if (answers.count(argv[0]) != 0) return answers[argv[0]];
    return {0, ""};
  }
  std::vector<std::string> commands() const {
    std::vector<std::string> out;
    for (const auto& a : ran) out.push_back(a.size() > 1 ? a[0] + " " + a[1] : a[0]);
    return out;
  }
};

const std::string kConfig = "exports:\n  - path: /srv/x\nnfsd:\n  lease_time: 10\n";

std::vector<Knob> serverKnobs() {
  KnobSpace space;
  addServerKnobs(space, ServerStart{1, 8}, true, "");
  return space.knobs;
}

TEST(ServerKnobs, LevelsAroundTheServersValuesOrWhyNot) {
  const std::vector<Knob> k = serverKnobs();
  ASSERT_EQ(k.size(), 2U);
  EXPECT_EQ(k[0].name, "nfsd.threads");
  EXPECT_EQ(k[0].levels, (std::vector<std::string>{"1", "4", "8", "16", "32", "64"}));
  EXPECT_EQ(k[1].levels, (std::vector<std::string>{"8", "32", "64", "128", "256"}));
  EXPECT_EQ(k[1].start, 0U);
  KnobSpace tcp;
  addServerKnobs(tcp, ServerStart{8, 64}, false, "");
  EXPECT_EQ(tcp.leftAlone.at(0).why, "svcrdma's credits: RDMA only");
  KnobSpace not_allowed;
  addServerKnobs(not_allowed, ServerStart{8, 64}, true, "--allow-server-changes not given");
  EXPECT_TRUE(not_allowed.knobs.empty());
  EXPECT_EQ(not_allowed.leftAlone.size(), 2U);
  KnobSpace no_nfsd;
  addServerKnobs(no_nfsd, ServerStart{}, true, "");
  EXPECT_EQ(no_nfsd.leftAlone.at(0).knob, "nfsd.threads");
  EXPECT_EQ(no_nfsd.leftAlone.at(1).why, "svcrdma is not loaded there");
}

TEST(ServerKnobs, TheConfigsVariantAndTheFragment) {
  const std::vector<Knob> k = serverKnobs();
  const std::string v = serverConfigVariant(kConfig, k, {2, 3});
  EXPECT_NE(v.find("threads: 8"), std::string::npos) << v;
  EXPECT_NE(v.find("lease_time: 10"), std::string::npos) << v;
  EXPECT_NE(v.find("max_requests: 128"), std::string::npos) << v;
  EXPECT_NE(v.find("path: /srv/x"), std::string::npos) << v;
  EXPECT_EQ(serverFragment(k, {2, 0}, {0, 0}), "nfsd:\n  threads: 8\n");
  EXPECT_EQ(serverFragment(k, {0, 0}, {0, 0}), "");
  EXPECT_THROW(serverConfigVariant("- a\n- b\n", k, {0, 0}), std::invalid_argument);
  EXPECT_THROW(serverConfigVariant("a: [", k, {0, 0}), std::invalid_argument);
}

TEST(ServerKnobs, APrefixGetsTheCommandLineAsOneQuotedWord) {
  FakeServer f;
  ServerHost host(f, "ssh root@srv");
  host.run({"cat", "/proc/fs/nfsd/threads", "it's"});
  ASSERT_EQ(f.ran.size(), 1U);
  EXPECT_EQ(f.ran[0][0], "sh");
  EXPECT_EQ(f.ran[0][2], "ssh root@srv " + mount::shellQuote("cat /proc/fs/nfsd/threads " +
                                                             mount::shellQuote("it's")));
  ServerHost local(f, "");
  local.run({"cat", "x"});
  EXPECT_EQ(f.ran[1], (std::vector<std::string>{"cat", "x"}));
  f.answers["cat"] = {0, "16\n"};
  EXPECT_EQ(readServerStart(local).threads, 16U);
}

TEST(ServerKnobs, ASessionAppliesOnlyChangesAndRollsBackAtTheEnd) {
  FakeServer f;
  f.answers["test"] = {1, ""};  // no undo record
  f.answers["mktemp"] = {0, "/tmp/nfsrdma-tune.abcdefgh\n"};
  ServerHost host(f, "");
  const std::vector<Knob> k = serverKnobs();
  {
    ServerSession s(host, kConfig);
    EXPECT_EQ(f.commands(),
              (std::vector<std::string>{"nfsrdma-server --version", "test -e", "mktemp -t", "sh -c",
                                        "nfsrdma-server plan"}));
    f.ran.clear();
    s.use(k, {0, 0});  // the start: nothing to do
    EXPECT_TRUE(f.ran.empty());
    s.use(k, {2, 0});
    s.use(k, {2, 0});  // in effect already
    s.use(k, {0, 0});  // back to the start's values: applied
    EXPECT_EQ(s.applies(), 2U);
    f.ran.clear();
    EXPECT_NE(s.finish(false).find("the server is as it began: 2 applies rolled back"),
              std::string::npos);
    EXPECT_EQ(f.commands(), (std::vector<std::string>{"nfsrdma-server rollback", "rm -f"}));
  }
  f.ran.clear();
  {
    ServerSession s(host, kConfig);
    s.use(k, {1, 1});
  }  // an error or Ctrl-C unwinds through here: rolled back
  EXPECT_EQ(f.commands()[f.commands().size() - 2], "nfsrdma-server rollback");
}

TEST(ServerKnobs, APendingApplyOfTheSameConfigIsRolledBackAndAppliedAgain) {
  FakeServer f;
  ServerHost host(f, "");
  f.answers["test"] = {0, ""};  // the undo record is there
  f.answers["nfsrdma-server plan"] = {0, "No changes: the host already matches the config.\n"};
  {
    ServerSession s(host, kConfig);
    s.use(serverKnobs(), {2, 0});
    f.ran.clear();
    EXPECT_NE(s.finish(false).find("then --server-config applied again"), std::string::npos);
    EXPECT_EQ(f.commands(), (std::vector<std::string>{"nfsrdma-server rollback", "sh -c",
                                                      "nfsrdma-server apply", "rm -f"}));
  }
  // Another config than the one applied: refused before any change.
  f.answers["nfsrdma-server plan"] = {0, "Files:\n+ /srv/other\n"};
  f.ran.clear();
  try {
    ServerSession s(host, kConfig);
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("differs from --server-config now"), std::string::npos);
  }
  // A config plan refuses.
  f.answers["test"] = {1, ""};
  f.answers["nfsrdma-server plan"] = {1, "Apply refuses: ...\n"};
  EXPECT_THROW(ServerSession(host, kConfig), std::runtime_error);
  EXPECT_EQ(f.commands().back(), "rm -f");  // its temporary file goes with it
  for (const auto& c : f.commands()) {
    EXPECT_NE(c, "nfsrdma-server apply");
    EXPECT_NE(c, "nfsrdma-server rollback");
  }
}

TEST(ServerKnobs, KeepingTheRecommendationLeavesItAppliedAndSaysHowToUndoIt) {
  FakeServer f;
  f.answers["test"] = {1, ""};
  ServerHost host(f, "");
  ServerSession s(host, kConfig);
  s.use(serverKnobs(), {3, 2});
  f.ran.clear();
  EXPECT_EQ(s.finish(true),
            "the server keeps the recommendation (applied on this host); `nfsrdma-server "
            "rollback` there undoes it");
  EXPECT_EQ(f.commands(), (std::vector<std::string>{"rm -f"}));
}

TEST(ServerKnobs, AFailedApplyEndsTheRunAndIsRolledBack) {
  FakeServer f;
  ServerHost host(f, "");
  f.answers["test"] = {1, ""};
  f.answers["nfsrdma-server apply"] = {1, "exportfs: duplicated export entries"};
  {
    ServerSession s(host, kConfig);
    EXPECT_THROW(s.use(serverKnobs(), {1, 0}), ServerChangeFailed);
  }
  EXPECT_EQ(f.commands().back(), "rm -f");
  EXPECT_EQ(f.commands()[f.commands().size() - 2], "nfsrdma-server rollback");
}

}  // namespace
}  // namespace nfsrdma::bench
