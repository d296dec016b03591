// LinkRdmaLoops: the bandwidth loop and the latency ping-pong.
#include "bench/link/LinkRdmaLoops.h"

#include <algorithm>
#include <array>
#include <stdexcept>
#include <string>

namespace nfsrdma::bench::linkrdma {

namespace {

// ---- bandwidth loop ----------------------------------------------------------

struct Stream {
  Endpoint* ep = nullptr;
  std::uint64_t posted = 0;
  std::uint64_t completed = 0;
  std::vector<ibv_send_wr> wrs;
  ibv_sge sge{};
};

// Posts n WRs of s.wrs in chains of at most postList per ibv_post_send;
// signaled(i) says whether the i-th of the n (from 0) is signaled.
template <typename Signaled>
void postChains(Stream& s, std::uint64_t n, std::uint32_t postList, const char* verb,
                Signaled signaled) {
  for (std::uint64_t done = 0; done < n;) {
    const std::uint64_t k = std::min<std::uint64_t>(n - done, postList);
    for (std::uint64_t j = 0; j < k; ++j) {
      ibv_send_wr& wr = s.wrs[j];
      wr.send_flags = signaled(done + j) ? unsigned{IBV_SEND_SIGNALED} : 0u;
      wr.next = j + 1 < k ? &s.wrs[j + 1] : nullptr;
    }
    ibv_send_wr* bad = nullptr;
    if (auto ec = s.ep->qp.postSend(s.wrs[0], &bad)) verbs::throwVerbError(verb, ec.value());
    done += k;
  }
}

// With -e (and by default on a software device) the loop sleeps on its send
// CQs' completion channels when it has nothing to do, as perftest's -e.
// Where the device is the CPU (soft-RoCE), a spinning poller takes that CPU
// from the device's own packet work.
static_assert(kMaxLinkQps <= verbs::CompletionQueue::kMaxWaitCqs,
              "one wait covers every QP's send CQ");
class SendEventWait {
 public:
  SendEventWait(std::vector<Stream>& streams, bool enabled) {
    if (!enabled) return;
    for (Stream& s : streams) cqs_.push_back(&s.ep->sendCq);
  }
  // Called after a pass that moved nothing. The first call arms the CQs and
  // returns at once, so the caller polls once more before any sleep (a
  // completion between its last poll and the arming raises no event).
  // Later calls sleep up to 100 ms, so the loop's clock checks still run.
  // Returns true when it slept.
  bool idle() {
    if (cqs_.empty()) return false;
    if (!armed_) {
      for (verbs::CompletionQueue* cq : cqs_) {
        if (auto ec = cq->requestNotify()) verbs::throwVerbError("ibv_req_notify_cq", ec.value());
      }
      armed_ = true;
      return false;
    }
    const std::error_code ec = verbs::CompletionQueue::waitAnyEvent(cqs_, 100ms);
    if (ec && ec != std::errc::timed_out) {
      verbs::throwVerbError("waiting for send completion events (poll, ibv_get_cq_event)",
                            ec.value());
    }
    ++waits_;
    return true;
  }
  std::uint64_t waits() const { return waits_; }

 private:
  std::vector<verbs::CompletionQueue*> cqs_;
  bool armed_ = false;
  std::uint64_t waits_ = 0;
};

// --perform_warm_up, as perftest's (off by default there and here): before
// the timed loop each QP moves one TX depth of messages and waits for them,
// so the clock sees neither a fresh QP's first packets nor the first touch of
// its buffers. Large messages warm up with fewer (at least one, at most
// 32 MiB a QP), so an -a sweep does not double its time at 8 MiB.
void warmUp(std::vector<Stream>& streams, const LoopParams& p) {
  constexpr std::uint64_t kWarmUpBytes = 32ull << 20;
  std::uint64_t count = std::min<std::uint64_t>(
      p.txDepth, std::max<std::uint64_t>(1, kWarmUpBytes / std::max<std::uint64_t>(p.size, 1)));
  if (p.duration.count() == 0) count = std::min(count, p.iterations);
  if (count == 0) return;
  // One signaled WR at the end: the batch fits the send queue, and its
  // completion retires the unsignaled ones before it.
  for (Stream& s : streams) {
    postChains(s, count, p.postList, "ibv_post_send(warm-up)",
               [&](std::uint64_t i) { return i + 1 == count; });
  }
  // Bounded like the loop: generous for emulated links of a few MiB/s.
  const auto deadline =
      Clock::now() + 120s + std::chrono::seconds(count * p.size * streams.size() / (1u << 20));
  std::array<ibv_wc, 16> wcs{};
  std::size_t done = 0;
  SendEventWait events(streams, p.useEvents);
  for (std::uint32_t spins = 0; done < streams.size(); ++spins) {
    bool progressed = false;
    for (Stream& s : streams) {
      const verbs::PollResult r = s.ep->sendCq.poll(wcs);
      if (r.error) verbs::throwVerbError("ibv_poll_cq", r.error.value());
      progressed = progressed || r.count > 0;
      for (std::size_t i = 0; i < r.count; ++i) {
        if (wcs[i].status != IBV_WC_SUCCESS) {
          completionFailed(
              p.opcode == IBV_WR_RDMA_WRITE ? "RDMA WRITE (warm-up)" : "RDMA READ (warm-up)",
              wcs[i]);
        }
        ++done;
      }
    }
    const bool woke = !progressed && done < streams.size() && events.idle();
    if (((spins & 65535u) == 0 || woke) && Clock::now() > deadline) {
      throw std::runtime_error(
          "the warm-up before the timed loop did not complete in time (device stalled?)");
    }
  }
}

// Builds each QP's fixed table of WRs, one TX depth of them.
void buildWorkRequests(std::vector<Stream>& streams, const Endpoints& eps, const LoopParams& p) {
  const auto len = static_cast<std::uint32_t>(p.size);
  for (std::size_t q = 0; q < eps.size(); ++q) {
    Stream& s = streams[q];
    Endpoint& ep = *eps[q];
    s.ep = &ep;
    // WRITE: our source -> peer's target; READ: peer's source -> our target.
    const bool write = p.opcode == IBV_WR_RDMA_WRITE;
    s.sge = ep.data.sge(write ? 0 : ep.shape.maxSize, len);
    s.wrs.resize(p.txDepth);
    for (ibv_send_wr& wr : s.wrs) {
      wr = ibv_send_wr{};
      wr.wr_id = verbs::toWrId(&s);
      wr.sg_list = &s.sge;
      wr.num_sge = 1;
      wr.opcode = p.opcode;
      wr.wr.rdma.remote_addr = write ? ep.remoteTarget() : ep.remoteSource();
      wr.wr.rdma.rkey = ep.remoteRkey;
    }
  }
}

// The bandwidth loop's clock: where the run starts and must stop, the -D
// run's measured window and the progress samples for the peak. Its methods
// are small and inline: the loop calls them only when completions arrive or
// at its spin cadence.
//
// The clock is read sparsely: perftest stamps with the TSC, but a clock
// read here may be a system call (and under emulation a trapped timer
// read), which the spinning loop would pay at every poll. About 256
// samples per -n run (every completion batch only for short runs), at
// most one per 10 ms in a -D run, and one at the end: enough for the peak,
// whose window is a tenth of the run. Samples are taken when completions
// arrive, never between: the count moves in steps of the CQ moderation,
// and a sample taken between two steps would pair an old count with a new
// time (a 10 ms sample pair spanning one step read 1400 MiB/s on a
// 10 MiB/s link).
class LoopClock {
 public:
  // Starts the clock; totalTarget is a -n run's completions over all QPs.
  LoopClock(const LoopParams& p, std::uint64_t totalTarget)
      : timed_(p.duration.count() > 0),
        mod_(p.cqModeration),
        sampleStep_(timed_ ? 0 : std::max<std::uint64_t>(mod_, totalTarget / kSamplesPerRun)),
        nextSampleAt_(sampleStep_),
        margin_(timed_ ? p.margin : std::chrono::nanoseconds{0}) {
    samples_.reserve(timed_ ? 4096 : kSamplesPerRun * 2 + mod_ + 4);
    start_ = Clock::now();
    stopAt_ = start_ + p.duration;
    // A hard stop so a stuck device cannot hang the tool: generous, scaled by work.
    hardStop_ =
        start_ + (timed_ ? p.duration + 120s : 600s + std::chrono::seconds(p.iterations / 1000));
    last_ = start_;
    windowStart_ = start_ + margin_;
    windowEnd_ = stopAt_ - margin_;
    windowOpen_ = margin_.count() == 0;
  }

  Clock::time_point stopAt() const { return stopAt_; }
  // A -D window that has still to close: the stop must leave it a completion.
  bool windowStillOpen() const { return margin_.count() > 0 && !windowClosed_; }

  // After a poll that returned completions; totalCompleted counts all QPs'.
  void completionsArrived(std::uint64_t totalCompleted) {
    if (timed_) {
      if (sampleDue_) sampleTimed(totalCompleted);
    } else if (totalCompleted >= nextSampleAt_) {
      last_ = Clock::now();
      samples_.push_back({secondsAt(last_), totalCompleted});
      nextSampleAt_ = totalCompleted + sampleStep_;
    }
  }

  // At the loop's spin cadence, with the clock just read: whether the next
  // completions are to be sampled.
  void clockRead(Clock::time_point now) {
    if (timed_ && !windowClosed_) {
      sampleDue_ = !windowOpen_ ? now >= windowStart_
                                : (margin_.count() > 0 && now >= windowEnd_) || now - last_ >= 10ms;
    }
  }

  void checkHardStop(Clock::time_point now) const {
    if (now > hardStop_)
      throw std::runtime_error("bandwidth loop exceeded its time bound (device stalled?)");
  }

  // The run's figures: its measured window (-D with a margin) or all of it.
  LoopResult result(std::uint64_t totalCompleted) {
    return margin_.count() > 0 ? windowResult() : wholeRunResult(totalCompleted);
  }

 private:
  static constexpr std::uint64_t kSamplesPerRun = 256;

  double secondsAt(Clock::time_point t) const {
    return std::chrono::duration<double>(t - start_).count();
  }

  // One clock read per due sample, taken at a completion.
  void sampleTimed(std::uint64_t totalCompleted) {
    sampleDue_ = false;
    const auto now = Clock::now();
    const double t = secondsAt(now);
    if (!windowOpen_) {
      if (now >= windowStart_) {
        windowOpen_ = true;
        last_ = now;
        samples_.push_back({t, totalCompleted});
      }
    } else if (margin_.count() > 0 && now >= windowEnd_) {
      windowClosed_ = true;
      samples_.push_back({t, totalCompleted});
    } else if (now - last_ >= 10ms) {
      last_ = now;
      samples_.push_back({t, totalCompleted});
    }
  }

  LoopResult windowResult() const {
    // Its edges sit on completions, so they move by up to the time between
    // two; when that is longer than the window, it measured the drain.
    const double windowEndSeconds = secondsAt(windowEnd_);
    const double seconds = samples_.size() >= 2 && windowClosed_
                               ? samples_.back().seconds - samples_.front().seconds
                               : 0;
    if (seconds <= 0 || samples_.front().seconds >= windowEndSeconds) {
      throw std::runtime_error(
          "the -D run's measured window (between the margins) had fewer than two completions "
          "inside it to time: use a longer -D, a smaller --margin or a smaller --cq-mod");
    }
    return withPeak(samples_.back().messages - samples_.front().messages, seconds);
  }

  LoopResult wholeRunResult(std::uint64_t totalCompleted) {
    // The loop leaves right after polling its last completion.
    last_ = Clock::now();
    if (samples_.empty() || samples_.back().messages != totalCompleted) {
      samples_.push_back({secondsAt(last_), totalCompleted});
    }
    return withPeak(totalCompleted, secondsAt(last_));
  }

  LoopResult withPeak(std::uint64_t messages, double seconds) const {
    LoopResult out;
    out.messages = messages;
    out.seconds = seconds;
    out.peakMessagesPerSecond =
        peakMessagesPerSecond(samples_, std::max<std::uint64_t>(mod_, messages / 10));
    return out;
  }

  bool timed_;
  std::uint64_t mod_;
  std::uint64_t sampleStep_;
  std::uint64_t nextSampleAt_;
  std::chrono::nanoseconds margin_;
  std::vector<ProgressSample> samples_;
  Clock::time_point start_;
  Clock::time_point stopAt_;
  Clock::time_point hardStop_;
  Clock::time_point last_;
  // -D with a margin measures only [start + margin, stop - margin], as
  // perftest: the ramp-up and the drain stay out of the figures. The window
  // opens at the first completion after its start and closes at the first
  // after its end, so its count and its time belong together.
  Clock::time_point windowStart_;
  Clock::time_point windowEnd_;
  bool windowOpen_ = false;
  bool windowClosed_ = false;
  // Set at the spin cadence (about every 10 ms, or when an edge of the
  // window has passed); the sample itself waits for the next completions.
  bool sampleDue_ = false;
};

// Posts to s up to the TX depth, short of target; returns how many it posted.
std::uint64_t postUpTo(Stream& s, std::uint64_t target, const LoopParams& p) {
  const std::uint64_t mod = p.cqModeration;
  const std::uint64_t inFlight = s.posted - s.completed;
  const std::uint64_t n = std::min<std::uint64_t>(p.txDepth - inFlight, target - s.posted);
  // Post in chains of at most postList WRs. Like perftest's default of
  // one WR per call: soft-RoCE transmits a user QP's WRs inside the
  // posting syscall, and a long chain overflows that inline budget into
  // a kernel worker that must then compete with this spinning thread.
  postChains(s, n, p.postList, "ibv_post_send", [&](std::uint64_t i) {
    const std::uint64_t index = s.posted + i + 1;
    return index % mod == 0 || index == target;
  });
  s.posted += n;
  return n;
}

// Polls s's send CQ once; each (signaled) completion retires up to --cq-mod
// WRs of its stream, counted into totalCompleted. Returns the completions.
std::size_t reapCompletions(Stream& s, std::array<ibv_wc, 16>& wcs, const LoopParams& p,
                            std::uint64_t& totalCompleted) {
  const std::uint64_t mod = p.cqModeration;
  const verbs::PollResult r = s.ep->sendCq.poll(wcs);
  if (r.error) verbs::throwVerbError("ibv_poll_cq", r.error.value());
  for (std::size_t i = 0; i < r.count; ++i) {
    if (wcs[i].status != IBV_WC_SUCCESS) {
      completionFailed(p.opcode == IBV_WR_RDMA_WRITE ? "RDMA WRITE" : "RDMA READ", wcs[i]);
    }
    Stream* owner = verbs::fromWrId<Stream>(wcs[i].wr_id);
    const std::uint64_t before = owner->completed;
    owner->completed = std::min(owner->completed + mod, owner->posted);
    totalCompleted += owner->completed - before;
  }
  return r.count;
}

// Stop at the next signal boundary so every posted WR is covered by a
// signaled completion; a window still open gets one more boundary, so a
// completion comes to close it.
std::uint64_t stopTarget(const std::vector<Stream>& streams, std::uint64_t mod,
                         bool windowStillOpen) {
  std::uint64_t highest = 0;
  for (const Stream& s : streams) highest = std::max(highest, s.posted);
  std::uint64_t target = (highest + mod - 1) / mod * mod;
  if (windowStillOpen) target = (highest / mod + 1) * mod;
  if (target == 0) target = mod;
  return target;
}

}  // namespace

LoopResult runBandwidthLoop(const Endpoints& eps, const LoopParams& p) {
  std::vector<Stream> streams(eps.size());
  buildWorkRequests(streams, eps, p);
  if (p.warmUp) warmUp(streams, p);
  const bool timed = p.duration.count() > 0;
  std::uint64_t target = timed ? UINT64_MAX : p.iterations;
  std::array<ibv_wc, 16> wcs{};
  std::uint64_t totalCompleted = 0;
  const std::uint64_t totalTarget = timed ? 0 : p.iterations * eps.size();
  LoopClock clock(p, totalTarget);
  std::uint32_t spins = 0;
  bool stopping = false;
  SendEventWait events(streams, p.useEvents);
  for (;;) {
    bool done = true;
    bool progressed = false;
    for (Stream& s : streams) {
      const std::uint64_t n = postUpTo(s, target, p);
      const std::size_t got = reapCompletions(s, wcs, p, totalCompleted);
      progressed = progressed || n > 0 || got > 0;
      if (got > 0) clock.completionsArrived(totalCompleted);
      if (s.completed < target || s.posted < target) done = false;
      if (timed && stopping && s.completed < s.posted) done = false;
    }
    if (!timed && totalCompleted >= totalTarget) break;
    if (timed && stopping && done) break;
    // Sleeping on events: nothing to post and nothing completed, so wait
    // until a send CQ has work (at most 100 ms). Wakes are few next to
    // spins, so the clock is read at each.
    const bool woke = !progressed && events.idle();
    // A -n run looks at the clock here only for its hard stop.
    if ((++spins & (timed ? 4095u : 65535u)) == 0 || woke) {
      const auto now = Clock::now();
      clock.clockRead(now);
      if (timed && !stopping && now >= clock.stopAt()) {
        stopping = true;
        target = stopTarget(streams, p.cqModeration, clock.windowStillOpen());
      }
      clock.checkHardStop(now);
    }
  }
  LoopResult out = clock.result(totalCompleted);
  out.eventWaits = events.waits();
  return out;
}

// ---- latency loop (ping-pong) -----------------------------------------------

namespace {

ibv_wc waitDataRecv(Endpoint& ep, Clock::time_point deadline) {
  std::array<ibv_wc, 1> wc{};
  for (std::uint32_t spins = 0;; ++spins) {
    const verbs::PollResult r = ep.recvCq.poll(wc);
    if (r.error) verbs::throwVerbError("ibv_poll_cq", r.error.value());
    if (r.count == 1) {
      if (wc[0].status != IBV_WC_SUCCESS) completionFailed("RECV", wc[0]);
      return wc[0];
    }
    if ((spins & 1023u) == 0 && Clock::now() > deadline) {
      throw std::runtime_error("latency test: no message from the peer in time");
    }
  }
}

void postPing(Endpoint& ep, std::uint32_t size) {
  ibv_sge sge = ep.data.sge(0, size);
  ibv_send_wr wr{};
  wr.wr_id = verbs::toWrId(&ep);
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_SEND;
  unsigned flags = IBV_SEND_SIGNALED;
  if (size <= kMaxInline) flags |= IBV_SEND_INLINE;
  wr.send_flags = flags;
  if (auto ec = ep.qp.postSend(wr)) verbs::throwVerbError("ibv_post_send", ec.value());
}

void reapSends(Endpoint& ep) {
  std::array<ibv_wc, 16> wcs{};
  const verbs::PollResult r = ep.sendCq.poll(wcs);
  if (r.error) verbs::throwVerbError("ibv_poll_cq", r.error.value());
  for (std::size_t i = 0; i < r.count; ++i) {
    if (wcs[i].status != IBV_WC_SUCCESS) completionFailed("SEND", wcs[i]);
  }
}

std::chrono::seconds latencyBound(std::uint64_t iterations) {
  return 120s + std::chrono::seconds(iterations / 100);
}

}  // namespace

std::vector<double> runPingLoop(Endpoint& ep, std::uint32_t size, std::uint64_t iterations) {
  std::vector<double> samples;
  samples.reserve(iterations);
  const auto deadline = Clock::now() + latencyBound(iterations);
  for (std::uint64_t i = 0; i < iterations; ++i) {
    const auto t0 = Clock::now();
    postPing(ep, size);
    const ibv_wc wc = waitDataRecv(ep, deadline);
    const auto t1 = Clock::now();
    samples.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / 2);
    ep.postRecvSlot(verbs::fromWrId<RecvSlot>(wc.wr_id)->index);
    reapSends(ep);
  }
  return samples;
}

void runPongLoop(Endpoint& ep, std::uint32_t size, std::uint64_t iterations) {
  const auto deadline = Clock::now() + latencyBound(iterations);
  for (std::uint64_t i = 0; i < iterations; ++i) {
    const ibv_wc wc = waitDataRecv(ep, deadline);
    ep.postRecvSlot(verbs::fromWrId<RecvSlot>(wc.wr_id)->index);
    postPing(ep, size);
    reapSends(ep);
  }
}

}  // namespace nfsrdma::bench::linkrdma
