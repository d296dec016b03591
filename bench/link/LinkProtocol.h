// LinkProtocol: the messages `nfsrdma-bench link` client and server exchange,
// as bytes. Nothing here touches verbs or sockets, so the decoders can be
// fuzzed (tests/fuzz/fuzz_link_protocol) and tested byte for byte.
//
// Everything a peer sends is checked here against the same bounds the
// client's options enforce: a server must not divide by a CQ moderation of
// zero, spin forever on a TX depth of zero or overflow its clock on an
// iteration count nobody could run, because a buggy or foreign peer said so.
// Each rejection names the field, the value and what was expected.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/pattern/DataPattern.h"

namespace nfsrdma::bench {

// A message from the link peer that is malformed or out of range.
class LinkProtocolError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Bounds shared by option parsing (LinkOptions.cpp) and the wire checks.
inline constexpr std::uint32_t kMaxLinkQps = 64;
inline constexpr std::uint32_t kMaxLinkTxDepth = 8192;
inline constexpr std::uint64_t kMaxLinkIterations =
    1'000'000'000'000;  // keeps time bounds in range
inline constexpr std::uint64_t kMaxLatencyIterations =
    100'000'000;  // each sample kept: 800 MB at most
inline constexpr std::uint64_t kMaxLinkDurationUs = 3600'000'000;  // -D 3600
inline constexpr std::uint32_t kMaxLinkStreams = 128;              // TCP -P

// ---- data of a --verify run ----

// What a --verify sender's messages hold and the receiver checks them
// against, over RDMA and TCP: the benchmarks' one pattern, keyed by the
// session's seed (the RDMA connect request's, the TCP hello's). Both peers
// must be built with this pattern: one built before it (a Mersenne Twister
// for TCP, a pattern of its own for RDMA) finds every message wrong.
inline DataPattern linkPattern(std::uint32_t seed) {
  return DataPattern::of(seed, 0, 0);
}

// ---- RDMA session (rdma_cm private data and control SENDs), little-endian ----

inline constexpr std::uint32_t kLinkRdmaMagic = 0x4e524c42;  // "NRLB"
// 2: a GO's nanos carries -D's margin (a version-1 server would ignore it).
inline constexpr std::uint8_t kLinkRdmaVersion = 2;
inline constexpr std::uint32_t kControlImm = 0x4e52434d;  // immediate data marking control SENDs
inline constexpr std::uint32_t kControlBytes = 64;        // a control message's slot

enum LinkSessionFlags : std::uint8_t {
  kBidirectional = 1,
  kVerify = 2,
  kLastSession = 4,
  kUseEvents = 8
};

// Client -> server, in each QP's connect private data (rdma_cm pads it to 56
// bytes, so trailing bytes are allowed). The first request describes the
// session; the others must repeat its qpCount and seed with the next qpIndex.
struct ConnectRequest {
  std::uint8_t test = 0;  // LinkTest: 0 write, 1 read, 2 send latency
  std::uint8_t flags = 0;
  std::uint8_t qpIndex = 0;
  std::uint8_t qpCount = 1;
  std::uint16_t txDepth = 128;
  std::uint16_t cqModeration = 100;
  std::uint32_t maxSize = 0;
  std::uint32_t slotBytes = 0;
  std::uint32_t seed = 0;
  std::uint64_t address = 0;
  std::uint32_t rkey = 0;

  static constexpr std::size_t kWireBytes = 37;
  std::vector<std::byte> encode() const;
  // Throws LinkProtocolError naming the first field that is wrong.
  static ConnectRequest decode(std::span<const std::byte> bytes);
};

// Server -> client, in the accept private data: where the server's buffer is.
struct ConnectReply {
  std::uint64_t address = 0;
  std::uint32_t rkey = 0;

  static constexpr std::size_t kWireBytes = 16;
  std::vector<std::byte> encode() const;
  static ConnectReply decode(std::span<const std::byte> bytes);
};

enum class ControlKind : std::uint32_t { Go = 1, Ready, End, Fin, Bye };
enum class VerifyState : std::uint32_t { NotChecked = 0, Passed, Failed };

const char* controlKindName(ControlKind k);  // "GO", "READY", ...

// A control SEND on QP 0 (kControlBytes; the fields take 64).
struct ControlMessage {
  ControlKind kind = ControlKind::Go;
  VerifyState verify = VerifyState::NotChecked;
  std::uint64_t size = 0;
  std::uint64_t iterations = 0;
  std::uint64_t durationUs = 0;
  std::uint64_t messages = 0;   // FIN: the server's own messages (-b)
  std::uint64_t nanos = 0;      // FIN: the server's elapsed time (-b); GO: -D's margin
  std::uint64_t peakMilli = 0;  // FIN: the server's peak messages/s x 1000
  std::uint64_t mismatch = 0;   // FIN: first bad offset when verify failed

  void encode(std::span<std::byte, kControlBytes> out) const;
  // Checks the length, kind and verify state; a GO's numbers are checked by checkGo.
  static ControlMessage decode(std::span<const std::byte> bytes);
};

// A GO the server can run: 1 <= size <= maxSize, a bounded iteration count
// and duration, and one of them set; a margin (nanos) only with a duration
// longer than twice it. Throws LinkProtocolError.
void checkGo(const ControlMessage& go, std::uint64_t maxSize);

// ---- TCP session (64-bit words in network order) ------------------------------

inline constexpr std::uint32_t kLinkTcpMagic = 0x4e52544c;  // "NRTL"
enum class TcpConnectionKind : std::uint64_t { Control = 1, Data = 2 };
enum TcpSessionFlags : std::uint64_t { kTcpLastSession = 1, kTcpVerify = 2 };

// First words on the control connection: magic, kind, streams, flags.
struct TcpHello {
  std::uint32_t streams = 1;
  std::uint64_t flags = 0;
  std::array<std::uint64_t, 4> words() const;
  static TcpHello decode(const std::array<std::uint64_t, 4>& w);
};

// One step on the control connection: size, iterations, duration (us);
// size 0 ends the session.
struct TcpStep {
  std::uint64_t size = 0;
  std::uint64_t iterations = 0;
  std::uint64_t durationUs = 0;
  bool isBye() const { return size == 0; }
  std::array<std::uint64_t, 3> words() const { return {size, iterations, durationUs}; }
  static TcpStep decode(const std::array<std::uint64_t, 3>& w);
};

// First words on a data connection: magic, kind, stream index, 0. Returns the
// stream index, checked against the session's stream count.
std::array<std::uint64_t, 4> tcpStreamHelloWords(std::uint32_t index);
std::uint32_t decodeTcpStreamHello(const std::array<std::uint64_t, 4>& w, std::uint32_t streams);

}  // namespace nfsrdma::bench
