// --versus (bench/tune/TuneVersus.h): a setting the user names, parsed
// over the target's whole space, and measured against the recommendation
// in alternated pairs.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "bench/tune/TuneSearch.h"
#include "bench/tune/TuneVersus.h"
#include "tests/unit/bench/ErrorOf.h"

namespace nfsrdma::bench {
namespace {

using testing::errorOf;

KnobSpace space() {
  KnobSpace s;
  s.knobs.push_back(numericKnob("nconnect", {1, 2, 4, 8, 16}, 1));
  s.knobs.push_back(numericKnob("nfsd.threads", {1, 4, 8, 16, 32, 64}, 1));
  s.knobs.push_back(Knob{"memreg", {"pooled", "per-io"}, 0});
  s.leftAlone.push_back({"read_ahead_kb", "O_DIRECT and random reads do not read ahead"});
  return s;
}

TEST(TuneVersus, ASettingByKeysWithALabelAndLevelsTheKnobLacked) {
  KnobSpace s = space();
  const VersusSetting v = parseVersus(s, "rules:nconnect=8&nfsd.threads=12");
  EXPECT_EQ(v.label, "rules");
  EXPECT_EQ(v.keys, "nconnect=8&nfsd.threads=12");
  ASSERT_EQ(v.setting.size(), 3U);
  EXPECT_EQ(s.knobs[0].levels[v.setting[0]], "8");
  EXPECT_EQ(s.knobs[1].levels[v.setting[1]], "12");  // added: the rule's own level
  EXPECT_EQ(v.setting[2], 0U);                       // not named: the start
  // Without a label the keys name it; ',' joins as '&' does.
  const VersusSetting w = parseVersus(s, "memreg=per-io,nconnect=2");
  EXPECT_EQ(w.label, "memreg=per-io,nconnect=2");
  EXPECT_EQ(s.knobs[2].levels[w.setting[2]], "per-io");
}

TEST(TuneVersus, RefusalsNameThePairAndWhy) {
  KnobSpace s = space();
  EXPECT_EQ(errorOf([&] { parseVersus(s, "rules:read_ahead_kb=15360"); }),
            "--versus read_ahead_kb=15360: not for this run: O_DIRECT and random reads do not "
            "read ahead");
  EXPECT_EQ(errorOf([&] { parseVersus(s, "qd=64"); }),
            "--versus qd=64: expected one of nconnect, nfsd.threads, memreg");
  EXPECT_EQ(errorOf([&] { parseVersus(s, "memreg=fast"); }),
            "--versus memreg=fast: expected a level of memreg (pooled, per-io)");
  EXPECT_EQ(errorOf([&] { parseVersus(s, "nconnect=0"); }),
            "--versus nconnect=0: expected a level of nconnect (1, 2, 4, 8, 16) or a whole "
            "number above 0");
  EXPECT_EQ(errorOf([&] { parseVersus(s, "rules:nconnect"); }),
            "--versus 'nconnect': 'nconnect' is no KNOB=LEVEL (e.g. nconnect=8&nfsd.threads=32)");
  EXPECT_EQ(errorOf([&] { parseVersus(s, ":nconnect=2"); }),
            "--versus ':nconnect=2': the label before ':' is empty");
}

TEST(TuneVersus, TheRecommendationMapsIntoTheWholeSpace) {
  KnobSpace whole = space();
  // The search turned only nfsd.threads (--knobs nfsd.threads).
  const std::vector<Knob> searched{numericKnob("nfsd.threads", {1, 4, 8, 16, 32, 64}, 1)};
  const Setting rec = settingInSpace(whole, searched, {4}, {0});
  EXPECT_EQ(whole.knobs[1].levels[rec[1]], "32");
  EXPECT_EQ(rec[0], whole.knobs[0].start);
  EXPECT_EQ(settingInSpace(whole, searched, {0}, {0}),
            (Setting{whole.knobs[0].start, whole.knobs[1].start, whole.knobs[2].start}));
}

TEST(TuneVersus, AlternatedPairsGiveTheRatioAndAnErrorEndsIt) {
  KnobSpace s = space();
  const VersusSetting v = parseVersus(s, "rules:nconnect=8");
  const Setting rec = parseVersus(s, "nfsd.threads=32").setting;
  std::vector<std::string> order;
  int n = 0;
  const VersusRun r = measureVersus(v, rec, 3, [&](const Setting& x) {
    order.push_back(x == rec ? "rec" : "rules");
    ++n;
    // The recommendation 2x the rule, with a drift both share.
    return (x == rec ? 2000.0 : 1000.0) * (1 + 0.01 * n);
  });
  EXPECT_EQ(order, (std::vector<std::string>{"rec", "rules", "rec", "rules", "rec", "rules"}));
  EXPECT_EQ(r.ratio.pairs, 3U);
  EXPECT_NEAR(r.ratio.mean, 1.98, 0.01);
  EXPECT_LT(r.ratio.low, r.ratio.mean);
  EXPECT_GT(r.ratio.low, 1.9);
  EXPECT_NEAR(r.recommendationMean, 2000 * 1.03, 1);
  EXPECT_TRUE(r.error.empty());
  const VersusRun failed = measureVersus(v, rec, 3, [&](const Setting& x) -> double {
    if (x != rec) throw std::runtime_error("mount.nfs: Connection refused");
    return 1;
  });
  EXPECT_EQ(failed.error, "mount.nfs: Connection refused");
  EXPECT_EQ(failed.ratio.pairs, 0U);
}

TEST(TuneVersus, OneDisturbedPairMovesTheMedianLeastOfAll) {
  // Three pairs near 1.1x and one where the other setting's run was hit by
  // something else (a 3x outlier): the mean follows it, the median does not.
  const RatioInterval r = ratioInterval({1.08, 1.12, 3.0, 1.10});
  EXPECT_EQ(r.pairs, 4U);
  EXPECT_NEAR(r.mean, 1.575, 1e-9);
  EXPECT_NEAR(r.median, 1.11, 1e-9);
  EXPECT_NEAR(ratioInterval({1.2, 0.9, 1.0}).median, 1.0, 1e-9);
  EXPECT_EQ(ratioInterval({}).median, 0);
}

}  // namespace
}  // namespace nfsrdma::bench
