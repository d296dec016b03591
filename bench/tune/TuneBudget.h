// How long `tune` may search: --budget (a time: "90s", "10m", "1h") and
// --trials (a count), whichever ends first; and, while it runs, how many
// more trials fit in the time left at the pace of those so far.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>

namespace nfsrdma::bench {

// "90" or "90s", "2m", "1h" (a whole or decimal number): seconds. Throws
// std::invalid_argument naming the option and the forms it takes.
double parseDuration(const std::string& text, const char* option);

class TuneBudget {
 public:
  TuneBudget(std::optional<double> seconds, std::size_t trials)
      : seconds_(seconds), trials_(trials) {}
  std::size_t trials() const { return trials_; }
  bool timed() const { return seconds_.has_value(); }
  // "10m and 60 trials", "60 trials"
  std::string describe() const;
  // Trials of about trialSeconds each that the time holds (the count when
  // untimed): a budget that holds fewer than `least` is refused up front
  // with std::invalid_argument saying what would fit.
  void checkHolds(double trialSeconds, std::size_t least) const;

  void start() { begun_ = Clock::now(); }
  void trialEnded() { ++ended_; }
  // How many more trials fit in the time left at the pace so far
  // (estimate: the first trial's pace before any ended); the count's rest
  // when untimed.
  std::size_t trialsThatFit(double estimate) const;
  double elapsed() const;

 private:
  using Clock = std::chrono::steady_clock;
  std::optional<double> seconds_;
  std::size_t trials_;
  Clock::time_point begun_ = Clock::now();
  std::size_t ended_ = 0;
};

}  // namespace nfsrdma::bench
