#include "client/transport/RecordReader.h"

#include <algorithm>
#include <cstring>

namespace nfsrdma::transport {
namespace {

constexpr std::uint32_t kLastFragment = 0x80000000U;
// With a READ's buffer waiting, a receive at a record boundary takes no more
// than a reply header's worth: the rest of a READ reply then goes straight
// to the caller's buffer instead of through in_ (a READ reply's header is
// about 110 bytes; a larger reply just takes one more receive).
constexpr std::size_t kHeaderReceive = 512;

std::uint32_t getBe32(const std::uint8_t* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) |
         std::uint32_t{p[3]};
}

}  // namespace

std::size_t ReceiveTargets::bytes() const {
  std::size_t n = 0;
  for (std::size_t i = 0; i < count; ++i) n += parts[i].size();
  return n;
}

RecordReader::RecordReader(std::string description, std::size_t initialBuffer)
    : description_(std::move(description)) {
  // At least a marker and an XID, so a record's head always fits.
  in_.resize(std::max<std::size_t>(initialBuffer, 64));
}

void RecordReader::addPlacement(std::uint32_t xid, std::span<std::uint8_t> dst) {
  std::lock_guard lock(placeMutex_);
  placements_[xid] = dst;
  placementCount_.store(placements_.size(), std::memory_order_relaxed);
}

std::span<std::uint8_t> RecordReader::takePlacement(std::uint32_t xid) {
  std::lock_guard lock(placeMutex_);
  auto it = placements_.find(xid);
  if (it == placements_.end()) return {};
  const std::span<std::uint8_t> dst = it->second;
  placements_.erase(it);
  placementCount_.store(placements_.size(), std::memory_order_relaxed);
  return dst;
}

void RecordReader::abandon(std::uint32_t xid) {
  std::lock_guard lock(placeMutex_);
  if (placements_.erase(xid) != 0)
    placementCount_.store(placements_.size(), std::memory_order_relaxed);
  // Its record is arriving now: the rest goes to scratch, never to a buffer
  // the caller is about to free.
  if (placeActive_ && placeXid_ == xid && placeDst_.data() != discard_.data()) {
    discard_.assign(placeDst_.size(), 0);
    placeDst_ = discard_;
  }
}

std::size_t RecordReader::largeOwed() const {
  if (!largeActive_) return 0;
  return large_.size() + placeSize_ + placePad_ - largeHave_;
}

// Inside a large record: what is still missing of its head, the caller's
// buffer and the pad. Otherwise the free room of in_, made first if in_ is
// full (the partial record moves to the front, and in_ grows if it alone
// fills it).
ReceiveTargets RecordReader::targets() {
  ReceiveTargets t;
  if (largeActive_) {
    std::size_t skip = largeHave_;
    auto add = [&](std::uint8_t* base, std::size_t len) {
      if (skip >= len) {
        skip -= len;
        return;
      }
      t.parts[t.count++] = {base + skip, len - skip};
      skip = 0;
    };
    add(large_.data(), large_.size());
    add(placeDst_.data(), placeDst_.size());
    add(padScratch_.data(), placePad_);
    return t;
  }
  if (inEnd_ == in_.size()) {
    if (inStart_ > 0) {
      std::memmove(in_.data(), in_.data() + inStart_, inEnd_ - inStart_);
      inEnd_ -= inStart_;
      inStart_ = 0;
    }
    if (inEnd_ == in_.size()) in_.resize(in_.size() * 2);
  }
  std::size_t room = in_.size() - inEnd_;
  if (inStart_ == inEnd_ && !assembling_ && placing()) room = std::min(room, kHeaderReceive);
  t.parts[t.count++] = {in_.data() + inEnd_, room};
  return t;
}

void RecordReader::received(std::size_t n) {
  if (largeActive_) {
    largeHave_ += n;
  } else {
    inEnd_ += n;
  }
}

Error RecordReader::dispatch(RecordSink& sink) {
  if (largeActive_) {
    if (largeOwed() > 0) return {};
    finishLargeRecord(sink);
    return {};
  }
  return parseRecords(sink);
}

Error RecordReader::feed(std::span<const std::uint8_t> bytes, RecordSink& sink) {
  while (!bytes.empty() && !sink.stopping()) {
    const std::size_t n = receiveWith([&](const ReceiveTargets& t) {
      std::size_t done = 0;
      for (std::size_t i = 0; i < t.count && done < bytes.size(); ++i) {
        const std::size_t k = std::min(t.parts[i].size(), bytes.size() - done);
        std::memcpy(t.parts[i].data(), bytes.data() + done, k);
        done += k;
      }
      return done;
    });
    if (n == 0) break;  // cannot happen: there is always room or a record owed
    bytes = bytes.subspan(n);
    if (Error e = dispatch(sink)) return e;
  }
  return {};
}

Error RecordReader::endOfStream() const {
  if (largeActive_) {
    const std::size_t total = large_.size() + placeSize_ + placePad_;
    return makeError(ClientErrc::kConnectionClosed, description_ +
                                                        " closed in the middle of a reply (" +
                                                        std::to_string(largeHave_) + " of " +
                                                        std::to_string(total) + " bytes received)");
  }
  if (inEnd_ > inStart_ || assembling_) {
    return makeError(ClientErrc::kConnectionClosed,
                     description_ + " closed in the middle of a reply (" +
                         std::to_string(inEnd_ - inStart_) + " bytes of it received)");
  }
  return makeError(ClientErrc::kConnectionClosed, description_);
}

Error RecordReader::checkSize(std::size_t len) const {
  const std::size_t maxIncoming = maxIncoming_.load();
  if (len > maxIncoming || assembly_.size() + len > maxIncoming) {
    return makeError(ClientErrc::kRecordTooLarge,
                     description_ + ": record fragment of " + std::to_string(len) +
                         " bytes exceeds the negotiated maximum of " + std::to_string(maxIncoming));
  }
  return {};
}

Error RecordReader::parseRecords(RecordSink& sink) {
  while (inEnd_ - inStart_ >= 4 && !sink.stopping()) {
    const std::uint32_t marker = getBe32(in_.data() + inStart_);
    const bool last = (marker & kLastFragment) != 0;
    const std::size_t len = marker & ~kLastFragment;
    if (Error e = checkSize(len)) return e;
    if (inEnd_ - inStart_ < 4 + len) {
      // Large and incomplete: move what we have to its own buffer once and
      // let the rest arrive there (or in the caller's buffer). Waits for
      // the XID first, which says whether a caller's buffer awaits the data.
      const std::size_t have = inEnd_ - inStart_ - 4;
      if (have >= 4 &&
          (4 + len > in_.size() / 2 || (len >= kMinDirectPlacement && !assembling_ && placing()))) {
        beginLargeRecord(len, last, have);
      }
      break;
    }
    std::span<const std::uint8_t> fragment(in_.data() + inStart_ + 4, len);
    // A reply that arrived whole ends its call's registration, if any.
    if (!assembling_ && len >= 4 && placing()) takePlacement(getBe32(fragment.data()));
    inStart_ += 4 + len;
    deliver(sink, fragment, last);
  }
  if (inStart_ == inEnd_) inStart_ = inEnd_ = 0;
  return {};
}

void RecordReader::beginLargeRecord(std::size_t len, bool last, std::size_t have) {
  const std::uint8_t* body = in_.data() + inStart_ + 4;
  std::span<std::uint8_t> dst;
  if (!assembling_ && placing()) dst = takePlacement(getBe32(body));
  const std::size_t padded = (dst.size() + 3) & ~std::size_t{3};
  // Placement needs a single-fragment record that can hold the data plus a
  // reply header in front of it; anything else is received whole.
  if (!dst.empty() && last && len >= padded + 8) {
    large_.resize(len - padded);
    {
      std::lock_guard lock(placeMutex_);
      placeDst_ = dst;
      placeXid_ = getBe32(body);
      placeActive_ = true;
    }
    placeSize_ = dst.size();
    placePad_ = padded - dst.size();
    // Scatter what already arrived over the same three parts.
    std::size_t done = 0;
    const auto part = [&](std::uint8_t* to, std::size_t size) {
      const std::size_t n = std::min(size, have - done);
      if (n > 0) std::memcpy(to, body + done, n);
      done += n;
    };
    part(large_.data(), large_.size());
    part(dst.data(), dst.size());
    part(padScratch_.data(), placePad_);
  } else {
    large_.resize(len);
    std::memcpy(large_.data(), body, have);
  }
  largeHave_ = have;
  largeLast_ = last;
  largeActive_ = true;
  inStart_ = inEnd_ = 0;
}

void RecordReader::finishLargeRecord(RecordSink& sink) {
  largeActive_ = false;
  if (placeActive_) {
    deliverPlacedRecord(sink);
  } else {
    deliver(sink, std::span<const std::uint8_t>(large_.data(), large_.size()), largeLast_);
  }
}

// A whole record whose tail was received into a caller's buffer.
void RecordReader::deliverPlacedRecord(RecordSink& sink) {
  std::span<std::uint8_t> dst;
  {
    std::lock_guard lock(placeMutex_);
    dst = placeDst_;
    placeDst_ = {};
    placeActive_ = false;
  }
  placeSize_ = 0;
  const std::size_t head = large_.size();
  // The data's XDR length is the last word before the tail: it says whether
  // the server sent as much as was asked for.
  if (getBe32(large_.data() + head - 4) == dst.size()) {
    ++placedReplies_;
    const std::array<std::uint32_t, 1> placed{static_cast<std::uint32_t>(dst.size())};
    sink.onRecord(std::span<const std::uint8_t>(large_.data(), head), placed);
  } else {
    // A shorter reply: its tail is not the data. Put the record back
    // together and let the decoder find the data itself.
    ++placementFallbacks_;
    large_.insert(large_.end(), dst.begin(), dst.end());
    large_.insert(large_.end(), padScratch_.begin(),
                  padScratch_.begin() + static_cast<std::ptrdiff_t>(placePad_));
    deliver(sink, std::span<const std::uint8_t>(large_.data(), large_.size()), true);
  }
  placePad_ = 0;
}

void RecordReader::deliver(RecordSink& sink, std::span<const std::uint8_t> fragment, bool last) {
  if (!assembling_ && last) {
    sink.onRecord(fragment, {});
    return;
  }
  assembly_.insert(assembly_.end(), fragment.begin(), fragment.end());
  assembling_ = !last;
  if (last) {
    // A record whose first fragment was too short to hold the XID ends its
    // call's registration only now; left behind, a later record with that
    // XID (a duplicate reply) would be placed into a buffer its caller freed.
    if (assembly_.size() >= 4 && placing()) takePlacement(getBe32(assembly_.data()));
    sink.onRecord(assembly_, {});
    assembly_.clear();
  }
}

}  // namespace nfsrdma::transport
