// ONC RPC v2 (RFC 5531) message headers: call encoding and reply decoding.
//
// Credentials are encoded once (Credential) and copied into every call, so a
// call header costs a few stores. Reply decoding classifies every outcome the
// RFC defines (accepted/denied and their reasons) into an Error with the
// server's own terms in the text, e.g. "RPC PROG_MISMATCH (server has versions 4-4)".
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "client/base/Error.h"
#include "client/xdr/XdrDecoder.h"
#include "client/xdr/XdrEncoder.h"

namespace nfsrdma::rpc {

inline constexpr std::uint32_t kRpcVersion = 2;
inline constexpr std::uint32_t kMsgCall = 0;
inline constexpr std::uint32_t kMsgReply = 1;
inline constexpr std::uint32_t kAuthNone = 0;
inline constexpr std::uint32_t kAuthSys = 1;
inline constexpr std::size_t kMaxAuthBytes = 400;  // RFC 5531: opaque body<400>

enum class ReplyStat : std::uint32_t { kAccepted = 0, kDenied = 1 };
enum class AcceptStat : std::uint32_t {
  kSuccess = 0,
  kProgUnavail = 1,
  kProgMismatch = 2,
  kProcUnavail = 3,
  kGarbageArgs = 4,
  kSystemErr = 5,
};
enum class RejectStat : std::uint32_t { kRpcMismatch = 0, kAuthError = 1 };

struct AuthSysParams {
  std::uint32_t stamp = 0;
  std::string machineName;
  std::uint32_t uid = 0;
  std::uint32_t gid = 0;
  std::vector<std::uint32_t> gids;  // at most 16
};

// An encoded opaque_auth (flavor, body); immutable once built.
class Credential {
 public:
  static Credential none();
  // Throws std::invalid_argument for more than 16 gids or a name over 255 bytes.
  static Credential sys(const AuthSysParams& params);

  std::span<const std::uint8_t> encoded() const { return bytes_; }
  std::uint32_t flavor() const { return flavor_; }

 private:
  std::vector<std::uint8_t> bytes_;
  std::uint32_t flavor_ = kAuthNone;
};

struct CallHeader {
  std::uint32_t xid = 0;
  std::uint32_t program = 0;
  std::uint32_t version = 0;
  std::uint32_t procedure = 0;
};

// Writes the call header with the given credential and an AUTH_NONE verifier.
void encodeCallHeader(xdr::XdrEncoder& enc, const CallHeader& call, const Credential& cred);

struct ReplyHeader {
  std::uint32_t xid = 0;
};

// Decodes a reply header up to the procedure's results. On success the decoder
// is positioned at the results; otherwise the Error says why (malformed,
// denied with the reason, or accepted with a non-SUCCESS status).
Error decodeReplyHeader(xdr::XdrDecoder& dec, ReplyHeader& out);

}  // namespace nfsrdma::rpc
