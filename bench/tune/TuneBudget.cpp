#include "bench/tune/TuneBudget.h"

#include <cmath>
#include <stdexcept>

#include "bench/report/Format.h"

namespace nfsrdma::bench {

double parseDuration(const std::string& text, const char* option) {
  const auto bad = [&] {
    return std::invalid_argument(std::string(option) + " " + text +
                                 ": expected a time such as 90s, 10m or 1h");
  };
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    throw bad();
  }
  const std::string unit = text.substr(used);
  double scale = 0;
  if (unit.empty() || unit == "s") scale = 1;
  if (unit == "m") scale = 60;
  if (unit == "h") scale = 3600;
  if (scale == 0 || !std::isfinite(v) || v <= 0 || v * scale > 7 * 24 * 3600.0) throw bad();
  return v * scale;
}

std::string TuneBudget::describe() const {
  const std::string trials = std::to_string(trials_) + " trials";
  if (!seconds_) return trials;
  const double s = *seconds_;
  const std::string time = std::fmod(s, 60) == 0 ? fmt("%.0fm", s / 60) : fmt("%.0fs", s);
  return time + " and " + trials;
}

void TuneBudget::checkHolds(double trialSeconds, std::size_t least) const {
  if (trials_ < least) {
    throw std::invalid_argument("--trials " + std::to_string(trials_) + ": tune needs at least " +
                                std::to_string(least) +
                                " (the start's noise runs, a candidate and the confirmation)");
  }
  if (!seconds_) return;
  const auto fit = static_cast<std::size_t>(*seconds_ / trialSeconds);
  if (fit >= least) return;
  throw std::invalid_argument(
      fmt("--budget %s holds about %zu trials of %.1f s; tune needs at "
          "least %zu: a longer --budget or a shorter --runtime",
          describe().c_str(), fit, trialSeconds, least));
}

double TuneBudget::elapsed() const {
  return std::chrono::duration<double>(Clock::now() - begun_).count();
}

std::size_t TuneBudget::trialsThatFit(double estimate) const {
  const std::size_t byCount = trials_ > ended_ ? trials_ - ended_ : 0;
  if (!seconds_) return byCount;
  const double used = elapsed();
  const double pace = ended_ > 0 ? used / static_cast<double>(ended_) : estimate;
  const double left = *seconds_ - used;
  if (left <= 0 || pace <= 0) return 0;
  return std::min(byCount, static_cast<std::size_t>(left / pace));
}

}  // namespace nfsrdma::bench
