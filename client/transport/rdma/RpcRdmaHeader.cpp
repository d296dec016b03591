#include "client/transport/rdma/RpcRdmaHeader.h"

namespace nfsrdma::transport::rdma {
namespace {

void putSegment(xdr::XdrEncoder& enc, const Segment& s) {
  enc.putU32(s.handle);
  enc.putU32(s.length);
  enc.putU64(s.offset);
}

Segment getSegment(xdr::XdrDecoder& dec) {
  Segment s;
  s.handle = dec.getU32();
  s.length = dec.getU32();
  s.offset = dec.getU64();
  return s;
}

Error bad(const std::string& what) {
  return makeError(ClientErrc::kMalformedReply, "RPC-over-RDMA header: " + what);
}

}  // namespace

void encodeHeader(xdr::XdrEncoder& enc, const RpcRdmaHeader& h) {
  enc.putU32(h.xid);
  enc.putU32(h.version);
  enc.putU32(h.credits);
  enc.putU32(static_cast<std::uint32_t>(h.proc));
  if (h.proc == RdmaProc::kError) {
    enc.putU32(static_cast<std::uint32_t>(h.error));
    if (h.error == RdmaErrorCode::kVers) {
      enc.putU32(h.versLow);
      enc.putU32(h.versHigh);
    }
    return;
  }
  for (const auto& r : h.reads) {
    enc.putBool(true);
    enc.putU32(r.position);
    putSegment(enc, r.target);
  }
  enc.putBool(false);
  for (const auto& w : h.writes) {
    enc.putBool(true);
    enc.putU32(static_cast<std::uint32_t>(w.size()));
    for (const auto& s : w) putSegment(enc, s);
  }
  enc.putBool(false);
  enc.putBool(h.hasReply);
  if (h.hasReply) {
    enc.putU32(static_cast<std::uint32_t>(h.reply.size()));
    for (const auto& s : h.reply) putSegment(enc, s);
  }
}

namespace {

// The body of an RDMA_ERROR after its procedure word (RFC 8166 section 4.5).
Error decodeErrorBody(xdr::XdrDecoder& dec, RpcRdmaHeader& out, std::size_t& consumed) {
  const std::uint32_t code = dec.getU32();
  if (code == static_cast<std::uint32_t>(RdmaErrorCode::kVers)) {
    out.error = RdmaErrorCode::kVers;
    out.versLow = dec.getU32();
    out.versHigh = dec.getU32();
    if (!dec.ok()) return bad("truncated RDMA_ERROR");
    consumed = dec.position();
    return makeError(ClientErrc::kRpcDenied,
                     "RDMA_ERROR ERR_VERS: the server speaks RPC-over-RDMA versions " +
                         std::to_string(out.versLow) + "-" + std::to_string(out.versHigh));
  }
  if (code == static_cast<std::uint32_t>(RdmaErrorCode::kChunk)) {
    out.error = RdmaErrorCode::kChunk;
    consumed = dec.position();
    // Not a rejection: Linux's svcrdma also sends ERR_CHUNK after the call
    // ran, when the reply does not fit what the chunks offer, so the
    // session must treat the call's slot as of unknown outcome.
    return makeError(ClientErrc::kRdmaChunkError, "RDMA_ERROR ERR_CHUNK");
  }
  if (!dec.ok()) return bad("truncated RDMA_ERROR");
  return bad("RDMA_ERROR with unknown code " + std::to_string(code));
}

// The read list, the write list and the reply chunk, each bounded so that a
// hostile header cannot make us allocate without limit.
Error decodeChunkLists(xdr::XdrDecoder& dec, RpcRdmaHeader& out) {
  for (std::size_t n = 0;; ++n) {
    const bool more = dec.getBool();
    if (!dec.ok()) return bad("truncated read list");
    if (!more) break;
    if (n == kMaxChunks * kMaxSegmentsPerChunk)
      return bad("read list longer than " + std::to_string(n));
    ReadSegment r;
    r.position = dec.getU32();
    r.target = getSegment(dec);
    out.reads.push_back(r);
  }
  for (std::size_t n = 0;; ++n) {
    const bool more = dec.getBool();
    if (!dec.ok()) return bad("truncated write list");
    if (!more) break;
    if (n == kMaxChunks)
      return bad("write list longer than " + std::to_string(kMaxChunks) + " chunks");
    const std::uint32_t count = dec.getU32();
    if (count > kMaxSegmentsPerChunk)
      return bad("write chunk of " + std::to_string(count) + " segments");
    WriteChunk w;
    for (std::uint32_t i = 0; i < count; ++i) w.push_back(getSegment(dec));
    out.writes.push_back(std::move(w));
  }
  out.hasReply = dec.getBool();
  if (out.hasReply) {
    const std::uint32_t count = dec.getU32();
    if (count > kMaxSegmentsPerChunk)
      return bad("reply chunk of " + std::to_string(count) + " segments");
    for (std::uint32_t i = 0; i < count; ++i) out.reply.push_back(getSegment(dec));
  }
  if (!dec.ok()) return bad("truncated chunk lists");
  return {};
}

}  // namespace

Error decodeHeader(std::span<const std::uint8_t> bytes, RpcRdmaHeader& out, std::size_t& consumed) {
  xdr::XdrDecoder dec(bytes);
  out = RpcRdmaHeader{};
  out.xid = dec.getU32();
  out.version = dec.getU32();
  out.credits = dec.getU32();
  const std::uint32_t proc = dec.getU32();
  if (!dec.ok()) return bad("shorter than 16 bytes");
  if (out.version != kRpcRdmaVersion) {
    return bad("version " + std::to_string(out.version) + ", expected 1");
  }
  if (proc > static_cast<std::uint32_t>(RdmaProc::kError))
    return bad("unknown procedure " + std::to_string(proc));
  out.proc = static_cast<RdmaProc>(proc);
  if (out.proc == RdmaProc::kMsgp || out.proc == RdmaProc::kDone) {
    return bad(std::string("reserved procedure ") +
               (out.proc == RdmaProc::kMsgp ? "RDMA_MSGP" : "RDMA_DONE"));
  }
  if (out.proc == RdmaProc::kError) return decodeErrorBody(dec, out, consumed);
  if (Error e = decodeChunkLists(dec, out)) return e;
  consumed = dec.position();
  return {};
}

void encodePrivateData(const ConnectionParameters& p,
                       std::span<std::uint8_t, kPrivateDataSize> out) {
  out[0] = static_cast<std::uint8_t>(p.magic >> 24);
  out[1] = static_cast<std::uint8_t>(p.magic >> 16);
  out[2] = static_cast<std::uint8_t>(p.magic >> 8);
  out[3] = static_cast<std::uint8_t>(p.magic);
  out[4] = p.version;
  out[5] = p.remoteInvalidate ? 1 : 0;
  auto sizeByte = [](std::uint32_t bytes) {
    const std::uint32_t units = bytes / 1024;
    return static_cast<std::uint8_t>(units == 0 ? 0 : std::min<std::uint32_t>(units - 1, 255));
  };
  out[6] = sizeByte(p.sendSize);
  out[7] = sizeByte(p.receiveSize);
}

bool decodePrivateData(std::span<const std::uint8_t> bytes, ConnectionParameters& out) {
  if (bytes.size() < kPrivateDataSize) return false;
  const std::uint32_t magic = (std::uint32_t{bytes[0]} << 24) | (std::uint32_t{bytes[1]} << 16) |
                              (std::uint32_t{bytes[2]} << 8) | std::uint32_t{bytes[3]};
  // Private data of a version other than 1 counts as absent, as in Linux's
  // xprtrdma: its bytes 6 and 7 might not be inline sizes at all.
  if (magic != 0xf6ab0e18 || bytes[4] != 1) return false;
  out.magic = magic;
  out.version = bytes[4];
  out.remoteInvalidate = (bytes[5] & 1) != 0;
  out.sendSize = (std::uint32_t{bytes[6]} + 1) * 1024;
  out.receiveSize = (std::uint32_t{bytes[7]} + 1) * 1024;
  return true;
}

}  // namespace nfsrdma::transport::rdma
