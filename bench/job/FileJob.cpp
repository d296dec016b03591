#include "bench/job/FileJob.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>

namespace nfsrdma::bench {
namespace {

// Upper bound of a run given as io bytes instead of a runtime.
constexpr auto kMaxIoBytesRun = std::chrono::hours(1);
// How long stragglers may take after the job stops issuing.
constexpr auto kGrace = std::chrono::seconds(60);
// After Ctrl-C the user waits: requests in flight get less (the client's own
// call timeouts end most waits well before).
constexpr auto kInterruptGrace = std::chrono::seconds(10);

// Layout writes: the largest power of two up to 1 MiB that divides the file.
std::uint32_t layoutBlock(std::uint64_t fileBytes) {
  std::uint32_t b = 1U << 20;
  while (b > kVerifyUnit && fileBytes % b != 0) b /= 2;
  return b;
}

}  // namespace

StartGate::StartGate(std::uint32_t jobs, std::chrono::milliseconds timeout, bool held)
    : waiting_(jobs + (held ? 1 : 0)), held_(held ? 1 : 0), timeout_(timeout) {}

bool StartGate::arriveAndWait() {
  std::unique_lock lock(mu_);
  if (failed_) return false;
  if (waiting_ > 0 && --waiting_ == 0) {
    cv_.notify_all();
    return true;
  }
  return waitFor(lock, 0);
}

bool StartGate::awaitJobs() {
  std::unique_lock lock(mu_);
  return waitFor(lock, 1);
}

void StartGate::open() {
  std::lock_guard lock(mu_);
  if (waiting_ > 0) --waiting_;
  cv_.notify_all();
}

bool StartGate::waitFor(std::unique_lock<std::mutex>& lock, std::uint32_t until) {
  const auto deadline = BenchClock::now() + timeout_;
  // In slices: a signal handler cannot notify a condition variable.
  while (!cv_.wait_for(lock, std::chrono::milliseconds(100),
                       [&] { return failed_ || waiting_ <= until; })) {
    if (interruptSignal() != 0) {
      failed_ = true;
      cv_.notify_all();
      return false;
    }
    // Once every job is here a held gate waits for its coordinator, whose
    // own steps (the other clients, a start time) bound that wait.
    if (waiting_ > held_ && BenchClock::now() >= deadline) {
      failed_ = true;
      cv_.notify_all();
      char secs[32];
      std::snprintf(secs, sizeof secs, "%g", std::chrono::duration<double>(timeout_).count());
      throw std::runtime_error(std::to_string(waiting_ - held_) +
                               " job(s) not ready (connected and opened) within " + secs +
                               " s of the first");
    }
  }
  return !failed_;
}

void StartGate::fail() {
  std::lock_guard lock(mu_);
  failed_ = true;
  cv_.notify_all();
}

JobDriver::JobDriver(JobSpec spec, JobProgress* progress)
    : spec_(std::move(spec)),
      progress_(progress),
      block_(spec_.layout ? layoutBlock(spec_.fileBytes) : spec_.profile.blockSize),
      blocksPerFile_(spec_.fileBytes / block_),
      totalBlocks_(blocksPerFile_ * spec_.files.size()),
      readPercent_(spec_.layout ? 0 : readPercentOf(spec_.profile, spec_.options)),
      patternWrites_(spec_.layout || spec_.options.verify),
      serializeOverlap_(!spec_.layout && spec_.options.verify && readPercent_ > 0 &&
                        readPercent_ < 100),
      rng_(spec_.options.seed * 0x9E3779B97F4A7C15ULL + spec_.job * 0xBF58476D1CE4E5B9ULL + 1),
      ioLimit_(spec_.layout ? 0 : ioBytesPerJob(spec_.options, block_)) {
  if (block_ == 0 || block_ % kVerifyUnit != 0 || blocksPerFile_ == 0 || spec_.files.empty()) {
    throw std::invalid_argument("job " + std::to_string(spec_.job) + ": no whole " +
                                std::to_string(block_) + "-byte block in " +
                                std::to_string(spec_.fileBytes) + "-byte files");
  }
  if (spec_.layout && spec_.fileBytes % block_ != 0) {
    throw std::invalid_argument("layout: file size must be a multiple of the layout block");
  }
  if (spec_.layout) {
    layoutFiles_ = spec_.layoutFiles;
    if (layoutFiles_.empty()) {
      for (std::uint32_t f = 0; f < spec_.files.size(); ++f) layoutFiles_.push_back(f);
    }
    for (std::uint32_t f : layoutFiles_) {
      if (f >= spec_.files.size())
        throw std::invalid_argument("layout: no file " + std::to_string(f));
    }
  }
  auto allocate = [&](auto& set) {
    for (std::uint32_t i = 0; i < spec_.iodepth; ++i) {
      // 4 KiB alignment: O_DIRECT and io_uring fixed buffers want it.
      void* p = std::aligned_alloc(4096, block_);
      if (p == nullptr) throw std::bad_alloc();
      std::memset(p, 0, block_);
      set.emplace_back(static_cast<std::uint8_t*>(p), std::free);
    }
  };
  if (spec_.generation != 0 && readPercent_ < 100)
    result_.writtenBlocks.assign(totalBlocks_, false);
  allocate(buffers_);
  if (readPercent_ < 100 && !patternWrites_) {
    // Filled once here, not per write (as fio): a write then costs a header
    // stamp per 4 KiB unit instead of generating its whole block.
    if (readPercent_ > 0) allocate(writeBuffers_);
    for (std::uint32_t i = 0; i < spec_.iodepth; ++i) {
      fillWriteBuffer({buffer(i, IoDirection::Write), block_}, spec_.options.seed,
                      (static_cast<std::uint64_t>(spec_.job) << 12) + i);
    }
  }
}

std::uint8_t* JobDriver::buffer(std::uint32_t slot, IoDirection op) const {
  return (op == IoDirection::Write && !writeBuffers_.empty() ? writeBuffers_ : buffers_)[slot]
      .get();
}

std::vector<std::span<std::uint8_t>> JobDriver::buffers() const {
  std::vector<std::span<std::uint8_t>> all;
  for (const auto* set : {&buffers_, &writeBuffers_}) {
    for (const auto& b : *set) all.emplace_back(b.get(), block_);
  }
  return all;
}

void JobDriver::start() {
  std::lock_guard lock(mu_);
  start_ = BenchClock::now();
  rampEnd_ = spec_.layout ? start_ : start_ + spec_.options.ramp;
  if (spec_.layout || spec_.options.ioBytes > 0) {
    deadline_ = rampEnd_ + kMaxIoBytesRun;
  } else {
    deadline_ = rampEnd_ + spec_.options.runtime;
  }
  hardStop_ = deadline_ + kGrace;
  lastCompletion_ = rampEnd_;
}

std::uint64_t JobDriver::nextRandom() {
  // xorshift64*: fast, seeded per job, reproducible with --seed.
  rng_ ^= rng_ >> 12;
  rng_ ^= rng_ << 25;
  rng_ ^= rng_ >> 27;
  return rng_ * 0x2545F4914F6CDD1DULL;
}

BenchClock::time_point JobDriver::hardStop() const {
  std::lock_guard lock(mu_);
  if (!interruptedAt_ && interruptSignal() != 0) interruptedAt_ = BenchClock::now();
  return interruptedAt_ ? std::min(hardStop_, *interruptedAt_ + kInterruptGrace) : hardStop_;
}

bool JobDriver::stopped() const {
  std::lock_guard lock(mu_);
  return stop_;
}

void JobDriver::requestStop() {
  std::lock_guard lock(mu_);
  stopRequested_ = true;
}

bool JobDriver::claimFreeBlock(std::uint64_t& block) {
  const auto busy = [&](std::uint64_t b) {
    return std::find(inFlight_.begin(), inFlight_.end(), b) != inFlight_.end();
  };
  // A few fresh picks keep the offsets random; then the next free one.
  for (int tries = 0; tries < 8 && busy(block) && spec_.profile.random; ++tries) {
    block = nextRandom() % totalBlocks_;
  }
  for (std::uint64_t step = 0; step < totalBlocks_; ++step) {
    const std::uint64_t b = (block + step) % totalBlocks_;
    if (busy(b)) continue;
    block = b;
    inFlight_.push_back(b);
    return true;
  }
  return false;
}

bool JobDriver::next(std::uint32_t slot, IoRequest& req) {
  if (!pick(slot, req, BenchClock::now())) return false;
  // After the buffer is ready: preparing it is not the target's latency.
  req.issued = BenchClock::now();
  return true;
}

bool JobDriver::next(std::uint32_t slot, IoRequest& req, BenchClock::time_point now) {
  if (!pick(slot, req, now)) return false;
  req.issued = now;
  return true;
}

bool JobDriver::pickLayoutBlock(IoRequest& req, std::uint64_t& block) {
  if (issuedLayoutBlocks_ >= layoutFiles_.size() * blocksPerFile_) {
    stop_ = true;
    return false;
  }
  const std::uint64_t k = issuedLayoutBlocks_++;
  block = layoutFiles_[k / blocksPerFile_] * blocksPerFile_ + k % blocksPerFile_;
  req.op = IoDirection::Write;
  return true;
}

bool JobDriver::pickWorkloadBlock(IoRequest& req, BenchClock::time_point now,
                                  std::uint64_t& block) {
  req.measured = now >= rampEnd_;
  if (req.measured && spec_.options.ioBytes > 0) {
    // Whole blocks only (as fio): 10m of 4m blocks is 8 MiB, not 12.
    if (issuedMeasuredBytes_ + block_ > ioLimit_) {
      stop_ = true;
      return false;
    }
    issuedMeasuredBytes_ += block_;
  }
  block = spec_.profile.random ? nextRandom() % totalBlocks_ : cursor_++ % totalBlocks_;
  if (serializeOverlap_ && !claimFreeBlock(block)) {
    // Every block is in flight (a file of fewer blocks than the depth):
    // this slot rests; the others still run.
    if (req.measured && spec_.options.ioBytes > 0) issuedMeasuredBytes_ -= block_;
    return false;
  }
  if (readPercent_ >= 100) {
    req.op = IoDirection::Read;
  } else if (readPercent_ == 0) {
    req.op = IoDirection::Write;
  } else {
    req.op = nextRandom() % 100 < readPercent_ ? IoDirection::Read : IoDirection::Write;
  }
  return true;
}

bool JobDriver::pick(std::uint32_t slot, IoRequest& req, BenchClock::time_point now) {
  std::uint64_t block = 0;
  {
    std::lock_guard lock(mu_);
    if (stop_) return false;
    if (interruptSignal() != 0) {
      interruptedAt_ = now;
      stop_ = true;
      return false;
    }
    if (now >= deadline_ || (stopRequested_ && now > rampEnd_)) {
      stop_ = true;
      return false;
    }
    const bool picked =
        spec_.layout ? pickLayoutBlock(req, block) : pickWorkloadBlock(req, now, block);
    if (!picked) return false;
  }
  req.file = static_cast<std::uint32_t>(block / blocksPerFile_);
  req.offset = spec_.fileOffset + (block % blocksPerFile_) * block_;
  req.buf = {buffer(slot, req.op), block_};
  if (req.op == IoDirection::Write) {
    if (patternWrites_) {
      // What a --verify read (of this run or a later one) checks.
      fillPattern(req.buf, spec_.options.seed, spec_.fileIdBase + req.file, req.offset,
                  spec_.layout ? 0 : spec_.generation);
    } else {
      stampWriteBuffer(req.buf, spec_.fileIdBase + req.file, req.offset);
    }
  }
  return true;
}

void JobDriver::complete(const IoRequest& req, std::size_t bytes, const std::string& error) {
  complete(req, bytes, error, BenchClock::now());
}

void JobDriver::complete(const IoRequest& req, std::size_t bytes, const std::string& error,
                         BenchClock::time_point now) {
  VerifyStats local;
  const bool check = error.empty() && req.op == IoDirection::Read && spec_.options.verify;
  const std::uint64_t block = req.file * blocksPerFile_ + (req.offset - spec_.fileOffset) / block_;
  if (check) {
    // A block this job's write run wrote must hold that run's data, not older data.
    const bool ours =
        spec_.writtenBlocks && block < spec_.writtenBlocks->size() && (*spec_.writtenBlocks)[block];
    checkPattern(req.buf.first(bytes), spec_.options.seed, spec_.fileIdBase + req.file, req.offset,
                 local, ours ? spec_.generation : 0);
  }
  std::lock_guard lock(mu_);
  if (serializeOverlap_) {
    const auto it = std::find(inFlight_.begin(), inFlight_.end(), block);
    if (it != inFlight_.end()) inFlight_.erase(it);
  }
  if (!error.empty()) {
    ++result_.errors;
    if (result_.firstError.empty()) result_.firstError = error;
    stop_ = true;  // as fio does by default: the first error ends the job
    return;
  }
  if (check) result_.verify.merge(local);
  if (req.op == IoDirection::Write && bytes == block_ && block < result_.writtenBlocks.size()) {
    result_.writtenBlocks[block] = true;
  }
  // As fio after ramp_time: every completion from the end of the ramp on
  // counts, also of requests issued before it (those in flight then would
  // otherwise be missing from a window that has their time). A run given as
  // io bytes counts what it issued after the ramp, so its total is exact.
  const bool measured = spec_.layout                ? false
                        : spec_.options.ioBytes > 0 ? req.measured
                                                    : now >= rampEnd_;
  if (!measured) return;
  const auto d = static_cast<std::size_t>(req.op);
  auto& r = result_.dir[d];
  ++r.ops;
  r.bytes += bytes;
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(now - req.issued).count();
  r.lat.record(static_cast<std::uint64_t>(ns > 0 ? ns : 0));
  if (now > lastCompletion_) lastCompletion_ = now;
  if (progress_ != nullptr) {
    progress_->bytes[d].fetch_add(bytes, std::memory_order_relaxed);
    progress_->ops[d].fetch_add(1, std::memory_order_relaxed);
  }
}

void JobDriver::abandonBuffers() {
  std::lock_guard lock(mu_);
  stop_ = true;  // next() hands out no buffer after this
  for (auto* set : {&buffers_, &writeBuffers_}) {
    for (auto& b : *set) (void)b.release();
  }
}

JobResult JobDriver::result() const {
  std::lock_guard lock(mu_);
  JobResult r = result_;
  r.seconds = std::chrono::duration<double>(lastCompletion_ - rampEnd_).count();
  r.measuredFrom = rampEnd_;
  r.measuredTo = lastCompletion_;
  return r;
}

}  // namespace nfsrdma::bench
