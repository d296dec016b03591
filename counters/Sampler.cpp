#include "counters/Sampler.h"

#include <time.h>

#include <algorithm>
#include <exception>

namespace nfsrdma::counters {

Sampler::Sampler(std::vector<CounterSource> sources, std::chrono::milliseconds interval)
    : sources_(std::move(sources)), interval_(interval) {
  for (const auto& s : sources_) series_.push_back(Series{s.name, s.gauges, {}});
}

Sampler::~Sampler() {
  if (thread_.joinable()) {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
}

void Sampler::start() {
  t0_ = std::chrono::steady_clock::now();
  readAll(0);
  thread_ = std::thread([this] { loop(); });
}

// The readers catch what they expect; anything else ends this reading of
// the source, not the cell: a counter is evidence, never a reason to fail.
double Sampler::elapsed() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
}

namespace {

double threadCpuSeconds() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

}  // namespace

void Sampler::readAll(double t) {
  const double cpu0 = threadCpuSeconds();
  for (std::size_t i = 0; i < sources_.size(); ++i) {
    std::optional<NamedValues> v;
    try {
      v = sources_[i].read();
    } catch (const std::exception&) {
      v.reset();
    }
    if (v) series_[i].readings.push_back(Reading{t, std::move(*v)});
  }
  thinOut();
  cpuSeconds_ += threadCpuSeconds() - cpu0;
}

void Sampler::thinOut() {
  bool full = false;
  for (const auto& s : series_) full = full || s.readings.size() >= kMaxReadings;
  if (!full) return;
  for (auto& s : series_) {
    std::vector<Reading> kept;
    for (std::size_t i = 0; i < s.readings.size(); i += 2) kept.push_back(std::move(s.readings[i]));
    s.readings = std::move(kept);
  }
  interval_ *= 2;
}

void Sampler::loop() {
  std::unique_lock lock(mu_);
  auto next = std::chrono::steady_clock::now() + interval_;
  while (!cv_.wait_until(lock, next, [this] { return stopping_; })) {
    lock.unlock();
    readAll(elapsed());
    lock.lock();
    next += interval_;
    // A reading that took longer than the interval does not queue more.
    next = std::max(next, std::chrono::steady_clock::now());
  }
}

CellSeries Sampler::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  readAll(elapsed());
  CellSeries out;
  out.intervalSeconds = std::chrono::duration<double>(interval_).count();
  out.cpuSeconds = cpuSeconds_;
  for (auto& s : series_) {
    if (!s.readings.empty()) out.series.push_back(std::move(s));
  }
  series_.clear();
  return out;
}

}  // namespace nfsrdma::counters
