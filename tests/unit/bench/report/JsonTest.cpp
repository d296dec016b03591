// The report layer's one JSON writer: what the link, devices and anchor
// outputs now go through instead of hand-joined strings.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

#include "bench/report/Json.h"
#include "bench/report/ReportTable.h"

namespace nfsrdma::bench {
namespace {

TEST(Json, APreformattedNumberIsWrittenAsGiven) {
  JsonWriter w;
  w.beginObject().number("bw", "389.00").number("neg", "-0.5e-3").number("zero", "0").endObject();
  EXPECT_EQ(w.str(), "{\"bw\": 389.00, \"neg\": -0.5e-3, \"zero\": 0}\n");
  EXPECT_DOUBLE_EQ(parseJson(w.str()).num("bw"), 389.0);
}

TEST(Json, TextThatIsNotAJsonNumberIsRefusedWithItsKey) {
  for (const char* bad : {"", "nan", "inf", "1.", ".5", "01", "1e", "1,5", "+1", "12 "}) {
    JsonWriter w;
    w.beginObject();
    try {
      w.number("bw", bad);
      ADD_FAILURE() << "accepted \"" << bad << "\"";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("\"bw\""), std::string::npos) << e.what();
    }
  }
}

// A table's rows nest into a larger document with the same cells as its
// standalone JSON.
TEST(Json, TableRowsNestIntoADocument) {
  ReportTable t({{"#bytes", "bytes", 0}, {"BW[Gb/sec]", "bw", 2}});
  t.addRow({65536, 389.004});
  JsonWriter w;
  w.beginObject().field("test", "x");
  t.writeRows(w, "results");
  writeBanner(w, "config", {{"Device", "rxe0"}});
  w.endObject();
  EXPECT_EQ(w.str(), "{\"test\": \"x\", \"results\": " + t.jsonRows() +
                         ", \"config\": {\"Device\": \"rxe0\"}}\n");
  EXPECT_EQ(t.jsonRows(), "[{\"bytes\": 65536, \"bw\": 389.00}]");
}

// A saved report read back (--results, --baseline) is user input: its
// counts were cast from doubles, out of their types' range for a number
// such as -5 or 1e300 (undefined behaviour).
TEST(Json, WholeNumbersOfASavedDocumentStayInTheirRange) {
  const JsonValue v =
      parseJson(R"({"ops": 42, "neg": -5, "huge": 1e300, "nan": "x", "frac": 7.9})");
  EXPECT_EQ(v.whole("ops"), 42U);
  EXPECT_EQ(v.whole("neg"), 0U);
  EXPECT_EQ(v.whole("huge"), std::numeric_limits<std::uint64_t>::max());
  EXPECT_EQ(v.whole("huge", 4095), 4095U);
  EXPECT_EQ(v.whole("nan"), 0U);
  EXPECT_EQ(v.whole("absent"), 0U);
  EXPECT_EQ(v.whole("frac"), 7U);
}

}  // namespace
}  // namespace nfsrdma::bench
