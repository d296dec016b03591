#include "client/rpc/RpcMessage.h"

#include <array>
#include <stdexcept>

namespace nfsrdma::rpc {
namespace {

const char* authStatName(std::uint32_t s) {
  switch (s) {
    case 0:
      return "AUTH_OK";
    case 1:
      return "AUTH_BADCRED";
    case 2:
      return "AUTH_REJECTEDCRED";
    case 3:
      return "AUTH_BADVERF";
    case 4:
      return "AUTH_REJECTEDVERF";
    case 5:
      return "AUTH_TOOWEAK";
    case 6:
      return "AUTH_INVALIDRESP";
    case 7:
      return "AUTH_FAILED";
    case 8:
      return "AUTH_KERB_GENERIC";
    case 9:
      return "AUTH_TIMEEXPIRE";
    case 10:
      return "AUTH_TKT_FILE";
    case 11:
      return "AUTH_DECODE";
    case 12:
      return "AUTH_NET_ADDR";
    case 13:
      return "RPCSEC_GSS_CREDPROBLEM";
    case 14:
      return "RPCSEC_GSS_CTXPROBLEM";
    default:
      return "AUTH_(unknown)";
  }
}

Error malformed(const std::string& what) {
  return makeError(ClientErrc::kMalformedReply, "RPC reply: " + what);
}

}  // namespace

Credential Credential::none() {
  Credential c;
  c.flavor_ = kAuthNone;
  c.bytes_ = {0, 0, 0, 0, 0, 0, 0, 0};  // flavor AUTH_NONE, empty body
  return c;
}

Credential Credential::sys(const AuthSysParams& p) {
  if (p.gids.size() > 16) {
    throw std::invalid_argument("AUTH_SYS allows at most 16 supplementary gids, got " +
                                std::to_string(p.gids.size()));
  }
  if (p.machineName.size() > 255) {
    throw std::invalid_argument("AUTH_SYS machine name longer than 255 bytes");
  }
  std::array<std::uint8_t, 8 + kMaxAuthBytes> buf{};
  xdr::XdrEncoder enc(buf);
  enc.putU32(kAuthSys);
  const std::size_t lengthAt = enc.reserveU32();
  enc.putU32(p.stamp);
  enc.putString(p.machineName);
  enc.putU32(p.uid);
  enc.putU32(p.gid);
  enc.putU32(static_cast<std::uint32_t>(p.gids.size()));
  for (std::uint32_t g : p.gids) enc.putU32(g);
  enc.patchU32(lengthAt, static_cast<std::uint32_t>(enc.headSize() - 8));
  Credential c;
  c.flavor_ = kAuthSys;
  c.bytes_.assign(enc.head().begin(), enc.head().end());
  return c;
}

void encodeCallHeader(xdr::XdrEncoder& enc, const CallHeader& call, const Credential& cred) {
  enc.putU32(call.xid);
  enc.putU32(kMsgCall);
  enc.putU32(kRpcVersion);
  enc.putU32(call.program);
  enc.putU32(call.version);
  enc.putU32(call.procedure);
  // The credential is already XDR (flavor + length + body): copy it verbatim.
  auto c = cred.encoded();
  enc.putFixedOpaque(c);
  enc.putU32(kAuthNone);  // verifier
  enc.putU32(0);
}

Error decodeReplyHeader(xdr::XdrDecoder& dec, ReplyHeader& out) {
  out.xid = dec.getU32();
  const std::uint32_t type = dec.getU32();
  if (!dec.ok()) return malformed("shorter than an RPC header");
  if (type != kMsgReply)
    return malformed("message type " + std::to_string(type) + ", expected REPLY (1)");
  const std::uint32_t stat = dec.getU32();
  if (stat == static_cast<std::uint32_t>(ReplyStat::kAccepted)) {
    (void)dec.getU32();                  // verifier flavor
    (void)dec.getOpaque(kMaxAuthBytes);  // verifier body
    const std::uint32_t accept = dec.getU32();
    if (!dec.ok()) return malformed("truncated accepted reply");
    switch (static_cast<AcceptStat>(accept)) {
      case AcceptStat::kSuccess:
        return {};
      case AcceptStat::kProgUnavail:
        return makeError(ClientErrc::kRpcAcceptError, "RPC PROG_UNAVAIL (program not served)");
      case AcceptStat::kProgMismatch: {
        const std::uint32_t low = dec.getU32();
        const std::uint32_t high = dec.getU32();
        if (!dec.ok()) return malformed("truncated PROG_MISMATCH");
        return makeError(ClientErrc::kRpcAcceptError, "RPC PROG_MISMATCH (server has versions " +
                                                          std::to_string(low) + "-" +
                                                          std::to_string(high) + ")");
      }
      case AcceptStat::kProcUnavail:
        return makeError(ClientErrc::kRpcAcceptError, "RPC PROC_UNAVAIL");
      case AcceptStat::kGarbageArgs:
        return makeError(ClientErrc::kRpcAcceptError,
                         "RPC GARBAGE_ARGS (server could not decode the call)");
      case AcceptStat::kSystemErr:
        return makeError(ClientErrc::kRpcAcceptError, "RPC SYSTEM_ERR");
    }
    return malformed("accept_stat " + std::to_string(accept));
  }
  if (stat == static_cast<std::uint32_t>(ReplyStat::kDenied)) {
    const std::uint32_t reject = dec.getU32();
    if (reject == static_cast<std::uint32_t>(RejectStat::kRpcMismatch)) {
      const std::uint32_t low = dec.getU32();
      const std::uint32_t high = dec.getU32();
      if (!dec.ok()) return malformed("truncated RPC_MISMATCH");
      return makeError(ClientErrc::kRpcDenied, "RPC_MISMATCH (server speaks RPC " +
                                                   std::to_string(low) + "-" +
                                                   std::to_string(high) + ")");
    }
    if (reject == static_cast<std::uint32_t>(RejectStat::kAuthError)) {
      const std::uint32_t why = dec.getU32();
      if (!dec.ok()) return malformed("truncated AUTH_ERROR");
      return makeError(ClientErrc::kRpcDenied, std::string("RPC AUTH_ERROR ") + authStatName(why));
    }
    if (!dec.ok()) return malformed("truncated denied reply");
    return malformed("reject_stat " + std::to_string(reject));
  }
  if (!dec.ok()) return malformed("truncated reply");
  return malformed("reply_stat " + std::to_string(stat));
}

}  // namespace nfsrdma::rpc
