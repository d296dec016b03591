// ONC RPC v2 headers against libtirpc: our call header (AUTH_SYS and
// AUTH_NONE credentials) equals xdr_callmsg's bytes for the same rpc_msg, and
// every reply that xdr_replymsg can produce decodes to the right Error code
// and text; every truncation of a reply is malformed, never a crash.
#include <gtest/gtest.h>

#include <array>
#include <cstdarg>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "client/Error.h"
#include "client/rpc/RpcMessage.h"
#include "client/transport/Transport.h"
#include "tests/unit/client/TirpcOracle.h"

namespace nfsrdma::testing {
namespace {

using rpc::AuthSysParams;
using rpc::Credential;

// The AUTH_SYS body (authsys_parms) as libtirpc writes it.
Bytes tirpcAuthSysBody(const AuthSysParams& p) {
  std::string name = p.machineName;
  std::vector<gid_t> gids(p.gids.begin(), p.gids.end());
  authunix_parms parms{};
  parms.aup_time = p.stamp;
  parms.aup_machname = name.data();
  parms.aup_uid = p.uid;
  parms.aup_gid = p.gid;
  parms.aup_len = static_cast<u_int>(gids.size());
  parms.aup_gids = gids.data();
  return tirpcEncode([&](XDR* x) { return xdr_authunix_parms(x, &parms); });
}

// xdr_callmsg of a call with the given credential and an AUTH_NONE verifier.
Bytes tirpcCall(const rpc::CallHeader& h, std::uint32_t flavor, Bytes credBody) {
  rpc_msg m{};
  m.rm_xid = h.xid;
  m.rm_direction = CALL;
  m.rm_call.cb_rpcvers = 2;
  m.rm_call.cb_prog = h.program;
  m.rm_call.cb_vers = h.version;
  m.rm_call.cb_proc = h.procedure;
  m.rm_call.cb_cred.oa_flavor = static_cast<enum_t>(flavor);
  m.rm_call.cb_cred.oa_base = credBody.empty() ? nullptr : reinterpret_cast<char*>(credBody.data());
  m.rm_call.cb_cred.oa_length = static_cast<u_int>(credBody.size());
  m.rm_call.cb_verf.oa_flavor = AUTH_NONE;
  m.rm_call.cb_verf.oa_base = nullptr;
  m.rm_call.cb_verf.oa_length = 0;
  return tirpcEncode([&](XDR* x) { return xdr_callmsg(x, &m); });
}

Bytes ourCall(const rpc::CallHeader& h, const Credential& cred) {
  return ourEncode([&](xdr::XdrEncoder& e) { rpc::encodeCallHeader(e, h, cred); });
}

constexpr rpc::CallHeader kNfsCompound{0x5eed0001, 100003, 4, 1};

TEST(RpcCallVsTirpc, AuthNone) {
  for (const rpc::CallHeader& h : {kNfsCompound, rpc::CallHeader{0, 100003, 4, 0},
                                   rpc::CallHeader{0xffffffff, 0x40000000, 1, 0x7fffffff}}) {
    const Bytes ours = ourCall(h, Credential::none());
    EXPECT_EQ(ours, tirpcCall(h, AUTH_NONE, {}));
    EXPECT_EQ(ours.size(), 40U);
  }
}

TEST(RpcCallVsTirpc, AuthSysVariants) {
  std::vector<AuthSysParams> cases = {
      {0x12345678, "client.example.org", 1000, 1000, {}},
      {0, "", 0, 0, {}},
      {0xffffffff, "h", 0xfffffffe, 0xfffffffd, {4, 24, 27}},
      {7, "node", 65534, 65534, {10}},
  };
  for (std::size_t len = 0; len <= 7; ++len) cases.push_back({1, std::string(len, 'm'), 1, 2, {3}});
  AuthSysParams many{42, "sixteen", 500, 501, {}};
  for (std::uint32_t g = 0; g < 16; ++g) many.gids.push_back(1000 + g);
  cases.push_back(many);
  AuthSysParams largest{0xaaaaaaaa, std::string(255, 'x'), 1, 1, many.gids};
  cases.push_back(largest);

  for (const AuthSysParams& p : cases) {
    const Credential cred = Credential::sys(p);
    EXPECT_EQ(cred.flavor(), rpc::kAuthSys);
    const Bytes body = tirpcAuthSysBody(p);
    EXPECT_LE(body.size(), rpc::kMaxAuthBytes);
    EXPECT_EQ(ourCall(kNfsCompound, cred), tirpcCall(kNfsCompound, AUTH_SYS, body))
        << "machine name length " << p.machineName.size() << ", " << p.gids.size() << " gids";

    // The credential alone is an opaque_auth, as xdr_opaque_auth writes it.
    Bytes b = body;
    opaque_auth oa{};
    oa.oa_flavor = AUTH_SYS;
    oa.oa_base = reinterpret_cast<char*>(b.data());
    oa.oa_length = static_cast<u_int>(b.size());
    const auto enc = cred.encoded();
    EXPECT_EQ(Bytes(enc.begin(), enc.end()),
              tirpcEncode([&](XDR* x) { return xdr_opaque_auth(x, &oa); }));
  }
}

TEST(RpcCallVsTirpc, AuthSysLimits) {
  AuthSysParams p{1, "host", 0, 0, {}};
  for (std::uint32_t g = 0; g < 17; ++g) p.gids.push_back(g);
  EXPECT_THROW((void)Credential::sys(p), std::invalid_argument);
  p.gids.resize(16);
  EXPECT_NO_THROW((void)Credential::sys(p));
  p.machineName = std::string(256, 'n');
  EXPECT_THROW((void)Credential::sys(p), std::invalid_argument);
}

TEST(RpcCall, PeekXid) {
  const Bytes call = ourCall(kNfsCompound, Credential::none());
  std::uint32_t xid = 0;
  EXPECT_TRUE(transport::peekXid(call, xid));
  EXPECT_EQ(xid, 0x5eed0001U);
  EXPECT_FALSE(transport::peekXid(std::span<const std::uint8_t>(call).first(3), xid));
}

// ---------------------------------------------------------------- replies

// An xdrproc_t for SUCCESS results: one unsigned int.
bool_t putResultWord(XDR* x, ...) {
  va_list ap;
  va_start(ap, x);
  void* where = va_arg(ap, void*);
  va_end(ap);
  return xdr_u_int(x, static_cast<u_int*>(where));
}

// An xdrproc_t for void results.
bool_t putNothing(XDR*, ...) {
  return TRUE;
}

rpc_msg acceptedReply(accept_stat stat, std::uint32_t xid = 0x0badcafe) {
  rpc_msg m{};
  m.rm_xid = xid;
  m.rm_direction = REPLY;
  m.rm_reply.rp_stat = MSG_ACCEPTED;
  m.acpted_rply.ar_verf.oa_flavor = AUTH_NONE;
  m.acpted_rply.ar_verf.oa_base = nullptr;
  m.acpted_rply.ar_verf.oa_length = 0;
  m.acpted_rply.ar_stat = stat;
  m.acpted_rply.ar_results.where = nullptr;
  m.acpted_rply.ar_results.proc = putNothing;
  return m;
}

rpc_msg deniedReply(reject_stat stat) {
  rpc_msg m{};
  m.rm_xid = 0x0badcafe;
  m.rm_direction = REPLY;
  m.rm_reply.rp_stat = MSG_DENIED;
  m.rjcted_rply.rj_stat = stat;
  return m;
}

Bytes tirpcReply(rpc_msg m) {
  return tirpcEncode([&](XDR* x) { return xdr_replymsg(x, &m); });
}

Error decode(const Bytes& wire, rpc::ReplyHeader& h, std::size_t* position = nullptr) {
  xdr::XdrDecoder dec(wire);
  Error e = rpc::decodeReplyHeader(dec, h);
  if (position != nullptr) *position = dec.position();
  return e;
}

TEST(RpcReplyFromTirpc, SuccessLeavesTheDecoderAtTheResults) {
  u_int result = 0xc0ffee;
  rpc_msg m = acceptedReply(SUCCESS, 0x01020304);
  m.acpted_rply.ar_results.where = reinterpret_cast<char*>(&result);
  m.acpted_rply.ar_results.proc = putResultWord;
  const Bytes wire = tirpcReply(m);
  ASSERT_EQ(wire.size(), 28U);

  xdr::XdrDecoder dec(wire);
  rpc::ReplyHeader h;
  const Error e = rpc::decodeReplyHeader(dec, h);
  EXPECT_FALSE(e) << e.message();
  EXPECT_EQ(h.xid, 0x01020304U);
  EXPECT_EQ(dec.getU32(), 0xc0ffeeU);
  EXPECT_TRUE(dec.ok());
}

TEST(RpcReplyFromTirpc, SuccessWithANonEmptyVerifier) {
  Bytes verf = pattern(10);
  u_int result = 77;
  rpc_msg m = acceptedReply(SUCCESS);
  m.acpted_rply.ar_verf.oa_flavor = AUTH_SHORT;
  m.acpted_rply.ar_verf.oa_base = reinterpret_cast<char*>(verf.data());
  m.acpted_rply.ar_verf.oa_length = 10;
  m.acpted_rply.ar_results.where = reinterpret_cast<char*>(&result);
  m.acpted_rply.ar_results.proc = putResultWord;
  const Bytes wire = tirpcReply(m);
  xdr::XdrDecoder dec(wire);
  rpc::ReplyHeader h;
  EXPECT_FALSE(rpc::decodeReplyHeader(dec, h));
  EXPECT_EQ(dec.getU32(), 77U);
  EXPECT_TRUE(dec.ok());
}

struct ExpectedError {
  rpc_msg msg;
  ClientErrc code;
  std::string context;
};

std::vector<ExpectedError> errorReplies() {
  std::vector<ExpectedError> v;
  v.push_back({acceptedReply(PROG_UNAVAIL), ClientErrc::kRpcAcceptError,
               "RPC PROG_UNAVAIL (program not served)"});
  rpc_msg mismatch = acceptedReply(PROG_MISMATCH);
  mismatch.acpted_rply.ar_vers.low = 2;
  mismatch.acpted_rply.ar_vers.high = 3;
  v.push_back(
      {mismatch, ClientErrc::kRpcAcceptError, "RPC PROG_MISMATCH (server has versions 2-3)"});
  v.push_back({acceptedReply(PROC_UNAVAIL), ClientErrc::kRpcAcceptError, "RPC PROC_UNAVAIL"});
  v.push_back({acceptedReply(GARBAGE_ARGS), ClientErrc::kRpcAcceptError,
               "RPC GARBAGE_ARGS (server could not decode the call)"});
  v.push_back({acceptedReply(SYSTEM_ERR), ClientErrc::kRpcAcceptError, "RPC SYSTEM_ERR"});
  rpc_msg rpcMismatch = deniedReply(RPC_MISMATCH);
  rpcMismatch.rjcted_rply.rj_vers.low = 3;
  rpcMismatch.rjcted_rply.rj_vers.high = 4;
  v.push_back({rpcMismatch, ClientErrc::kRpcDenied, "RPC_MISMATCH (server speaks RPC 3-4)"});
  const std::pair<auth_stat, const char*> auths[] = {
      {AUTH_OK, "AUTH_OK"},
      {AUTH_BADCRED, "AUTH_BADCRED"},
      {AUTH_REJECTEDCRED, "AUTH_REJECTEDCRED"},
      {AUTH_BADVERF, "AUTH_BADVERF"},
      {AUTH_REJECTEDVERF, "AUTH_REJECTEDVERF"},
      {AUTH_TOOWEAK, "AUTH_TOOWEAK"},
      {AUTH_INVALIDRESP, "AUTH_INVALIDRESP"},
      {AUTH_FAILED, "AUTH_FAILED"},
      {AUTH_KERB_GENERIC, "AUTH_KERB_GENERIC"},
      {AUTH_TIMEEXPIRE, "AUTH_TIMEEXPIRE"},
      {AUTH_TKT_FILE, "AUTH_TKT_FILE"},
      {AUTH_DECODE, "AUTH_DECODE"},
      {AUTH_NET_ADDR, "AUTH_NET_ADDR"},
      {RPCSEC_GSS_CREDPROBLEM, "RPCSEC_GSS_CREDPROBLEM"},
      {RPCSEC_GSS_CTXPROBLEM, "RPCSEC_GSS_CTXPROBLEM"},
  };
  for (const auto& [why, name] : auths) {
    rpc_msg m = deniedReply(AUTH_ERROR);
    m.rjcted_rply.rj_why = why;
    v.push_back({m, ClientErrc::kRpcDenied, std::string("RPC AUTH_ERROR ") + name});
  }
  return v;
}

TEST(RpcReplyFromTirpc, EveryErrorVariantHasItsCodeAndText) {
  for (const ExpectedError& x : errorReplies()) {
    const Bytes wire = tirpcReply(x.msg);
    rpc::ReplyHeader h;
    const Error e = decode(wire, h);
    EXPECT_EQ(h.xid, 0x0badcafeU);
    EXPECT_EQ(e.code, make_error_code(x.code)) << x.context;
    EXPECT_EQ(e.context, x.context);
    EXPECT_EQ(e.message(), x.context + ": " + make_error_code(x.code).message());
  }
}

TEST(RpcReplyFromTirpc, FullMessageTextsOfOneAcceptedAndOneDenied) {
  rpc::ReplyHeader h;
  EXPECT_EQ(
      decode(tirpcReply(acceptedReply(GARBAGE_ARGS)), h).message(),
      "RPC GARBAGE_ARGS (server could not decode the call): RPC call not executed by the server");
  rpc_msg m = deniedReply(AUTH_ERROR);
  m.rjcted_rply.rj_why = AUTH_TOOWEAK;
  EXPECT_EQ(decode(tirpcReply(m), h).message(),
            "RPC AUTH_ERROR AUTH_TOOWEAK: RPC call denied by the server");
}

// Every strict prefix of every reply variant is malformed: none decodes to
// SUCCESS or to another variant's error, and none reads past the end.
TEST(RpcReplyFromTirpc, EveryTruncationIsMalformed) {
  std::vector<Bytes> wires;
  wires.push_back(tirpcReply(acceptedReply(SUCCESS)));  // void results: 24 bytes
  for (const ExpectedError& x : errorReplies()) wires.push_back(tirpcReply(x.msg));
  Bytes verf = pattern(12);
  rpc_msg withVerf = acceptedReply(SUCCESS);
  withVerf.acpted_rply.ar_verf.oa_flavor = AUTH_SHORT;
  withVerf.acpted_rply.ar_verf.oa_base = reinterpret_cast<char*>(verf.data());
  withVerf.acpted_rply.ar_verf.oa_length = 12;
  wires.push_back(tirpcReply(withVerf));

  std::size_t checked = 0;
  for (const Bytes& wire : wires) {
    for (std::size_t len = 0; len < wire.size(); ++len) {
      // A copy of exactly len bytes, so ASan sees any read past the end.
      const Bytes prefix(wire.begin(), wire.begin() + static_cast<std::ptrdiff_t>(len));
      rpc::ReplyHeader h;
      const Error e = decode(prefix, h);
      EXPECT_EQ(e.code, make_error_code(ClientErrc::kMalformedReply))
          << "prefix " << len << " of " << wire.size() << ": " << e.message();
      EXPECT_EQ(e.context.rfind("RPC reply: ", 0), 0U) << e.context;
      ++checked;
    }
  }
  EXPECT_GT(checked, 300U);
}

TEST(RpcReply, MalformedHeaderValues) {
  struct Case {
    Bytes wire;
    std::string context;
  };
  const std::vector<Case> cases = {
      {{}, "RPC reply: shorter than an RPC header"},
      {{0, 0, 0, 1, 0, 0, 0, 0}, "RPC reply: message type 0, expected REPLY (1)"},
      {{0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 2}, "RPC reply: reply_stat 2"},
      {{0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 6},
       "RPC reply: accept_stat 6"},
      {{0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 2}, "RPC reply: reject_stat 2"},
  };
  for (const Case& c : cases) {
    rpc::ReplyHeader h;
    const Error e = decode(c.wire, h);
    EXPECT_EQ(e.code, make_error_code(ClientErrc::kMalformedReply));
    EXPECT_EQ(e.context, c.context);
  }
}

// libtirpc's auth_stat enum cannot hold an undefined value: write it by hand.
TEST(RpcReply, UnknownAuthStat) {
  const Bytes wire = {0, 0, 0, 9, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 99};
  rpc::ReplyHeader h;
  const Error e = decode(wire, h);
  EXPECT_EQ(e.code, make_error_code(ClientErrc::kRpcDenied));
  EXPECT_EQ(e.context, "RPC AUTH_ERROR AUTH_(unknown)");
}

TEST(RpcReply, VerifierOverFourHundredBytesIsMalformed) {
  const Bytes verf = pattern(401);
  Bytes wire;
  {
    // libtirpc itself refuses to encode a body over MAX_AUTH_BYTES: write it by hand.
    std::array<std::uint8_t, 512> storage{};
    xdr::XdrEncoder e(storage);
    e.putU32(1);
    e.putU32(1);
    e.putU32(0);
    e.putU32(AUTH_SHORT);
    e.putOpaque(verf);
    e.putU32(0);
    wire.assign(e.head().begin(), e.head().end());
  }
  rpc::ReplyHeader h;
  EXPECT_EQ(decode(wire, h).code, make_error_code(ClientErrc::kMalformedReply));
}

}  // namespace
}  // namespace nfsrdma::testing
