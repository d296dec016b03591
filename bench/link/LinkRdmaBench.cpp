// LinkRdmaBench: rdma_cm sessions, control messages and the measuring loops.
#include "bench/link/LinkRdmaBench.h"

#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <random>
#include <stdexcept>

#include "bench/link/LinkPlacement.h"
#include "bench/link/LinkProtocol.h"
#include "verbs/CmConnection.h"
#include "verbs/CompletionQueue.h"
#include "verbs/DeviceDiscovery.h"
#include "verbs/MemoryRegion.h"
#include "verbs/ProtectionDomain.h"
#include "verbs/QueuePair.h"
#include "verbs/VerbsError.h"

namespace nfsrdma::bench {

namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr std::uint32_t kMaxInline = 64;

// ---- one QP and its resources ----------------------------------------------

struct RecvSlot {
  std::uint32_t index;
};
struct ControlSendTag {};
ControlSendTag gControlSendTag;

// Shape of an endpoint's buffers, the same on both sides.
struct EndpointShape {
  std::size_t maxSize;      // largest message: data = source half + target half
  std::uint32_t slotBytes;  // receive slot size
  std::uint32_t slots;      // receive slots posted
  std::uint32_t sendDepth;  // send queue entries for data
  std::uint32_t maxInline;  // QP's inline capacity: only the latency test sends inline
};

// Members in creation order, so destruction runs QP -> buffers -> CQs ->
// channel -> PD -> id, the reverse of setup.
class Endpoint {
 public:
  Endpoint(verbs::CmId cmId, const EndpointShape& s)
      : id(std::move(cmId)),
        pd(verbs::ProtectionDomain::allocate(id.verbs())),
        channel(verbs::CompletionChannel::create(id.verbs())),
        sendChannel(verbs::CompletionChannel::create(id.verbs())),
        sendCq(verbs::CompletionQueue::create(id.verbs(), static_cast<int>(s.sendDepth + 8),
                                              &sendChannel)),
        recvCq(verbs::CompletionQueue::create(id.verbs(), static_cast<int>(s.slots + 8), &channel)),
        data(verbs::RegisteredBuffer::allocate(pd.get(), 2 * s.maxSize)),
        ring(verbs::RegisteredBuffer::allocate(pd.get(), std::size_t{s.slotBytes} * (s.slots + 1),
                                               IBV_ACCESS_LOCAL_WRITE)),
        shape(s),
        slotTags(s.slots),
        qp(makeQp(s)) {
    for (std::uint32_t i = 0; i < s.slots; ++i) {
      slotTags[i].index = i;
      postRecvSlot(i);
    }
    if (auto ec = recvCq.requestNotify()) verbs::throwVerbError("ibv_req_notify_cq", ec.value());
  }
  Endpoint(const Endpoint&) = delete;
  Endpoint& operator=(const Endpoint&) = delete;

  ~Endpoint() {
    (void)id.disconnect();
    (void)qp.drain(recvCq, sendCq, 2s);
  }

  std::byte* source() const { return data.data(); }
  std::byte* target() const { return data.data() + shape.maxSize; }
  std::uint64_t remoteSource() const { return remoteAddress; }
  std::uint64_t remoteTarget() const { return remoteAddress + shape.maxSize; }
  std::byte* slot(std::uint32_t i) const { return ring.data() + std::size_t{i} * shape.slotBytes; }

  void postRecvSlot(std::uint32_t i) {
    ibv_sge sge = ring.sge(std::size_t{i} * shape.slotBytes, shape.slotBytes);
    ibv_recv_wr wr{};
    wr.wr_id = verbs::toWrId(&slotTags[i]);
    wr.sg_list = &sge;
    wr.num_sge = 1;
    if (auto ec = qp.postRecv(wr)) verbs::throwVerbError("ibv_post_recv", ec.value());
  }

  verbs::CmId id;
  verbs::ProtectionDomain pd;
  verbs::CompletionChannel channel;      // the receive CQ's: control messages
  verbs::CompletionChannel sendChannel;  // the send CQ's: the loop may sleep on it
  verbs::CompletionQueue sendCq;
  verbs::CompletionQueue recvCq;
  verbs::RegisteredBuffer data;
  verbs::RegisteredBuffer ring;
  EndpointShape shape;
  std::vector<RecvSlot> slotTags;
  verbs::QueuePair qp;
  std::uint64_t remoteAddress = 0;
  std::uint32_t remoteRkey = 0;

 private:
  verbs::QueuePair makeQp(const EndpointShape& s) {
    ibv_qp_init_attr attr{};
    attr.send_cq = sendCq.get();
    attr.recv_cq = recvCq.get();
    attr.qp_type = IBV_QPT_RC;
    attr.sq_sig_all = 0;
    attr.cap.max_send_wr = s.sendDepth + 2;  // + control send + drain marker
    attr.cap.max_recv_wr = s.slots + 1;      // + drain marker
    attr.cap.max_send_sge = 1;
    attr.cap.max_recv_sge = 1;
    // As perftest's bandwidth tests (inline 0): a soft-RoCE WQE grows with it.
    attr.cap.max_inline_data = s.maxInline;
    return verbs::QueuePair::createOnCmId(id.get(), pd.get(), attr);
  }
};

using Endpoints = std::vector<std::unique_ptr<Endpoint>>;

[[noreturn]] void completionFailed(const char* what, const ibv_wc& wc) {
  throw std::runtime_error(std::string(what) + " completion failed: " +
                           verbs::makeCompletionError(wc.status).message() + " (qp " +
                           std::to_string(wc.qp_num) + ")");
}

// Sends a control message on ep and waits for its completion.
void sendControl(Endpoint& ep, const ControlMessage& m) {
  std::byte* buf = ep.slot(ep.shape.slots);  // the extra slot is the send slot
  m.encode(std::span<std::byte, kControlBytes>(buf, kControlBytes));
  ibv_sge sge = ep.ring.sge(std::size_t{ep.shape.slots} * ep.shape.slotBytes, kControlBytes);
  ibv_send_wr wr{};
  wr.wr_id = verbs::toWrId(&gControlSendTag);
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_SEND_WITH_IMM;
  wr.imm_data = htonl(kControlImm);
  wr.send_flags = IBV_SEND_SIGNALED;
  if (auto ec = ep.qp.postSend(wr)) verbs::throwVerbError("ibv_post_send(control)", ec.value());
  const auto deadline = Clock::now() + 30s;
  std::array<ibv_wc, 8> wcs{};
  while (Clock::now() < deadline) {
    const verbs::PollResult r = ep.sendCq.poll(wcs);
    if (r.error) verbs::throwVerbError("ibv_poll_cq", r.error.value());
    for (std::size_t i = 0; i < r.count; ++i) {
      if (wcs[i].status != IBV_WC_SUCCESS) completionFailed("control SEND", wcs[i]);
      if (wcs[i].wr_id == verbs::toWrId(&gControlSendTag)) return;
    }
  }
  throw std::runtime_error("control SEND did not complete within 30 s");
}

bool isControl(const ibv_wc& wc) {
  return (wc.wc_flags & IBV_WC_WITH_IMM) != 0 && ntohl(wc.imm_data) == kControlImm;
}

// Waits (sleeping on the completion channel, so an idle side leaves the CPU
// to the other side and to soft-RoCE) for the next control message.
ControlMessage waitControl(Endpoint& ep, std::chrono::milliseconds timeout, const char* waitingFor) {
  const auto deadline = Clock::now() + timeout;
  std::array<ibv_wc, 8> wcs{};
  for (;;) {
    const verbs::PollResult r = ep.recvCq.poll(wcs);
    if (r.error) verbs::throwVerbError("ibv_poll_cq", r.error.value());
    for (std::size_t i = 0; i < r.count; ++i) {
      const ibv_wc& wc = wcs[i];
      if (wc.status != IBV_WC_SUCCESS) {
        if (wc.status == IBV_WC_WR_FLUSH_ERR) throw std::runtime_error("the link peer went away");
        completionFailed("RECV", wc);
      }
      const std::uint32_t slot = verbs::fromWrId<RecvSlot>(wc.wr_id)->index;
      if (!isControl(wc)) {  // stray data message: recycle the slot
        ep.postRecvSlot(slot);
        continue;
      }
      // Copied out before the slot goes back, so a malformed message still frees it.
      std::array<std::byte, kControlBytes> copy{};
      const std::size_t got = std::min<std::size_t>(wc.byte_len, copy.size());
      std::memcpy(copy.data(), ep.slot(slot), got);
      ep.postRecvSlot(slot);
      try {
        return ControlMessage::decode(std::span<const std::byte>(copy.data(), got));
      } catch (const LinkProtocolError& e) {
        throw LinkProtocolError(std::string("link protocol: bad control message while waiting for ") +
                                waitingFor + ": " + e.what());
      }
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      throw std::runtime_error(std::string("the link peer sent no ") + waitingFor + " within " +
                               std::to_string(timeout.count() / 1000) + " s");
    }
    const std::error_code ec = ep.recvCq.waitEvent(std::min<std::chrono::milliseconds>(left, 500ms));
    if (ec && ec != std::errc::timed_out && ec != std::errc::resource_unavailable_try_again) {
      verbs::throwVerbError("ibv_get_cq_event", ec.value());
    }
  }
}

ControlMessage expectControl(Endpoint& ep, ControlKind kind, std::chrono::milliseconds timeout,
                             const char* name) {
  const ControlMessage m = waitControl(ep, timeout, name);
  if (m.kind != kind) {
    throw LinkProtocolError(std::string("link protocol: expected ") + name + ", got " + controlKindName(m.kind));
  }
  return m;
}

// ---- bandwidth loop ----------------------------------------------------------

struct Stream {
  Endpoint* ep = nullptr;
  std::uint64_t posted = 0;
  std::uint64_t completed = 0;
  std::vector<ibv_send_wr> wrs;
  ibv_sge sge{};
};

struct LoopParams {
  ibv_wr_opcode opcode;
  std::uint64_t size;
  std::uint64_t iterations;  // per QP; ignored when duration > 0
  std::chrono::nanoseconds duration;  // the whole -D run, margins included
  std::uint32_t txDepth;
  std::uint32_t cqModeration;
  std::uint32_t postList;  // WRs per ibv_post_send call
  bool warmUp = false;     // untimed TX depth first (--perform_warm_up)
  std::chrono::nanoseconds margin{0};  // -D: left out of the measurement at each end
  bool useEvents = false;              // sleep on the send CQs' events instead of spinning (CqWait)
};

struct LoopResult {
  std::uint64_t messages = 0;
  double seconds = 0;
  double peakMessagesPerSecond = 0;
  std::uint64_t eventWaits = 0;  // sleeps on the send CQs' events
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

// Client: ping, wait for the pong; one-way latency = round trip / 2.
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

// ---- shared setup ------------------------------------------------------------

EndpointShape shapeFor(LinkTest test, std::uint64_t maxSize, std::uint32_t txDepth) {
  EndpointShape s{};
  s.maxSize = std::max<std::uint64_t>(maxSize, 64);
  if (test == LinkTest::SendLatency) {
    s.slotBytes = static_cast<std::uint32_t>(std::max<std::uint64_t>(maxSize, kControlBytes));
    s.slots = 16;
  } else {
    s.slotBytes = kControlBytes;
    s.slots = 8;
  }
  s.sendDepth = test == LinkTest::SendLatency ? 64 : txDepth;
  s.maxInline = test == LinkTest::SendLatency ? kMaxInline : 0;
  return s;
}

std::string mtuText(const verbs::CmId& id) {
  const int bytes = id.activeMtuBytes();
  return bytes > 0 ? std::to_string(bytes) + "[B]" : "?";
}

std::uint32_t newSeed() {
  std::random_device rd;
  return rd();
}

}  // namespace

// ---- client ------------------------------------------------------------------

bool sleepOnEvents(const LinkOptions& o, bool softwareDevice) {
  if (o.test == LinkTest::SendLatency) return false;
  return o.cqWait == CqWait::Events || (o.cqWait == CqWait::Auto && softwareDevice);
}

std::string cqWaitBanner(const LinkOptions& o, bool softwareDevice) {
  if (o.test == LinkTest::SendLatency) return "OFF (latency)";
  switch (o.cqWait) {
    case CqWait::Events:
      return "ON (-e)";
    case CqWait::Poll:
      return "OFF (--poll)";
    case CqWait::Auto:
      break;
  }
  return softwareDevice ? "ON (software device)" : "OFF";
}

namespace {

// What every QP of a client session shares.
struct ClientPlan {
  std::uint64_t maxSize;  // the largest step's size, as the server is told it
  EndpointShape shape;
  std::uint32_t seed;
  bool lastSession;
};

// What the first QP's route says of the device the session runs on.
struct ClientDevice {
  std::string name;
  std::string placement;
  bool software = false;
  std::string mtu;
};

verbs::CmClientOptions cmClientOptions(const LinkOptions& o) {
  verbs::CmClientOptions cm;
  cm.host = o.host;
  cm.port = o.port;
  cm.bindAddress = o.bindAddress;
  cm.timeout = o.timeout;
  cm.peerName = "link server";
  cm.rejectedHint = "is 'nfsrdma-bench link --server' running there?";
  return cm;
}

// As perftest, before anything is created: otherwise librdmacm
// reports the failed QP as "rdma_create_qp: Cannot allocate memory".
void checkQueueLimits(const verbs::CmId& id, const EndpointShape& shape,
                      const std::string& device) {
  const verbs::CmId::QueueLimits limits = id.queueLimits();
  // The send queue and CQ hold a few entries more than the depth (a
  // control message, the drain marker; see Endpoint).
  const int depth = static_cast<int>(shape.sendDepth);
  if (limits.maxQpWr > 0 && depth + 2 > limits.maxQpWr) {
    throw std::invalid_argument("--tx-depth " + std::to_string(depth) + " needs " +
                                std::to_string(depth + 2) + " send queue entries; " + device +
                                " allows " + std::to_string(limits.maxQpWr) + " (max_qp_wr)");
  }
  if (limits.maxCqe > 0 && depth + 8 > limits.maxCqe) {
    throw std::invalid_argument("--tx-depth " + std::to_string(depth) + " needs " +
                                std::to_string(depth + 8) + " completion queue entries; " + device +
                                " allows " + std::to_string(limits.maxCqe) + " (max_cqe)");
  }
}

// The first QP's device: checked against -d and its queue limits; the
// thread is placed (--cpu, --numa) by it.
ClientDevice inspectDevice(const LinkOptions& o, const verbs::CmId& id,
                           const EndpointShape& shape) {
  ClientDevice d;
  d.name = id.deviceName();
  if (!o.device.empty() && d.name != o.device) {
    throw std::runtime_error("the route to " + o.host + " uses " + d.name + ", not " + o.device +
                             " (-d); use --bind with an address of " + o.device);
  }
  checkQueueLimits(id, shape, d.name);
  const std::optional<verbs::DeviceInfo> info = sysfsDeviceInfo(d.name);
  d.placement = applyPlacement(o, info ? info->numaNode : -1);
  d.software = (info && info->software) || verbs::isSoftwareVendor(id.vendorId());
  d.mtu = mtuText(id);
  return d;
}

// QP q's connect private data: the session's parameters and ep's buffer.
ConnectRequest connectRequest(const LinkOptions& o, const ClientPlan& plan, std::uint32_t q,
                              bool softwareDevice, const Endpoint& ep) {
  ConnectRequest req;
  req.test = static_cast<std::uint8_t>(o.test);
  req.flags = static_cast<std::uint8_t>(
      (o.bidirectional ? kBidirectional : 0) | (o.verify ? kVerify : 0) |
      (plan.lastSession ? kLastSession : 0) |
      (o.bidirectional && sleepOnEvents(o, softwareDevice) ? kUseEvents : 0));
  req.qpIndex = static_cast<std::uint8_t>(q);
  req.qpCount = static_cast<std::uint8_t>(o.qps);
  req.txDepth = static_cast<std::uint16_t>(std::min<std::uint32_t>(o.txDepth, 65535));
  req.cqModeration = static_cast<std::uint16_t>(std::min<std::uint32_t>(o.cqModeration, 65535));
  req.maxSize = static_cast<std::uint32_t>(plan.maxSize);
  req.slotBytes = plan.shape.slotBytes;
  req.seed = plan.seed;
  req.address = ep.data.address();
  req.rkey = ep.data.rkey();
  return req;
}

// Resolves, creates and connects the session's QPs, one rdma_cm connection
// each; device is filled from the first one's route.
Endpoints connectQps(const LinkOptions& o, verbs::CmEventChannel& channel, const ClientPlan& plan,
                     ClientDevice& device) {
  const verbs::CmClientOptions cm = cmClientOptions(o);
  Endpoints eps;
  for (std::uint32_t q = 0; q < o.qps; ++q) {
    verbs::CmId id = verbs::CmId::create(channel);
    verbs::cmResolve(channel, id, cm);
    // Without this rdma_cm takes RoCE's ~0.5 s from the packet life time, and
    // one dropped packet (soft-RoCE drops under load) stalls the QP that long.
    id.setAckTimeout(static_cast<std::uint8_t>(o.qpTimeout));
    if (q == 0) device = inspectDevice(o, id, plan.shape);
    auto ep = std::make_unique<Endpoint>(std::move(id), plan.shape);
    linkPattern(plan.seed).fill({ep->source(), plan.shape.maxSize});
    const std::vector<std::byte> mine = connectRequest(o, plan, q, device.software, *ep).encode();
    const std::vector<std::byte> theirs = verbs::cmConnect(channel, ep->id, mine, cm);
    const ConnectReply reply = ConnectReply::decode(theirs);
    ep->remoteAddress = reply.address;
    ep->remoteRkey = reply.rkey;
    eps.push_back(std::move(ep));
  }
  return eps;
}

// The report's title and perftest's banner.
LinkRunReport clientReport(const LinkOptions& o, const ClientDevice& device) {
  const bool lat = o.test == LinkTest::SendLatency;
  LinkRunReport report;
  report.title = linkTestTitle(o.test);
  report.key = linkTestKey(o.test);
  report.banner = {
      {"Device", device.name},
      {"Number of qps", std::to_string(o.qps)},
      {"Connection type", "RC"},
      {"Data ex. method", "rdma_cm"},
      {"TX depth", lat ? "1" : std::to_string(o.txDepth)},
      {"CQ Moderation", lat ? "1" : std::to_string(o.cqModeration)},
      {"Post list", lat ? "1" : std::to_string(o.postList)},
      {"CQ events", cqWaitBanner(o, device.software)},
      {"Mtu", device.mtu},
      {"QP timeout", std::to_string(o.qpTimeout)},
      {"Max inline data", (lat ? std::to_string(kMaxInline) : std::string("0")) + "[B]"},
      {"Bidirectional", o.bidirectional ? "ON" : "OFF"},
      {"Server", o.host + ":" + std::to_string(o.port)},
      {"Placement", device.placement},
      {"Duration", durationBanner(o.durationSeconds, o.marginSeconds)},
      {"Verify", o.verify ? "ON" : "OFF"}};
  return report;
}

// Whether the client's buffers receive data (READ, or the server's -b writes).
bool clientReceives(const LinkOptions& o) {
  return o.test == LinkTest::Read || o.bidirectional;
}

// GO for one message size, and the server's READY.
void startStep(const LinkOptions& o, const Endpoints& eps, std::uint64_t size) {
  ControlMessage go;
  go.kind = ControlKind::Go;
  go.size = size;
  go.iterations = o.iterations;
  go.durationUs = o.durationMicros();
  go.nanos = o.marginNanos();
  if (o.verify && clientReceives(o)) {
    // Zero what the step will fill, so stale data from a step before cannot pass.
    for (auto& ep : eps) std::memset(ep->target(), 0, size);
  }
  Endpoint& ctl = *eps.front();
  sendControl(ctl, go);
  (void)expectControl(ctl, ControlKind::Ready, o.timeout * 4, "READY");
}

// The client's own bandwidth loop for one size; its sleeps on events are
// added to the report's.
BandwidthResult measureBandwidth(const LinkOptions& o, const Endpoints& eps, std::uint64_t size,
                                 bool softwareDevice, LinkRunReport& report) {
  LoopParams p{o.test == LinkTest::Write ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ,
               size,
               o.iterations,
               std::chrono::microseconds(o.durationMicros()),
               o.txDepth,
               o.cqModeration,
               o.postList,
               o.warmUp,
               std::chrono::nanoseconds(o.marginNanos()),
               sleepOnEvents(o, softwareDevice)};
  const LoopResult r = runBandwidthLoop(eps, p);
  BandwidthResult bw;
  bw.messageBytes = size;
  bw.messages = r.messages;
  bw.seconds = r.seconds;
  bw.peakBytesPerSecond = r.peakMessagesPerSecond * static_cast<double>(size);
  if (p.useEvents) report.eventWaits = report.eventWaits.value_or(0) + r.eventWaits;
  return bw;
}

// END of one size, and the server's FIN with its side of the step.
ControlMessage endStep(const LinkOptions& o, Endpoint& ctl, std::uint64_t size) {
  ControlMessage end;
  end.kind = ControlKind::End;
  end.size = size;
  sendControl(ctl, end);
  const auto stepTimeout = std::chrono::duration_cast<std::chrono::milliseconds>(o.idleTimeout);
  return expectControl(ctl, ControlKind::Fin, stepTimeout, "FIN");
}

// The step's row: with -b the server's loop (in FIN) adds its direction.
BandwidthResult bandwidthRow(const LinkOptions& o, BandwidthResult bw, const ControlMessage& fin,
                             std::uint64_t size) {
  if (o.bidirectional) {
    bw = combineBidirectional(
        bw, fin.messages, static_cast<double>(fin.nanos) / 1e9,
        static_cast<double>(fin.peakMilli) / 1000.0 * static_cast<double>(size));
  }
  bw.iterations = bw.messages / (o.qps * (o.bidirectional ? 2u : 1u));
  return bw;
}

// --verify after a bandwidth step: the server's check (in FIN), then the
// client's own of what it received.
void checkStepData(const LinkOptions& o, const Endpoints& eps, const ControlMessage& fin,
                   std::uint64_t size, std::uint32_t seed) {
  if (fin.verify == VerifyState::Failed) {
    throw std::runtime_error("verify failed: the server found a wrong byte at offset " +
                             std::to_string(fin.mismatch) + " after " + std::to_string(size) +
                             "-byte transfers");
  }
  if (!clientReceives(o)) return;
  for (auto& ep : eps) {
    if (auto bad = linkPattern(seed).firstMismatch({ep->target(), size})) {
      throw std::runtime_error("verify failed: wrong byte at offset " + std::to_string(*bad) +
                               " of the data received in " + std::to_string(size) +
                               "-byte transfers");
    }
  }
}

// One message size: GO/READY, the measured loop, END/FIN, the report's row
// and the checks. Returns the bytes it verified.
std::uint64_t runClientStep(const LinkOptions& o, const Endpoints& eps, const ClientPlan& plan,
                            bool softwareDevice, std::uint64_t size, LinkRunReport& report) {
  const bool lat = o.test == LinkTest::SendLatency;
  Endpoint& ctl = *eps.front();
  startStep(o, eps, size);
  BandwidthResult bw;
  std::vector<double> latSamples;
  if (lat) {
    latSamples = runPingLoop(ctl, static_cast<std::uint32_t>(size), o.iterations);
  } else {
    bw = measureBandwidth(o, eps, size, softwareDevice, report);
  }
  const ControlMessage fin = endStep(o, ctl, size);
  if (lat) {
    report.latency.push_back(summarizeLatency(size, latSamples));
    return 0;
  }
  report.bandwidth.push_back(bandwidthRow(o, bw, fin, size));
  if (!o.verify) return 0;
  checkStepData(o, eps, fin, size, plan.seed);
  return size * eps.size();
}

}  // namespace

LinkRunReport runRdmaClient(const LinkOptions& o, bool lastSession) {
  const std::vector<std::uint64_t> sizes =
      o.sweep ? sweepSizes(kMaxMessageBytes) : std::vector<std::uint64_t>{o.size};
  const std::uint64_t maxSize = sizes.back();
  const ClientPlan plan{maxSize, shapeFor(o.test, maxSize, o.txDepth), newSeed(), lastSession};

  verbs::CmEventChannel channel = verbs::CmEventChannel::create();
  ClientDevice device;
  const Endpoints eps = connectQps(o, channel, plan, device);
  LinkRunReport report = clientReport(o, device);
  std::uint64_t verifiedBytes = 0;
  for (const std::uint64_t size : sizes) {
    verifiedBytes += runClientStep(o, eps, plan, device.software, size, report);
  }
  if (o.verify) {
    report.verify =
        o.test == LinkTest::SendLatency
            ? "not applicable to the latency test"
            : "passed (after each size the receiver checked every byte of its region against "
              "the sender's pattern; " +
                  std::to_string(verifiedBytes) + " bytes in all)";
  }
  ControlMessage bye;
  bye.kind = ControlKind::Bye;
  sendControl(*eps.front(), bye);
  return report;  // endpoints disconnect and drain as they go out of scope
}

// ---- server ------------------------------------------------------------------

namespace {

// The session's first connect request, or nullopt after rejecting it.
std::optional<ConnectRequest> firstRequest(verbs::CmListener::Request& first) {
  try {
    ConnectRequest cfg = ConnectRequest::decode(first.privateData);
    if (cfg.qpIndex != 0) throw LinkProtocolError("the first QP of a session has index " + std::to_string(cfg.qpIndex));
    return cfg;
  } catch (const LinkProtocolError& e) {
    first.id.reject({});
    std::fprintf(stderr, "nfsrdma-bench link: rejected a connection from %s: %s\n",
                 first.id.peerAddress().c_str(), e.what());
    return std::nullopt;
  }
}

// QP q's connect request, checked to continue the session of cfg; a request
// that does not is rejected.
ConnectRequest nextRequest(verbs::CmListener::Request& next, std::uint32_t q,
                           const ConnectRequest& cfg) {
  try {
    ConnectRequest r = ConnectRequest::decode(next.privateData);
    if (r.qpIndex != q || r.qpCount != cfg.qpCount || r.seed != cfg.seed) {
      throw LinkProtocolError("QP " + std::to_string(r.qpIndex) + " of " +
                              std::to_string(r.qpCount) +
                              " does not continue this session (expected QP " + std::to_string(q) +
                              " of " + std::to_string(cfg.qpCount) + ")");
    }
    return r;
  } catch (const LinkProtocolError& e) {
    next.id.reject({});
    throw LinkProtocolError(
        std::string("unexpected connection while the client was opening its QPs: ") + e.what());
  }
}

// Accepts the session's QPs, `first` and the client's further requests,
// each with the server's buffer in the reply.
Endpoints acceptQps(const LinkOptions& o, verbs::CmListener& listener,
                    verbs::CmListener::Request first, const ConnectRequest& cfg,
                    const EndpointShape& shape) {
  Endpoints eps;
  std::optional<verbs::CmListener::Request> next = std::move(first);
  for (std::uint32_t q = 0; q < cfg.qpCount; ++q) {
    if (!next) next = listener.waitRequest(o.timeout * 4);
    if (!next) throw std::runtime_error("the client opened " + std::to_string(q) + " of " +
                                        std::to_string(cfg.qpCount) + " QPs, then stopped");
    const ConnectRequest r = nextRequest(*next, q, cfg);
    auto ep = std::make_unique<Endpoint>(std::move(next->id), shape);
    next.reset();
    ep->remoteAddress = r.address;
    ep->remoteRkey = r.rkey;
    linkPattern(cfg.seed).fill({ep->source(), shape.maxSize});
    ConnectReply reply;
    reply.address = ep->data.address();
    reply.rkey = ep->data.rkey();
    const std::vector<std::byte> bytes = reply.encode();
    ep->id.setAckTimeout(static_cast<std::uint8_t>(o.qpTimeout));
    listener.accept(ep->id, bytes, o.timeout * 4);
    eps.push_back(std::move(ep));
  }
  return eps;
}

// The server's own -b loop for the step of GO `m`, reported in fin; returns
// its sleeps on events.
std::uint64_t runServerWrites(const Endpoints& eps, const ConnectRequest& cfg,
                              const ControlMessage& m, ControlMessage& fin) {
  // Only -b runs a loop here; the client sends its choice for it.
  const bool loopSleeps = (cfg.flags & kUseEvents) != 0;
  LoopParams p{IBV_WR_RDMA_WRITE,
               m.size,
               m.iterations,
               std::chrono::microseconds(m.durationUs),
               cfg.txDepth,
               cfg.cqModeration,
               1,
               false,
               std::chrono::nanoseconds(m.nanos),
               loopSleeps};
  const LoopResult r = runBandwidthLoop(eps, p);
  fin.messages = r.messages;
  fin.nanos = static_cast<std::uint64_t>(r.seconds * 1e9);
  fin.peakMilli = static_cast<std::uint64_t>(r.peakMessagesPerSecond * 1000);
  return r.eventWaits;
}

// --verify of a WRITE step: every QP's target against the client's pattern.
void checkReceived(const Endpoints& eps, std::uint64_t size, std::uint32_t seed,
                   ControlMessage& fin) {
  fin.verify = VerifyState::Passed;
  for (auto& ep : eps) {
    if (auto bad = linkPattern(seed).firstMismatch({ep->target(), size})) {
      fin.verify = VerifyState::Failed;
      fin.mismatch = *bad;
      break;
    }
  }
}

// Serves the step of GO `m`: READY, the server's part of the test, then
// FIN after the client's END. Returns the server loop's sleeps on events.
std::uint64_t serveStep(const Endpoints& eps, const ConnectRequest& cfg, const ControlMessage& m,
                        std::chrono::milliseconds idle) {
  const auto test = static_cast<LinkTest>(cfg.test);
  const bool verify = (cfg.flags & kVerify) != 0;
  const bool bidir = (cfg.flags & kBidirectional) != 0;
  Endpoint& ctl = *eps.front();
  if (verify && test == LinkTest::Write) {
    for (auto& ep : eps) std::memset(ep->target(), 0, m.size);
  }
  ControlMessage ready;
  ready.kind = ControlKind::Ready;
  sendControl(ctl, ready);
  ControlMessage fin;
  fin.kind = ControlKind::Fin;
  std::uint64_t eventWaits = 0;
  if (test == LinkTest::SendLatency) {
    runPongLoop(ctl, static_cast<std::uint32_t>(m.size), m.iterations);
  } else if (bidir && test == LinkTest::Write) {
    eventWaits = runServerWrites(eps, cfg, m, fin);
  }
  // The client's step may run long (-n at emulated speeds, -D); a client
  // that dies is noticed through the flushed receive, so this bound is loose.
  (void)expectControl(ctl, ControlKind::End, std::max<std::chrono::milliseconds>(idle, 4h), "END");
  if (verify && test == LinkTest::Write) checkReceived(eps, m.size, cfg.seed, fin);
  sendControl(ctl, fin);
  return eventWaits;
}

// Serves one session whose first request is `first`.
void serveSession(const LinkOptions& o, verbs::CmListener& listener,
                  verbs::CmListener::Request first, LinkServerState& state) {
  const LinkSessionScope active(state);
  const std::optional<ConnectRequest> cfg = firstRequest(first);
  if (!cfg) return;
  const auto test = static_cast<LinkTest>(cfg->test);
  const EndpointShape shape = shapeFor(test, cfg->maxSize, cfg->txDepth);
  const auto idle = std::chrono::duration_cast<std::chrono::milliseconds>(o.idleTimeout);
  const Endpoints eps = acceptQps(o, listener, std::move(first), *cfg, shape);
  std::fprintf(stderr, "nfsrdma-bench link: session from %s: %s, %u QP(s)\n",
               eps.front()->id.peerAddress().c_str(), linkTestTitle(test),
               static_cast<unsigned>(cfg->qpCount));
  std::uint64_t eventWaits = 0;
  for (;;) {  // one step per message size; bounded by the idle timeout per message
    const ControlMessage m = waitControl(*eps.front(), idle, "GO");
    if (m.kind == ControlKind::Bye) break;
    if (m.kind != ControlKind::Go) {
      throw LinkProtocolError(std::string("link protocol: expected GO, got ") + controlKindName(m.kind));
    }
    checkGo(m, shape.maxSize);
    eventWaits += serveStep(eps, *cfg, m, idle);
  }
  if ((cfg->flags & kUseEvents) != 0) {
    std::fprintf(stderr, "nfsrdma-bench link: session done (slept %llu time%s on CQ events)\n",
                 static_cast<unsigned long long>(eventWaits), eventWaits == 1 ? "" : "s");
  } else {
    std::fprintf(stderr, "nfsrdma-bench link: session done\n");
  }
  if ((cfg->flags & kLastSession) != 0 && !o.keepServing) state.finished = true;
}

}  // namespace

std::optional<verbs::DeviceInfo> sysfsDeviceInfo(const std::string& device) {
  try {
    verbs::DiscoveryOptions d;
    d.queryVerbs = false;
    for (verbs::DeviceInfo& info : verbs::discoverDevices(d)) {
      if (info.name == device) return std::move(info);
    }
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

void runRdmaServer(const LinkOptions& o, LinkServerState& state) {
  verbs::CmEventChannel channel = verbs::CmEventChannel::create();
  std::string bind = o.bindAddress;
  if (bind.empty() && !o.device.empty()) {
    // Listen on the device's first IPv4 address so -d means what it says.
    for (const auto& d : verbs::discoverDevices()) {
      if (d.name != o.device) continue;
      for (const auto& p : d.ports)
        for (const auto& g : p.gids)
          if (bind.empty() && g.ip.find('.') != std::string::npos) bind = g.ip;
    }
    if (bind.empty()) throw std::runtime_error("device " + o.device + " has no IPv4 address to listen on");
  }
  verbs::CmListener listener = verbs::CmListener::listen(channel, bind, o.port);
  std::fprintf(stderr, "nfsrdma-bench link: listening (rdma_cm) on %s:%u\n",
               bind.empty() ? "0.0.0.0" : bind.c_str(), static_cast<unsigned>(o.port));
  while (!state.finished) {  // each pass waits at most 200 ms; idle timeout ends it
    std::optional<verbs::CmListener::Request> r = listener.waitRequest(200ms);
    if (!r) {
      state.finishWhenIdle(o.idleTimeout);
      continue;
    }
    try {
      serveSession(o, listener, std::move(*r), state);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "nfsrdma-bench link: session failed: %s\n", e.what());
    }
  }
}

}  // namespace nfsrdma::bench
