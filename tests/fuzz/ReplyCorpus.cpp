// Seeds are written field by field with XdrEncoder, following the XDR of
// RFC 5531 (reply header) and RFC 5662 (COMPOUND4res and the op results).
#include "tests/fuzz/ReplyCorpus.h"

#include <array>
#include <initializer_list>
#include <string_view>

#include "client/nfs4/Nfs4Constants.h"
#include "client/xdr/XdrEncoder.h"
#include "tests/fuzz/ReplyDecoderHarness.h"

namespace nfsrdma::fuzz {
namespace {

using nfs4::Op;

class Wire {
 public:
  Wire() : enc_(storage_) {}
  // The encoder points into storage_: a copy would write into the original.
  Wire(const Wire&) = delete;
  Wire& operator=(const Wire&) = delete;
  Wire& u32(std::uint32_t v) {
    enc_.putU32(v);
    return *this;
  }
  Wire& u64(std::uint64_t v) {
    enc_.putU64(v);
    return *this;
  }
  Wire& str(std::string_view s) {
    enc_.putString(s);
    return *this;
  }
  Wire& fixed(std::size_t n, std::uint8_t fill) {
    std::array<std::uint8_t, 64> b{};
    b.fill(fill);
    enc_.putFixedOpaque(std::span<const std::uint8_t>(b).first(n));
    return *this;
  }
  // An accepted, SUCCESS reply with an AUTH_NONE verifier, then COMPOUND4res.
  Wire& okCompound(std::uint32_t xid, std::uint32_t status, std::uint32_t results) {
    u32(xid).u32(1).u32(0).u32(0).u32(0).u32(0);
    return u32(status).str("").u32(results);
  }
  Wire& result(Op op, std::uint32_t status = 0) {
    return u32(static_cast<std::uint32_t>(op)).u32(status);
  }
  Wire& stateId(std::uint8_t fill) { return u32(1).fixed(12, fill); }
  Wire& changeInfo() { return u32(1).u64(100).u64(101); }
  Wire& sequenceBody() { return fixed(16, 0x5e).u32(1).u32(0).u32(0).u32(63).u32(0); }
  // fattr4 with type, size, mode, owner, owner_group, fileid, time_modify.
  Wire& fattr(std::uint64_t size) {
    u32(2)
        .u32((1U << 1) | (1U << 4) | (1U << 20))
        .u32((1U << (33 - 32)) | (1U << (36 - 32)) | (1U << (37 - 32)) | (1U << (53 - 32)));
    Wire v;
    v.u32(1).u64(size).u64(77).u32(0644).str("root").str("wheel").u64(1700000000).u32(5);
    const auto vals = v.bytes();
    enc_.putOpaque(vals);
    return *this;
  }
  std::vector<std::uint8_t> bytes() const { return {enc_.head().begin(), enc_.head().end()}; }
  std::size_t size() const { return enc_.headSize(); }

 private:
  std::array<std::uint8_t, 2048> storage_{};
  xdr::XdrEncoder enc_;
};

ReplySeed seed(std::string name, std::initializer_list<Op> ops, const Wire& w,
               std::size_t opsDecoded, bool malformed = false, bool headerOk = true) {
  const std::vector<Op> list(ops);
  const auto msg = w.bytes();
  return ReplySeed{std::move(name), makeHarnessInput(list, msg), headerOk, opsDecoded, malformed};
}

// The same seed with its message cut by `cut` bytes.
ReplySeed truncated(ReplySeed s, std::size_t cut, std::size_t opsDecoded) {
  s.name = "trunc_" + s.name;
  s.input.resize(s.input.size() - cut);
  s.opsDecoded = opsDecoded;
  s.malformed = true;
  return s;
}

}  // namespace

std::vector<ReplySeed> replySeeds() {
  std::vector<ReplySeed> seeds;
  const std::uint32_t xid = 0x01020304;

  Wire getattr;
  getattr.okCompound(xid, 0, 3)
      .result(Op::kSequence)
      .sequenceBody()
      .result(Op::kPutFh)
      .result(Op::kGetAttr)
      .fattr(4096);
  seeds.push_back(seed("getattr", {Op::kSequence, Op::kPutFh, Op::kGetAttr}, getattr, 3));
  seeds.push_back(truncated(seeds.back(), 4, 2));

  Wire lookup;
  lookup.okCompound(xid, 0, 4)
      .result(Op::kSequence)
      .sequenceBody()
      .result(Op::kPutRootFh)
      .result(Op::kLookup)
      .result(Op::kGetFh)
      .u32(8)
      .fixed(8, 0xf1);
  seeds.push_back(
      seed("lookup_getfh", {Op::kSequence, Op::kPutRootFh, Op::kLookup, Op::kGetFh}, lookup, 4));

  Wire noent;
  noent.okCompound(xid, 2, 3)
      .result(Op::kSequence)
      .sequenceBody()
      .result(Op::kPutRootFh)
      .result(Op::kLookup, 2);
  seeds.push_back(
      seed("lookup_noent", {Op::kSequence, Op::kPutRootFh, Op::kLookup, Op::kGetFh}, noent, 3));

  Wire readlink;
  readlink.okCompound(xid, 0, 4)
      .result(Op::kSequence)
      .sequenceBody()
      .result(Op::kPutFh)
      .result(Op::kLookup)
      .result(Op::kReadLink)
      .str("../dir/target");
  seeds.push_back(
      seed("readlink", {Op::kSequence, Op::kPutFh, Op::kLookup, Op::kReadLink}, readlink, 4));
  Wire readlinkNul;
  readlinkNul.okCompound(xid, 0, 1).result(Op::kReadLink).str(std::string_view("a\0b", 3));
  seeds.push_back(seed("bad_readlink_nul", {Op::kReadLink}, readlinkNul, 0, true));

  auto openSeed = [&](std::string name, auto&& deleg, std::size_t opsDecoded, bool malformed) {
    Wire w;
    w.okCompound(xid, 0, 3)
        .result(Op::kSequence)
        .sequenceBody()
        .result(Op::kPutFh)
        .result(Op::kOpen)
        .stateId(0xa1)
        .changeInfo()
        .u32(4)
        .u32(1)
        .u32(1U << 4);
    deleg(w);
    seeds.push_back(
        seed(std::move(name), {Op::kSequence, Op::kPutFh, Op::kOpen}, w, opsDecoded, malformed));
  };
  // open_delegation4 bodies: type, then stateid, recall, [space limit], nfsace4 (type, flag, mask,
  // who).
  openSeed(
      "open_deleg_none", [](Wire& w) { w.u32(0); }, 3, false);
  openSeed(
      "open_deleg_read",
      [](Wire& w) { w.u32(1).stateId(0xd1).u32(0).u32(0).u32(0).u32(0x1f).str("OWNER@"); }, 3,
      false);
  openSeed(
      "open_deleg_write_size",
      [](Wire& w) {
        w.u32(2).stateId(0xd2).u32(1).u32(1).u64(1 << 20).u32(0).u32(0).u32(0x1f).str("EVERYONE@");
      },
      3, false);
  openSeed(
      "open_deleg_write_blocks",
      [](Wire& w) {
        w.u32(2).stateId(0xd3).u32(0).u32(2).u32(16).u32(4096).u32(0).u32(0).u32(7).str("x");
      },
      3, false);
  openSeed(
      "open_deleg_none_ext", [](Wire& w) { w.u32(3).u32(1).u32(1); }, 3, false);
  openSeed(
      "bad_open_space_limit",
      [](Wire& w) { w.u32(2).stateId(0xd3).u32(0).u32(9).u32(0).u32(0).u32(0).str("x"); }, 2, true);

  Wire read;
  read.okCompound(xid, 0, 3)
      .result(Op::kSequence)
      .sequenceBody()
      .result(Op::kPutFh)
      .result(Op::kRead)
      .u32(1)
      .str("hello");
  seeds.push_back(seed("read_eof", {Op::kSequence, Op::kPutFh, Op::kRead}, read, 3));

  Wire write;
  write.okCompound(xid, 0, 4)
      .result(Op::kSequence)
      .sequenceBody()
      .result(Op::kPutFh)
      .result(Op::kWrite)
      .u32(4096)
      .u32(2)
      .fixed(8, 0x77)
      .result(Op::kCommit)
      .fixed(8, 0x77);
  seeds.push_back(
      seed("write_commit", {Op::kSequence, Op::kPutFh, Op::kWrite, Op::kCommit}, write, 4));

  Wire close;
  close.okCompound(xid, 0, 3)
      .result(Op::kSequence)
      .sequenceBody()
      .result(Op::kPutFh)
      .result(Op::kClose)
      .stateId(0xc1);
  seeds.push_back(seed("close", {Op::kSequence, Op::kPutFh, Op::kClose}, close, 3));

  Wire dirops;
  dirops.okCompound(xid, 0, 7)
      .result(Op::kSequence)
      .sequenceBody()
      .result(Op::kPutFh)
      .result(Op::kRemove)
      .changeInfo()
      .result(Op::kSaveFh)
      .result(Op::kRestoreFh)
      .result(Op::kRename)
      .changeInfo()
      .changeInfo()
      .result(Op::kCreate)
      .changeInfo()
      .u32(1)
      .u32(1U << 4);
  seeds.push_back(seed("remove_rename_create",
                       {Op::kSequence, Op::kPutFh, Op::kRemove, Op::kSaveFh, Op::kRestoreFh,
                        Op::kRename, Op::kCreate},
                       dirops, 7));

  Wire readdir;
  readdir.okCompound(xid, 0, 3)
      .result(Op::kSequence)
      .sequenceBody()
      .result(Op::kPutFh)
      .result(Op::kReadDir)
      .fixed(8, 0x3c);
  readdir.u32(1).u64(1).str("a").fattr(1);
  readdir.u32(1).u64(2).str("bb").fattr(22);
  readdir.u32(1).u64(3).str("ccc").fattr(333);
  readdir.u32(0).u32(1);
  seeds.push_back(seed("readdir_eof", {Op::kSequence, Op::kPutFh, Op::kReadDir}, readdir, 3));

  Wire setattr;
  setattr.okCompound(xid, 0, 3)
      .result(Op::kSequence)
      .sequenceBody()
      .result(Op::kPutFh)
      .result(Op::kSetAttr)
      .u32(2)
      .u32(1U << 4)
      .u32(1U << 1);
  seeds.push_back(seed("setattr", {Op::kSequence, Op::kPutFh, Op::kSetAttr}, setattr, 3));
  Wire setattrDenied;
  setattrDenied.okCompound(xid, 13, 3)
      .result(Op::kSequence)
      .sequenceBody()
      .result(Op::kPutFh)
      .result(Op::kSetAttr, 13)
      .u32(0);
  seeds.push_back(seed("setattr_access", {Op::kSequence, Op::kPutFh, Op::kSetAttr, Op::kGetAttr},
                       setattrDenied, 3));

  Wire exchange;
  exchange.okCompound(xid, 0, 1)
      .result(Op::kExchangeId)
      .u64(0x1122334455667788ULL)
      .u32(1)
      .u32(0x00010000)
      .u32(0)
      .u64(0)
      .str("major")
      .str("scope")
      .u32(1)
      .str("example.org")
      .str("server 1.0")
      .u64(0)
      .u32(0);
  seeds.push_back(seed("exchange_id", {Op::kExchangeId}, exchange, 1));
  Wire machCred;
  machCred.okCompound(xid, 0, 1).result(Op::kExchangeId).u64(1).u32(1).u32(0).u32(1).u32(0).u32(0);
  seeds.push_back(seed("bad_exchange_id_mach_cred", {Op::kExchangeId}, machCred, 0, true));

  Wire session;
  session.okCompound(xid, 0, 1).result(Op::kCreateSession).fixed(16, 0x5e).u32(1).u32(0);
  session.u32(0).u32(1049620).u32(1049480).u32(7584).u32(16).u32(64).u32(0);
  session.u32(0).u32(4096).u32(4096).u32(0).u32(2).u32(1).u32(1).u32(0);
  seeds.push_back(seed("create_session", {Op::kCreateSession}, session, 1));

  Wire bind;
  bind.okCompound(xid, 0, 1).result(Op::kBindConnToSession).fixed(16, 0x5e).u32(1).u32(0);
  seeds.push_back(seed("bind_conn_to_session", {Op::kBindConnToSession}, bind, 1));

  Wire teardown;
  teardown.okCompound(xid, 0, 2).result(Op::kSequence).sequenceBody().result(Op::kReclaimComplete);
  seeds.push_back(seed("reclaim_complete", {Op::kSequence, Op::kReclaimComplete}, teardown, 2));
  Wire destroy;
  destroy.okCompound(xid, 0, 1).result(Op::kDestroySession);
  seeds.push_back(seed("destroy_session", {Op::kDestroySession}, destroy, 1));
  Wire destroyClient;
  destroyClient.okCompound(xid, 0, 2).result(Op::kDelegReturn).result(Op::kDestroyClientId);
  seeds.push_back(seed("delegreturn_destroy_clientid", {Op::kDelegReturn, Op::kDestroyClientId},
                       destroyClient, 2));

  Wire wrongOp;
  wrongOp.okCompound(xid, 0, 2).result(Op::kSequence).sequenceBody().result(Op::kGetFh).u32(0);
  seeds.push_back(seed("bad_wrong_op", {Op::kSequence, Op::kPutFh}, wrongOp, 1, true));
  Wire tooFew;
  tooFew.okCompound(xid, 0, 1).result(Op::kSequence).sequenceBody();
  seeds.push_back(seed("bad_too_few_results", {Op::kSequence, Op::kPutFh}, tooFew, 1, true));
  Wire badBool;
  badBool.okCompound(xid, 0, 1).result(Op::kRead).u32(2).str("x");
  seeds.push_back(seed("bad_read_eof_bool", {Op::kRead}, badBool, 0, true));

  // RPC-level outcomes: the COMPOUND is never reached.
  Wire progMismatch;
  progMismatch.u32(xid).u32(1).u32(0).u32(0).u32(0).u32(2).u32(4).u32(4);
  seeds.push_back(seed("rpc_prog_mismatch", {Op::kSequence}, progMismatch, 0, false, false));
  Wire authError;
  authError.u32(xid).u32(1).u32(1).u32(1).u32(5);
  seeds.push_back(seed("rpc_auth_tooweak", {Op::kSequence}, authError, 0, false, false));
  Wire rpcMismatch;
  rpcMismatch.u32(xid).u32(1).u32(1).u32(0).u32(2).u32(2);
  seeds.push_back(seed("rpc_mismatch", {Op::kSequence}, rpcMismatch, 0, false, false));
  return seeds;
}

}  // namespace nfsrdma::fuzz
