// counters/Sampler and Series: a reading at the start, during the run and
// at the end; a source that reads nothing, or throws, has no reading then
// and no series when it never read; a long run thins its readings out; a
// series trimmed to a window keeps the readings that bound it.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>

#include "counters/Sampler.h"

namespace nfsrdma::counters {
namespace {

using namespace std::chrono_literals;

NamedValues one(const char* name, std::int64_t v) {
  NamedValues n;
  n.values.emplace_back(name, v);
  return n;
}

TEST(Sampler, ReadsAtTheStartEveryIntervalAndAtTheEnd) {
  std::atomic<int> calls{0};
  std::vector<CounterSource> sources;
  sources.push_back(
      {"count", {}, [&]() -> std::optional<NamedValues> { return one("calls", ++calls); }});
  sources.push_back({"never", {}, []() -> std::optional<NamedValues> { return std::nullopt; }});
  sources.push_back(
      {"throws", {}, []() -> std::optional<NamedValues> { throw std::runtime_error("gone"); }});
  Sampler s(std::move(sources), 20ms);
  s.start();
  std::this_thread::sleep_for(110ms);
  const CellSeries cell = s.stop();
  ASSERT_EQ(cell.series.size(), 1U);  // the others never read anything
  const auto& r = cell.series[0].readings;
  ASSERT_GE(r.size(), 4U);  // start, a few intervals, end
  EXPECT_LE(r.size(), 8U);
  EXPECT_EQ(r.front().seconds, 0);
  EXPECT_EQ(r.front().values.get("calls"), 1);
  EXPECT_EQ(r.back().values.get("calls"), static_cast<int>(r.size()));
  for (std::size_t i = 1; i < r.size(); ++i) EXPECT_GT(r[i].seconds, r[i - 1].seconds);
}

TEST(Sampler, ALongRunKeepsEveryOtherReadingAndSamplesHalfAsOften) {
  int calls = 0;
  std::vector<CounterSource> sources;
  sources.push_back(
      {"count", {}, [&]() -> std::optional<NamedValues> { return one("n", ++calls); }});
  Sampler s(std::move(sources), 1ms);
  s.start();
  const auto until = std::chrono::steady_clock::now() + 10s;
  while (calls < static_cast<int>(Sampler::kMaxReadings) + 10 &&
         std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(5ms);
  }
  const CellSeries cell = s.stop();
  ASSERT_EQ(cell.series.size(), 1U);
  EXPECT_LT(cell.series[0].readings.size(), Sampler::kMaxReadings);
  EXPECT_GE(cell.intervalSeconds, 0.002);
  EXPECT_EQ(cell.series[0].readings.front().values.get("n"), 1);
}

TEST(Series, TrimToWindowKeepsTheReadingsThatBoundIt) {
  Series s{"x", {}, {}};
  for (int i = 0; i < 8; ++i) s.readings.push_back({i * 0.25, one("n", i)});
  trimToWindow(s, 0.6, 1.1);
  ASSERT_EQ(s.readings.size(), 4U);
  EXPECT_DOUBLE_EQ(s.readings.front().seconds, 0.5);
  EXPECT_DOUBLE_EQ(s.readings.back().seconds, 1.25);
}

}  // namespace
}  // namespace nfsrdma::counters
