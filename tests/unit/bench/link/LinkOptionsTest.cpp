// Why: perftest users will type their ib_write_bw habits (-s -a -n -D -q -t
// -b --report_gbits); those must mean the same here, and bad input must be a
// message, not a crash.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/BenchCommands.h"
#include "bench/link/LinkOptions.h"
#include "bench/report/Json.h"
#include "tests/unit/bench/CommandCapture.h"
#include "util/Version.h"

namespace nfsrdma::bench {
namespace {

std::optional<LinkOptions> parse(std::vector<std::string> args) {
  args.insert(args.begin(), "link");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  return parseLinkOptions(static_cast<int>(argv.size()), argv.data());
}

// Expects args to be refused with a message containing text.
void refused(const std::vector<std::string>& args, const std::string& text) {
  try {
    (void)parse(args);
    ADD_FAILURE() << text << ": accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
  }
}

TEST(LinkOptions, PerftestDefaults) {
  const auto o = parse({"198.18.0.1"});
  ASSERT_TRUE(o);
  EXPECT_EQ(o->host, "198.18.0.1");
  EXPECT_EQ(o->port, 18515);
  EXPECT_EQ(o->size, 65536u);
  EXPECT_EQ(o->iterations, 5000u);
  EXPECT_EQ(o->txDepth, 128u);
  EXPECT_EQ(o->unit, BandwidthUnit::MiBPerSecond);
  EXPECT_EQ(o->test, LinkTest::Write);
}

TEST(LinkOptions, PerftestLetters) {
  const auto o = parse({"-s", "1048576", "-n", "300", "-q", "2", "-t", "64", "-b", "--report_gbits",
                        "-D", "3", "--verify", "host"});
  ASSERT_TRUE(o);
  EXPECT_EQ(o->size, 1048576u);
  EXPECT_EQ(o->iterations, 300u);
  EXPECT_EQ(o->qps, 2u);
  EXPECT_EQ(o->txDepth, 64u);
  EXPECT_EQ(o->cqModeration, 64u);  // never above the TX depth
  EXPECT_TRUE(o->bidirectional);
  EXPECT_TRUE(o->verify);
  EXPECT_DOUBLE_EQ(o->durationSeconds, 3.0);
  EXPECT_EQ(o->unit, BandwidthUnit::GbitPerSecond);
}

// Combinations whose result would not mean what it says are refused, each
// naming the option: a ratio of two RDMA directions over one TCP direction,
// a latency run that ignores -D or -q, a sweep that ignores -D, -n 0.
TEST(LinkOptions, CombinationsThatWouldMisleadAreRefused) {
  refused({"--both", "-b", "host"}, "--both compares one direction");
  refused({"--test", "lat", "-D", "3", "host"}, "-D is for the bandwidth tests");
  refused({"--test", "lat", "-q", "2", "host"}, "-q is for the bandwidth tests");
  refused({"-a", "-D", "2", "host"}, "-a and -D exclude each other");
  refused({"-n", "0", "host"}, "--iters must be at least 1");
  refused({"--test", "lat", "-n", "1000000000000", "host"},
          "--iters for the latency test must be 1..");
}

// perftest's --perform_warm_up is off by default there, so it is here: the
// VM comparison with ib_write_bw times the same messages in both tools.
TEST(LinkOptions, WarmUpIsPerftestsOptInSwitch) {
  EXPECT_FALSE(parse({"host"})->warmUp);
  EXPECT_TRUE(parse({"--perform_warm_up", "host"})->warmUp);
  EXPECT_TRUE(parse({"--perform_warm_up", "--test", "read", "host"})->warmUp);
  for (std::vector<std::string> args :
       {std::vector<std::string>{"--test", "lat"}, {"--tcp"}, {"--both"}, {"-b"}}) {
    args.insert(args.begin(), "--perform_warm_up");
    args.push_back("host");
    try {
      (void)parse(args);
      ADD_FAILURE() << "accepted --perform_warm_up with " << args[1];
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("--perform_warm_up is for the one-way"),
                std::string::npos)
          << e.what();
    }
  }
}

// perftest's -e/--events and its polling default. Neither given: Auto,
// which the client resolves once it knows the device (events on a software
// device). The latency test polls; TCP has no CQ.
TEST(LinkOptions, EventsOrPollOrChosenByTheDevice) {
  EXPECT_EQ(parse({"host"})->cqWait, CqWait::Auto);
  EXPECT_EQ(parse({"-e", "host"})->cqWait, CqWait::Events);
  EXPECT_EQ(parse({"--events", "--test", "read", "host"})->cqWait, CqWait::Events);
  EXPECT_EQ(parse({"-e", "-b", "host"})->cqWait, CqWait::Events);
  EXPECT_EQ(parse({"-e", "--both", "host"})->cqWait, CqWait::Events);
  EXPECT_EQ(parse({"--poll", "host"})->cqWait, CqWait::Poll);
  EXPECT_EQ(parse({"--poll", "--test", "lat", "host"})->cqWait, CqWait::Poll);
  refused({"-e", "--test", "lat", "host"}, "-e is for the RDMA WRITE and READ bandwidth tests");
  refused({"-e", "--tcp", "host"}, "-e is for the RDMA WRITE and READ bandwidth tests");
  refused({"--poll", "--tcp", "host"}, "--poll is for the RDMA tests");
  refused({"-e", "--poll", "host"}, "-e and --poll exclude each other");
  refused({"--server", "-e"}, "-e and --poll are client options");
  refused({"--server", "--poll"}, "-e and --poll are client options");
}

// As perftest: -D is the whole run, and a quarter of it (whole seconds) at
// each end stays out of the measurement unless --margin/-f says otherwise.
TEST(LinkOptions, DurationMarginLikePerftest) {
  EXPECT_EQ(parse({"-D", "10", "host"})->marginSeconds, 2.0);
  EXPECT_EQ(parse({"-D", "5", "host"})->marginSeconds, 1.0);
  EXPECT_EQ(parse({"-D", "2", "host"})->marginSeconds, 0.0);
  EXPECT_EQ(parse({"-D", "10", "-f", "0", "host"})->marginSeconds, 0.0);
  EXPECT_EQ(parse({"-D", "10", "--margin", "1.5", "host"})->marginSeconds, 1.5);
  EXPECT_EQ(parse({"host"})->marginSeconds, 0.0);
  const auto refusal = [](std::vector<std::string> args) {
    try {
      (void)parse(std::move(args));
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  const std::string notTcp =
      "--margin is for RDMA -D runs (not --tcp or --both: TCP measures the whole run)";
  EXPECT_EQ(refusal({"-f", "1", "host"}), notTcp);
  EXPECT_EQ(refusal({"--tcp", "-D", "10", "-f", "1", "host"}), notTcp);
  EXPECT_EQ(refusal({"--both", "-D", "10", "-f", "1", "host"}), notTcp);
  EXPECT_EQ(parse({"--both", "-D", "10", "host"})->marginSeconds, 0.0);
  EXPECT_EQ(refusal({"-D", "10", "-f", "nan", "host"}),
            "--margin must be at least 0 and less than half of -D");
  EXPECT_EQ(refusal({"-D", "nan", "host"}), "-D must be 0..3600");
  EXPECT_EQ(refusal({"-D", "10", "-f", "1e30", "host"}),
            "--margin must be at least 0 and less than half of -D");
  // On the wire's integers, as the server checks them: 4.1 s is 4099999.99..
  // in binary; rounded it is 4100000 us, and 2.0499999 s fits below half.
  EXPECT_EQ(parse({"-D", "4.1", "-f", "2.0499999", "host"})->durationMicros(), 4'100'000u);
  EXPECT_EQ(parse({"-D", "4.1", "-f", "2.0499999", "host"})->marginNanos(), 2'049'999'900u);
  EXPECT_EQ(refusal({"-D", "4.1", "-f", "2.05", "host"}),
            "--margin must be at least 0 and less than half of -D");
  EXPECT_EQ(refusal({"-D", "4", "-f", "2", "host"}),
            "--margin must be at least 0 and less than half of -D");
  EXPECT_EQ(refusal({"-D", "4", "-f", "-1", "host"}),
            "--margin must be at least 0 and less than half of -D");
}

TEST(LinkOptions, LatencyDefaultsLikeSendLat) {
  const auto o = parse({"--test", "lat", "host"});
  ASSERT_TRUE(o);
  EXPECT_EQ(o->test, LinkTest::SendLatency);
  EXPECT_EQ(o->size, 2u);
  EXPECT_EQ(o->iterations, 1000u);
}

TEST(LinkOptions, ServerTakesNoHost) {
  EXPECT_TRUE(parse({"--server"}));
  EXPECT_THROW(parse({"--server", "host"}), std::invalid_argument);
  EXPECT_THROW(parse({}), std::invalid_argument);
}

TEST(LinkOptions, BadValuesAreMessages) {
  EXPECT_THROW(parse({"-s", "0", "h"}), std::invalid_argument);
  EXPECT_THROW(parse({"-s", "16777216", "h"}), std::invalid_argument);
  EXPECT_THROW(parse({"--test", "atomic", "h"}), std::invalid_argument);
  EXPECT_THROW(parse({"--tcp", "--both", "h"}), std::invalid_argument);
  EXPECT_THROW(parse({"--no-such-option", "h"}), std::invalid_argument);
  EXPECT_THROW(parse({"-p", "70000", "h"}), std::invalid_argument);
  EXPECT_THROW(parse({"-b", "--test", "read", "h"}), std::invalid_argument);
}

// `devices --json` is one object: its schema and the build next to the
// devices (a bare array could name no build), here of a saved sysfs tree.
TEST(BenchCli, DevicesJsonNamesItsBuild) {
  const std::filesystem::path root = std::filesystem::temp_directory_path() /
                                     ("nfsrdma-devices-json-" + std::to_string(::getpid()));
  const std::filesystem::path dev = root / "class/infiniband/rxe0";
  std::filesystem::create_directories(dev);
  std::ofstream(dev / "node_guid") << "5054:00ff:fe12:3456\n";
  std::ofstream(dev / "node_type") << "1: CA\n";
  const testing::CommandResult r =
      testing::runCommand(runDevicesCommand, {"devices", "--json", "--sysfs", root.string()});
  std::filesystem::remove_all(root);
  EXPECT_EQ(r.rc, 0) << r.err;
  const JsonValue doc = parseJson(r.out);
  EXPECT_EQ(doc.str("schema"), "nfsrdma-bench-devices/1");
  EXPECT_EQ(doc.str("nfsrdma_version"), util::versionText());
  ASSERT_TRUE(doc.find("devices") != nullptr && doc.find("devices")->isArray()) << r.out;
  ASSERT_EQ(doc.find("devices")->array.size(), 1U) << r.out;
  EXPECT_EQ(doc.find("devices")->array[0].str("name"), "rxe0");
}

}  // namespace
}  // namespace nfsrdma::bench
