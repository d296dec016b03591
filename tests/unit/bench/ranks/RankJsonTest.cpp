// One client's result as one JSON line (bench/ranks/RankJson.h): the exact
// text, a byte-exact round trip, and an error naming the field for each
// kind of bad input a log line can bring.
#include <gtest/gtest.h>

#include <string>

#include "bench/ranks/RankJson.h"
#include "bench/report/Json.h"
#include "tests/unit/bench/ErrorOf.h"
#include "util/Version.h"

namespace nfsrdma::bench {
namespace {

using testing::errorOf;

RankResult smallRank() {
  RankResult r;
  r.cell = "4k-randread nfs-tcp";
  r.rank = 2;
  r.host = "node-c";
  r.clockOffsetNs = -1500;
  r.startNs = 1000;
  r.endNs = 5000;
  r.read.bytes = 8192;
  r.read.ops = 2;
  r.read.latency.record(3);
  r.read.latency.record(200);
  r.errors = 0;
  r.samples = {{3000, 4096, 1}, {5000, 8192, 2}};
  return r;
}

const std::string kSmallLine =
    R"({"schema": "nfsrdma-bench-rank/2", "cell": "4k-randread nfs-tcp", "rank": 2, "host": "node-c", )"
    R"("failed": false, "clock_offset_ns": -1500, "start_ns": 1000, "end_ns": 5000, )"
    R"("read": {"bytes": 8192, "ops": 2, "latency": {"min_ns": 3, "max_ns": 200, "sum_ns": 203, )"
    R"("sum_squares_ns2": 40009, "buckets": [[3, 1], [164, 1]]}}, )"
    R"("write": {"bytes": 0, "ops": 0, "latency": {"min_ns": 0, "max_ns": 0, "sum_ns": 0, )"
    R"("sum_squares_ns2": 0, "buckets": []}}, "errors": 0, "first_error": "", )"
    R"("verify": {"blocks_checked": 0, "bytes_checked": 0, "mismatches": 0, "first": []}, )"
    R"("samples": [[3000, 4096, 1], [5000, 8192, 2]]})"
    "\n";

TEST(RankJson, LineIsTheSchemaDocumentOnOneLine) {
  EXPECT_EQ(rankToJsonLine(smallRank()), kSmallLine);
}

TEST(RankJson, RoundTripIsByteExactAndExactBeyondDoublePrecision) {
  RankResult r = smallRank();
  // 2^53 + 1 ns is 104 days of uptime: a double would read 2^53.
  r.startNs = (std::int64_t{1} << 53) + 1;
  r.endNs = r.startNs + 7;
  r.samples = {{r.startNs + 3, 4096, 1}, {r.endNs, 8192 + 65536, 3}};
  r.clockOffsetNs = -((std::int64_t{1} << 60) + 3);
  r.write.bytes = 65536;
  r.write.ops = 1;
  r.write.latency.record(987654321);
  r.errors = 1;
  r.firstError = "verify: \"f0\" offset 4096: 3 bytes differ\n\tsecond line \x01 é";
  r.verify = {3, 12288, 1, {{7, 4096, 4099, "payload corrupt (checksum mismatch)"}}};
  const std::string line = rankToJsonLine(r);
  EXPECT_EQ(line.find('\n'), line.size() - 1);  // one line, even with the error's line break
  const RankResult back = rankFromJsonLine(line, "pod 2");
  EXPECT_EQ(rankToJsonLine(back), line);
  EXPECT_EQ(back.startNs, r.startNs);
  EXPECT_EQ(back.clockOffsetNs, r.clockOffsetNs);
  EXPECT_EQ(back.samples, r.samples);
  EXPECT_EQ(back.firstError, r.firstError);
  EXPECT_EQ(back.write.latency.max(), 987654321U);
  EXPECT_EQ(back.read.latency.state().buckets, r.read.latency.state().buckets);
  EXPECT_EQ(back.read.latency.stdev(), r.read.latency.stdev());
  EXPECT_EQ(back.verify.unitsChecked, 3U);
  EXPECT_EQ(back.verify.bytesChecked, 12288U);
  EXPECT_EQ(back.verify.mismatches, 1U);
  ASSERT_EQ(back.verify.first.size(), 1U);
  EXPECT_EQ(back.verify.first[0].fileId, 7U);
  EXPECT_EQ(back.verify.first[0].offset, 4096U);
  EXPECT_EQ(back.verify.first[0].firstBadByte, 4099U);
  EXPECT_EQ(back.verify.first[0].kind, "payload corrupt (checksum mismatch)");
  // Without its trailing line break too (a log line as split by a reader).
  EXPECT_EQ(rankToJsonLine(rankFromJsonLine(line.substr(0, line.size() - 1), "pod 2")), line);
}

// kSmallLine with its first `from` replaced by `to`.
std::string mutated(const std::string& from, const std::string& to) {
  std::string line = kSmallLine;
  const std::size_t at = line.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return line.replace(at, from.size(), to);
}

std::string parseError(const std::string& line) {
  return errorOf([&] { rankFromJsonLine(line, "log line 7"); });
}

// The build the rank ran goes next to the schema when the result names
// it (every client of this build does, rankResultOf) and comes back; a line
// without it (an earlier build's) is still read, with none.
TEST(RankJson, TheRanksBuildTravelsWithItsLineAndMayBeAbsent) {
  RankResult r = smallRank();
  r.version = util::versionText();
  const std::string line = rankToJsonLine(r);
  EXPECT_EQ(line, mutated(R"("cell": )", R"("nfsrdma_version": )" + jsonQuote(util::versionText()) +
                                             R"(, "cell": )"));
  EXPECT_EQ(rankFromJsonLine(line, "pod 2").version, util::versionText());
  EXPECT_EQ(rankToJsonLine(rankFromJsonLine(line, "pod 2")), line);
  EXPECT_EQ(rankFromJsonLine(kSmallLine, "pod 2").version, "");
  EXPECT_EQ(rankToJsonLine(rankFromJsonLine(kSmallLine, "pod 2")), kSmallLine);
  // Present, it is a build's name: "" would not be written back as read.
  EXPECT_EQ(parseError(mutated(R"("cell": )", R"("nfsrdma_version": "", "cell": )")),
            R"(log line 7: field "nfsrdma_version": expected the build's version, not "")");
  EXPECT_EQ(parseError(mutated(R"("cell": )", R"("nfsrdma_version": 1, "cell": )")),
            R"(log line 7: field "nfsrdma_version": expected a string)");
}

TEST(RankJson, EachMalformedInputNamesTheFieldAndWhatWasExpected) {
  const std::string any = "0..18446744073709551615";
  const std::pair<std::string, std::string> cases[] = {
      // A line of an nfsrdma-bench from before "verify" was carried.
      {mutated("rank/2", "rank/1"),
       R"(log line 7: field "schema": expected "nfsrdma-bench-rank/2", got "nfsrdma-bench-rank/1")"},
      {mutated(R"("host": "node-c", )", ""),
       R"(log line 7: field "host": expected it to be present)"},
      {mutated(R"("rank": 2)", R"("rank": -2)"),
       R"(log line 7: field "rank": expected a whole number 0..4095)"},
      {mutated(R"("rank": 2)", R"("rank": 2.0)"),
       R"(log line 7: field "rank": expected a whole number 0..4095)"},
      {mutated(R"("rank": 2)", R"("rank": 2e0)"),
       R"(log line 7: field "rank": expected a whole number 0..4095)"},
      {mutated(R"("rank": 2)", R"("rank": 4294967296)"),
       R"(log line 7: field "rank": expected a whole number 0..4095)"},
      {mutated(R"("bytes": 8192)", R"("bytes": "8192")"),
       R"(log line 7: field "read.bytes": expected a whole number )" + any},
      {mutated(R"("failed": false)", R"("failed": "no")"),
       R"(log line 7: field "failed": expected true or false)"},
      {mutated(R"("cell": "4k-randread nfs-tcp")", R"("cell": 4)"),
       R"(log line 7: field "cell": expected a string)"},
      {mutated(R"("errors": 0, )", R"("errors": 0, "extra": 1, )"),
       R"(log line 7: field "extra": expected only the fields of nfsrdma-bench-rank/2, not this one)"},
      {mutated(R"("ops": 2, )", R"("ops": 2, "iops": 1, )"),
       R"(log line 7: field "read.iops": expected only the fields of nfsrdma-bench-rank/2, not this one)"},
      {mutated("[[3, 1], [164, 1]]", "[[3776, 1], [164, 1]]"),
       R"(log line 7: field "read.latency.buckets[0][0]": expected a whole number 0..3775)"},
      {mutated("[[3, 1], [164, 1]]", "[[3, 1], [164]]"),
       R"(log line 7: field "read.latency.buckets[1]": expected [bucket, count])"},
      {mutated(R"("min_ns": 3)", R"("min_ns": 4)"),
       R"(log line 7: field "read.latency": expected a consistent histogram (latency histogram: min 4 is not in the first non-empty bucket))"},
      {mutated(R"("sum_ns": 203)", R"("sum_ns": -203)"),
       R"(log line 7: field "read.latency.sum_ns": expected a finite number >= 0)"},
      {mutated(R"("latency": {"min_ns": 3)", R"("latency": [], "x": {"min_ns": 3)"),
       R"(log line 7: field "read.x": expected only the fields of nfsrdma-bench-rank/2, not this one)"},
      {mutated(R"("write": {)", R"("write": 1, "w": {)"),
       R"(log line 7: field "w": expected only the fields of nfsrdma-bench-rank/2, not this one)"},
      {mutated(R"("samples": [[3000, 4096, 1], [5000, 8192, 2]])", R"("samples": {})"),
       R"(log line 7: field "samples": expected an array)"},
      {mutated(R"("read": {"bytes")", R"("read": 7, "r": {"bytes")"),
       R"(log line 7: field "r": expected only the fields of nfsrdma-bench-rank/2, not this one)"},
      {mutated(R"(, "samples": [[3000, 4096, 1], [5000, 8192, 2]]})", "}"),
       R"(log line 7: field "samples": expected it to be present)"},
      {kSmallLine.substr(0, 100),
       "log line 7: not a JSON line (JSON at byte 100: unterminated string)"},
      {mutated("[3000, 4096, 1]", "[3000, 4096]"),
       R"(log line 7: field "samples[0]": expected [at_ns, bytes, ops])"},
      {mutated(R"("end_ns": 5000)", R"("end_ns": 2305843009213693953)"),
       R"(log line 7: field "end_ns": expected a whole number 0..2305843009213693952)"},
      {mutated(R"("clock_offset_ns": -1500)", R"("clock_offset_ns": -2305843009213693953)"),
       R"(log line 7: field "clock_offset_ns": expected a whole number -2305843009213693952..2305843009213693952)"},
      {mutated("[5000, 8192, 2]", "[4000, 8192, 2]"),
       "log line 7: rank 2 (node-c): samples: the last one must be at end_ns 5000 with the totals "
       "(8192 bytes, 2 ops)"},
      {mutated("[3000, 4096, 1]", "[1000, 4096, 1]"),
       "log line 7: rank 2 (node-c): samples[0]: time 1000 is not after 1000"},
      {"garbage\n", "log line 7: not a JSON line (JSON at byte 0: unexpected character)"},
      {"[1, 2]\n", "log line 7: expected a JSON object"},
      {kSmallLine + kSmallLine, "log line 7: expected one JSON line, found a line break inside"},
  };
  for (const auto& [line, error] : cases) EXPECT_EQ(parseError(line), error) << line;
}

// Per-rank verify statistics travel with the result (rank 0 merged only
// its own): each part is checked like the rest of the line.
TEST(RankJson, VerifyStatisticsAreCheckedAgainstTheErrors) {
  EXPECT_EQ(parseError(mutated(R"("mismatches": 0)", R"("mismatches": 1)")),
            "log line 7: rank 2 (node-c): 1 verify mismatches, more than its 0 errors");
  EXPECT_EQ(parseError(mutated(R"("first": [])", R"("first": [[1, 2, 3, "x"]])")),
            "log line 7: rank 2 (node-c): 1 mismatches described, expected at most 0");
  EXPECT_EQ(
      parseError(mutated(R"("first": [])", R"("first": [[1, 2, 3]])")),
      R"(log line 7: field "verify.first[0]": expected [file_id, offset, first_bad_byte, kind])");
  EXPECT_EQ(parseError(mutated(R"("first": [])", R"("first": [[4294967296, 2, 3, "x"]])")),
            R"(log line 7: field "verify.first[0][0]": expected a whole number 0..4294967295)");
  EXPECT_EQ(
      parseError(mutated(R"("verify": {)", R"("verify": {"units": 1, )")),
      R"(log line 7: field "verify.units": expected only the fields of nfsrdma-bench-rank/2, not this one)");
  EXPECT_EQ(
      parseError(mutated(
          R"("verify": {"blocks_checked": 0, "bytes_checked": 0, "mismatches": 0, "first": []}, )",
          "")),
      R"(log line 7: field "verify": expected it to be present)");
}

TEST(RankJson, MissingNestedMembersAreNamedWithTheirPath) {
  EXPECT_EQ(parseError(mutated(R"("read": {"bytes": 8192, )", R"("read": {)")),
            R"(log line 7: field "read.bytes": expected it to be present)");
  EXPECT_EQ(parseError(mutated(R"(, "buckets": [[3, 1], [164, 1]])", "")),
            R"(log line 7: field "read.latency.buckets": expected it to be present)");
  EXPECT_EQ(
      parseError(mutated(R"("write": {"bytes": 0, "ops": 0, "latency": )",
                         R"("write": {"bytes": 0, "ops": 0, "lat": )")),
      R"(log line 7: field "write.lat": expected only the fields of nfsrdma-bench-rank/2, not this one)");
  EXPECT_EQ(
      parseError(mutated(R"("read": {"bytes")", R"("read": [], "r": {"bytes")")),
      R"(log line 7: field "r": expected only the fields of nfsrdma-bench-rank/2, not this one)");
}

}  // namespace
}  // namespace nfsrdma::bench
