#include "client/nfs4/Compound.h"

#include <cstring>

namespace nfsrdma::nfs4 {
namespace {

std::span<const std::uint8_t> bytesOf(std::string_view s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

}  // namespace

const char* opName(Op op) {
  switch (op) {
    case Op::kAccess:
      return "ACCESS";
    case Op::kClose:
      return "CLOSE";
    case Op::kCommit:
      return "COMMIT";
    case Op::kCreate:
      return "CREATE";
    case Op::kDelegReturn:
      return "DELEGRETURN";
    case Op::kGetAttr:
      return "GETATTR";
    case Op::kGetFh:
      return "GETFH";
    case Op::kLookup:
      return "LOOKUP";
    case Op::kOpen:
      return "OPEN";
    case Op::kPutFh:
      return "PUTFH";
    case Op::kPutRootFh:
      return "PUTROOTFH";
    case Op::kRead:
      return "READ";
    case Op::kReadDir:
      return "READDIR";
    case Op::kReadLink:
      return "READLINK";
    case Op::kRemove:
      return "REMOVE";
    case Op::kRename:
      return "RENAME";
    case Op::kRestoreFh:
      return "RESTOREFH";
    case Op::kSaveFh:
      return "SAVEFH";
    case Op::kSetAttr:
      return "SETATTR";
    case Op::kWrite:
      return "WRITE";
    case Op::kBindConnToSession:
      return "BIND_CONN_TO_SESSION";
    case Op::kExchangeId:
      return "EXCHANGE_ID";
    case Op::kCreateSession:
      return "CREATE_SESSION";
    case Op::kDestroySession:
      return "DESTROY_SESSION";
    case Op::kSequence:
      return "SEQUENCE";
    case Op::kDestroyClientId:
      return "DESTROY_CLIENTID";
    case Op::kReclaimComplete:
      return "RECLAIM_COMPLETE";
    case Op::kIllegal:
      return "ILLEGAL";
  }
  return "OP_(unknown)";
}

// ---------------------------------------------------------------- encoder

CompoundEncoder::CompoundEncoder(xdr::XdrEncoder& enc, std::string_view tag) : enc_(enc) {
  enc_.putString(tag);
  enc_.putU32(kMinorVersion);
  countAt_ = enc_.reserveU32();
}

void CompoundEncoder::finish() {
  enc_.patchU32(countAt_, ops_);
  if (changesState_ && cacheThisAt_ != SIZE_MAX) enc_.patchU32(cacheThisAt_, 1);
}

namespace {
// Operations whose second execution leaves the server as the first did:
// lookups and reads, and writes of the same bytes or attribute values to the
// same place. The rest create, remove, rename or change state ids.
bool idempotent(Op o) {
  switch (o) {
    case Op::kAccess:
    case Op::kCommit:
    case Op::kGetAttr:
    case Op::kGetFh:
    case Op::kLookup:
    case Op::kPutFh:
    case Op::kPutRootFh:
    case Op::kRead:
    case Op::kReadDir:
    case Op::kReadLink:
    case Op::kRestoreFh:
    case Op::kSaveFh:
    case Op::kSequence:
    case Op::kSetAttr:
    case Op::kWrite:
      return true;
    default:
      return false;
  }
}

// Operations that change nothing on the server; a COMPOUND of only these
// needs no reply cache (a resend runs them again, harmlessly). A WRITE or
// SETATTR run again is harmless alone, but not after a later one changed
// the same bytes or attributes; a COMMIT is kept with them.
bool readsOnly(Op o) {
  return idempotent(o) && o != Op::kWrite && o != Op::kSetAttr && o != Op::kCommit;
}
}  // namespace

void CompoundEncoder::op(Op o) {
  enc_.putU32(static_cast<std::uint32_t>(o));
  if (firstNonIdempotent_ == kAllIdempotent && !idempotent(o)) firstNonIdempotent_ = ops_;
  if (!readsOnly(o)) changesState_ = true;
  ++ops_;
}

void CompoundEncoder::bitmap(const Bitmap& b) {
  const std::size_t n = b.usedWords();
  enc_.putU32(static_cast<std::uint32_t>(n));
  for (std::size_t i = 0; i < n; ++i) enc_.putU32(b.word(i));
}

void CompoundEncoder::stateId(const StateId& s) {
  enc_.putU32(s.seqid);
  enc_.putFixedOpaque(s.other);
}

// fattr4: bitmap, then the values in bit order inside an opaque.
void CompoundEncoder::setAttributes(const SetAttributes& a) {
  Bitmap b;
  std::array<std::uint8_t, 16> vals{};
  xdr::XdrEncoder v(vals);
  if (a.size) {
    b.set(attr::kSize);
    v.putU64(*a.size);
  }
  if (a.mode) {
    b.set(attr::kMode);
    v.putU32(*a.mode & 07777U);
  }
  bitmap(b);
  enc_.putOpaque(v.head());
}

void CompoundEncoder::sequence(const SessionId& session, std::uint32_t sequenceId,
                               std::uint32_t slot, std::uint32_t highestSlot, bool cacheThis) {
  op(Op::kSequence);
  enc_.putFixedOpaque(session);
  enc_.putU32(sequenceId);
  enc_.putU32(slot);
  enc_.putU32(highestSlot);
  cacheThisAt_ = enc_.reserveU32();
  enc_.patchU32(cacheThisAt_, cacheThis ? 1U : 0U);
}

void CompoundEncoder::putRootFh() {
  op(Op::kPutRootFh);
}

void CompoundEncoder::putFh(const FileHandle& fh) {
  op(Op::kPutFh);
  enc_.putOpaque(fh.bytes);
}

void CompoundEncoder::lookup(std::string_view name) {
  op(Op::kLookup);
  enc_.putOpaque(bytesOf(name));
}

void CompoundEncoder::getFh() {
  op(Op::kGetFh);
}

void CompoundEncoder::getAttr(const Bitmap& request) {
  op(Op::kGetAttr);
  bitmap(request);
}

void CompoundEncoder::saveFh() {
  op(Op::kSaveFh);
}
void CompoundEncoder::restoreFh() {
  op(Op::kRestoreFh);
}

void CompoundEncoder::open(const OpenArgs& a) {
  op(Op::kOpen);
  enc_.putU32(0);  // seqid: ignored in NFSv4.1
  enc_.putU32(a.shareAccess);
  enc_.putU32(0);  // share_deny: none
  enc_.putU64(a.clientId);
  enc_.putOpaque(a.owner);
  if (a.create) {
    enc_.putU32(kOpenCreate);
    enc_.putU32(kCreateUnchecked);
    setAttributes(a.createAttrs);
  } else {
    enc_.putU32(kOpenNoCreate);
  }
  enc_.putU32(a.claim);
  switch (a.claim) {
    case kClaimNull:
      enc_.putOpaque(bytesOf(a.name));
      break;
    case kClaimPrevious:
      enc_.putU32(kOpenDelegateNone);
      break;  // delegate_type: none wanted back
    default:
      break;  // CLAIM_FH: no argument
  }
}

void CompoundEncoder::close(const StateId& s) {
  op(Op::kClose);
  enc_.putU32(0);  // seqid: ignored in NFSv4.1
  stateId(s);
}

void CompoundEncoder::delegReturn(const StateId& s) {
  op(Op::kDelegReturn);
  stateId(s);
}

void CompoundEncoder::read(const StateId& s, std::uint64_t offset, std::uint32_t count) {
  op(Op::kRead);
  stateId(s);
  enc_.putU64(offset);
  enc_.putU32(count);
}

void CompoundEncoder::write(const StateId& s, std::uint64_t offset, StableHow stable,
                            std::span<const std::uint8_t> data) {
  op(Op::kWrite);
  stateId(s);
  enc_.putU64(offset);
  enc_.putU32(static_cast<std::uint32_t>(stable));
  enc_.putBulk(data);
}

void CompoundEncoder::commit(std::uint64_t offset, std::uint32_t count) {
  op(Op::kCommit);
  enc_.putU64(offset);
  enc_.putU32(count);
}

void CompoundEncoder::remove(std::string_view name) {
  op(Op::kRemove);
  enc_.putOpaque(bytesOf(name));
}

void CompoundEncoder::readLink() {
  op(Op::kReadLink);
}

void CompoundEncoder::rename(std::string_view oldName, std::string_view newName) {
  op(Op::kRename);
  enc_.putOpaque(bytesOf(oldName));
  enc_.putOpaque(bytesOf(newName));
}

void CompoundEncoder::createDirectory(std::string_view name, const SetAttributes& attrs) {
  op(Op::kCreate);
  enc_.putU32(static_cast<std::uint32_t>(FileType::kDirectory));
  enc_.putOpaque(bytesOf(name));
  setAttributes(attrs);
}

void CompoundEncoder::readDir(std::uint64_t cookie, const Verifier& cookieVerf,
                              std::uint32_t dirCount, std::uint32_t maxCount,
                              const Bitmap& request) {
  op(Op::kReadDir);
  enc_.putU64(cookie);
  enc_.putFixedOpaque(cookieVerf);
  enc_.putU32(dirCount);
  enc_.putU32(maxCount);
  bitmap(request);
}

void CompoundEncoder::setAttr(const StateId& s, const SetAttributes& attrs) {
  op(Op::kSetAttr);
  stateId(s);
  setAttributes(attrs);
}

void CompoundEncoder::exchangeId(const Verifier& verifier, std::span<const std::uint8_t> ownerId,
                                 std::uint32_t flags) {
  op(Op::kExchangeId);
  enc_.putFixedOpaque(verifier);
  enc_.putOpaque(ownerId);
  enc_.putU32(flags);
  enc_.putU32(kSp4None);
  enc_.putU32(0);  // client_impl_id<1>: none
}

namespace {
void putChannelAttrs(xdr::XdrEncoder& enc, const ChannelAttrs& c) {
  enc.putU32(c.headerPadSize);
  enc.putU32(c.maxRequestSize);
  enc.putU32(c.maxResponseSize);
  enc.putU32(c.maxResponseSizeCached);
  enc.putU32(c.maxOperations);
  enc.putU32(c.maxRequests);
  enc.putU32(0);  // rdma_ird<1>: none
}
}  // namespace

void CompoundEncoder::createSession(std::uint64_t clientId, std::uint32_t sequenceId,
                                    const ChannelAttrs& fore, const ChannelAttrs& back) {
  op(Op::kCreateSession);
  enc_.putU64(clientId);
  enc_.putU32(sequenceId);
  enc_.putU32(0);  // flags: no persistence, no back channel on this connection
  putChannelAttrs(enc_, fore);
  putChannelAttrs(enc_, back);
  enc_.putU32(0x40000000);  // cb_program (unused without a back channel)
  enc_.putU32(1);           // one callback security parameter:
  enc_.putU32(0);           //   AUTH_NONE
}

void CompoundEncoder::reclaimComplete(bool oneFs) {
  op(Op::kReclaimComplete);
  enc_.putBool(oneFs);
}

void CompoundEncoder::bindConnToSession(const SessionId& session) {
  op(Op::kBindConnToSession);
  enc_.putFixedOpaque(session);
  enc_.putU32(kCdfc4Fore);  // we serve no back channel
  enc_.putBool(false);      // use_conn_in_rdma_mode: no (RFC 8881 18.34.3)
}

void CompoundEncoder::destroySession(const SessionId& session) {
  op(Op::kDestroySession);
  enc_.putFixedOpaque(session);
}

void CompoundEncoder::destroyClientId(std::uint64_t clientId) {
  op(Op::kDestroyClientId);
  enc_.putU64(clientId);
}

}  // namespace nfsrdma::nfs4
