// LinkOptions: Boost.Program_options parsing and validation.
#include "bench/link/LinkOptions.h"

#include <boost/program_options.hpp>
#include <cmath>
#include <iostream>
#include <stdexcept>
#include <string>

#include "bench/link/LinkProtocol.h"

namespace nfsrdma::bench {

namespace po = boost::program_options;

const char* linkTestTitle(LinkTest t) {
  switch (t) {
    case LinkTest::Write:
      return "RDMA_Write BW Test";
    case LinkTest::Read:
      return "RDMA_Read BW Test";
    case LinkTest::SendLatency:
      return "Send Latency Test";
  }
  return "";
}

const char* linkTestKey(LinkTest t) {
  switch (t) {
    case LinkTest::Write:
      return "rdma_write_bw";
    case LinkTest::Read:
      return "rdma_read_bw";
    case LinkTest::SendLatency:
      return "send_lat";
  }
  return "";
}

namespace {

// Values of the command line that are checked or converted before they
// land in LinkOptions.
struct CommandLine {
  std::string test = "write";
  std::uint64_t iterations = 0;
  std::uint32_t port = kDefaultLinkPort;
  int timeoutSec = 5;
  int idleSec = 600;
  bool events = false;
  bool poll = false;
};

// One option a line, as --help prints them.
// clang-format off
void describeOptions(po::options_description& desc, LinkOptions& o, CommandLine& c) {
  desc.add_options()
      ("help,h", "show this help")
      ("server", po::bool_switch(&o.server), "serve link tests (RDMA on --port via rdma_cm, and TCP on the same port number)")
      ("test", po::value(&c.test)->default_value("write"), "write (RDMA WRITE bw), read (RDMA READ bw), lat (SEND/RECV latency)")
      ("size,s", po::value(&o.size)->default_value(o.size), "message size in bytes (lat default: 2)")
      ("all,a", po::bool_switch(&o.sweep), "sweep message sizes 2 B .. 8 MiB")
      ("iters,n", po::value(&c.iterations), "iterations per QP/stream (bw default 5000, lat 1000)")
      ("duration,D", po::value(&o.durationSeconds), "run for this many seconds instead of -n")
      ("margin,f", po::value(&o.marginSeconds),
       "RDMA -D runs: seconds at each end left out of the measurement (perftest's -f; default a quarter of -D, whole seconds)")
      ("qp,q", po::value(&o.qps)->default_value(o.qps), "number of QPs (connections)")
      ("tx-depth,t", po::value(&o.txDepth)->default_value(o.txDepth), "send queue depth per QP")
      ("cq-mod", po::value(&o.cqModeration)->default_value(o.cqModeration), "signal one completion every N sends")
      ("post-list", po::value(&o.postList)->default_value(o.postList), "work requests per ibv_post_send call")
      ("qp-timeout,u", po::value(&o.qpTimeout)->default_value(o.qpTimeout),
       "QP ACK timeout exponent: retransmit after 4.096 us * 2^N (perftest's default 14, 67 ms)")
      ("bidirectional,b", po::bool_switch(&o.bidirectional), "both sides write at once; reports the sum")
      ("events,e", po::bool_switch(&c.events), "sleep on CQ events (as perftest -e, which ib_write_bw lacks); the default on a software device (rxe, siw)")
      ("poll", po::bool_switch(&c.poll), "poll the CQ (perftest's default); the default on a hardware device")
      ("verify", po::bool_switch(&o.verify), "check every transferred byte against the sender's pattern")
      ("perform_warm_up", po::bool_switch(&o.warmUp),
       "before each bandwidth step, move one TX depth of messages per QP untimed (perftest's option; off by default, as there)")
      ("port,p", po::value(&c.port)->default_value(c.port), "rdma_cm / TCP port")
      ("bind", po::value(&o.bindAddress), "local address (client source address / server listen address)")
      ("ib-dev,d", po::value(&o.device), "RDMA device: client checks the route uses it; server listens on its IP")
      ("cpu", po::value(&o.cpu), "pin to this CPU")
      ("numa", po::value(&o.numa), "pin to the CPUs of a NUMA node: a number, or 'auto' for the device's node")
      ("report_gbits", "report bandwidth in Gb/sec (10^9 bit/s) instead of MiB/sec (2^20 B/s)")
      ("json", po::bool_switch(&o.json), "print JSON instead of the table")
      ("tcp", po::bool_switch(&o.tcp), "TCP stream bandwidth (like iperf3) instead of RDMA")
      ("both", po::bool_switch(&o.both), "RDMA WRITE and TCP, then the RDMA/TCP ratio")
      ("parallel,P", po::value(&o.streams)->default_value(o.streams), "TCP streams")
      ("timeout", po::value(&c.timeoutSec)->default_value(c.timeoutSec), "client: seconds to wait for the server at each connection step")
      ("idle-timeout", po::value(&c.idleSec)->default_value(c.idleSec), "server: seconds to wait for a client or its next message")
      ("keep-serving", po::bool_switch(&o.keepServing), "server: keep serving sessions until the idle timeout");
}
// clang-format on

// Parses argv against desc and the positional host (into host).
po::variables_map parseCommandLine(int argc, char** argv, const po::options_description& desc,
                                   std::string& host) {
  po::options_description hidden;
  hidden.add_options()("host", po::value(&host));
  po::options_description all;
  all.add(desc).add(hidden);
  po::positional_options_description pos;
  pos.add("host", 1);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(all).positional(pos).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw std::invalid_argument(e.what());
  }
  return vm;
}

void setTest(LinkOptions& o, const std::string& test, bool sizeDefaulted) {
  if (test == "write") {
    o.test = LinkTest::Write;
  } else if (test == "read") {
    o.test = LinkTest::Read;
  } else if (test == "lat" || test == "latency" || test == "send_lat") {
    o.test = LinkTest::SendLatency;
    if (sizeDefaulted) o.size = 2;
  } else {
    throw std::invalid_argument("--test must be write, read or lat, not '" + test + "'");
  }
}

void setIterations(LinkOptions& o, std::uint64_t iterations, bool given) {
  if (given && iterations == 0) throw std::invalid_argument("--iters must be at least 1");
  o.iterations = iterations != 0 ? iterations : (o.test == LinkTest::SendLatency ? 1000 : 5000);
  // Every latency sample is kept (for the percentiles): 8 bytes each.
  if (o.test == LinkTest::SendLatency && o.iterations > kMaxLatencyIterations) {
    throw std::invalid_argument("--iters for the latency test must be 1.." +
                                std::to_string(kMaxLatencyIterations));
  }
}

void setPeer(LinkOptions& o, std::uint32_t port) {
  if (port == 0 || port > 65535) throw std::invalid_argument("--port must be 1..65535");
  o.port = static_cast<std::uint16_t>(port);
  if (!o.server && o.host.empty())
    throw std::invalid_argument("give the server's address, or --server");
  if (o.server && !o.host.empty())
    throw std::invalid_argument("--server takes no host (use --bind)");
}

// Sizes, counts and depths within their ranges.
void checkLimits(LinkOptions& o) {
  if (o.size == 0 || o.size > kMaxMessageBytes)
    throw std::invalid_argument("--size must be 1..8388608");
  if (o.iterations > kMaxLinkIterations) {
    throw std::invalid_argument("--iters must be 1.." + std::to_string(kMaxLinkIterations));
  }
  if (o.qps == 0 || o.qps > kMaxLinkQps)
    throw std::invalid_argument("--qp must be 1.." + std::to_string(kMaxLinkQps));
  if (o.txDepth == 0 || o.txDepth > kMaxLinkTxDepth) {
    throw std::invalid_argument("--tx-depth must be 1.." + std::to_string(kMaxLinkTxDepth));
  }
  if (o.cqModeration == 0) throw std::invalid_argument("--cq-mod must be at least 1");
  if (o.qpTimeout > 31) throw std::invalid_argument("--qp-timeout must be 0..31 (an exponent)");
  o.cqModeration = std::min(o.cqModeration, o.txDepth);
  if (o.postList == 0 || o.postList > o.txDepth)
    throw std::invalid_argument("--post-list must be 1..tx-depth");
  if (o.streams == 0 || o.streams > kMaxLinkStreams) {
    throw std::invalid_argument("-P must be 1.." + std::to_string(kMaxLinkStreams));
  }
}

void setDuration(LinkOptions& o, bool marginGiven) {
  if (!std::isfinite(o.durationSeconds) || o.durationSeconds < 0 || o.durationSeconds > 3600 ||
      (o.durationSeconds > 0 && o.durationMicros() == 0)) {
    throw std::invalid_argument("-D must be 0..3600");
  }
  // As perftest: -D is the whole run and only its middle is measured, so the
  // ramp-up and the drain do not count; the default margin is D/4 in whole
  // seconds (perftest's integer division: -D 2 measures all of it).
  // --both: the TCP half measures its whole run, so the RDMA half does too.
  if (marginGiven) {
    if (o.durationSeconds <= 0 || o.tcp || o.both) {
      throw std::invalid_argument(
          "--margin is for RDMA -D runs (not --tcp or --both: TCP measures the whole run)");
    }
    // Checked on the integers the server checks (GO durationUs and nanos).
    if (!std::isfinite(o.marginSeconds) || o.marginSeconds < 0 ||
        o.marginSeconds >= o.durationSeconds || o.marginNanos() * 2 >= o.durationMicros() * 1000) {
      throw std::invalid_argument("--margin must be at least 0 and less than half of -D");
    }
  } else {
    o.marginSeconds = o.both ? 0 : std::floor(o.durationSeconds / 4);
  }
}

void setTimeouts(LinkOptions& o, int timeoutSec, int idleSec) {
  if (timeoutSec <= 0 || idleSec <= 0) throw std::invalid_argument("timeouts must be positive");
  o.timeout = std::chrono::seconds(timeoutSec);
  o.idleTimeout = std::chrono::seconds(idleSec);
}

void checkBidirectionalAndWarmUp(const LinkOptions& o) {
  if (o.bidirectional && (o.test != LinkTest::Write || o.tcp)) {
    throw std::invalid_argument("-b is for the RDMA WRITE test");
  }
  // The server's own loop of -b would need the switch in the protocol, and
  // --both's TCP half has no warm-up to match.
  if (o.warmUp && (o.test == LinkTest::SendLatency || o.tcp || o.both || o.bidirectional)) {
    throw std::invalid_argument(
        "--perform_warm_up is for the one-way RDMA WRITE and READ bandwidth tests");
  }
}

void setCqWait(LinkOptions& o, bool events, bool poll) {
  if (events && poll) throw std::invalid_argument("-e and --poll exclude each other");
  if (events && (o.test == LinkTest::SendLatency || o.tcp)) {
    throw std::invalid_argument(
        "-e is for the RDMA WRITE and READ bandwidth tests (the latency test polls; TCP has no "
        "CQ)");
  }
  if (poll && o.tcp) throw std::invalid_argument("--poll is for the RDMA tests");
  // The -b server's loop follows the client's choice, which it sends.
  if ((events || poll) && o.server) {
    throw std::invalid_argument(
        "-e and --poll are client options: the server follows the client's choice");
  }
  o.cqWait = events ? CqWait::Events : poll ? CqWait::Poll : CqWait::Auto;
}

// Modes that exclude each other.
void checkCombinations(const LinkOptions& o) {
  if (o.tcp && o.both) throw std::invalid_argument("--tcp and --both exclude each other");
  // The ratio would set two directions of RDMA against one of TCP.
  if (o.both && o.bidirectional)
    throw std::invalid_argument("--both compares one direction: without -b");
  if (o.test == LinkTest::SendLatency && o.durationSeconds > 0) {
    throw std::invalid_argument(
        "-D is for the bandwidth tests: the latency test runs -n round trips");
  }
  if (o.test == LinkTest::SendLatency && o.qps > 1) {
    throw std::invalid_argument("-q is for the bandwidth tests: the latency test uses one QP");
  }
  // As perftest: a sweep runs each size for -n iterations.
  if (o.sweep && o.durationSeconds > 0)
    throw std::invalid_argument("-a and -D exclude each other: a sweep uses -n");
  if (o.both && o.test != LinkTest::Write)
    throw std::invalid_argument("--both compares RDMA WRITE with TCP");
}

}  // namespace

std::optional<LinkOptions> parseLinkOptions(int argc, char** argv) {
  LinkOptions o;
  CommandLine c;
  po::options_description desc(
      "usage: nfsrdma-bench link --server [options]\n"
      "       nfsrdma-bench link [options] <server-host>\n\noptions");
  describeOptions(desc, o, c);
  const po::variables_map vm = parseCommandLine(argc, argv, desc, o.host);
  if (vm.count("help") != 0) {
    std::cout << desc << "\n";
    return std::nullopt;
  }
  if (vm.count("report_gbits") != 0) o.unit = BandwidthUnit::GbitPerSecond;
  setTest(o, c.test, vm["size"].defaulted());
  setIterations(o, c.iterations, vm.count("iters") != 0);
  setPeer(o, c.port);
  checkLimits(o);
  setDuration(o, vm.count("margin") != 0);
  setTimeouts(o, c.timeoutSec, c.idleSec);
  checkBidirectionalAndWarmUp(o);
  setCqWait(o, c.events, c.poll);
  checkCombinations(o);
  return o;
}

}  // namespace nfsrdma::bench
