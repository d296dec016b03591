// Drives the client's reply path exactly as RpcClient and Session do: RPC
// header first, then COMPOUND results in order, stopping at the first failed
// operation (SETATTR's attrsset bitmap is read whatever its status).
#include "tests/fuzz/ReplyDecoderHarness.h"

#include <array>
#include <stdexcept>

#include "client/nfs4/Compound.h"
#include "client/rpc/RpcMessage.h"
#include "client/xdr/XdrDecoder.h"

namespace nfsrdma::fuzz {
namespace {

using nfs4::Op;

constexpr std::array kOps = {
    Op::kSequence,       Op::kPutRootFh,
    Op::kPutFh,          Op::kLookup,
    Op::kGetFh,          Op::kGetAttr,
    Op::kOpen,           Op::kClose,
    Op::kRead,           Op::kWrite,
    Op::kCommit,         Op::kRemove,
    Op::kRename,         Op::kCreate,
    Op::kReadDir,        Op::kSetAttr,
    Op::kExchangeId,     Op::kCreateSession,
    Op::kSaveFh,         Op::kRestoreFh,
    Op::kDelegReturn,    Op::kReclaimComplete,
    Op::kDestroySession, Op::kDestroyClientId,
    Op::kReadLink,       Op::kBindConnToSession,
};

std::uint64_t fold(std::uint64_t h, std::uint64_t v) {
  return (h ^ v) * 0x100000001b3ULL;
}

template <std::size_t N>
std::uint64_t foldBytes(std::uint64_t h, const std::array<std::uint8_t, N>& a) {
  for (auto b : a) h = fold(h, b);
  return h;
}

std::uint64_t foldAttrs(std::uint64_t h, const nfs4::Attributes& a) {
  h = fold(h, static_cast<std::uint32_t>(a.type));
  h = fold(h, a.size ^ a.change ^ a.fileId ^ a.spaceUsed ^ a.maxRead ^ a.maxWrite);
  h = fold(h, a.mode ^ a.numLinks ^ a.leaseTime);
  h = fold(h, a.owner.size() + a.ownerGroup.size());
  h = fold(h, static_cast<std::uint64_t>(a.timeModify.seconds) ^ a.timeAccess.nseconds);
  return h;
}

// Reads the body of one successful result; returns the updated digest.
std::uint64_t decodeBody(nfs4::CompoundDecoder& d, Op op, std::uint64_t h) {
  switch (op) {
    case Op::kSequence: {
      const auto r = d.sequence();
      h = foldBytes(h, r.session);
      return fold(h, r.sequenceId ^ r.slot ^ r.highestSlot ^ r.targetHighestSlot ^ r.statusFlags);
    }
    case Op::kGetFh:
      return fold(h, d.getFh().bytes.size());
    case Op::kGetAttr:
      return foldAttrs(h, d.getAttr());
    case Op::kOpen: {
      const auto r = d.open();
      h = foldBytes(h, r.stateId.other);
      return fold(h, r.resultFlags ^ r.delegationType ^ r.delegationStateId.seqid);
    }
    case Op::kClose:
      return fold(h, d.close().seqid);
    case Op::kRead: {
      const auto r = d.read();
      h = fold(h, r.data.size());
      // Touch every byte: a view past the message would be caught by ASan.
      for (auto b : r.data) h = fold(h, b);
      return fold(h, r.eof ? 1 : 0);
    }
    case Op::kWrite: {
      const auto r = d.write();
      return foldBytes(fold(h, r.count ^ static_cast<std::uint32_t>(r.committed)), r.verifier);
    }
    case Op::kCommit:
      return foldBytes(h, d.commit());
    case Op::kRemove:
      d.changeInfo();
      return h;
    case Op::kRename:
      d.rename();
      return h;
    case Op::kCreate:
      d.createDirectory();
      return h;
    case Op::kReadDir: {
      const auto r = d.readDir();
      for (const auto& e : r.entries) h = foldAttrs(fold(h, e.cookie ^ e.name.size()), e.attrs);
      return fold(h, r.eof ? 1 : 0);
    }
    case Op::kReadLink:
      for (const char c : d.readLink()) h = fold(h, static_cast<std::uint8_t>(c));
      return h;
    case Op::kExchangeId: {
      const auto r = d.exchangeId();
      return fold(
          h, r.clientId ^ r.sequenceId ^ r.flags ^ r.serverScope.size() ^ r.serverImplName.size());
    }
    case Op::kBindConnToSession:
      return foldBytes(h, d.bindConnToSession());
    case Op::kCreateSession: {
      const auto r = d.createSession();
      h = foldBytes(h, r.session);
      return fold(h, r.fore.maxRequests ^ r.back.maxResponseSize ^ r.sequenceId ^ r.flags);
    }
    default:
      return h;  // PUTFH, LOOKUP, ...: status only
  }
}

}  // namespace

std::span<const nfs4::Op> opTable() {
  return kOps;
}

std::uint8_t selectorOf(nfs4::Op op) {
  for (std::size_t i = 0; i < kOps.size(); ++i) {
    if (kOps[i] == op) return static_cast<std::uint8_t>(i);
  }
  throw std::invalid_argument("op not in the harness table");
}

std::vector<std::uint8_t> makeHarnessInput(std::span<const nfs4::Op> ops,
                                           std::span<const std::uint8_t> message) {
  if (ops.size() > kMaxOps) throw std::invalid_argument("too many ops for the harness");
  std::vector<std::uint8_t> in;
  in.push_back(static_cast<std::uint8_t>(ops.size()));
  for (auto op : ops) in.push_back(selectorOf(op));
  in.insert(in.end(), message.begin(), message.end());
  return in;
}

ReplyDecodeOutcome runReplyDecoder(std::span<const std::uint8_t> input) {
  ReplyDecodeOutcome out;
  if (input.empty()) return out;
  const std::size_t n = input[0] % (kMaxOps + 1);
  out.opsRequested = n;
  if (input.size() < 1 + n) return out;
  const auto selectors = input.subspan(1, n);
  const auto message = input.subspan(1 + n);

  xdr::XdrDecoder dec(message);
  rpc::ReplyHeader header;
  const Error e = rpc::decodeReplyHeader(dec, header);
  out.digest = fold(out.digest, header.xid);
  if (e) {
    // The message text is part of the contract: build it as callers would.
    out.digest = fold(out.digest, e.message().size());
    return out;
  }
  out.headerOk = true;

  nfs4::CompoundDecoder d(dec);
  out.compoundOk = d.ok();
  out.digest = fold(out.digest, d.status() ^ d.resultCount());
  for (std::size_t i = 0; i < n && d.ok(); ++i) {
    const Op op = kOps[selectors[i] % kOps.size()];
    const std::uint32_t st = d.next(op);
    if (!d.ok()) break;
    if (op == Op::kSetAttr) d.setAttr();  // attrsset follows any status
    if (st != nfs4::kNfs4Ok) {
      if (d.ok()) ++out.opsDecoded;
      break;
    }
    out.digest = decodeBody(d, op, out.digest);
    if (d.ok()) ++out.opsDecoded;
  }
  out.malformed = !d.ok();
  if (out.malformed) out.digest = fold(out.digest, d.malformedReason().size());
  return out;
}

}  // namespace nfsrdma::fuzz
