// XdrEncoder / XdrDecoder against libtirpc: byte-for-byte equal encodings of
// the same values, our decoder reading libtirpc's bytes, the bulk-segment
// mechanics (head / payload / tail) and the bounded, sticky failure modes.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "client/xdr/XdrDecoder.h"
#include "client/xdr/XdrEncoder.h"
#include "tests/unit/client/TirpcOracle.h"

namespace nfsrdma::testing {
namespace {

using xdr::XdrDecoder;
using xdr::XdrEncoder;

TEST(XdrEncoderVsTirpc, UnsignedInt) {
  for (std::uint32_t v :
       {0U, 1U, 0x7fU, 0x80U, 0x01020304U, 0x7fffffffU, 0x80000000U, 0xfffffffeU, 0xffffffffU}) {
    u_int t = v;
    EXPECT_EQ(ourEncode([&](XdrEncoder& e) { e.putU32(v); }),
              tirpcEncode([&](XDR* x) { return xdr_u_int(x, &t); }))
        << v;
  }
}

TEST(XdrEncoderVsTirpc, SignedInt) {
  for (std::int32_t v : {0, 1, -1, -2, 42, std::numeric_limits<std::int32_t>::min(),
                         std::numeric_limits<std::int32_t>::max()}) {
    int t = v;
    EXPECT_EQ(ourEncode([&](XdrEncoder& e) { e.putI32(v); }),
              tirpcEncode([&](XDR* x) { return xdr_int(x, &t); }))
        << v;
  }
}

TEST(XdrEncoderVsTirpc, UnsignedHyper) {
  for (std::uint64_t v : {0ULL, 1ULL, 0xffffffffULL, 0x100000000ULL, 0x0102030405060708ULL,
                          0x8000000000000000ULL, 0xffffffffffffffffULL}) {
    std::uint64_t t = v;
    EXPECT_EQ(ourEncode([&](XdrEncoder& e) { e.putU64(v); }),
              tirpcEncode([&](XDR* x) { return xdr_uint64_t(x, &t); }))
        << v;
  }
}

TEST(XdrEncoderVsTirpc, SignedHyper) {
  for (std::int64_t v :
       {std::int64_t{0}, std::int64_t{-1}, std::int64_t{1700000000},
        std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max()}) {
    std::int64_t t = v;
    EXPECT_EQ(ourEncode([&](XdrEncoder& e) { e.putI64(v); }),
              tirpcEncode([&](XDR* x) { return xdr_int64_t(x, &t); }))
        << v;
  }
}

TEST(XdrEncoderVsTirpc, Bool) {
  for (bool v : {false, true}) {
    bool_t t = v ? TRUE : FALSE;
    EXPECT_EQ(ourEncode([&](XdrEncoder& e) { e.putBool(v); }),
              tirpcEncode([&](XDR* x) { return xdr_bool(x, &t); }));
  }
}

// Lengths 0..7 cover every amount of zero padding (3, 0, 3, 2, 1, 0, 3, 2, 1).
TEST(XdrEncoderVsTirpc, VariableOpaqueEveryPadding) {
  for (std::size_t len = 0; len <= 9; ++len) {
    Bytes data = pattern(len);
    char* p = reinterpret_cast<char*>(data.data());
    u_int n = static_cast<u_int>(len);
    const Bytes want = tirpcEncode([&](XDR* x) { return xdr_bytes(x, &p, &n, 1024); });
    EXPECT_EQ(want.size(), 4 + len + xdr::xdrPad(len));
    EXPECT_EQ(ourEncode([&](XdrEncoder& e) { e.putOpaque(data); }), want) << "length " << len;
  }
}

TEST(XdrEncoderVsTirpc, FixedOpaqueEveryPadding) {
  for (std::size_t len = 0; len <= 9; ++len) {
    Bytes data = pattern(len, 0x10);
    const Bytes want = tirpcEncode([&](XDR* x) {
      return xdr_opaque(x, reinterpret_cast<char*>(data.data()), static_cast<u_int>(len));
    });
    EXPECT_EQ(want.size(), len + xdr::xdrPad(len));
    EXPECT_EQ(ourEncode([&](XdrEncoder& e) { e.putFixedOpaque(data); }), want) << "length " << len;
  }
}

TEST(XdrEncoderVsTirpc, StringEveryPadding) {
  for (std::size_t len = 0; len <= 9; ++len) {
    std::string s;
    for (std::size_t i = 0; i < len; ++i) s.push_back(static_cast<char>('a' + i));
    char* p = s.data();
    EXPECT_EQ(ourEncode([&](XdrEncoder& e) { e.putString(s); }),
              tirpcEncode([&](XDR* x) { return xdr_string(x, &p, 255); }))
        << "\"" << s << "\"";
  }
}

TEST(XdrEncoderVsTirpc, MixedRecord) {
  u_int a = 0xdeadbeef;
  int b = -7;
  std::uint64_t c = 0x1122334455667788ULL;
  bool_t d = TRUE;
  Bytes e5 = pattern(5);
  char* e5p = reinterpret_cast<char*>(e5.data());
  u_int e5n = 5;
  std::string name = "host";
  char* namep = name.data();
  Bytes f3 = pattern(3, 0x30);
  const Bytes want = tirpcEncode([&](XDR* x) {
    return xdr_u_int(x, &a) && xdr_int(x, &b) && xdr_uint64_t(x, &c) && xdr_bool(x, &d) &&
           xdr_bytes(x, &e5p, &e5n, 64) && xdr_string(x, &namep, 64) &&
           xdr_opaque(x, reinterpret_cast<char*>(f3.data()), 3);
  });
  EXPECT_EQ(ourEncode([&](XdrEncoder& e) {
              e.putU32(0xdeadbeef);
              e.putI32(-7);
              e.putU64(0x1122334455667788ULL);
              e.putBool(true);
              e.putOpaque(e5);
              e.putString("host");
              e.putFixedOpaque(f3);
            }),
            want);
}

// ---------------------------------------------------------------- decoder

TEST(XdrDecoderFromTirpc, ReadsEveryType) {
  u_int a = 0xfeedface;
  int b = std::numeric_limits<int>::min();
  std::uint64_t c = 0xfffffffffffffffeULL;
  std::int64_t c2 = -3;
  bool_t d = TRUE, d0 = FALSE;
  Bytes op = pattern(6);
  char* opp = reinterpret_cast<char*>(op.data());
  u_int opn = 6;
  std::string s = "export";
  char* sp = s.data();
  Bytes fixed = pattern(7, 0x50);
  const Bytes wire = tirpcEncode([&](XDR* x) {
    return xdr_u_int(x, &a) && xdr_int(x, &b) && xdr_uint64_t(x, &c) && xdr_int64_t(x, &c2) &&
           xdr_bool(x, &d) && xdr_bool(x, &d0) && xdr_bytes(x, &opp, &opn, 64) &&
           xdr_string(x, &sp, 64) && xdr_opaque(x, reinterpret_cast<char*>(fixed.data()), 7);
  });
  XdrDecoder dec(wire);
  EXPECT_EQ(dec.getU32(), 0xfeedfaceU);
  EXPECT_EQ(dec.getI32(), std::numeric_limits<std::int32_t>::min());
  EXPECT_EQ(dec.getU64(), 0xfffffffffffffffeULL);
  EXPECT_EQ(dec.getI64(), -3);
  EXPECT_TRUE(dec.getBool());
  EXPECT_FALSE(dec.getBool());
  auto o = dec.getOpaque(6);
  EXPECT_EQ(Bytes(o.begin(), o.end()), op);
  EXPECT_EQ(dec.getString(64), "export");
  auto f = dec.getFixedOpaque(7);
  EXPECT_EQ(Bytes(f.begin(), f.end()), fixed);
  EXPECT_TRUE(dec.ok());
  EXPECT_EQ(dec.position(), wire.size());
  EXPECT_EQ(dec.remaining(), 0U);
}

TEST(XdrDecoderFromTirpc, OpaqueEveryPaddingAndViewsIntoTheMessage) {
  for (std::size_t len = 0; len <= 9; ++len) {
    Bytes data = pattern(len, 0x61);
    char* p = reinterpret_cast<char*>(data.data());
    u_int n = static_cast<u_int>(len);
    u_int after = 0xabcdef01;
    const Bytes wire =
        tirpcEncode([&](XDR* x) { return xdr_bytes(x, &p, &n, 64) && xdr_u_int(x, &after); });
    XdrDecoder dec(wire);
    auto got = dec.getOpaque(len);  // maxLen exactly the length: allowed
    EXPECT_EQ(Bytes(got.begin(), got.end()), data) << len;
    if (len > 0) {
      EXPECT_EQ(got.data(), wire.data() + 4) << "opaque must be a view, not a copy";
    }
    EXPECT_EQ(dec.getU32(), 0xabcdef01U) << "pad of length " << len << " not skipped";
    EXPECT_TRUE(dec.ok());
  }
}

// ---------------------------------------------------------------- bulk segments

TEST(XdrBulk, HeadPayloadTailAndPositions) {
  const Bytes payload = pattern(5);
  std::array<std::uint8_t, 64> storage{};
  XdrEncoder enc(storage);
  enc.putU32(7);
  enc.putBulk(payload);
  enc.putU32(9);
  ASSERT_FALSE(enc.overflowed());

  std::array<xdr::ConstBuffer, XdrEncoder::kMaxSegments> segs{};
  ASSERT_EQ(enc.segments(segs), 3U);
  // head: the word 7 and the length; payload: the caller's memory; tail: pad + 9.
  EXPECT_EQ(segs[0].data, storage.data());
  EXPECT_EQ(segs[0].size, 8U);
  EXPECT_EQ(segs[1].data, payload.data());
  EXPECT_EQ(segs[1].size, 5U);
  EXPECT_EQ(segs[2].data, storage.data() + 8);
  EXPECT_EQ(segs[2].size, 7U);
  EXPECT_EQ(Bytes(segs[2].data, segs[2].data + segs[2].size), (Bytes{0, 0, 0, 0, 0, 0, 9}));

  ASSERT_EQ(enc.bulk().size(), 1U);
  EXPECT_EQ(enc.bulk()[0].xdrPosition, 8U);
  EXPECT_EQ(enc.bulk()[0].padBytes, 3U);
  EXPECT_EQ(enc.bulk()[0].payload.data(), payload.data());
  EXPECT_EQ(enc.headSize(), 15U);
  EXPECT_EQ(enc.streamSize(), 20U);
}

TEST(XdrBulk, ConcatenationEqualsFlatOpaqueAndTirpc) {
  for (std::size_t len = 0; len <= 9; ++len) {
    Bytes data = pattern(len, 0x20);
    const Bytes bulk = ourEncode([&](XdrEncoder& e) {
      e.putU32(1);
      e.putBulk(data);
      e.putU32(2);
    });
    const Bytes flat = ourEncode([&](XdrEncoder& e) {
      e.putU32(1);
      e.putOpaque(data);
      e.putU32(2);
    });
    u_int one = 1, two = 2, n = static_cast<u_int>(len);
    char* p = reinterpret_cast<char*>(data.data());
    const Bytes want = tirpcEncode([&](XDR* x) {
      return xdr_u_int(x, &one) && xdr_bytes(x, &p, &n, 64) && xdr_u_int(x, &two);
    });
    EXPECT_EQ(bulk, flat) << "length " << len;
    EXPECT_EQ(bulk, want) << "length " << len;

    std::array<std::uint8_t, 64> storage{};
    XdrEncoder enc(storage);
    enc.putU32(1);
    enc.putBulk(data);
    EXPECT_EQ(enc.bulk()[0].padBytes, xdr::xdrPad(len));
    EXPECT_EQ(enc.streamSize(), 8 + len + xdr::xdrPad(len));
  }
}

TEST(XdrBulk, EmptyPayloadIsNotASegment) {
  std::array<std::uint8_t, 32> storage{};
  XdrEncoder enc(storage);
  enc.putBulk({});
  std::array<xdr::ConstBuffer, XdrEncoder::kMaxSegments> segs{};
  ASSERT_EQ(enc.segments(segs), 1U);
  EXPECT_EQ(segs[0].size, 4U);
  EXPECT_EQ(enc.bulk()[0].padBytes, 0U);
}

TEST(XdrBulk, FourBulksInStreamOrderThenOverflow) {
  const Bytes p1 = pattern(1, 0x11), p2 = pattern(6, 0x22), p3 = pattern(8, 0x33),
              p4 = pattern(3, 0x44);
  std::array<std::uint8_t, 256> storage{};
  XdrEncoder enc(storage);
  for (const Bytes* p : {&p1, &p2, &p3, &p4}) {
    enc.putU32(0xaa);
    enc.putBulk(*p);
  }
  enc.putU32(0xbb);
  ASSERT_FALSE(enc.overflowed());
  std::array<xdr::ConstBuffer, XdrEncoder::kMaxSegments> segs{};
  ASSERT_EQ(enc.segments(segs), 9U);
  EXPECT_EQ(segs[1].data, p1.data());
  EXPECT_EQ(segs[3].data, p2.data());
  EXPECT_EQ(segs[5].data, p3.data());
  EXPECT_EQ(segs[7].data, p4.data());
  // Each bulk's stream position: after its own length word, counting earlier payloads and pads.
  EXPECT_EQ(enc.bulk()[0].xdrPosition, 8U);
  EXPECT_EQ(enc.bulk()[1].xdrPosition, 20U);  // 8 + p1 (1) + pad (3) + 0xaa + length
  EXPECT_EQ(enc.bulk()[2].xdrPosition, 36U);  // 20 + p2 (6) + pad (2) + 0xaa + length
  EXPECT_EQ(enc.bulk()[3].xdrPosition, 52U);  // 36 + p3 (8, no pad) + 0xaa + length
  const Bytes flat = ourEncode([&](XdrEncoder& e) {
    for (const Bytes* p : {&p1, &p2, &p3, &p4}) {
      e.putU32(0xaa);
      e.putOpaque(*p);
    }
    e.putU32(0xbb);
  });
  EXPECT_EQ(flatten(enc), flat);
  for (const auto& b : enc.bulk()) {
    EXPECT_TRUE(std::equal(b.payload.begin(), b.payload.end(),
                           flat.begin() + static_cast<std::ptrdiff_t>(b.xdrPosition)));
  }

  const Bytes p5 = pattern(2);
  enc.putBulk(p5);  // a fifth bulk does not fit kMaxBulk
  EXPECT_TRUE(enc.overflowed());
  EXPECT_EQ(enc.bulk().size(), XdrEncoder::kMaxBulk);
}

TEST(XdrBulk, StorageOverflowIsSticky) {
  const Bytes payload = pattern(5);
  {
    std::array<std::uint8_t, 2> storage{};  // not even the length word fits
    XdrEncoder enc(storage);
    enc.putBulk(payload);
    EXPECT_TRUE(enc.overflowed());
    EXPECT_TRUE(enc.bulk().empty());
    EXPECT_EQ(enc.headSize(), 0U);
  }
  {
    std::array<std::uint8_t, 4> storage{};  // the length fits, its pad does not
    XdrEncoder enc(storage);
    enc.putBulk(payload);
    EXPECT_TRUE(enc.overflowed());
  }
  {
    std::array<std::uint8_t, 10> storage{};
    XdrEncoder enc(storage);
    enc.putU32(1);
    enc.putU32(2);
    EXPECT_FALSE(enc.overflowed());
    enc.putU32(3);  // 2 bytes left
    EXPECT_TRUE(enc.overflowed());
    enc.putBool(true);  // would fit nowhere; and a 0-byte write must not clear the flag
    enc.putFixedOpaque({});
    EXPECT_TRUE(enc.overflowed());
    EXPECT_EQ(enc.headSize(), 8U);
  }
}

TEST(XdrEncoder, ReserveAndPatch) {
  std::array<std::uint8_t, 12> storage{};
  XdrEncoder enc(storage);
  enc.putU32(0x11);
  const std::size_t at = enc.reserveU32();
  EXPECT_EQ(at, 4U);
  enc.putU32(0x33);
  enc.patchU32(at, 0x01020304);
  EXPECT_FALSE(enc.overflowed());
  EXPECT_EQ(Bytes(enc.head().begin(), enc.head().end()),
            (Bytes{0, 0, 0, 0x11, 1, 2, 3, 4, 0, 0, 0, 0x33}));
  EXPECT_EQ(enc.reserveU32(), std::numeric_limits<std::size_t>::max());
  EXPECT_TRUE(enc.overflowed());

  std::array<std::uint8_t, 8> small{};
  XdrEncoder enc2(small);
  enc2.putU32(1);
  enc2.patchU32(2, 5);  // straddles the end of what was written
  EXPECT_TRUE(enc2.overflowed());
}

// ---------------------------------------------------------------- decoder failures

TEST(XdrDecoder, TruncationIsStickyAndStopsTheCursor) {
  const Bytes wire = {0, 0, 0, 1, 0, 0};
  XdrDecoder dec(wire);
  EXPECT_EQ(dec.getU32(), 1U);
  EXPECT_EQ(dec.getU32(), 0U);  // 2 bytes left
  EXPECT_FALSE(dec.ok());
  EXPECT_EQ(dec.position(), 4U);
  EXPECT_EQ(dec.remaining(), 0U);
  EXPECT_TRUE(dec.rest().empty());
  EXPECT_TRUE(dec.getFixedOpaque(0).empty());
  EXPECT_FALSE(dec.ok());

  for (std::size_t len = 0; len < 8; ++len) {
    const Bytes w(len, 0xff);
    XdrDecoder d(w);
    (void)d.getU64();
    EXPECT_FALSE(d.ok()) << len;
  }
}

TEST(XdrDecoder, FailureIsStickyEvenWhenLaterReadsWouldFit) {
  const Bytes wire = {0, 0, 0, 9, 0, 0, 0, 1};
  XdrDecoder dec(wire);
  EXPECT_TRUE(dec.getOpaque(8).empty());  // length 9 over the limit
  EXPECT_FALSE(dec.ok());
  EXPECT_EQ(dec.getU32(), 0U);  // 4 bytes remain, but the failure holds
  EXPECT_FALSE(dec.ok());
}

TEST(XdrDecoder, BoolRejectsValuesOtherThanZeroAndOne) {
  for (std::uint32_t v : {2U, 3U, 0x100U, 0xffffffffU}) {
    u_int t = v;
    const Bytes wire = tirpcEncode([&](XDR* x) { return xdr_u_int(x, &t); });
    XdrDecoder dec(wire);
    EXPECT_FALSE(dec.getBool()) << v;
    EXPECT_FALSE(dec.ok()) << v;
  }
}

TEST(XdrDecoder, OpaqueOverMaxLenFails) {
  Bytes data = pattern(9);
  char* p = reinterpret_cast<char*>(data.data());
  u_int n = 9;
  const Bytes wire = tirpcEncode([&](XDR* x) { return xdr_bytes(x, &p, &n, 64); });
  XdrDecoder over(wire);
  EXPECT_TRUE(over.getOpaque(8).empty());
  EXPECT_FALSE(over.ok());
  XdrDecoder exact(wire);
  EXPECT_EQ(exact.getOpaque(9).size(), 9U);
  EXPECT_TRUE(exact.ok());
  XdrDecoder str(wire);
  EXPECT_TRUE(str.getString(4).empty());
  EXPECT_FALSE(str.ok());
}

TEST(XdrDecoder, OpaqueMissingDataOrPadFails) {
  // Length 5 with 5 data bytes but without its 3 pad bytes.
  const Bytes noPad = {0, 0, 0, 5, 1, 2, 3, 4, 5};
  XdrDecoder a(noPad);
  EXPECT_TRUE(a.getOpaque(64).empty());
  EXPECT_FALSE(a.ok());
  // A length far beyond the message (and near SIZE_MAX after padding).
  const Bytes huge = {0xff, 0xff, 0xff, 0xff, 1, 2, 3, 4};
  XdrDecoder b(huge);
  EXPECT_TRUE(b.getOpaque(std::numeric_limits<std::size_t>::max()).empty());
  EXPECT_FALSE(b.ok());
  XdrDecoder c(huge);
  EXPECT_TRUE(c.getFixedOpaque(std::numeric_limits<std::size_t>::max() - 1).empty());
  EXPECT_FALSE(c.ok());
}

}  // namespace
}  // namespace nfsrdma::testing
