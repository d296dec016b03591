// Options of `nfsrdma-bench link`, parsed once into a plain struct that the
// RDMA and TCP halves share. The option letters follow perftest (-s -a -n -D
// -q -t -b) so people can reuse their ib_write_bw command lines.
#pragma once

#include <chrono>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>

#include "bench/link/LinkStats.h"

namespace nfsrdma::bench {

enum class LinkTest { Write, Read, SendLatency };
// How the bandwidth loop waits for completions. Auto sleeps on CQ events
// on a software device (rxe, siw), whose packet work needs the CPU a
// polling thread would take, and polls on hardware, as perftest does.
enum class CqWait { Auto, Poll, Events };

const char* linkTestTitle(LinkTest t);  // "RDMA_Write BW Test"
const char* linkTestKey(LinkTest t);    // "rdma_write"

inline constexpr std::uint16_t kDefaultLinkPort = 18515;
inline constexpr std::uint64_t kMaxMessageBytes = 8u << 20;

struct LinkOptions {
  bool server = false;
  std::string host;  // client: the server's address
  std::uint16_t port = kDefaultLinkPort;
  std::string bindAddress;  // local address to use (client source / server listen)
  std::string device;       // -d: expected RDMA device (client) / device to listen on (server)
  LinkTest test = LinkTest::Write;
  std::uint64_t size = 65536;
  bool sweep = false;  // -a: 2 B .. 8 MiB
  std::uint64_t iterations = 5000;
  double durationSeconds = 0;  // -D: time-based when > 0 (the whole run, margins included)
  double marginSeconds = 0;    // -f: left out of an RDMA -D run's measurement at each end
  std::uint32_t qps = 1;
  std::uint32_t txDepth = 128;
  std::uint32_t cqModeration = 100;
  std::uint32_t postList = 1;    // WRs per ibv_post_send (perftest --post_list)
  std::uint32_t qpTimeout = 14;  // ACK timeout exponent, 4.096 us * 2^N (perftest -u)
  bool bidirectional = false;
  bool verify = false;
  CqWait cqWait = CqWait::Auto;  // -e / --poll
  bool warmUp = false;           // --perform_warm_up: untimed TX depth before each step
  int cpu = -1;                  // --cpu: pin to this CPU
  std::string numa;              // --numa: "auto" (device's node) or a node number
  BandwidthUnit unit = BandwidthUnit::MiBPerSecond;
  bool json = false;
  bool tcp = false;                         // TCP stream bandwidth instead of RDMA
  bool both = false;                        // RDMA WRITE then TCP, with the ratio
  std::uint32_t streams = 1;                // -P: TCP streams
  std::chrono::milliseconds timeout{5000};  // client: connect/resolve timeout
  std::chrono::seconds idleTimeout{600};    // server: longest wait for a client or message
  bool keepServing = false;                 // server: serve sessions until the idle timeout

  // -D and --margin as the wire carries them (GO durationUs and nanos); the
  // client's own loop runs on the same integers, so both sides agree.
  std::uint64_t durationMicros() const {
    return static_cast<std::uint64_t>(std::llround(durationSeconds * 1e6));
  }
  std::uint64_t marginNanos() const {
    return static_cast<std::uint64_t>(std::llround(marginSeconds * 1e9));
  }
};

// Parses `link` options (argv[0] is "link"). Returns nullopt after printing
// help for --help. Throws std::invalid_argument with a message on bad input.
std::optional<LinkOptions> parseLinkOptions(int argc, char** argv);

}  // namespace nfsrdma::bench
