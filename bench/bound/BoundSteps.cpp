#include "bench/bound/BoundSteps.h"

#include <algorithm>

namespace nfsrdma::bench {

std::vector<Step> counterSteps(const counters::Series& s, std::string_view name) {
  std::vector<Step> steps;
  for (std::size_t i = 1; i < s.readings.size(); ++i) {
    const auto& before = s.readings[i - 1];
    const auto& after = s.readings[i];
    const double dt = after.seconds - before.seconds;
    if (dt <= 0) continue;  // a clock that did not move holds no rate
    Step step{dt, std::nullopt};
    const auto a = before.values.get(name);
    const auto b = after.values.get(name);
    if (a && b && *b >= *a) step.delta = *b - *a;
    steps.push_back(step);
  }
  return steps;
}

std::vector<Step> addSteps(const std::vector<Step>& a, const std::vector<Step>& b) {
  if (a.empty()) return b;
  std::vector<Step> sum = a;
  for (std::size_t i = 0; i < sum.size() && i < b.size(); ++i) {
    if (!b[i].delta) continue;
    sum[i].delta = sum[i].delta.value_or(0) + *b[i].delta;
  }
  return sum;
}

std::vector<Step> suffixSteps(const counters::Series& s, std::string_view suffix) {
  std::vector<Step> sum;
  for (const auto& n : counterNames(s)) {
    const std::string_view name(n);
    if (name.size() <= suffix.size() || name.substr(name.size() - suffix.size()) != suffix)
      continue;
    sum = addSteps(sum, counterSteps(s, name));
  }
  return sum;
}

StepSum sumSteps(const std::vector<Step>& steps) {
  StepSum sum;
  sum.intervals = static_cast<int>(steps.size());
  for (const auto& step : steps) {
    if (!step.delta) continue;
    ++sum.known;
    sum.total += *step.delta;
    if (*step.delta > 0) ++sum.moved;
  }
  return sum;
}

std::vector<std::optional<std::int64_t>> gaugeLevels(const counters::Series& s,
                                                     std::string_view name) {
  std::vector<std::optional<std::int64_t>> levels;
  levels.reserve(s.readings.size());
  for (const auto& r : s.readings) levels.push_back(r.values.get(name));
  return levels;
}

std::pair<std::size_t, std::size_t> whileRunning(const counters::Series& s) {
  const std::size_t n = s.readings.size();
  if (n < 3) return {0, n};
  return {1, n - 1};
}

std::optional<double> gaugeMean(const counters::Series& s, std::string_view name) {
  const auto levels = gaugeLevels(s, name);
  double sum = 0;
  int n = 0;
  const auto [first, last] = whileRunning(s);
  for (std::size_t i = first; i < last; ++i) {
    if (!levels[i]) continue;
    sum += static_cast<double>(*levels[i]);
    ++n;
  }
  if (n == 0) return std::nullopt;
  return sum / n;
}

std::optional<std::int64_t> gaugeLast(const counters::Series& s, std::string_view name) {
  for (auto it = s.readings.rbegin(); it != s.readings.rend(); ++it) {
    if (auto v = it->values.get(name)) return v;
  }
  return std::nullopt;
}

bool hasCounter(const counters::Series& s, std::string_view name) {
  for (const auto& r : s.readings) {
    if (r.values.get(name)) return true;
  }
  return false;
}

}  // namespace nfsrdma::bench
