// LinkProtocol: encoding and checked decoding of the link benchmark's messages.
#include "bench/link/LinkProtocol.h"

#include <string>

#include "bench/link/LinkOptions.h"

namespace nfsrdma::bench {

namespace {

class WireWriter {
 public:
  explicit WireWriter(std::span<std::byte> out) : out_(out) {}
  template <class T>
  void put(T v) {
    for (std::size_t i = 0; i < sizeof(T); ++i) {
      out_[n_++] = static_cast<std::byte>((static_cast<std::uint64_t>(v) >> (8 * i)) & 0xff);
    }
  }

 private:
  std::span<std::byte> out_;
  std::size_t n_ = 0;
};

// Reads little-endian fields; the caller checks the length once up front.
class WireReader {
 public:
  explicit WireReader(std::span<const std::byte> in) : in_(in) {}
  template <class T>
  T get() {
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < sizeof(T); ++i) {
      v |= static_cast<std::uint64_t>(std::to_integer<std::uint8_t>(in_[n_++])) << (8 * i);
    }
    return static_cast<T>(v);
  }

 private:
  std::span<const std::byte> in_;
  std::size_t n_ = 0;
};

[[noreturn]] void reject(const std::string& what) {
  throw LinkProtocolError(what);
}

void needBytes(std::span<const std::byte> bytes, std::size_t want, const char* what) {
  if (bytes.size() < want) {
    reject(std::string(what) + " of " + std::to_string(bytes.size()) +
           " bytes, expected at least " + std::to_string(want));
  }
}

void checkRange(const char* field, std::uint64_t value, std::uint64_t lo, std::uint64_t hi) {
  if (value < lo || value > hi) {
    reject(std::string(field) + " " + std::to_string(value) + ", expected " +
           (lo == hi ? std::to_string(lo) : std::to_string(lo) + ".." + std::to_string(hi)));
  }
}

std::string hex(std::uint64_t v) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string s;
  do {
    s.insert(s.begin(), kDigits[v & 0xf]);
    v >>= 4;
  } while (v != 0);
  return "0x" + s;
}

}  // namespace

// ---- RDMA --------------------------------------------------------------------

std::vector<std::byte> ConnectRequest::encode() const {
  std::vector<std::byte> b(kWireBytes);
  WireWriter w(b);
  w.put(kLinkRdmaMagic);
  w.put(kLinkRdmaVersion);
  w.put(test);
  w.put(flags);
  w.put(qpIndex);
  w.put(qpCount);
  w.put(txDepth);
  w.put(cqModeration);
  w.put(maxSize);
  w.put(slotBytes);
  w.put(seed);
  w.put(address);
  w.put(rkey);
  return b;
}

ConnectRequest ConnectRequest::decode(std::span<const std::byte> bytes) {
  needBytes(bytes, kWireBytes, "connect data");
  WireReader r(bytes);
  if (const auto magic = r.get<std::uint32_t>(); magic != kLinkRdmaMagic) {
    reject("not an nfsrdma link client (magic " + hex(magic) + ", expected " + hex(kLinkRdmaMagic) +
           ")");
  }
  if (const auto version = r.get<std::uint8_t>(); version != kLinkRdmaVersion) {
    reject("link protocol version " + std::to_string(version) + ", this side speaks " +
           std::to_string(kLinkRdmaVersion));
  }
  ConnectRequest c;
  c.test = r.get<std::uint8_t>();
  c.flags = r.get<std::uint8_t>();
  c.qpIndex = r.get<std::uint8_t>();
  c.qpCount = r.get<std::uint8_t>();
  c.txDepth = r.get<std::uint16_t>();
  c.cqModeration = r.get<std::uint16_t>();
  c.maxSize = r.get<std::uint32_t>();
  c.slotBytes = r.get<std::uint32_t>();
  c.seed = r.get<std::uint32_t>();
  c.address = r.get<std::uint64_t>();
  c.rkey = r.get<std::uint32_t>();
  checkRange("test", c.test, 0, 2);
  if ((c.flags & ~(kBidirectional | kVerify | kLastSession | kUseEvents)) != 0)
    reject("unknown flags " + hex(c.flags));
  checkRange("QP count", c.qpCount, 1, kMaxLinkQps);
  checkRange("QP index", c.qpIndex, 0, c.qpCount - 1u);
  checkRange("TX depth", c.txDepth, 1, kMaxLinkTxDepth);
  checkRange("CQ moderation", c.cqModeration, 1, c.txDepth);
  checkRange("largest message size", c.maxSize, 1, kMaxMessageBytes);
  return c;
}

std::vector<std::byte> ConnectReply::encode() const {
  std::vector<std::byte> b(kWireBytes);
  WireWriter w(b);
  w.put(kLinkRdmaMagic);
  w.put(address);
  w.put(rkey);
  return b;
}

ConnectReply ConnectReply::decode(std::span<const std::byte> bytes) {
  needBytes(bytes, kWireBytes, "accept data");
  WireReader r(bytes);
  if (const auto magic = r.get<std::uint32_t>(); magic != kLinkRdmaMagic) {
    reject("the peer is not an nfsrdma link server (magic " + hex(magic) + ", expected " +
           hex(kLinkRdmaMagic) + ")");
  }
  ConnectReply c;
  c.address = r.get<std::uint64_t>();
  c.rkey = r.get<std::uint32_t>();
  return c;
}

const char* controlKindName(ControlKind k) {
  switch (k) {
    case ControlKind::Go:
      return "GO";
    case ControlKind::Ready:
      return "READY";
    case ControlKind::End:
      return "END";
    case ControlKind::Fin:
      return "FIN";
    case ControlKind::Bye:
      return "BYE";
  }
  return "?";
}

void ControlMessage::encode(std::span<std::byte, kControlBytes> out) const {
  WireWriter w(out);
  w.put(static_cast<std::uint32_t>(kind));
  w.put(static_cast<std::uint32_t>(verify));
  w.put(size);
  w.put(iterations);
  w.put(durationUs);
  w.put(messages);
  w.put(nanos);
  w.put(peakMilli);
  w.put(mismatch);
}

ControlMessage ControlMessage::decode(std::span<const std::byte> bytes) {
  needBytes(bytes, kControlBytes, "control message");
  WireReader r(bytes);
  ControlMessage m;
  const auto kind = r.get<std::uint32_t>();
  checkRange("control message kind", kind, static_cast<std::uint32_t>(ControlKind::Go),
             static_cast<std::uint32_t>(ControlKind::Bye));
  m.kind = static_cast<ControlKind>(kind);
  const auto verify = r.get<std::uint32_t>();
  checkRange("verify state", verify, 0, static_cast<std::uint32_t>(VerifyState::Failed));
  m.verify = static_cast<VerifyState>(verify);
  m.size = r.get<std::uint64_t>();
  m.iterations = r.get<std::uint64_t>();
  m.durationUs = r.get<std::uint64_t>();
  m.messages = r.get<std::uint64_t>();
  m.nanos = r.get<std::uint64_t>();
  m.peakMilli = r.get<std::uint64_t>();
  m.mismatch = r.get<std::uint64_t>();
  return m;
}

void checkGo(const ControlMessage& go, std::uint64_t maxSize) {
  checkRange("GO message size", go.size, 1, maxSize);
  checkRange("GO iterations", go.iterations, 0, kMaxLinkIterations);
  checkRange("GO duration (us)", go.durationUs, 0, kMaxLinkDurationUs);
  if (go.iterations == 0 && go.durationUs == 0) reject("GO with neither iterations nor a duration");
  // The margin is left out of the measurement at both ends of a -D run.
  checkRange("GO margin (ns)", go.nanos, 0, kMaxLinkDurationUs * 1000 / 2);
  if (go.nanos > 0 && go.nanos * 2 >= go.durationUs * 1000) {
    reject("GO margin of " + std::to_string(go.nanos) + " ns leaves nothing of a " +
           std::to_string(go.durationUs) + " us duration to measure");
  }
}

// ---- TCP ---------------------------------------------------------------------

std::array<std::uint64_t, 4> TcpHello::words() const {
  return {kLinkTcpMagic, static_cast<std::uint64_t>(TcpConnectionKind::Control), streams, flags};
}

TcpHello TcpHello::decode(const std::array<std::uint64_t, 4>& w) {
  if (w[0] != kLinkTcpMagic || w[1] != static_cast<std::uint64_t>(TcpConnectionKind::Control)) {
    reject("not an nfsrdma link client (hello " + hex(w[0]) + " " + hex(w[1]) + ", expected " +
           hex(kLinkTcpMagic) + " 0x1)");
  }
  checkRange("stream count", w[2], 1, kMaxLinkStreams);
  if ((w[3] & ~std::uint64_t{kTcpLastSession | kTcpVerify}) != 0)
    reject("unknown flags " + hex(w[3]));
  TcpHello h;
  h.streams = static_cast<std::uint32_t>(w[2]);
  h.flags = w[3];
  return h;
}

TcpStep TcpStep::decode(const std::array<std::uint64_t, 3>& w) {
  TcpStep s{w[0], w[1], w[2]};
  if (s.isBye()) return s;
  checkRange("step message size", s.size, 1, kMaxMessageBytes);
  checkRange("step iterations", s.iterations, 0, kMaxLinkIterations);
  checkRange("step duration (us)", s.durationUs, 0, kMaxLinkDurationUs);
  if (s.iterations == 0 && s.durationUs == 0) reject("step with neither iterations nor a duration");
  return s;
}

std::array<std::uint64_t, 4> tcpStreamHelloWords(std::uint32_t index) {
  return {kLinkTcpMagic, static_cast<std::uint64_t>(TcpConnectionKind::Data), index, 0};
}

std::uint32_t decodeTcpStreamHello(const std::array<std::uint64_t, 4>& w, std::uint32_t streams) {
  if (w[0] != kLinkTcpMagic || w[1] != static_cast<std::uint64_t>(TcpConnectionKind::Data)) {
    reject("unexpected connection during a TCP step (hello " + hex(w[0]) + " " + hex(w[1]) +
           ", expected a data stream of this session)");
  }
  if (streams == 0) reject("stream hello for a session of no streams");
  checkRange("stream index", w[2], 0, streams - 1u);
  checkRange("stream hello's reserved word", w[3], 0, 0);
  return static_cast<std::uint32_t>(w[2]);
}

}  // namespace nfsrdma::bench
