#include "tests/fuzz/TcpRecordsHarness.h"

#include <algorithm>
#include <string>
#include <vector>

#include "client/transport/RecordReader.h"

namespace nfsrdma::fuzz {
namespace {

// Small sizes keep an input cheap (thousands a second): every buffer stays
// in the sanitizer's size-class allocator instead of being mapped and
// zeroed afresh, and the reader's 4 KiB start sends any record over 2 KiB
// through its large-record path and makes its buffer grow.
constexpr std::size_t kMaxIncoming = 64 * 1024;
constexpr std::size_t kReaderBuffer = 4 * 1024;
constexpr std::size_t kPiece = 6 * 1024 + 7;

class Reader {
 public:
  explicit Reader(std::span<const std::uint8_t> in) : in_(in) {}
  bool done() const { return pos_ >= in_.size(); }
  std::uint8_t u8() { return pos_ < in_.size() ? in_[pos_++] : 0; }
  std::uint16_t u16() { return static_cast<std::uint16_t>((u8() << 8) | u8()); }
  std::uint32_t u32() { return (std::uint32_t{u16()} << 16) | u16(); }
  void bytes(std::size_t n, std::vector<std::uint8_t>& out) {
    for (std::size_t i = 0; i < n; ++i) out.push_back(u8());
  }

 private:
  std::span<const std::uint8_t> in_;
  std::size_t pos_ = 0;
};

void putBe32(std::vector<std::uint8_t>& out, std::uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<std::uint8_t>(v >> shift));
}

class CheckingSink final : public transport::RecordSink {
 public:
  explicit CheckingSink(std::vector<std::size_t> sizes) : sizes_(std::move(sizes)) {}
  void onRecord(std::span<const std::uint8_t> message,
                std::span<const std::uint32_t> placed) override {
    if (message.size() > kMaxIncoming) ok_ = false;
    if (!placed.empty()) {
      ++placed_;
      // Only a registered buffer's size can be placed, once per message, and
      // the message (up to the data's length word) must hold an XID.
      if (placed.size() != 1 || message.size() < 8) ok_ = false;
      if (std::find(sizes_.begin(), sizes_.end(), placed[0]) == sizes_.end()) ok_ = false;
    }
    if (failed_) ok_ = false;  // nothing after the stream failed
  }
  void onError() { failed_ = true; }
  bool ok() const { return ok_; }
  std::size_t placed() const { return placed_; }

 private:
  std::vector<std::size_t> sizes_;
  std::size_t placed_ = 0;
  bool failed_ = false;
  bool ok_ = true;
};

std::uint32_t getBe32(const std::uint8_t* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) |
         p[3];
}

// Replies in the stream that direct placement may take: a record of one
// last fragment (not the continuation of an unfinished record) that starts
// with a registered XID and ends with a length word equal to that buffer's
// size, the data and its pad. Each registration serves one reply. Whether
// the transport does place one also depends on how the bytes arrive (a
// reply received whole is decoded from the buffer instead).
std::size_t placeableReplies(const std::vector<std::uint8_t>& stream,
                             const std::vector<std::uint32_t>& xids,
                             const std::vector<std::size_t>& sizes, std::size_t maxIncoming) {
  std::size_t n = 0;
  std::vector<bool> taken(xids.size(), false);
  bool continuing = false;
  for (std::size_t pos = 0; pos + 4 <= stream.size();) {
    const std::uint32_t marker = getBe32(stream.data() + pos);
    const bool last = (marker & 0x80000000U) != 0;
    const std::size_t len = marker & 0x7fffffffU;
    if (len > maxIncoming || pos + 4 + len > stream.size()) break;
    const std::uint8_t* body = stream.data() + pos + 4;
    for (std::size_t i = 0; !continuing && last && len >= 8 && i < xids.size(); ++i) {
      const std::size_t padded = (sizes[i] + 3) & ~std::size_t{3};
      const bool fits = len >= padded + 8 && getBe32(body + len - padded - 4) == sizes[i];
      if (!taken[i] && xids[i] == getBe32(body) && fits) {
        taken[i] = true;
        ++n;
        break;
      }
    }
    continuing = !last;
    pos += 4 + len;
  }
  return n;
}

}  // namespace

bool runTcpRecords(std::span<const std::uint8_t> input, TcpRecordsOutcome* outcome) {
  Reader r(input);
  struct Registration {
    std::uint32_t xid;
    std::vector<std::uint8_t> buf;
  };
  std::vector<Registration> regs(r.u8() % 4);
  std::vector<std::size_t> sizes;
  for (auto& reg : regs) {
    reg.xid = r.u32();
    reg.buf.resize(16 * 1024 + std::size_t{r.u16() % 2048U} * 8);
    sizes.push_back(reg.buf.size());
  }
  // Kept across inputs: only its capacity carries over.
  static thread_local std::vector<std::uint8_t> stream;
  stream.clear();
  while (!r.done() && stream.size() < 4 * kMaxIncoming) {
    switch (r.u8() % 4) {
      case 0:
        r.bytes(r.u8(), stream);
        break;
      case 1: {
        if (regs.empty()) break;
        const Registration& reg = regs[r.u8() % regs.size()];
        std::vector<std::uint8_t> body;
        putBe32(body, reg.xid);
        r.bytes(r.u8(), body);
        const std::size_t len = (r.u8() & 1) != 0 ? reg.buf.size() : r.u16();
        putBe32(body, static_cast<std::uint32_t>(len));
        const std::size_t at = body.size();
        body.resize(at + len);
        for (std::size_t i = 0; i < len; ++i) body[at + i] = static_cast<std::uint8_t>(i * 7);
        body.resize(body.size() + (4 - len % 4) % 4, 0);
        putBe32(stream, 0x80000000U | static_cast<std::uint32_t>(body.size()));
        stream.insert(stream.end(), body.begin(), body.end());
        break;
      }
      case 2: {
        const std::uint32_t marker = r.u32();
        putBe32(stream, marker);
        stream.resize(stream.size() + std::min<std::size_t>(marker & 0x7fffffffU, kMaxIncoming),
                      0x5a);
        break;
      }
      default:
        // Capped at 4 KiB: a quarter million empty fragments (the old 1 MiB)
        // made a run 2.5x slower, and several fillers in a row still make
        // long runs of them.
        stream.resize(stream.size() + std::min<std::size_t>(r.u16(), 256) * 16, 0);
        break;
    }
  }

  CheckingSink sink(sizes);
  transport::RecordReader reader("fuzz peer", kReaderBuffer);
  reader.setMaxIncoming(kMaxIncoming);
  for (auto& reg : regs) reader.addPlacement(reg.xid, reg.buf);
  // In pieces, so records also arrive split (as over TCP), not only whole;
  // the reader stops at its first error, as the transport then does.
  Error failure;
  for (std::size_t off = 0; off < stream.size() && !failure;) {
    const std::size_t piece = std::min<std::size_t>(stream.size() - off, kPiece);
    failure = reader.feed({stream.data() + off, piece}, sink);
    off += piece;
  }
  if (!failure) failure = reader.endOfStream();  // the peer hangs up
  sink.onError();
  const bool ended =
      failure.code == ClientErrc::kConnectionClosed || failure.code == ClientErrc::kRecordTooLarge;
  // The reader's own count of placed replies must match what was delivered.
  const bool counted = reader.placedReplies() == sink.placed();
  if (outcome != nullptr) {
    std::vector<std::uint32_t> xids;
    for (const auto& reg : regs) xids.push_back(reg.xid);
    outcome->placeable = placeableReplies(stream, xids, sizes, kMaxIncoming);
    outcome->placed = sink.placed();
  }
  return ended && sink.ok() && counted;
}

}  // namespace nfsrdma::fuzz
