#include "tests/fuzz/LinkProtocolHarness.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstring>
#include <vector>

#include "bench/link/LinkOptions.h"
#include "bench/link/LinkProtocol.h"

namespace nfsrdma::fuzz {

namespace {

using namespace nfsrdma::bench;

// The input as N 64-bit words (missing bytes are zero), as recvWords would
// hand them over after the byte-order conversion.
template <std::size_t N>
std::array<std::uint64_t, N> wordsOf(std::span<const std::byte> b) {
  std::array<std::uint64_t, N> w{};
  std::memcpy(w.data(), b.data(), std::min(b.size(), sizeof w));
  return w;
}

bool connectRequest(std::span<const std::byte> b) {
  const ConnectRequest r = ConnectRequest::decode(b);
  if (r.qpCount < 1 || r.qpCount > kMaxLinkQps || r.qpIndex >= r.qpCount) return false;
  if (r.txDepth < 1 || r.txDepth > kMaxLinkTxDepth) return false;
  if (r.cqModeration < 1 || r.cqModeration > r.txDepth) return false;
  if (r.maxSize < 1 || r.maxSize > kMaxMessageBytes || r.test > 2) return false;
  const std::vector<std::byte> again = r.encode();
  return std::equal(again.begin(), again.end(), b.begin());
}

bool connectReply(std::span<const std::byte> b) {
  const std::vector<std::byte> again = ConnectReply::decode(b).encode();
  return std::equal(again.begin(), again.end(), b.begin());
}

bool control(std::span<const std::byte> b) {
  // A GO's size is checked against the session's largest message: take it
  // from the input too, so both sides of the bound are reached.
  std::uint32_t maxSize = 0;
  if (b.size() >= 4) {
    std::memcpy(&maxSize, b.data(), 4);
    b = b.subspan(4);
  }
  const ControlMessage m = ControlMessage::decode(b);
  std::array<std::byte, kControlBytes> again{};
  m.encode(again);
  if (!std::equal(again.begin(), again.end(), b.begin())) return false;
  if (m.kind != ControlKind::Go) return true;
  checkGo(m, maxSize);
  return m.size >= 1 && m.size <= maxSize && m.iterations <= kMaxLinkIterations &&
         m.durationUs <= kMaxLinkDurationUs && (m.iterations > 0 || m.durationUs > 0) &&
         (m.nanos == 0 || m.nanos * 2 < m.durationUs * 1000);
}

bool tcpHello(std::span<const std::byte> b) {
  const auto w = wordsOf<4>(b);
  const TcpHello h = TcpHello::decode(w);
  return h.streams >= 1 && h.streams <= kMaxLinkStreams && h.words() == w;
}

bool tcpStep(std::span<const std::byte> b) {
  const auto w = wordsOf<3>(b);
  const TcpStep s = TcpStep::decode(w);
  if (s.words() != w) return false;
  return s.isBye() ||
         (s.size <= kMaxMessageBytes && s.iterations <= kMaxLinkIterations &&
          s.durationUs <= kMaxLinkDurationUs && (s.iterations > 0 || s.durationUs > 0));
}

bool tcpStreamHello(std::span<const std::byte> b) {
  const std::uint32_t streams = b.empty() ? 0 : std::to_integer<std::uint32_t>(b[0]);
  const auto w = wordsOf<4>(b.empty() ? b : b.subspan(1));
  const std::uint32_t index = decodeTcpStreamHello(w, streams);
  return index < streams && tcpStreamHelloWords(index) == w;
}

}  // namespace

bool runLinkProtocol(std::span<const std::uint8_t> input) {
  if (input.empty()) return true;
  const std::span<const std::byte> body(reinterpret_cast<const std::byte*>(input.data()) + 1,
                                        input.size() - 1);
  try {
    switch (input[0] % 6) {
      case 0:
        return connectRequest(body);
      case 1:
        return connectReply(body);
      case 2:
        return control(body);
      case 3:
        return tcpHello(body);
      case 4:
        return tcpStep(body);
      default:
        return tcpStreamHello(body);
    }
  } catch (const LinkProtocolError&) {
    return true;  // refused with a message: what a decoder should do
  } catch (...) {
    return false;
  }
}

}  // namespace nfsrdma::fuzz
