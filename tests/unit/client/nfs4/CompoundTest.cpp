// COMPOUND codec: exact bytes of encoded operations, hand-computed from the
// XDR of RFC 5662 (field order stated per case), and decoding of hand-built
// results, including every malformed case the decoder must catch.
#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "client/nfs4/Compound.h"

namespace nfsrdma::nfs4 {
namespace {

using Bytes = std::vector<std::uint8_t>;

// Expected wire bytes, written independently of XdrEncoder: big-endian words,
// opaque data with its length and zero pad.
class Wire {
 public:
  Wire& u32(std::uint32_t v) {
    for (int s = 24; s >= 0; s -= 8) b_.push_back(static_cast<std::uint8_t>(v >> s));
    return *this;
  }
  Wire& u64(std::uint64_t v) {
    return u32(static_cast<std::uint32_t>(v >> 32)).u32(static_cast<std::uint32_t>(v));
  }
  Wire& raw(const Bytes& bytes) {
    b_.insert(b_.end(), bytes.begin(), bytes.end());
    while (b_.size() % 4 != 0) b_.push_back(0);
    return *this;
  }
  Wire& fixed(std::size_t n, std::uint8_t fill) { return raw(Bytes(n, fill)); }
  Wire& opaque(const Bytes& bytes) {
    return u32(static_cast<std::uint32_t>(bytes.size())).raw(bytes);
  }
  Wire& str(std::string_view s) { return opaque(Bytes(s.begin(), s.end())); }
  Wire& stateId(std::uint32_t seqid, std::uint8_t fill) { return u32(seqid).fixed(12, fill); }
  Wire& result(Op op, std::uint32_t status = kNfs4Ok) {
    return u32(static_cast<std::uint32_t>(op)).u32(status);
  }
  const Bytes& bytes() const { return b_; }

 private:
  Bytes b_;
};

template <std::size_t N>
std::array<std::uint8_t, N> filled(std::uint8_t v) {
  std::array<std::uint8_t, N> a{};
  a.fill(v);
  return a;
}

StateId stateIdOf(std::uint32_t seqid, std::uint8_t fill) {
  return StateId{seqid, filled<kStateIdOtherSize>(fill)};
}

// ================================================================ encoding

struct Encoded {
  std::array<std::uint8_t, 4096> storage{};
  xdr::XdrEncoder enc{storage};
  Bytes flat() const {
    std::array<xdr::ConstBuffer, xdr::XdrEncoder::kMaxSegments> segs{};
    const std::size_t n = enc.segments(segs);
    Bytes out;
    for (std::size_t i = 0; i < n; ++i)
      out.insert(out.end(), segs[i].data, segs[i].data + segs[i].size);
    return out;
  }
};

// Encodes one COMPOUND with an empty tag; returns the bytes after the
// header (tag, minorversion, op count), after checking that header.
template <class Ops>
Bytes encodeOps(Ops&& ops, std::uint32_t expectedCount = 1) {
  Encoded e;
  CompoundEncoder c(e.enc);
  ops(c);
  c.finish();
  EXPECT_FALSE(e.enc.overflowed());
  EXPECT_EQ(c.opCount(), expectedCount);
  Bytes all = e.flat();
  const Bytes header = Wire().str("").u32(1).u32(expectedCount).bytes();
  EXPECT_EQ(Bytes(all.begin(), all.begin() + 12), header);
  return Bytes(all.begin() + 12, all.end());
}

// COMPOUND4args: tag (utf8str_cs), minorversion, argarray<> count.
TEST(CompoundEncode, HeaderWithTagAndPatchedCount) {
  Encoded e;
  CompoundEncoder c(e.enc, "nfsrdma");
  c.putRootFh();
  c.getFh();
  c.finish();
  EXPECT_EQ(e.flat(), Wire().str("nfsrdma").u32(1).u32(2).u32(24).u32(10).bytes());
}

// SEQUENCE4args: sessionid[16], sequenceid, slotid, highest_slotid, cachethis.
TEST(CompoundEncode, Sequence) {
  const SessionId sid = filled<16>(0x5e);
  EXPECT_EQ(encodeOps([&](CompoundEncoder& c) { c.sequence(sid, 7, 3, 9, true); }),
            Wire().u32(53).fixed(16, 0x5e).u32(7).u32(3).u32(9).u32(1).bytes());
  EXPECT_EQ(encodeOps([&](CompoundEncoder& c) { c.sequence(sid, 0xffffffff, 0, 0, false); }),
            Wire().u32(53).fixed(16, 0x5e).u32(0xffffffff).u32(0).u32(0).u32(0).bytes());
}

// PUTFH4args: object nfs_fh4 (opaque<128>).
TEST(CompoundEncode, PutFh) {
  const FileHandle fh{{1, 2, 3, 4, 5}};
  EXPECT_EQ(encodeOps([&](CompoundEncoder& c) { c.putFh(fh); }),
            (Bytes{0, 0, 0, 22, 0, 0, 0, 5, 1, 2, 3, 4, 5, 0, 0, 0}));
}

// LOOKUP4args: objname component4.
TEST(CompoundEncode, Lookup) {
  EXPECT_EQ(encodeOps([](CompoundEncoder& c) { c.lookup("file.txt"); }),
            Wire().u32(15).str("file.txt").bytes());
  EXPECT_EQ(encodeOps([](CompoundEncoder& c) { c.lookup("abcde"); }),
            (Bytes{0, 0, 0, 15, 0, 0, 0, 5, 'a', 'b', 'c', 'd', 'e', 0, 0, 0}));
}

// GETATTR4args: attr_request bitmap4 (count, words up to the highest non-zero).
TEST(CompoundEncode, GetAttrBitmap) {
  const Bitmap want{attr::kType, attr::kSize, attr::kMode, attr::kTimeModify};
  EXPECT_EQ(encodeOps([&](CompoundEncoder& c) { c.getAttr(want); }),
            Wire().u32(9).u32(2).u32((1U << 1) | (1U << 4)).u32((1U << 1) | (1U << 21)).bytes());
  EXPECT_EQ(encodeOps([](CompoundEncoder& c) { c.getAttr(Bitmap{attr::kSize}); }),
            Wire().u32(9).u32(1).u32(1U << 4).bytes());
  EXPECT_EQ(encodeOps([](CompoundEncoder& c) { c.getAttr(Bitmap{}); }),
            Wire().u32(9).u32(0).bytes());
}

// OPEN4args: seqid, share_access, share_deny, open_owner4 {clientid, owner<>},
// openflag4 {opentype; CREATE: createhow4 {mode UNCHECKED4; fattr4}},
// open_claim4 {claim CLAIM_NULL; file component4}.
// fattr4 = attrmask bitmap4, attr_vals opaque (values in attribute order).
TEST(CompoundEncode, OpenCreateWithModeAndTruncate) {
  const Bytes owner = {'o', 'w', 'n', 'e', 'r', '1'};
  OpenArgs a;
  a.clientId = 0x0102030405060708ULL;
  a.owner = owner;
  a.shareAccess = kShareAccessBoth;
  a.create = true;
  a.createAttrs.size = 0;
  a.createAttrs.mode = 0100644;  // file type bits are not part of mode4: masked to 07777
  a.name = "new.dat";
  const Bytes want = Wire()
                         .u32(18)
                         .u32(0)  // seqid
                         .u32(3)  // share_access BOTH
                         .u32(0)  // share_deny NONE
                         .u64(0x0102030405060708ULL)
                         .opaque(owner)
                         .u32(1)  // OPEN4_CREATE
                         .u32(0)  // UNCHECKED4
                         .u32(2)
                         .u32(1U << 4)
                         .u32(1U << 1)  // size (4), mode (33)
                         .u32(12)
                         .u64(0)
                         .u32(0644)  // attr_vals
                         .u32(0)     // CLAIM_NULL
                         .str("new.dat")
                         .bytes();
  EXPECT_EQ(encodeOps([&](CompoundEncoder& c) { c.open(a); }), want);
}

TEST(CompoundEncode, OpenCreateModeOnlyAndOpenExisting) {
  const Bytes owner = {9};
  OpenArgs a;
  a.clientId = 5;
  a.owner = owner;
  a.shareAccess = kShareAccessWrite;
  a.create = true;
  a.createAttrs.mode = 0600;
  a.name = "m";
  EXPECT_EQ(encodeOps([&](CompoundEncoder& c) { c.open(a); }), Wire()
                                                                   .u32(18)
                                                                   .u32(0)
                                                                   .u32(2)
                                                                   .u32(0)
                                                                   .u64(5)
                                                                   .opaque(owner)
                                                                   .u32(1)
                                                                   .u32(0)
                                                                   .u32(2)
                                                                   .u32(0)
                                                                   .u32(1U << 1)
                                                                   .u32(4)
                                                                   .u32(0600)
                                                                   .u32(0)
                                                                   .str("m")
                                                                   .bytes());
  a.create = false;
  a.shareAccess = kShareAccessRead;
  EXPECT_EQ(
      encodeOps([&](CompoundEncoder& c) { c.open(a); }),
      Wire().u32(18).u32(0).u32(1).u32(0).u64(5).opaque(owner).u32(0).u32(0).str("m").bytes());
}

// READ4args: stateid4 {seqid, other[12]}, offset, count.
TEST(CompoundEncode, Read) {
  EXPECT_EQ(
      encodeOps([](CompoundEncoder& c) { c.read(stateIdOf(2, 0xab), 0x100000000ULL, 1048576); }),
      Wire().u32(25).stateId(2, 0xab).u64(0x100000000ULL).u32(1048576).bytes());
}

// WRITE4args: stateid4, offset, stable_how4, data opaque<> (a bulk segment).
TEST(CompoundEncode, WriteKeepsTheDataOutOfTheHead) {
  const Bytes data = {'h', 'e', 'l', 'l', 'o'};
  Encoded e;
  CompoundEncoder c(e.enc);
  c.write(stateIdOf(1, 0x11), 4096, StableHow::kFileSync, data);
  c.getAttr(Bitmap{attr::kSize});
  c.finish();
  ASSERT_FALSE(e.enc.overflowed());
  const Bytes flat = e.flat();
  const Bytes want = Wire()
                         .str("")
                         .u32(1)
                         .u32(2)
                         .u32(38)
                         .stateId(1, 0x11)
                         .u64(4096)
                         .u32(2)
                         .opaque(data)
                         .u32(9)
                         .u32(1)
                         .u32(1U << 4)
                         .bytes();
  EXPECT_EQ(flat, want);

  std::array<xdr::ConstBuffer, xdr::XdrEncoder::kMaxSegments> segs{};
  ASSERT_EQ(e.enc.segments(segs), 3U);
  const std::size_t payloadAt =
      12 + 4 + 16 + 8 + 4 + 4;  // header, op, stateid, offset, stable, length
  EXPECT_EQ(segs[0].size, payloadAt);
  EXPECT_EQ(segs[1].data, data.data()) << "WRITE data must not be copied";
  EXPECT_EQ(segs[1].size, 5U);
  EXPECT_EQ(segs[2].size, 3U + 12U);  // pad, then GETATTR
  ASSERT_EQ(e.enc.bulk().size(), 1U);
  EXPECT_EQ(e.enc.bulk()[0].xdrPosition, payloadAt);
  EXPECT_EQ(e.enc.bulk()[0].padBytes, 3U);
  EXPECT_EQ(e.enc.headSize(), flat.size() - 5);
}

// COMMIT4args: offset, count. CLOSE4args: seqid, open_stateid.
TEST(CompoundEncode, CommitAndClose) {
  EXPECT_EQ(encodeOps([](CompoundEncoder& c) { c.commit(0, 0); }),
            Wire().u32(5).u64(0).u32(0).bytes());
  EXPECT_EQ(encodeOps([](CompoundEncoder& c) { c.close(stateIdOf(3, 0xcc)); }),
            Wire().u32(4).u32(0).stateId(3, 0xcc).bytes());
}

// READDIR4args: cookie, cookieverf[8], dircount, maxcount, attr_request bitmap4.
TEST(CompoundEncode, ReadDir) {
  const Verifier verf = filled<8>(0x3c);
  EXPECT_EQ(encodeOps([&](CompoundEncoder& c) {
              c.readDir(0x1234, verf, 8192, 32768, Bitmap{attr::kType, attr::kFileId, attr::kMode});
            }),
            Wire()
                .u32(26)
                .u64(0x1234)
                .fixed(8, 0x3c)
                .u32(8192)
                .u32(32768)
                .u32(2)
                .u32((1U << 1) | (1U << 20))
                .u32(1U << 1)
                .bytes());
}

// SETATTR4args: stateid4, obj_attributes fattr4.
TEST(CompoundEncode, SetAttrSizeAndMode) {
  SetAttributes a;
  a.size = 0x0000000500000001ULL;
  a.mode = 0755;
  EXPECT_EQ(encodeOps([&](CompoundEncoder& c) { c.setAttr(stateIdOf(0, 0), a); }),
            Wire()
                .u32(34)
                .stateId(0, 0)
                .u32(2)
                .u32(1U << 4)
                .u32(1U << 1)
                .u32(12)
                .u64(0x0000000500000001ULL)
                .u32(0755)
                .bytes());
  SetAttributes sizeOnly;
  sizeOnly.size = 10;
  EXPECT_EQ(encodeOps([&](CompoundEncoder& c) { c.setAttr(stateIdOf(1, 0xee), sizeOnly); }),
            Wire().u32(34).stateId(1, 0xee).u32(1).u32(1U << 4).u32(8).u64(10).bytes());
}

// EXCHANGE_ID4args: client_owner4 {co_verifier[8], co_ownerid<>}, eia_flags,
// state_protect4_a {SP4_NONE}, eia_client_impl_id<1> (empty).
TEST(CompoundEncode, ExchangeId) {
  const Verifier verf = filled<8>(0x42);
  const Bytes owner = {'n', 'f', 's', 'r', 'd', 'm', 'a', '-', 'h'};
  EXPECT_EQ(
      encodeOps([&](CompoundEncoder& c) { c.exchangeId(verf, owner, kExchgIdFlagUseNonPnfs); }),
      Wire().u32(42).fixed(8, 0x42).opaque(owner).u32(0x00010000).u32(0).u32(0).bytes());
}

// CREATE_SESSION4args: clientid, sequence, flags, fore channel_attrs4, back
// channel_attrs4, cb_program, sec_parms<> (one: AUTH_NONE).
// channel_attrs4: headerpadsize, maxrequestsize, maxresponsesize,
// maxresponsesize_cached, maxoperations, maxrequests, rdma_ird<1>.
TEST(CompoundEncode, CreateSession) {
  const ChannelAttrs fore{0, 1049620, 1049480, 7584, 16, 64};
  const ChannelAttrs back{0, 4096, 4096, 0, 2, 1};
  EXPECT_EQ(
      encodeOps([&](CompoundEncoder& c) { c.createSession(0xaabbccdd00112233ULL, 1, fore, back); }),
      Wire()
          .u32(43)
          .u64(0xaabbccdd00112233ULL)
          .u32(1)
          .u32(0)
          .u32(0)
          .u32(1049620)
          .u32(1049480)
          .u32(7584)
          .u32(16)
          .u32(64)
          .u32(0)
          .u32(0)
          .u32(4096)
          .u32(4096)
          .u32(0)
          .u32(2)
          .u32(1)
          .u32(0)
          .u32(0x40000000)
          .u32(1)
          .u32(0)
          .bytes());
}

// CREATE4args: objtype createtype4 {NF4DIR: void}, objname, createattrs fattr4.
// REMOVE4args: target. RENAME4args: oldname, newname. RECLAIM_COMPLETE4args:
// one_fs. DESTROY_SESSION4args: sessionid. DESTROY_CLIENTID4args: clientid.
TEST(CompoundEncode, DirectoryAndTeardownOps) {
  SetAttributes mode;
  mode.mode = 0700;
  EXPECT_EQ(encodeOps([&](CompoundEncoder& c) { c.createDirectory("d", mode); }),
            Wire().u32(6).u32(2).str("d").u32(2).u32(0).u32(1U << 1).u32(4).u32(0700).bytes());
  EXPECT_EQ(encodeOps([](CompoundEncoder& c) { c.remove("gone"); }),
            Wire().u32(28).str("gone").bytes());
  EXPECT_EQ(encodeOps([](CompoundEncoder& c) { c.rename("a", "bcdef"); }),
            Wire().u32(29).str("a").str("bcdef").bytes());
  // READLINK has no arguments: its op number alone.
  EXPECT_EQ(encodeOps([](CompoundEncoder& c) { c.readLink(); }), Wire().u32(27).bytes());
  EXPECT_EQ(encodeOps([](CompoundEncoder& c) { c.reclaimComplete(false); }),
            Wire().u32(58).u32(0).bytes());
  EXPECT_EQ(encodeOps([](CompoundEncoder& c) { c.destroySession(filled<16>(7)); }),
            Wire().u32(44).fixed(16, 7).bytes());
  EXPECT_EQ(encodeOps([](CompoundEncoder& c) { c.destroyClientId(99); }),
            Wire().u32(57).u64(99).bytes());
  EXPECT_EQ(encodeOps(
                [](CompoundEncoder& c) {
                  c.putRootFh();
                  c.saveFh();
                  c.restoreFh();
                  c.delegReturn(stateIdOf(4, 0xdd));
                },
                4),
            Wire().u32(24).u32(32).u32(31).u32(8).stateId(4, 0xdd).bytes());
}

// Where a COMPOUND stops being safe to send twice: the first OPEN, CREATE,
// REMOVE, RENAME, CLOSE or DELEGRETURN, counting SEQUENCE as operation 0.
TEST(CompoundEncode, FirstNonIdempotentOpIsTheFirstThatChangesState) {
  const SessionId sid = filled<16>(1);
  const FileHandle fh{{1, 2, 3}};
  auto firstOf = [&](auto&& ops) {
    Encoded e;
    CompoundEncoder c(e.enc);
    c.sequence(sid, 1, 0, 0, false);
    ops(c);
    c.finish();
    return c.firstNonIdempotentOp();
  };
  EXPECT_EQ(firstOf([&](CompoundEncoder& c) {
              c.putFh(fh);
              c.lookup("a");
              c.getAttr(Bitmap{attr::kSize});
              c.readDir(0, Verifier{}, 512, 1024, Bitmap{attr::kType});
              c.read(StateId{}, 0, 4096);
              c.write(StateId{}, 0, StableHow::kUnstable, std::span<const std::uint8_t>{});
              c.commit(0, 0);
              c.setAttr(StateId{}, SetAttributes{0, std::nullopt});
              c.saveFh();
              c.restoreFh();
              c.getFh();
            }),
            CompoundEncoder::kAllIdempotent);
  OpenArgs open;
  open.name = "f";
  EXPECT_EQ(firstOf([&](CompoundEncoder& c) {
              c.putFh(fh);
              c.lookup("dir");
              c.open(open);
              c.getFh();
            }),
            3U);
  EXPECT_EQ(firstOf([&](CompoundEncoder& c) {
              c.putFh(fh);
              c.remove("x");
            }),
            2U);
  EXPECT_EQ(firstOf([&](CompoundEncoder& c) {
              c.putFh(fh);
              c.saveFh();
              c.putFh(fh);
              c.rename("a", "b");
              c.remove("c");
            }),
            4U);
  EXPECT_EQ(firstOf([&](CompoundEncoder& c) { c.createDirectory("d", SetAttributes{}); }), 1U);
  EXPECT_EQ(firstOf([&](CompoundEncoder& c) {
              c.putFh(fh);
              c.close(StateId{});
            }),
            2U);
  EXPECT_EQ(firstOf([&](CompoundEncoder& c) { c.delegReturn(StateId{}); }), 1U);
}

TEST(CompoundEncode, OverflowIsReportedNotWritten) {
  std::array<std::uint8_t, 40> small{};
  xdr::XdrEncoder enc(small);
  CompoundEncoder c(enc);
  c.sequence(filled<16>(1), 1, 0, 0,
             false);  // 4 + 16 + 16 bytes: does not fit after the 12-byte header
  c.finish();
  EXPECT_TRUE(enc.overflowed());
}

// ================================================================ decoding

// COMPOUND4res: status, tag, resarray<> count; each result: resop, status, body.
Wire compoundReply(std::uint32_t status, std::uint32_t count) {
  return std::move(Wire().u32(status).str("").u32(count));
}

Wire& sequenceOk(Wire& w) {
  // SEQUENCE4resok: sessionid, sequenceid, slotid, highest_slotid, target_highest_slotid,
  // status_flags.
  return w.result(Op::kSequence).fixed(16, 0x5e).u32(11).u32(2).u32(7).u32(5).u32(0x40);
}

TEST(CompoundDecode, HeaderAndSequence) {
  Wire w = compoundReply(0, 1);
  sequenceOk(w);
  xdr::XdrDecoder dec(w.bytes());
  CompoundDecoder d(dec);
  EXPECT_EQ(d.status(), kNfs4Ok);
  EXPECT_EQ(d.resultCount(), 1U);
  ASSERT_EQ(d.next(Op::kSequence), kNfs4Ok);
  const SequenceResult s = d.sequence();
  ASSERT_TRUE(d.ok()) << d.malformedReason();
  EXPECT_EQ(s.session, filled<16>(0x5e));
  EXPECT_EQ(s.sequenceId, 11U);
  EXPECT_EQ(s.slot, 2U);
  EXPECT_EQ(s.highestSlot, 7U);
  EXPECT_EQ(s.targetHighestSlot, 5U);
  EXPECT_EQ(s.statusFlags, 0x40U);
  EXPECT_EQ(dec.remaining(), 0U);
}

TEST(CompoundDecode, TagIsSkipped) {
  const Wire w = std::move(Wire().u32(0).str("a tag of 17 bytes").u32(1).result(Op::kPutRootFh));
  xdr::XdrDecoder dec(w.bytes());
  CompoundDecoder d(dec);
  EXPECT_EQ(d.next(Op::kPutRootFh), kNfs4Ok);
  EXPECT_TRUE(d.ok());
}

TEST(CompoundDecode, GetFhUpTo128Bytes) {
  const Bytes fh(128, 0xf0);
  Wire w = compoundReply(0, 1);
  w.result(Op::kGetFh).opaque(fh);
  xdr::XdrDecoder dec(w.bytes());
  CompoundDecoder d(dec);
  ASSERT_EQ(d.next(Op::kGetFh), kNfs4Ok);
  EXPECT_EQ(d.getFh().bytes, fh);
  EXPECT_TRUE(d.ok());

  Wire big = compoundReply(0, 1);
  big.result(Op::kGetFh).opaque(Bytes(129, 1));
  xdr::XdrDecoder dec2(big.bytes());
  CompoundDecoder d2(dec2);
  ASSERT_EQ(d2.next(Op::kGetFh), kNfs4Ok);
  (void)d2.getFh();
  EXPECT_FALSE(d2.ok());
  EXPECT_EQ(d2.malformedReason(), "bad GETFH result (file handle over 128 bytes or truncated)");
}

// Every attribute the client knows, values in attribute-number order.
Wire& allAttributes(Wire& w) {
  const std::uint32_t word0 = 0xfffU | (1U << 20) | (1U << 30) | (1U << 31);  // 0..11, 20, 30, 31
  const std::uint32_t word1 = (1U << (33 - 32)) | (1U << (35 - 32)) | (1U << (36 - 32)) |
                              (1U << (37 - 32)) | (1U << (45 - 32)) | (1U << (47 - 32)) |
                              (1U << (52 - 32)) | (1U << (53 - 32));
  Wire v;
  v.u32(2)
      .u32(word0)
      .u32(word1)   // 0 supported_attrs (bitmap4)
      .u32(2)       // 1 type NF4DIR
      .u32(0)       // 2 fh_expire_type
      .u64(0x1111)  // 3 change
      .u64(0x2222)  // 4 size
      .u32(1)       // 5 link_support
      .u32(1)       // 6 symlink_support
      .u32(0)       // 7 named_attr
      .u64(1)
      .u64(2)                    // 8 fsid {major, minor}
      .u32(1)                    // 9 unique_handles
      .u32(90)                   // 10 lease_time
      .u32(0)                    // 11 rdattr_error
      .u64(0x3333)               // 20 fileid
      .u64(1048576)              // 30 maxread
      .u64(2097152)              // 31 maxwrite
      .u32(01777)                // 33 mode
      .u32(3)                    // 35 numlinks
      .str("alice@example.org")  // 36 owner
      .str("staff")              // 37 owner_group
      .u64(0x4444)               // 45 space_used
      .u64(1700000001)
      .u32(11)  // 47 time_access
      .u64(1700000002)
      .u32(22)  // 52 time_metadata
      .u64(0xfffffffffffffffeULL)
      .u32(999999999);  // 53 time_modify (seconds -2)
  return w.u32(2).u32(word0).u32(word1).opaque(v.bytes());
}

void expectAllAttributes(const Attributes& a) {
  EXPECT_EQ(a.type, FileType::kDirectory);
  EXPECT_EQ(a.change, 0x1111U);
  EXPECT_EQ(a.size, 0x2222U);
  EXPECT_EQ(a.leaseTime, 90U);
  EXPECT_EQ(a.fileId, 0x3333U);
  EXPECT_EQ(a.maxRead, 1048576U);
  EXPECT_EQ(a.maxWrite, 2097152U);
  EXPECT_EQ(a.mode, 01777U);
  EXPECT_EQ(a.numLinks, 3U);
  EXPECT_EQ(a.owner, "alice@example.org");
  EXPECT_EQ(a.ownerGroup, "staff");
  EXPECT_EQ(a.spaceUsed, 0x4444U);
  EXPECT_EQ(a.timeAccess.seconds, 1700000001);
  EXPECT_EQ(a.timeAccess.nseconds, 11U);
  EXPECT_EQ(a.timeMetadata.seconds, 1700000002);
  EXPECT_EQ(a.timeMetadata.nseconds, 22U);
  EXPECT_EQ(a.timeModify.seconds, -2);
  EXPECT_EQ(a.timeModify.nseconds, 999999999U);
  for (std::uint32_t bit : {0U, 1U, 4U, 11U, 20U, 31U, 33U, 37U, 53U})
    EXPECT_TRUE(a.present.test(bit)) << bit;
  EXPECT_FALSE(a.present.test(12));
}

TEST(CompoundDecode, GetAttrEveryKnownAttribute) {
  Wire w = compoundReply(0, 2);
  allAttributes(w.result(Op::kGetAttr));
  w.result(Op::kGetFh).opaque({1});
  xdr::XdrDecoder dec(w.bytes());
  CompoundDecoder d(dec);
  ASSERT_EQ(d.next(Op::kGetAttr), kNfs4Ok);
  expectAllAttributes(d.getAttr());
  ASSERT_TRUE(d.ok()) << d.malformedReason();
  ASSERT_EQ(d.next(Op::kGetFh), kNfs4Ok);
  EXPECT_EQ(d.getFh().bytes, Bytes{1});
  EXPECT_EQ(dec.remaining(), 0U);
}

struct AttrCase {
  const char* what;
  Wire body;  // bitmap4 + attr_vals
  std::string reason;
};

TEST(CompoundDecode, GetAttrMalformed) {
  std::vector<AttrCase> cases;
  // ACL (12) is not an attribute the client asks for or can decode.
  cases.push_back(
      {"unknown attribute",
       std::move(Wire().u32(1).u32((1U << 4) | (1U << 12)).opaque(Wire().u64(1).u32(0).bytes())),
       "attribute 12 returned but not requested"});
  cases.push_back({"unknown attribute in word 1",
                   std::move(Wire().u32(2).u32(0).u32(1U << 8).u32(4).u32(0)),
                   "attribute 40 returned but not requested"});
  cases.push_back({"bit in a fourth bitmap word",
                   std::move(Wire().u32(4).u32(0).u32(0).u32(0).u32(1).u32(0)),
                   "attribute bit beyond those requested"});
  cases.push_back({"bitmap of 9 words", std::move(Wire().u32(9)), "bitmap of 9 words"});
  cases.push_back({"values shorter than the bitmap says",
                   std::move(Wire().u32(1).u32(1U << 4).opaque({0, 0, 0, 1})),
                   "truncated attribute values"});
  cases.push_back({"owner longer than 1024",
                   std::move(Wire().u32(2).u32(0).u32(1U << 4).opaque(
                       Wire().str(std::string(1025, 'o')).bytes())),
                   "truncated attribute values"});
  for (const AttrCase& c : cases) {
    Wire w = compoundReply(0, 1);
    w.result(Op::kGetAttr).raw(c.body.bytes());
    xdr::XdrDecoder dec(w.bytes());
    CompoundDecoder d(dec);
    ASSERT_EQ(d.next(Op::kGetAttr), kNfs4Ok) << c.what;
    (void)d.getAttr();
    EXPECT_FALSE(d.ok()) << c.what;
    EXPECT_EQ(d.malformedReason(), c.reason) << c.what;
  }
}

// A supported_attrs count of 0xff000001 used to be looped over word by word
// on the failed decoder (4 billion iterations, found by fuzz_reply_decoder).
TEST(CompoundDecode, HugeSupportedAttrsCountFailsFast) {
  Wire w = compoundReply(0, 1);
  w.result(Op::kGetAttr).u32(1).u32(1U << 0).opaque(Wire().u32(0xff000001U).u32(0).bytes());
  const auto start = std::chrono::steady_clock::now();
  xdr::XdrDecoder dec(w.bytes());
  CompoundDecoder d(dec);
  ASSERT_EQ(d.next(Op::kGetAttr), kNfs4Ok);
  (void)d.getAttr();
  EXPECT_FALSE(d.ok());
  EXPECT_EQ(d.malformedReason(), "truncated attribute values");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(200));
}

// OPEN4resok: stateid, cinfo {atomic, before, after}, rflags, attrset bitmap4,
// open_delegation4 (delegation_type + body). Each reply ends with a GETFH so
// the test sees that the body was consumed exactly.
struct OpenCase {
  const char* what;
  Wire delegation;
  std::uint32_t type;
  std::uint32_t delegSeqid;
};

Wire openReply(const Wire& delegation) {
  Wire w = compoundReply(0, 2);
  w.result(Op::kOpen).stateId(1, 0xa1).u32(1).u64(100).u64(101).u32(0x24).u32(1).u32(1U << 4).raw(
      delegation.bytes());
  w.result(Op::kGetFh).opaque({0xfe, 0xed});
  return w;
}

TEST(CompoundDecode, OpenEveryDelegationVariant) {
  std::vector<OpenCase> cases;
  cases.push_back({"none", std::move(Wire().u32(0)), kOpenDelegateNone, 0});
  // READ: stateid, recall, nfsace4 {type, flag, access_mask, who}.
  cases.push_back(
      {"read",
       std::move(Wire().u32(1).stateId(5, 0xd1).u32(0).u32(0).u32(0).u32(0x1f).str("OWNER@")),
       kOpenDelegateRead, 5});
  // WRITE: stateid, recall, nfs_space_limit4 {NFS_LIMIT_SIZE: filesize}, nfsace4.
  cases.push_back(
      {"write, size limit",
       std::move(
           Wire().u32(2).stateId(6, 0xd2).u32(1).u32(1).u64(1 << 30).u32(0).u32(0).u32(0x16).str(
               "EVERYONE@")),
       kOpenDelegateWrite, 6});
  // WRITE with NFS_LIMIT_BLOCKS: {num_blocks, bytes_per_block}.
  cases.push_back(
      {"write, block limit",
       std::move(
           Wire().u32(2).stateId(7, 0xd3).u32(0).u32(2).u32(64).u32(512).u32(1).u32(2).u32(3).str(
               "x@y")),
       kOpenDelegateWrite, 7});
  // NONE_EXT: why; CONTENTION and RESOURCE carry a bool, the others nothing.
  cases.push_back(
      {"none_ext, not wanted", std::move(Wire().u32(3).u32(0)), kOpenDelegateNoneExt, 0});
  cases.push_back(
      {"none_ext, contention", std::move(Wire().u32(3).u32(1).u32(1)), kOpenDelegateNoneExt, 0});
  cases.push_back(
      {"none_ext, resource", std::move(Wire().u32(3).u32(2).u32(0)), kOpenDelegateNoneExt, 0});
  cases.push_back({"none_ext, is dir", std::move(Wire().u32(3).u32(8)), kOpenDelegateNoneExt, 0});
  for (const OpenCase& c : cases) {
    const Wire w = openReply(c.delegation);
    xdr::XdrDecoder dec(w.bytes());
    CompoundDecoder d(dec);
    ASSERT_EQ(d.next(Op::kOpen), kNfs4Ok);
    const OpenResult r = d.open();
    ASSERT_TRUE(d.ok()) << c.what << ": " << d.malformedReason();
    EXPECT_EQ(r.stateId, stateIdOf(1, 0xa1)) << c.what;
    EXPECT_EQ(r.resultFlags, 0x24U) << c.what;
    EXPECT_EQ(r.delegationType, c.type) << c.what;
    EXPECT_EQ(r.delegationStateId.seqid, c.delegSeqid) << c.what;
    ASSERT_EQ(d.next(Op::kGetFh), kNfs4Ok) << c.what;
    EXPECT_EQ(d.getFh().bytes, (Bytes{0xfe, 0xed})) << c.what;
    EXPECT_EQ(dec.remaining(), 0U) << c.what;
  }
}

// The cached reply size the client asks for is the size of the largest
// reply it asks to be cached: the path walk ending in OPEN, GETFH and
// GETATTR(type, size) with every variable part at its limit, built here
// byte by byte and decoded as the client decodes it.
TEST(CompoundDecode, LargestCachedReplyIsThePathWalkEndingInOpen) {
  constexpr std::uint32_t kMaxOps = 18;  // what Client asks for
  constexpr std::uint32_t kLookups = kMaxOps - 5;
  Wire w = compoundReply(0, kMaxOps);
  sequenceOk(w);
  w.result(Op::kPutFh);
  for (std::uint32_t i = 0; i < kLookups; ++i) w.result(Op::kLookup);
  w.result(Op::kOpen).stateId(1, 0xa1).u32(1).u64(100).u64(101).u32(0x24);
  w.u32(3).u32(~0U).u32(~0U).u32(~0U);                    // attrset, 3 words
  w.u32(2).stateId(6, 0xd2).u32(0).u32(1).u64(1U << 30);  // write delegation, size limit
  w.u32(0).u32(0).u32(0x16).str(std::string(128, 'p'));   // ACE, IDMAP_NAMESZ principal
  w.result(Op::kGetFh).opaque(Bytes(kFhMaxSize, 0xfe));
  w.result(Op::kGetAttr).u32(3).u32((1U << attr::kType) | (1U << attr::kSize)).u32(0).u32(0);
  w.opaque(Wire().u32(1).u64(4096).bytes());
  constexpr std::size_t kRpcReplyHeader = 24;  // xid, REPLY, ACCEPTED, AUTH_NONE verifier, SUCCESS
  EXPECT_EQ(kRpcReplyHeader + w.bytes().size(), largestCachedReply(kMaxOps));
  EXPECT_EQ(largestCachedReply(kMaxOps), 616U);

  xdr::XdrDecoder dec(w.bytes());
  CompoundDecoder d(dec);
  ASSERT_EQ(d.next(Op::kSequence), kNfs4Ok);
  (void)d.sequence();
  ASSERT_EQ(d.next(Op::kPutFh), kNfs4Ok);
  for (std::uint32_t i = 0; i < kLookups; ++i) ASSERT_EQ(d.next(Op::kLookup), kNfs4Ok);
  ASSERT_EQ(d.next(Op::kOpen), kNfs4Ok);
  EXPECT_EQ(d.open().delegationType, kOpenDelegateWrite);
  ASSERT_EQ(d.next(Op::kGetFh), kNfs4Ok);
  EXPECT_EQ(d.getFh().bytes.size(), kFhMaxSize);
  ASSERT_EQ(d.next(Op::kGetAttr), kNfs4Ok);
  EXPECT_EQ(d.getAttr().size, 4096U);
  ASSERT_TRUE(d.ok()) << d.malformedReason();
  EXPECT_EQ(dec.remaining(), 0U);
}

TEST(CompoundDecode, OpenMalformedDelegations) {
  const std::pair<Wire, std::string> cases[] = {
      {std::move(Wire().u32(4)), "OPEN delegation type 4"},
      {std::move(Wire().u32(2).stateId(1, 1).u32(0).u32(3).u32(0).u32(0).u32(0).str("x")),
       "OPEN write delegation with space limit type 3"},
      {std::move(Wire().u32(1).stateId(1, 1).u32(2).u32(0).u32(0).u32(0).str("x")),
       "truncated OPEN result"},  // recall 2
  };
  for (const auto& [deleg, reason] : cases) {
    const Wire w = openReply(deleg);
    xdr::XdrDecoder dec(w.bytes());
    CompoundDecoder d(dec);
    ASSERT_EQ(d.next(Op::kOpen), kNfs4Ok);
    (void)d.open();
    EXPECT_FALSE(d.ok()) << reason;
    EXPECT_EQ(d.malformedReason(), reason);
    EXPECT_EQ(d.next(Op::kGetFh), kStatusMalformed);
  }
}

// READ4resok: eof, data<>. WRITE4resok: count, committed, writeverf[8].
// COMMIT4resok: writeverf[8]. CLOSE4resok: open_stateid.
TEST(CompoundDecode, ReadWriteCommitClose) {
  Wire w = compoundReply(0, 4);
  w.result(Op::kRead).u32(1).str("hello");
  w.result(Op::kWrite).u32(4096).u32(1).fixed(8, 0x77);
  w.result(Op::kCommit).fixed(8, 0x78);
  w.result(Op::kClose).stateId(9, 0xc1);
  xdr::XdrDecoder dec(w.bytes());
  CompoundDecoder d(dec);
  ASSERT_EQ(d.next(Op::kRead), kNfs4Ok);
  const ReadResult r = d.read();
  EXPECT_TRUE(r.eof);
  EXPECT_EQ(std::string(r.data.begin(), r.data.end()), "hello");
  EXPECT_EQ(r.data.data(), w.bytes().data() + 12 + 8 + 4 + 4)
      << "READ data must be a view into the reply";
  ASSERT_EQ(d.next(Op::kWrite), kNfs4Ok);
  const WriteResult wr = d.write();
  EXPECT_EQ(wr.count, 4096U);
  EXPECT_EQ(wr.committed, StableHow::kDataSync);
  EXPECT_EQ(wr.verifier, filled<8>(0x77));
  ASSERT_EQ(d.next(Op::kCommit), kNfs4Ok);
  EXPECT_EQ(d.commit(), filled<8>(0x78));
  ASSERT_EQ(d.next(Op::kClose), kNfs4Ok);
  EXPECT_EQ(d.close(), stateIdOf(9, 0xc1));
  EXPECT_TRUE(d.ok());
  EXPECT_EQ(dec.remaining(), 0U);
}

TEST(CompoundDecode, WriteCommittedOutOfRange) {
  Wire w = compoundReply(0, 1);
  w.result(Op::kWrite).u32(1).u32(3).fixed(8, 0);
  xdr::XdrDecoder dec(w.bytes());
  CompoundDecoder d(dec);
  ASSERT_EQ(d.next(Op::kWrite), kNfs4Ok);
  (void)d.write();
  EXPECT_FALSE(d.ok());
  EXPECT_EQ(d.malformedReason(), "WRITE committed value 3");
}

// REMOVE4resok: cinfo. RENAME4resok: source_cinfo, target_cinfo.
// CREATE4resok: cinfo, attrset. SETATTR4res: status, attrsset (always).
TEST(CompoundDecode, ChangeInfoResultsAndSetAttr) {
  Wire w = compoundReply(13, 4);
  w.result(Op::kRemove).u32(1).u64(1).u64(2);
  w.result(Op::kRename).u32(0).u64(3).u64(4).u32(1).u64(5).u64(6);
  w.result(Op::kCreate).u32(1).u64(7).u64(8).u32(2).u32(0).u32(1U << 1);
  w.result(Op::kSetAttr, 13).u32(0);  // NFS4ERR_ACCESS, empty attrsset
  xdr::XdrDecoder dec(w.bytes());
  CompoundDecoder d(dec);
  EXPECT_EQ(d.status(), 13U);
  ASSERT_EQ(d.next(Op::kRemove), kNfs4Ok);
  d.changeInfo();
  ASSERT_EQ(d.next(Op::kRename), kNfs4Ok);
  d.rename();
  ASSERT_EQ(d.next(Op::kCreate), kNfs4Ok);
  d.createDirectory();
  EXPECT_EQ(d.next(Op::kSetAttr), 13U);
  d.setAttr();
  EXPECT_TRUE(d.ok()) << d.malformedReason();
  EXPECT_EQ(dec.remaining(), 0U);
}

// READLINK4resok: link (linktext4, an opaque string). A NUL in it or an empty
// text is refused: no path can hold one.
TEST(CompoundDecode, ReadLinkText) {
  Wire w = compoundReply(0, 1);
  w.result(Op::kReadLink).str("../dir/target");
  xdr::XdrDecoder dec(w.bytes());
  CompoundDecoder d(dec);
  ASSERT_EQ(d.next(Op::kReadLink), kNfs4Ok);
  EXPECT_EQ(d.readLink(), "../dir/target");
  EXPECT_TRUE(d.ok()) << d.malformedReason();
  EXPECT_EQ(dec.remaining(), 0U);
  for (const std::string_view bad : {std::string_view("a\0b", 3), std::string_view()}) {
    Wire b = compoundReply(0, 1);
    b.result(Op::kReadLink).str(bad);
    xdr::XdrDecoder badDec(b.bytes());
    CompoundDecoder bd(badDec);
    ASSERT_EQ(bd.next(Op::kReadLink), kNfs4Ok);
    (void)bd.readLink();
    EXPECT_FALSE(bd.ok());
    EXPECT_EQ(bd.malformedReason(), "bad READLINK result (empty link text or a NUL byte in it)");
  }
}

// READDIR4resok: cookieverf[8], dirlist4 {entries: (follows, entry4 {cookie,
// name, attrs fattr4})*, follows = FALSE, eof}.
TEST(CompoundDecode, ReadDirEntriesAndEof) {
  Wire w = compoundReply(0, 1);
  w.result(Op::kReadDir).fixed(8, 0x3c);
  w.u32(1).u64(3).str(".hidden");
  w.u32(1).u32(1U << 4).opaque(Wire().u64(10).bytes());
  w.u32(1).u64(5).str("file");
  w.u32(2).u32(1U << 1).u32(1U << 1).opaque(Wire().u32(1).u32(0644).bytes());
  w.u32(1).u64(0x7fffffffffffffffULL).str("last-entry-name");
  w.u32(0).opaque({});
  w.u32(0).u32(1);
  xdr::XdrDecoder dec(w.bytes());
  CompoundDecoder d(dec);
  ASSERT_EQ(d.next(Op::kReadDir), kNfs4Ok);
  const ReadDirResult r = d.readDir();
  ASSERT_TRUE(d.ok()) << d.malformedReason();
  EXPECT_EQ(r.cookieVerf, filled<8>(0x3c));
  ASSERT_EQ(r.entries.size(), 3U);
  EXPECT_EQ(r.entries[0].cookie, 3U);
  EXPECT_EQ(r.entries[0].name, ".hidden");
  EXPECT_EQ(r.entries[0].attrs.size, 10U);
  EXPECT_EQ(r.entries[1].name, "file");
  EXPECT_EQ(r.entries[1].attrs.type, FileType::kRegular);
  EXPECT_EQ(r.entries[1].attrs.mode, 0644U);
  EXPECT_EQ(r.entries[2].cookie, 0x7fffffffffffffffULL);
  EXPECT_EQ(r.entries[2].name, "last-entry-name");
  EXPECT_TRUE(r.eof);
  EXPECT_EQ(dec.remaining(), 0U);
}

TEST(CompoundDecode, ReadDirEmptyNotEof) {
  Wire w = compoundReply(0, 1);
  w.result(Op::kReadDir).fixed(8, 1).u32(0).u32(0);
  xdr::XdrDecoder dec(w.bytes());
  CompoundDecoder d(dec);
  ASSERT_EQ(d.next(Op::kReadDir), kNfs4Ok);
  const ReadDirResult r = d.readDir();
  EXPECT_TRUE(d.ok());
  EXPECT_TRUE(r.entries.empty());
  EXPECT_FALSE(r.eof);
}

// EXCHANGE_ID4resok: clientid, sequenceid, flags, state_protect4_r {SP4_NONE},
// server_owner4 {minor_id, major_id<>}, server_scope<>, server_impl_id<1>
// {domain, name, date nfstime4}.
TEST(CompoundDecode, ExchangeId) {
  Wire w = compoundReply(0, 1);
  w.result(Op::kExchangeId).u64(0x1122334455667788ULL).u32(1).u32(0x00010001).u32(0);
  w.u64(9)
      .str("major-owner")
      .str("scope-1")
      .u32(1)
      .str("kernel.org")
      .str("Linux 6.1")
      .u64(1700000000)
      .u32(0);
  xdr::XdrDecoder dec(w.bytes());
  CompoundDecoder d(dec);
  ASSERT_EQ(d.next(Op::kExchangeId), kNfs4Ok);
  const ExchangeIdResult r = d.exchangeId();
  ASSERT_TRUE(d.ok()) << d.malformedReason();
  EXPECT_EQ(r.clientId, 0x1122334455667788ULL);
  EXPECT_EQ(r.sequenceId, 1U);
  EXPECT_EQ(r.flags, 0x00010001U);
  EXPECT_EQ(r.serverScope, "scope-1");
  EXPECT_EQ(r.serverImplName, "Linux 6.1");
  EXPECT_EQ(dec.remaining(), 0U);

  Wire noImpl = compoundReply(0, 1);
  noImpl.result(Op::kExchangeId).u64(1).u32(1).u32(0).u32(0).u64(0).str("m").str("s").u32(0);
  xdr::XdrDecoder dec2(noImpl.bytes());
  CompoundDecoder d2(dec2);
  ASSERT_EQ(d2.next(Op::kExchangeId), kNfs4Ok);
  EXPECT_EQ(d2.exchangeId().serverImplName, "");
  EXPECT_TRUE(d2.ok());
}

TEST(CompoundDecode, ExchangeIdMalformed) {
  // SP4_MACH_CRED (1) and SP4_SSV (2) carry bodies the client does not parse.
  for (std::uint32_t how : {1U, 2U}) {
    Wire w = compoundReply(0, 1);
    w.result(Op::kExchangeId).u64(1).u32(1).u32(0).u32(how).u32(0).u32(0);
    xdr::XdrDecoder dec(w.bytes());
    CompoundDecoder d(dec);
    ASSERT_EQ(d.next(Op::kExchangeId), kNfs4Ok);
    (void)d.exchangeId();
    EXPECT_FALSE(d.ok());
    EXPECT_EQ(d.malformedReason(), "EXCHANGE_ID state protection " + std::to_string(how) +
                                       " (only SP4_NONE is supported)");
  }
  Wire twoImpls = compoundReply(0, 1);
  twoImpls.result(Op::kExchangeId).u64(1).u32(1).u32(0).u32(0).u64(0).str("m").str("s").u32(2);
  xdr::XdrDecoder dec(twoImpls.bytes());
  CompoundDecoder d(dec);
  ASSERT_EQ(d.next(Op::kExchangeId), kNfs4Ok);
  (void)d.exchangeId();
  EXPECT_FALSE(d.ok());
  EXPECT_EQ(d.malformedReason(), "EXCHANGE_ID with 2 implementation ids");
}

// CREATE_SESSION4resok: sessionid, sequence, flags, fore channel_attrs4, back channel_attrs4.
TEST(CompoundDecode, CreateSession) {
  Wire w = compoundReply(0, 1);
  w.result(Op::kCreateSession).fixed(16, 0x5a).u32(1).u32(2);
  w.u32(0).u32(1049620).u32(1049480).u32(7584).u32(8).u32(32).u32(0);
  w.u32(0).u32(4096).u32(4096).u32(0).u32(2).u32(1).u32(1).u32(7);  // one rdma_ird value
  xdr::XdrDecoder dec(w.bytes());
  CompoundDecoder d(dec);
  ASSERT_EQ(d.next(Op::kCreateSession), kNfs4Ok);
  const CreateSessionResult r = d.createSession();
  ASSERT_TRUE(d.ok()) << d.malformedReason();
  EXPECT_EQ(r.session, filled<16>(0x5a));
  EXPECT_EQ(r.sequenceId, 1U);
  EXPECT_EQ(r.flags, 2U);
  EXPECT_EQ(r.fore.maxRequestSize, 1049620U);
  EXPECT_EQ(r.fore.maxResponseSize, 1049480U);
  EXPECT_EQ(r.fore.maxResponseSizeCached, 7584U);
  EXPECT_EQ(r.fore.maxOperations, 8U);
  EXPECT_EQ(r.fore.maxRequests, 32U);
  EXPECT_EQ(r.back.maxRequestSize, 4096U);
  EXPECT_EQ(r.back.maxRequests, 1U);
  EXPECT_EQ(dec.remaining(), 0U);

  Wire twoIrd = compoundReply(0, 1);
  twoIrd.result(Op::kCreateSession)
      .fixed(16, 0)
      .u32(1)
      .u32(0)
      .u32(0)
      .u32(1)
      .u32(1)
      .u32(1)
      .u32(1)
      .u32(1)
      .u32(2);
  xdr::XdrDecoder dec2(twoIrd.bytes());
  CompoundDecoder d2(dec2);
  ASSERT_EQ(d2.next(Op::kCreateSession), kNfs4Ok);
  (void)d2.createSession();
  EXPECT_FALSE(d2.ok());
  EXPECT_EQ(d2.malformedReason(), "channel attributes with 2 rdma_ird values");
}

TEST(CompoundDecode, WrongOpNumber) {
  Wire w = compoundReply(0, 2);
  sequenceOk(w);
  w.result(Op::kGetFh).opaque({1});
  xdr::XdrDecoder dec(w.bytes());
  CompoundDecoder d(dec);
  ASSERT_EQ(d.next(Op::kSequence), kNfs4Ok);
  (void)d.sequence();
  EXPECT_EQ(d.next(Op::kPutFh), kStatusMalformed);
  EXPECT_FALSE(d.ok());
  EXPECT_EQ(d.malformedReason(), "result for op 10 where PUTFH was expected");
}

TEST(CompoundDecode, TooFewResults) {
  Wire w = compoundReply(0, 1);
  sequenceOk(w);
  xdr::XdrDecoder dec(w.bytes());
  CompoundDecoder d(dec);
  ASSERT_EQ(d.next(Op::kSequence), kNfs4Ok);
  (void)d.sequence();
  EXPECT_EQ(d.next(Op::kGetFh), kStatusMalformed);
  EXPECT_EQ(d.malformedReason(), "no result for GETFH (the server returned 1)");
}

TEST(CompoundDecode, ErrorStatusStopsTheResults) {
  Wire w = compoundReply(kErrNoEnt, 2);
  sequenceOk(w);
  w.result(Op::kLookup, kErrNoEnt);
  xdr::XdrDecoder dec(w.bytes());
  CompoundDecoder d(dec);
  EXPECT_EQ(d.status(), kErrNoEnt);
  ASSERT_EQ(d.next(Op::kSequence), kNfs4Ok);
  (void)d.sequence();
  EXPECT_EQ(d.next(Op::kLookup), kErrNoEnt);
  EXPECT_TRUE(d.ok());
  EXPECT_EQ(d.next(Op::kGetFh), kStatusMalformed);  // the server sent no more
}

TEST(CompoundDecode, TruncatedHeader) {
  const Bytes wire = Wire().u32(0).str("tag").bytes();  // no result count
  xdr::XdrDecoder dec(wire);
  CompoundDecoder d(dec);
  EXPECT_FALSE(d.ok());
  EXPECT_EQ(d.malformedReason(), "truncated COMPOUND header");
  EXPECT_EQ(d.next(Op::kSequence), kStatusMalformed);
}

// One reply holding a result of every decoder, decoded at every length:
// only the full length decodes; every prefix is malformed and reads nothing
// beyond its end (the prefix is its own allocation, so ASan would see it).
TEST(CompoundDecode, EveryTruncationIsMalformed) {
  Wire w = compoundReply(0, 16);
  sequenceOk(w);
  w.result(Op::kPutFh);
  w.result(Op::kOpen)
      .stateId(1, 2)
      .u32(1)
      .u64(1)
      .u64(2)
      .u32(0)
      .u32(0)
      .u32(2)
      .stateId(3, 4)
      .u32(0)
      .u32(2)
      .u32(1)
      .u32(512)
      .u32(0)
      .u32(0)
      .u32(0)
      .str("w");
  w.result(Op::kGetFh).opaque({1, 2, 3});
  allAttributes(w.result(Op::kGetAttr));
  w.result(Op::kRead).u32(0).str("abcdefg");
  w.result(Op::kWrite).u32(7).u32(2).fixed(8, 9);
  w.result(Op::kCommit).fixed(8, 9);
  w.result(Op::kClose).stateId(2, 2);
  w.result(Op::kRemove).u32(1).u64(1).u64(2);
  w.result(Op::kRename).u32(1).u64(1).u64(2).u32(1).u64(3).u64(4);
  w.result(Op::kCreate).u32(1).u64(1).u64(2).u32(0);
  w.result(Op::kReadDir)
      .fixed(8, 1)
      .u32(1)
      .u64(1)
      .str("e")
      .u32(1)
      .u32(1U << 4)
      .opaque(Wire().u64(5).bytes())
      .u32(0)
      .u32(1);
  w.result(Op::kSetAttr).u32(1).u32(1U << 4);
  w.result(Op::kExchangeId)
      .u64(1)
      .u32(1)
      .u32(0)
      .u32(0)
      .u64(0)
      .str("m")
      .str("s")
      .u32(1)
      .str("d")
      .str("n")
      .u64(0)
      .u32(0);
  w.result(Op::kCreateSession).fixed(16, 1).u32(1).u32(0);
  for (int i = 0; i < 2; ++i) w.u32(0).u32(1).u32(1).u32(1).u32(1).u32(1).u32(1).u32(0);

  auto decodeAll = [](const Bytes& wire) {
    xdr::XdrDecoder dec(wire);
    CompoundDecoder d(dec);
    if (d.next(Op::kSequence) == kNfs4Ok) (void)d.sequence();
    (void)d.next(Op::kPutFh);
    if (d.next(Op::kOpen) == kNfs4Ok) (void)d.open();
    if (d.next(Op::kGetFh) == kNfs4Ok) (void)d.getFh();
    if (d.next(Op::kGetAttr) == kNfs4Ok) (void)d.getAttr();
    if (d.next(Op::kRead) == kNfs4Ok) (void)d.read();
    if (d.next(Op::kWrite) == kNfs4Ok) (void)d.write();
    if (d.next(Op::kCommit) == kNfs4Ok) (void)d.commit();
    if (d.next(Op::kClose) == kNfs4Ok) (void)d.close();
    if (d.next(Op::kRemove) == kNfs4Ok) d.changeInfo();
    if (d.next(Op::kRename) == kNfs4Ok) d.rename();
    if (d.next(Op::kCreate) == kNfs4Ok) d.createDirectory();
    if (d.next(Op::kReadDir) == kNfs4Ok) (void)d.readDir();
    (void)d.next(Op::kSetAttr);
    d.setAttr();
    if (d.next(Op::kExchangeId) == kNfs4Ok) (void)d.exchangeId();
    if (d.next(Op::kCreateSession) == kNfs4Ok) (void)d.createSession();
    return std::make_pair(d.ok(), dec.position());
  };

  const Bytes& full = w.bytes();
  const auto [fullOk, fullPos] = decodeAll(full);
  ASSERT_TRUE(fullOk);
  ASSERT_EQ(fullPos, full.size());
  for (std::size_t len = 0; len < full.size(); ++len) {
    const Bytes prefix(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(len));
    const auto [ok, pos] = decodeAll(prefix);
    EXPECT_FALSE(ok) << "prefix of " << len << " bytes decoded";
    EXPECT_LE(pos, len);
  }
}

TEST(CompoundDecode, OpNames) {
  EXPECT_STREQ(opName(Op::kSequence), "SEQUENCE");
  EXPECT_STREQ(opName(Op::kExchangeId), "EXCHANGE_ID");
  EXPECT_STREQ(opName(Op::kDestroyClientId), "DESTROY_CLIENTID");
  EXPECT_STREQ(opName(static_cast<Op>(9999)), "OP_(unknown)");
}

}  // namespace
}  // namespace nfsrdma::nfs4

namespace nfsrdma::nfs4 {
namespace {

// BIND_CONN_TO_SESSION4args (RFC 8881 18.34): sessionid[16], bctsa_dir
// (CDFC4_FORE = 1: we serve no back channel), bctsa_use_conn_in_rdma_mode.
TEST(CompoundEncode, BindConnToSessionBindsTheForeChannelOnly) {
  const SessionId sid = filled<16>(0x5e);
  EXPECT_EQ(encodeOps([&](CompoundEncoder& c) { c.bindConnToSession(sid); }),
            Wire().u32(41).fixed(16, 0x5e).u32(1).u32(0).bytes());
}

// open_claim4: CLAIM_PREVIOUS carries the delegation type held before the
// restart (none), CLAIM_FH nothing (the current file handle is the file).
TEST(CompoundEncode, OpenReclaimAndOpenByFileHandle) {
  const Bytes owner = {9};
  OpenArgs a;
  a.clientId = 5;
  a.owner = owner;
  a.shareAccess = kShareAccessBoth;
  a.claim = kClaimPrevious;
  EXPECT_EQ(encodeOps([&](CompoundEncoder& c) { c.open(a); }),
            Wire().u32(18).u32(0).u32(3).u32(0).u64(5).opaque(owner).u32(0).u32(1).u32(0).bytes());
  a.claim = kClaimFh;
  EXPECT_EQ(encodeOps([&](CompoundEncoder& c) { c.open(a); }),
            Wire().u32(18).u32(0).u32(3).u32(0).u64(5).opaque(owner).u32(0).u32(4).bytes());
}

// sa_cachethis follows what the COMPOUND does: set once an op changes state
// (a WRITE too: a replay must not rewrite old bytes over newer ones), left
// as given for reads.
TEST(CompoundEncode, CacheThisIsSetForCompoundsThatChangeState) {
  const SessionId sid = filled<16>(0x5e);
  const FileHandle fh{{1}};
  const Bytes seqOff = Wire().u32(53).fixed(16, 0x5e).u32(2).u32(0).u32(0).u32(0).bytes();
  const Bytes seqOn = Wire().u32(53).fixed(16, 0x5e).u32(2).u32(0).u32(0).u32(1).bytes();
  const auto prefix = [](const Bytes& all, std::size_t n) {
    return Bytes(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(n));
  };
  const Bytes read = encodeOps(
      [&](CompoundEncoder& c) {
        c.sequence(sid, 2, 0, 0, false);
        c.putFh(fh);
        c.read(StateId{}, 0, 4096);
      },
      3);
  EXPECT_EQ(prefix(read, seqOff.size()), seqOff);
  const std::array<std::uint8_t, 4> data{1, 2, 3, 4};
  const Bytes write = encodeOps(
      [&](CompoundEncoder& c) {
        c.sequence(sid, 2, 0, 0, false);
        c.putFh(fh);
        c.write(StateId{}, 0, StableHow::kUnstable, data);
      },
      3);
  EXPECT_EQ(prefix(write, seqOn.size()), seqOn);
  const Bytes rename = encodeOps(
      [&](CompoundEncoder& c) {
        c.sequence(sid, 2, 0, 0, false);
        c.putFh(fh);
        c.rename("a", "b");
      },
      3);
  EXPECT_EQ(prefix(rename, seqOn.size()), seqOn);
}

TEST(CompoundDecode, BindConnToSessionResult) {
  Wire w = compoundReply(0, 1);
  w.u32(41).u32(0).fixed(16, 0x5e).u32(1).u32(0);
  xdr::XdrDecoder dec(w.bytes());
  CompoundDecoder d(dec);
  ASSERT_EQ(d.next(Op::kBindConnToSession), kNfs4Ok);
  EXPECT_EQ(d.bindConnToSession(), filled<16>(0x5e));
  EXPECT_TRUE(d.ok()) << d.malformedReason();
  Wire cut = compoundReply(0, 1);
  cut.u32(41).u32(0).fixed(16, 0x5e).u32(1);
  xdr::XdrDecoder dec2(cut.bytes());
  CompoundDecoder d2(dec2);
  ASSERT_EQ(d2.next(Op::kBindConnToSession), kNfs4Ok);
  (void)d2.bindConnToSession();
  EXPECT_FALSE(d2.ok());
}

}  // namespace
}  // namespace nfsrdma::nfs4
