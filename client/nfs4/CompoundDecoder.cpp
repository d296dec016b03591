// The COMPOUND reply decoder (CompoundDecoder in Compound.h): every length
// and count from the server is bounded before it is used. The encoder and the
// operation names are in Compound.cpp.
#include <cstring>

#include "client/nfs4/Compound.h"

namespace nfsrdma::nfs4 {
namespace {

constexpr std::size_t kMaxNameLength = 4096;
constexpr std::size_t kMaxOwnerLength = 1024;
constexpr std::uint32_t kMaxBitmapWords = 8;
constexpr std::uint32_t kMaxDirEntries = 1U << 20;

}  // namespace

CompoundDecoder::CompoundDecoder(xdr::XdrDecoder& dec) : dec_(dec) {
  status_ = dec_.getU32();
  (void)dec_.getOpaque(kOpaqueLimit);  // tag
  count_ = dec_.getU32();
  if (!dec_.ok()) markMalformed("truncated COMPOUND header");
}

void CompoundDecoder::markMalformed(std::string reason) {
  if (!malformed_) reason_ = std::move(reason);
  malformed_ = true;
  dec_.fail();
}

std::uint32_t CompoundDecoder::next(Op expected) {
  if (!ok()) return kStatusMalformed;
  if (seen_ >= count_) {
    markMalformed(std::string("no result for ") + opName(expected) + " (the server returned " +
                  std::to_string(count_) + ")");
    return kStatusMalformed;
  }
  ++seen_;
  const std::uint32_t opnum = dec_.getU32();
  const std::uint32_t status = dec_.getU32();
  if (!dec_.ok()) {
    markMalformed(std::string("truncated result of ") + opName(expected));
    return kStatusMalformed;
  }
  if (opnum != static_cast<std::uint32_t>(expected)) {
    markMalformed(std::string("result for op ") + std::to_string(opnum) + " where " +
                  opName(expected) + " was expected");
    return kStatusMalformed;
  }
  return status;
}

Bitmap CompoundDecoder::bitmap() {
  Bitmap b;
  const std::uint32_t n = dec_.getU32();
  if (n > kMaxBitmapWords) {
    markMalformed("bitmap of " + std::to_string(n) + " words");
    return b;
  }
  for (std::uint32_t i = 0; i < n; ++i) {
    const std::uint32_t w = dec_.getU32();
    if (i < Bitmap::kWords) {
      b.setWord(i, w);
    } else if (w != 0) {
      markMalformed("attribute bit beyond those requested");
    }
  }
  return b;
}

StateId CompoundDecoder::stateId() {
  StateId s;
  s.seqid = dec_.getU32();
  auto other = dec_.getFixedOpaque(kStateIdOtherSize);
  if (other.size() == kStateIdOtherSize)
    std::memcpy(s.other.data(), other.data(), kStateIdOtherSize);
  return s;
}

namespace {

void getTime(xdr::XdrDecoder& v, NfsTime& t) {
  t.seconds = v.getI64();
  t.nseconds = v.getU32();
}

// Reads one attribute's value (fattr4 values come in bit order) into `a`;
// false for an attribute this client never requests.
bool getAttribute(xdr::XdrDecoder& v, std::uint32_t bit, Attributes& a) {
  switch (bit) {
    case attr::kSupportedAttrs: {
      const std::uint32_t n = v.getU32();
      if (n > kMaxBitmapWords) {
        v.fail();
        break;
      }
      for (std::uint32_t i = 0; i < n; ++i) (void)v.getU32();
      break;
    }
    case attr::kType:
      a.type = static_cast<FileType>(v.getU32());
      break;
    case 2:
    case 5:
    case 6:
    case 7:
    case 9:
    case 11:
      (void)v.getU32();
      break;  // fixed-size words
    case attr::kChange:
      a.change = v.getU64();
      break;
    case attr::kSize:
      a.size = v.getU64();
      break;
    case attr::kFsid:
      a.fsidMajor = v.getU64();
      a.fsidMinor = v.getU64();
      break;
    case attr::kLeaseTime:
      a.leaseTime = v.getU32();
      break;
    case attr::kFileId:
      a.fileId = v.getU64();
      break;
    case attr::kMaxRead:
      a.maxRead = v.getU64();
      break;
    case attr::kMaxWrite:
      a.maxWrite = v.getU64();
      break;
    case attr::kMode:
      a.mode = v.getU32();
      break;
    case attr::kNumLinks:
      a.numLinks = v.getU32();
      break;
    case attr::kOwner:
      a.owner = std::string(v.getString(kMaxOwnerLength));
      break;
    case attr::kOwnerGroup:
      a.ownerGroup = std::string(v.getString(kMaxOwnerLength));
      break;
    case attr::kSpaceUsed:
      a.spaceUsed = v.getU64();
      break;
    case attr::kTimeAccess:
      getTime(v, a.timeAccess);
      break;
    case attr::kTimeMetadata:
      getTime(v, a.timeMetadata);
      break;
    case attr::kTimeModify:
      getTime(v, a.timeModify);
      break;
    default:
      return false;
  }
  return true;
}

}  // namespace

Attributes CompoundDecoder::fattr() {
  Attributes a;
  a.present = bitmap();
  auto vals = dec_.getOpaque(1U << 20);
  if (!ok()) return a;
  xdr::XdrDecoder v(vals);
  for (std::uint32_t bit = 0; bit < Bitmap::kWords * 32; ++bit) {
    if (!a.present.test(bit)) continue;
    if (!getAttribute(v, bit, a)) {
      markMalformed("attribute " + std::to_string(bit) + " returned but not requested");
      return a;
    }
  }
  if (!v.ok()) markMalformed("truncated attribute values");
  return a;
}

SequenceResult CompoundDecoder::sequence() {
  SequenceResult r;
  auto sid = dec_.getFixedOpaque(kSessionIdSize);
  if (sid.size() == kSessionIdSize) std::memcpy(r.session.data(), sid.data(), kSessionIdSize);
  r.sequenceId = dec_.getU32();
  r.slot = dec_.getU32();
  r.highestSlot = dec_.getU32();
  r.targetHighestSlot = dec_.getU32();
  r.statusFlags = dec_.getU32();
  if (!dec_.ok()) markMalformed("truncated SEQUENCE result");
  return r;
}

SessionId CompoundDecoder::bindConnToSession() {
  SessionId id{};
  auto sid = dec_.getFixedOpaque(kSessionIdSize);
  if (sid.size() == kSessionIdSize) std::memcpy(id.data(), sid.data(), kSessionIdSize);
  (void)dec_.getU32();   // bctsr_dir: the fore channel we asked for, or both
  (void)dec_.getBool();  // bctsr_use_conn_in_rdma_mode
  if (!dec_.ok()) markMalformed("truncated BIND_CONN_TO_SESSION result");
  return id;
}

FileHandle CompoundDecoder::getFh() {
  FileHandle fh;
  auto b = dec_.getOpaque(kFhMaxSize);
  fh.bytes.assign(b.begin(), b.end());
  if (!dec_.ok()) markMalformed("bad GETFH result (file handle over 128 bytes or truncated)");
  return fh;
}

Attributes CompoundDecoder::getAttr() {
  return fattr();
}

void CompoundDecoder::skipNfsAce() {
  (void)dec_.getU32();  // type
  (void)dec_.getU32();  // flag
  (void)dec_.getU32();  // access mask
  (void)dec_.getOpaque(kMaxOwnerLength);
}

OpenResult CompoundDecoder::open() {
  OpenResult r;
  r.stateId = stateId();
  changeInfo();
  r.resultFlags = dec_.getU32();
  (void)bitmap();  // attrset
  r.delegationType = dec_.getU32();
  switch (r.delegationType) {
    case kOpenDelegateNone:
      break;
    case kOpenDelegateRead:
      r.delegationStateId = stateId();
      (void)dec_.getBool();  // recall
      skipNfsAce();
      break;
    case kOpenDelegateWrite: {
      r.delegationStateId = stateId();
      (void)dec_.getBool();
      const std::uint32_t limitBy = dec_.getU32();
      if (limitBy == 1) {
        (void)dec_.getU64();
      } else if (limitBy == 2) {
        (void)dec_.getU32();
        (void)dec_.getU32();
      } else {
        markMalformed("OPEN write delegation with space limit type " + std::to_string(limitBy));
      }
      skipNfsAce();
      break;
    }
    case kOpenDelegateNoneExt: {
      const std::uint32_t why = dec_.getU32();
      if (why == 1 || why == 2) (void)dec_.getBool();  // WND4_CONTENTION / WND4_RESOURCE
      break;
    }
    default:
      markMalformed("OPEN delegation type " + std::to_string(r.delegationType));
  }
  if (!dec_.ok()) markMalformed("truncated OPEN result");
  return r;
}

StateId CompoundDecoder::close() {
  StateId s = stateId();
  if (!dec_.ok()) markMalformed("truncated CLOSE result");
  return s;
}

ReadResult CompoundDecoder::read() {
  ReadResult r;
  r.eof = dec_.getBool();
  std::uint32_t placed = 0;
  if (dec_.nextPlacedBulk(placed)) {
    // Placed by the transport (an RDMA Write chunk, or TCP receiving the
    // record's tail into the caller's buffer): the length stays in the
    // stream, the bytes do not.
    r.placed = true;
    r.placedLength = dec_.getU32();
    if (dec_.ok() && r.placedLength != placed) {
      markMalformed("READ says " + std::to_string(r.placedLength) + " bytes but the server wrote " +
                    std::to_string(placed) + " directly into the read buffer");
    }
  } else {
    r.data = dec_.getOpaque(0xffffffffU);
  }
  if (!dec_.ok()) markMalformed("truncated READ result");
  return r;
}

WriteResult CompoundDecoder::write() {
  WriteResult r;
  r.count = dec_.getU32();
  const std::uint32_t committed = dec_.getU32();
  if (committed > 2) markMalformed("WRITE committed value " + std::to_string(committed));
  r.committed = static_cast<StableHow>(committed);
  auto verf = dec_.getFixedOpaque(kVerifierSize);
  if (verf.size() == kVerifierSize) std::memcpy(r.verifier.data(), verf.data(), kVerifierSize);
  if (!dec_.ok()) markMalformed("truncated WRITE result");
  return r;
}

Verifier CompoundDecoder::commit() {
  Verifier v{};
  auto verf = dec_.getFixedOpaque(kVerifierSize);
  if (verf.size() == kVerifierSize) std::memcpy(v.data(), verf.data(), kVerifierSize);
  if (!dec_.ok()) markMalformed("truncated COMMIT result");
  return v;
}

void CompoundDecoder::changeInfo() {
  (void)dec_.getBool();  // atomic
  (void)dec_.getU64();   // before
  (void)dec_.getU64();   // after
  if (!dec_.ok()) markMalformed("truncated change_info4");
}

std::string CompoundDecoder::readLink() {
  auto b = dec_.getOpaque(kMaxLinkText);
  if (!dec_.ok()) {
    markMalformed("bad READLINK result (link text over " + std::to_string(kMaxLinkText) +
                  " bytes or truncated)");
    return {};
  }
  std::string text(reinterpret_cast<const char*>(b.data()), b.size());
  // A path cannot hold a NUL; one here would cut the target short in any C API.
  if (text.empty() || text.find('\0') != std::string::npos) {
    markMalformed("bad READLINK result (empty link text or a NUL byte in it)");
    return {};
  }
  return text;
}

void CompoundDecoder::rename() {
  changeInfo();
  changeInfo();
}

void CompoundDecoder::createDirectory() {
  changeInfo();
  (void)bitmap();
}

ReadDirResult CompoundDecoder::readDir() {
  ReadDirResult r;
  auto verf = dec_.getFixedOpaque(kVerifierSize);
  if (verf.size() == kVerifierSize) std::memcpy(r.cookieVerf.data(), verf.data(), kVerifierSize);
  for (std::uint32_t n = 0; ok(); ++n) {
    const bool follows = dec_.getBool();
    if (!follows) break;
    if (n >= kMaxDirEntries) {
      markMalformed("READDIR reply with over a million entries");
      break;
    }
    DirEntry e;
    e.cookie = dec_.getU64();
    e.name = std::string(dec_.getString(kMaxNameLength));
    e.attrs = fattr();
    r.entries.push_back(std::move(e));
  }
  r.eof = dec_.getBool();
  if (!dec_.ok()) markMalformed("truncated READDIR result");
  return r;
}

void CompoundDecoder::setAttr() {
  (void)bitmap();
}

ExchangeIdResult CompoundDecoder::exchangeId() {
  ExchangeIdResult r;
  r.clientId = dec_.getU64();
  r.sequenceId = dec_.getU32();
  r.flags = dec_.getU32();
  const std::uint32_t protect = dec_.getU32();
  if (protect != kSp4None) {
    markMalformed("EXCHANGE_ID state protection " + std::to_string(protect) +
                  " (only SP4_NONE is supported)");
    return r;
  }
  r.serverOwnerMinor = dec_.getU64();
  const auto major = dec_.getOpaque(kOpaqueLimit);
  r.serverOwnerMajor.assign(major.begin(), major.end());
  r.serverScope = std::string(dec_.getString(kOpaqueLimit));
  const std::uint32_t impls = dec_.getU32();
  if (impls > 1) markMalformed("EXCHANGE_ID with " + std::to_string(impls) + " implementation ids");
  for (std::uint32_t i = 0; i < impls && ok(); ++i) {
    (void)dec_.getString(kOpaqueLimit);  // domain
    r.serverImplName = std::string(dec_.getString(kOpaqueLimit));
    (void)dec_.getI64();
    (void)dec_.getU32();
  }
  if (!dec_.ok()) markMalformed("truncated EXCHANGE_ID result");
  return r;
}

ChannelAttrs CompoundDecoder::channelAttrs() {
  ChannelAttrs c;
  c.headerPadSize = dec_.getU32();
  c.maxRequestSize = dec_.getU32();
  c.maxResponseSize = dec_.getU32();
  c.maxResponseSizeCached = dec_.getU32();
  c.maxOperations = dec_.getU32();
  c.maxRequests = dec_.getU32();
  const std::uint32_t ird = dec_.getU32();
  if (ird > 1) markMalformed("channel attributes with " + std::to_string(ird) + " rdma_ird values");
  for (std::uint32_t i = 0; i < ird && ok(); ++i) (void)dec_.getU32();
  return c;
}

CreateSessionResult CompoundDecoder::createSession() {
  CreateSessionResult r;
  auto sid = dec_.getFixedOpaque(kSessionIdSize);
  if (sid.size() == kSessionIdSize) std::memcpy(r.session.data(), sid.data(), kSessionIdSize);
  r.sequenceId = dec_.getU32();
  r.flags = dec_.getU32();
  r.fore = channelAttrs();
  r.back = channelAttrs();
  if (!dec_.ok()) markMalformed("truncated CREATE_SESSION result");
  return r;
}

}  // namespace nfsrdma::nfs4
