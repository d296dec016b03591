// NFSv4.1 COMPOUND encoding and decoding (RFC 8881 section 16, XDR of RFC 5662).
//
// Pure codec: CompoundEncoder appends operations to an XdrEncoder (WRITE data
// as a bulk segment, never copied); CompoundDecoder walks the results in
// order, stopping at the first failed operation as the server does. Neither
// knows about sessions, slots or sockets.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "client/nfs4/Attributes.h"
#include "client/nfs4/Nfs4Constants.h"
#include "client/nfs4/Nfs4Status.h"
#include "client/xdr/XdrDecoder.h"
#include "client/xdr/XdrEncoder.h"

namespace nfsrdma::nfs4 {

// The largest COMPOUND reply this client asks a server to keep in its
// reply cache (sa_cachethis, set on every COMPOUND that changes state), for
// COMPOUNDs of at most maxOperations operations: the ca_maxresponsesize_cached
// CREATE_SESSION asks for. Servers size their slots by it: knfsd divides a
// share of its reply cache memory by it (capped at 2 KiB), so asking for
// 8 KiB got 30 slots where 32 were asked. The largest such reply is a path
// walk ending in OPEN, GETFH and GETATTR(type, size) (Client::open), its
// variable parts at their limits:
//   RPC reply header, AUTH_NONE verifier                              24
//   COMPOUND status, empty tag, result count                          12
//   SEQUENCE                                                          44
//   PUTFH (or PUTROOTFH)                                               8
//   a LOOKUP per operation the five others leave                  8 each
//   OPEN: status, stateid, change_info, rflags, a 3-word attrset, a
//     write delegation with its space limit and an ACE whose principal
//     is 128 bytes (knfsd's IDMAP_NAMESZ; knfsd itself sends none)    244
//   GETFH: a 128-byte handle (NFS4_FHSIZE)                           140
//   GETATTR(type, size), up to a 3-word bitmap                        40
// knfsd also checks its own estimate before OPEN runs (fs/nfsd/nfs4proc.c,
// nfsd4_open_rsize: 232 bytes, and 16 for an error after it). The other
// state-changing COMPOUNDs are smaller (RENAME or CREATE after the same
// walk: at most 48 or 44 bytes of results where OPEN's part has 424).
constexpr std::uint32_t largestCachedReply(std::uint32_t maxOperations) {
  constexpr std::uint32_t kWithoutLookups = 24 + 12 + 44 + 8 + 244 + 140 + 40;
  constexpr std::uint32_t kLookup = 8;
  constexpr std::uint32_t kOtherOps = 5;  // SEQUENCE, PUTFH, OPEN, GETFH, GETATTR
  return kWithoutLookups + kLookup * (maxOperations > kOtherOps ? maxOperations - kOtherOps : 0);
}

using SessionId = std::array<std::uint8_t, kSessionIdSize>;
using Verifier = std::array<std::uint8_t, kVerifierSize>;

struct FileHandle {
  std::vector<std::uint8_t> bytes;
  bool operator==(const FileHandle&) const = default;
};

struct StateId {
  std::uint32_t seqid = 0;
  std::array<std::uint8_t, kStateIdOtherSize> other{};
  bool operator==(const StateId&) const = default;
};

// Attributes to set (SETATTR, CREATE, OPEN with create).
struct SetAttributes {
  std::optional<std::uint64_t> size;
  std::optional<std::uint32_t> mode;
};

struct ChannelAttrs {
  std::uint32_t headerPadSize = 0;
  std::uint32_t maxRequestSize = 0;
  std::uint32_t maxResponseSize = 0;
  std::uint32_t maxResponseSizeCached = 0;
  std::uint32_t maxOperations = 0;
  std::uint32_t maxRequests = 0;
};

struct OpenArgs {
  std::uint64_t clientId = 0;
  std::span<const std::uint8_t> owner;
  std::uint32_t shareAccess = kShareAccessRead;
  bool create = false;
  SetAttributes createAttrs;  // with create: mode, and size 0 to truncate
  // CLAIM_NULL opens name in the current directory; CLAIM_PREVIOUS (a
  // reclaim after a server restart) and CLAIM_FH open the current file.
  std::uint32_t claim = kClaimNull;
  std::string_view name;
};

class CompoundEncoder {
 public:
  // Writes the COMPOUND header (tag, minor version 1) and reserves the op count.
  explicit CompoundEncoder(xdr::XdrEncoder& enc, std::string_view tag = {});
  // Patches the op count; call once after the last operation.
  void finish();
  std::uint32_t opCount() const { return ops_; }
  // Index (SEQUENCE is 0) of the first operation that a second execution
  // would not repeat harmlessly (OPEN, CREATE, REMOVE, RENAME, CLOSE, ...);
  // kAllIdempotent when there is none. A COMPOUND that failed at or before
  // it changed nothing on the server and can be sent again as it is.
  static constexpr std::uint32_t kAllIdempotent = 0xffffffffU;
  std::uint32_t firstNonIdempotentOp() const { return firstNonIdempotent_; }
  // Whether the COMPOUND changes anything on the server (a WRITE too): then
  // finish() sets SEQUENCE's sa_cachethis, so that a resend on the same slot
  // after a lost connection is answered from the server's reply cache
  // instead of run twice (RFC 8881 2.10.6.1.3).
  bool changesState() const { return changesState_; }

  void sequence(const SessionId& session, std::uint32_t sequenceId, std::uint32_t slot,
                std::uint32_t highestSlot, bool cacheThis);
  void putRootFh();
  void putFh(const FileHandle& fh);
  void lookup(std::string_view name);
  void getFh();
  void getAttr(const Bitmap& request);
  void saveFh();
  void restoreFh();
  void open(const OpenArgs& args);
  void close(const StateId& stateId);
  void delegReturn(const StateId& stateId);
  void read(const StateId& stateId, std::uint64_t offset, std::uint32_t count);
  void write(const StateId& stateId, std::uint64_t offset, StableHow stable,
             std::span<const std::uint8_t> data);
  void commit(std::uint64_t offset, std::uint32_t count);
  void remove(std::string_view name);
  void readLink();
  void rename(std::string_view oldName, std::string_view newName);
  void createDirectory(std::string_view name, const SetAttributes& attrs);
  void readDir(std::uint64_t cookie, const Verifier& cookieVerf, std::uint32_t dirCount,
               std::uint32_t maxCount, const Bitmap& request);
  void setAttr(const StateId& stateId, const SetAttributes& attrs);
  void exchangeId(const Verifier& verifier, std::span<const std::uint8_t> ownerId,
                  std::uint32_t flags);
  void createSession(std::uint64_t clientId, std::uint32_t sequenceId, const ChannelAttrs& fore,
                     const ChannelAttrs& back);
  void reclaimComplete(bool oneFs);
  // Binds this connection's fore channel to the session (the only op of its COMPOUND).
  void bindConnToSession(const SessionId& session);
  void destroySession(const SessionId& session);
  void destroyClientId(std::uint64_t clientId);

 private:
  void op(Op o);
  void bitmap(const Bitmap& b);
  void setAttributes(const SetAttributes& a);
  void stateId(const StateId& s);

  xdr::XdrEncoder& enc_;
  std::size_t countAt_;
  std::uint32_t ops_ = 0;
  std::uint32_t firstNonIdempotent_ = kAllIdempotent;
  bool changesState_ = false;
  std::size_t cacheThisAt_ = SIZE_MAX;  // SEQUENCE's sa_cachethis word in the head
};

struct SequenceResult {
  SessionId session{};
  std::uint32_t sequenceId = 0;
  std::uint32_t slot = 0;
  std::uint32_t highestSlot = 0;
  std::uint32_t targetHighestSlot = 0;
  std::uint32_t statusFlags = 0;
};

struct OpenResult {
  StateId stateId;
  std::uint32_t resultFlags = 0;
  std::uint32_t delegationType = kOpenDelegateNone;
  StateId delegationStateId;  // valid for READ and WRITE delegations
};

struct ReadResult {
  bool eof = false;
  std::span<const std::uint8_t> data;  // view into the reply (when not placed)
  bool placed = false;                 // the transport put the data in the caller's buffer
  std::uint32_t placedLength = 0;
};

struct WriteResult {
  std::uint32_t count = 0;
  StableHow committed = StableHow::kUnstable;
  Verifier verifier{};
};

struct DirEntry {
  std::uint64_t cookie = 0;
  std::string name;
  Attributes attrs;
};

struct ReadDirResult {
  Verifier cookieVerf{};
  std::vector<DirEntry> entries;
  bool eof = false;
};

struct ExchangeIdResult {
  std::uint64_t clientId = 0;
  std::uint32_t sequenceId = 0;
  std::uint32_t flags = 0;
  // Who answered (RFC 8881 2.10.5.1): two addresses with the same major id
  // and scope are one server; with the same minor id too, a session can be
  // trunked across them.
  std::uint64_t serverOwnerMinor = 0;
  std::string serverOwnerMajor;
  std::string serverScope;
  std::string serverImplName;
};

struct CreateSessionResult {
  SessionId session{};
  std::uint32_t sequenceId = 0;
  std::uint32_t flags = 0;
  ChannelAttrs fore;
  ChannelAttrs back;
};

// What CompoundDecoder::next() returns once the reply is malformed.
inline constexpr std::uint32_t kStatusMalformed = 0xffffffffU;

class CompoundDecoder {
 public:
  // Reads the COMPOUND4res header (status, tag, result count).
  explicit CompoundDecoder(xdr::XdrDecoder& dec);

  std::uint32_t status() const { return status_; }
  std::uint32_t resultCount() const { return count_; }
  // False once the reply is malformed (truncated, unexpected operation, bad values).
  bool ok() const { return dec_.ok() && !malformed_; }
  const std::string& malformedReason() const { return reason_; }

  // Reads the next result's op number and status; marks the reply malformed if
  // the op is not the expected one or the results ran out. Returns the status
  // (bodies follow only for NFS4_OK, except SETATTR's bitmap, read by setAttr()).
  std::uint32_t next(Op expected);

  SequenceResult sequence();
  SessionId bindConnToSession();  // the session the connection is now bound to
  FileHandle getFh();
  Attributes getAttr();
  OpenResult open();
  StateId close();
  ReadResult read();
  WriteResult write();
  Verifier commit();
  void changeInfo();  // REMOVE; CREATE (with its bitmap) reads it too
  // READLINK's text; at most kMaxLinkText bytes (Linux's PATH_MAX).
  std::string readLink();
  static constexpr std::size_t kMaxLinkText = 4096;
  void rename();
  void createDirectory();
  ReadDirResult readDir();
  void setAttr();  // the attrsset bitmap, present whatever the status
  ExchangeIdResult exchangeId();
  CreateSessionResult createSession();

  void markMalformed(std::string reason);

 private:
  Bitmap bitmap();
  Attributes fattr();
  StateId stateId();
  ChannelAttrs channelAttrs();
  void skipNfsAce();

  xdr::XdrDecoder& dec_;
  std::uint32_t status_ = 0;
  std::uint32_t count_ = 0;
  std::uint32_t seen_ = 0;
  bool malformed_ = false;
  std::string reason_;
};

const char* opName(Op op);

}  // namespace nfsrdma::nfs4
